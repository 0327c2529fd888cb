// swift-tools-version: 6.1
import PackageDescription

// Layers, dependencies pointing one way (top depends on bottom):
//
//   quench (CLI, parsing only)     quenchd (the service)     quench-web (the web service)     quench-bench (benchmarks)
//     ├── QuenchComposition (the executables' layer: the configuration becomes each library's inputs —
//     │     the history's environment, `config show`; nothing below it knows quench.toml)
//     ├── QuenchTools (scan, pair, watch, record, calibrate, and their terminal output)
//     ├── CommandLineAdvice (quench's and quenchd's words added to the libraries' errors: commands, options;
//     │     the libraries say the fact and carry the data, the web page says it in its own words)
//     ├── QuenchServe (`quench serve` = `quench-web`: one command, its options, greeting and exit 78; ArgumentParser)
//     ├── QuenchHistory (today, log, stats, goals, calendar, export, chart, share: FoundationEssentials; local
//     │     days' time zones from the system's tzdata (LocalZone), not ICU's;
//     │     share's PNG through Debian's rsvg-convert, a child process)
//     │     └── QuenchCharts (pure: plain values in, SVG text out; no I/O; the web page inlines the same SVG)
//     ├── QuenchWeb (`quench serve`: the page, the JSON API, live changes; Hummingbird; `--listen` parsed by QuenchCore's HostPort)
//     │     └── CZlib (zlib's deflate, for gzip; the only importer of it)
//     ├── QuenchNotify (pushes to a phone: ntfy or a webhook over HTTPS, for reminders and carers' alerts)
//     │     └── CCurl (libcurl; the only importer of it)
//     ├── QuenchHub (`quench hub`: every gateway's changes from the broker into one history; asks a gateway for what it lacks)
//     ├── QuenchMQTT (the publisher: outbox → broker, states, Home Assistant discovery; answers a hub)
//     │     └── MQTT (libmosquitto; the only importer of CMosquitto)
//     ├── QuenchConfig (quench.toml and precedence: command line > environment > user file > /etc > default;
//     │     its own TOML parser, BluetoothWire, Threading, QuenchCore; quenchd links it too)
//     ├── QuenchService (systemd notify, swift-log to stderr: what a service's process needs; quench-web too)
//     └── QuenchGateway (pipelines: replay, simulate, demo, the live gateway; prints nothing)
//           ├── QuenchStore (SQLite's C API; the only importer of CSQLite)
//           ├── BluetoothLinux (kernel sockets; the only importer of CBlueZ)
//           ├── GATT (client + server over an ATT bearer)
//           ├── QuenchProfiles (one type per device profile, the profile registry; a sip-keeping bottle's session over GATT)
//           ├── BluetoothWire (pure codecs: AD, ATT, mgmt, HCI, btsnoop)
//           ├── Threading (POSIX threads, a condition over shared state, deadlines, stop signals, the system clocks via CClock)
//           ├── QuenchSimulator (pure, seeded simulated bottle)
//           └── QuenchCore (pure: units, calibration, trace v1, detector, evaluation)
//   QuenchSimulatedDevices (in-process GATT peripherals and broadcasters): tests and quench-bench only.
//
// Foundation: the `quench` executable and quench-bench import Foundation;
// QuenchHistory imports FoundationEssentials only (time zones are LocalZone's, read from
// /usr/share/zoneinfo: ICU cost the web server 4 MB resident), QuenchProfiles and QuenchStore FoundationEssentials (JSON, files)
// only, so quench-web (QuenchServe, QuenchComposition, QuenchWeb, QuenchHistory, QuenchConfig) links
// no full Foundation in a static build; QuenchCharts, QuenchGateway, QuenchTools and the layers below import
// neither, and nothing imports Dispatch, so quenchd stays small.
//
// The configuration file's TOML is read by QuenchConfig's own parser (TOMLParser.swift,
// no dependencies): toml++ 3.4.0 (through TOMLKit) aborted the process on malformed
// text, and cost quenchd about 2 MB resident. `.ci/fuzz-config` runs libFuzzer over it
// (Fuzz/ConfigFuzz.swift, built by swiftc alone into .build-fuzz, not by this manifest).

// A module loads Foundation through the modules below it, and without this setting
// `"a".contains("b")` binds to Foundation's `range(of:)` in a file that never imported
// it: the web server would need libFoundation.so. With it, a file sees only the
// members of the modules it imports.
let importedMembersOnly: [SwiftSetting] = [.enableUpcomingFeature("MemberImportVisibility")]

// The detector and the simulator are optimised in debug builds too: the tests run them over hours of
// simulated readings (a kill at 240 moments of 90-minute days, sweeps, replays in every process the
// tests start), and unoptimised they cost the test run over a minute of CPU. Both are pure, small
// and rarely stepped through; `-enable-testing` stays, so `@testable import` still sees them.
let optimisedEvenInDebug: [SwiftSetting] = [.unsafeFlags(["-O"], .when(configuration: .debug))]

let package = Package(
    name: "Quench",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "quench", targets: ["quench"]),
        .executable(name: "quenchd", targets: ["quenchd"]),
        .executable(name: "quench-web", targets: ["quench-web"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // `quench serve` only: HTTP/1.1 on SwiftNIO. Its default traits (swift-configuration,
        // full Foundation) are off: nothing here uses them, and they cost build time.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        // Named for its HTTP field and URI types, which Hummingbird does not re-export; already in its graph.
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // The web server's services (the change watcher) stop with it on SIGTERM; in Hummingbird's graph already.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // Tests and quench-bench only: an HTTP/1.1 client (NIOHTTP1) for the API and chromedriver's WebDriver; in Hummingbird's graph already.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        .target(name: "QuenchCore", swiftSettings: optimisedEvenInDebug),
        .target(name: "QuenchSimulator", dependencies: ["QuenchCore"], swiftSettings: optimisedEvenInDebug),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .target(name: "QuenchStore", dependencies: ["QuenchCore", "CSQLite", "Threading", "BluetoothWire"]),
        .target(name: "BluetoothWire"),
        // GATT and Logging: a profile whose device keeps its own sips runs its session over the GATT client (SipReporter).
        .target(name: "QuenchProfiles", dependencies: ["BluetoothWire", "GATT", "QuenchCore", "Threading",
                                                       .product(name: "Logging", package: "swift-log")]),
        // adjtimex(2) and CLOCK_BOOTTIME, which Swift's Glibc module does not declare.
        .target(name: "CClock"),
        .target(name: "Threading", dependencies: ["CClock"]),
        .target(name: "GATT", dependencies: ["BluetoothWire", "Threading"]),
        .systemLibrary(
            name: "CBlueZ",
            pkgConfig: "bluez",
            providers: [.apt(["libbluetooth-dev"])]
        ),
        .target(name: "BluetoothLinux", dependencies: ["CBlueZ", "BluetoothWire", "GATT", "Threading"]),
        // A service's process: systemd's notify protocol, swift-log to standard error. quenchd, `quench`'s
        // services and quench-web share it; it knows nothing of Bluetooth or the web.
        .target(name: "QuenchService", dependencies: ["Threading", .product(name: "Logging", package: "swift-log")]),
        .target(name: "QuenchGateway", dependencies: [
            "QuenchService", "QuenchCore", "QuenchSimulator", "QuenchStore", "BluetoothWire",
            "QuenchProfiles", "GATT", "BluetoothLinux", "Threading",
            .product(name: "Logging", package: "swift-log"),
        ]),
        // What `quench` and `quenchd` add to the libraries' errors, in their own words (commands, options).
        .target(name: "CommandLineAdvice", dependencies: ["QuenchGateway", "QuenchStore", "QuenchCore"]),
        .target(name: "QuenchConfig", dependencies: [
            "QuenchCore", "BluetoothWire", "Threading",
        ], swiftSettings: importedMembersOnly),
        .target(name: "QuenchCharts", dependencies: ["QuenchCore"]),
        .target(name: "QuenchHistory", dependencies: ["BluetoothWire", "QuenchCore", "QuenchCharts", "QuenchStore", "Threading"],
                swiftSettings: importedMembersOnly),
        // The executables' layer: the configuration becomes each library's inputs (the history's
        // environment, `config show`), so no library below depends on QuenchConfig.
        .target(name: "QuenchComposition", dependencies: ["QuenchConfig", "QuenchHistory", "QuenchStore", "QuenchCore", "Threading"],
                swiftSettings: importedMembersOnly),
        // MQTT through libmosquitto (Debian libmosquitto-dev), the Eclipse reference client:
        // MQTT 3.1.1 and 5, TLS, reconnects. `MQTT` is the only importer of CMosquitto.
        .systemLibrary(
            name: "CMosquitto",
            pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),
        .target(name: "MQTT", dependencies: ["CMosquitto"]),
        // Pushes to a phone (ntfy, webhooks) through libcurl (Debian libcurl4; its headers from
        // libcurl4-openssl-dev): HTTPS with the system's OpenSSL and CA store, time limits, no redirects.
        // A C library already on every Debian, a 3 s build; async-http-client would add swift-nio-ssl
        // (BoringSSL) to every CI build for one POST. Loaded with dlopen when a push is sent or its URL
        // checked, not linked: with its 30 libraries it cost every `quench` command 5.5 MB (Sources/CCurl).
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("dl")]),
        .target(name: "QuenchNotify", dependencies: ["CCurl", "QuenchCore", "Threading"]),
        // The page's gzip (zlib, Debian zlib1g-dev): the system's zlib, as SQLite and curl are the system's;
        // compress-nio would add its own build of lz4 for one deflate call.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .target(name: "QuenchMQTT", dependencies: [
            "MQTT", "QuenchHistory", "QuenchStore", "QuenchCore", "Threading",
            .product(name: "Logging", package: "swift-log"),
        ]),
        // `quench hub`: one history from every gateway on the broker.
        .target(name: "QuenchHub", dependencies: [
            "MQTT", "QuenchMQTT", "QuenchHistory", "QuenchStore", "QuenchCore",
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The page and its JSON API (`quench serve`), a process of its own so quenchd stays small.
        .target(name: "QuenchWeb", dependencies: [
            "QuenchHistory", "QuenchStore", "QuenchCore", "Threading", "CZlib",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            // HTTP/1's own request head, which knows its version (HTTP10Close).
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "Logging", package: "swift-log"),
        ], exclude: ["Page"], swiftSettings: importedMembersOnly, plugins: ["EmbedPage"]),
        // Build time only: the page's files (Sources/QuenchWeb/Page) become string constants in QuenchWeb,
        // so quench-web reads no files at run time. The tool imports Glibc alone, to build quickly.
        .executableTarget(name: "PageEmbedder"),
        .plugin(name: "EmbedPage", capability: .buildTool(), dependencies: ["PageEmbedder"]),
        // `quench serve` and `quench-web`, one command: its options over the configuration, the greeting, exit 78.
        .target(name: "QuenchServe", dependencies: [
            "QuenchWeb", "QuenchConfig", "QuenchComposition", "QuenchHistory", "QuenchService", "Threading",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: importedMembersOnly),
        .target(name: "QuenchTools", dependencies: [
            "QuenchGateway", "QuenchCore", "QuenchProfiles", "QuenchStore", "GATT", "BluetoothLinux", "BluetoothWire", "Threading",
            .product(name: "Logging", package: "swift-log"),
        ]),
        .target(name: "QuenchSimulatedDevices", dependencies: [
            "QuenchGateway", "QuenchCore", "QuenchProfiles", "GATT", "BluetoothWire", "Threading",
        ]),
        .executableTarget(name: "quench", dependencies: [
            "CommandLineAdvice", "QuenchGateway", "QuenchHistory", "QuenchConfig", "QuenchComposition", "QuenchTools", "QuenchStore", "QuenchProfiles", "QuenchMQTT", "QuenchHub", "QuenchWeb", "QuenchServe", "QuenchService", "QuenchNotify", "Threading",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        // The web server alone (the quench-web service): no Bluetooth, MQTT or the rest of the CLI,
        // and no full Foundation (QuenchHistory needs only FoundationEssentials and time zones).
        .executableTarget(name: "quench-web", dependencies: [
            "QuenchServe", "QuenchCore", "Threading", .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .executableTarget(name: "quenchd", dependencies: ["BluetoothWire", "CommandLineAdvice", "QuenchCore", "QuenchGateway", "QuenchConfig", "QuenchStore"]),
        .executableTarget(name: "quench-bench", dependencies: [
            "QuenchCore", "QuenchSimulator", "QuenchStore", "QuenchGateway", "QuenchSimulatedDevices", "QuenchMQTT", "MQTT", "QuenchHistory",
            // `quench-bench gateway` and `hub`: simulated devices over the real wire protocols.
            "QuenchProfiles", "BluetoothWire", "GATT", "Threading",
            .product(name: "Logging", package: "swift-log"),
            // `quench-bench web`: its HTTP/1.1 client.
            .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
        ]),

        // Test support: paths, fixtures, temporary folders, hex, the process runner and
        // the history fixture (QuenchTestSupport); ../shared/ble-vm for the VM tests (BLEVMHarness).
        .target(name: "QuenchTestSupport", dependencies: [
                    "QuenchCore", "QuenchStore", "QuenchHistory", "QuenchSimulator", "BluetoothWire", "MQTT", "Threading",
                    .product(name: "Logging", package: "swift-log"),
                ],
                path: "Tests/Support/QuenchTestSupport"),
        .target(name: "BLEVMHarness", path: "Tests/Support/BLEVMHarness"),

        // A test target per library target.
        .testTarget(name: "QuenchCoreTests", dependencies: ["QuenchCore", "QuenchSimulator", "QuenchTestSupport"]),
        .testTarget(name: "QuenchSimulatorTests", dependencies: ["QuenchSimulator", "QuenchCore"]),
        .testTarget(name: "QuenchStoreTests", dependencies: ["QuenchStore", "QuenchCore", "QuenchTestSupport"]),
        .testTarget(name: "BluetoothWireTests", dependencies: ["BluetoothWire", "QuenchProfiles", "QuenchCore", "QuenchTestSupport"]),
        .testTarget(name: "QuenchProfilesTests", dependencies: ["QuenchProfiles", "BluetoothWire", "QuenchCore", "QuenchTestSupport"]),
        .testTarget(name: "ThreadingTests", dependencies: ["Threading"]),
        .testTarget(name: "GATTTests", dependencies: ["GATT", "BluetoothWire", "QuenchProfiles", "QuenchSimulator", "QuenchTestSupport"]),
        .testTarget(name: "BluetoothLinuxTests", dependencies: ["BluetoothLinux", "BluetoothWire", "GATT", "Threading"]),
        .testTarget(name: "MQTTTests", dependencies: ["MQTT", "QuenchTestSupport"]),
        // Against a real HTTPS server on loopback (python3's http.server with an openssl-made certificate).
        .testTarget(name: "QuenchNotifyTests", dependencies: ["QuenchNotify", "QuenchTestSupport", "Threading"]),
        .testTarget(name: "QuenchMQTTTests", dependencies: ["QuenchMQTT", "MQTT", "QuenchHistory", "QuenchStore", "QuenchCore", "QuenchTestSupport", "Threading"]),
        // Gateways and a hub as processes on a real mosquitto.
        .testTarget(name: "QuenchHubTests", dependencies: [
            "QuenchHub", "MQTT", "QuenchMQTT", "QuenchHistory", "QuenchStore", "QuenchCore", "QuenchTestSupport", "Threading",
            // The hand-over of a connected bottle: two gateways over simulated rooms.
            "QuenchGateway", "QuenchSimulatedDevices", "QuenchProfiles", "BluetoothWire", "GATT",
        ]),
        .testTarget(name: "QuenchConfigTests", dependencies: ["QuenchConfig", "QuenchCore", "QuenchStore", "QuenchTestSupport"]),
        .testTarget(name: "QuenchWebTests", dependencies: [
            "QuenchWeb", "QuenchHistory", "QuenchStore", "QuenchCore", "QuenchTestSupport", "Threading",
            .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        .testTarget(name: "QuenchCompositionTests", dependencies: [
            "QuenchComposition", "QuenchConfig", "QuenchHistory", "QuenchCore",
        ]),
        .testTarget(name: "QuenchHistoryTests", dependencies: ["QuenchHistory", "QuenchCharts", "QuenchStore", "QuenchCore", "QuenchTestSupport"]),
        .testTarget(name: "QuenchChartsTests", dependencies: ["QuenchCharts", "QuenchCore"]),
        .testTarget(name: "QuenchToolsTests", dependencies: [
            "QuenchTools", "QuenchGateway", "QuenchSimulatedDevices", "QuenchSimulator", "QuenchProfiles", "QuenchStore", "QuenchCore",
            "GATT", "BluetoothWire", "BluetoothLinux", "QuenchTestSupport",
        ]),
        .testTarget(name: "QuenchSimulatedDevicesTests", dependencies: [
            "QuenchSimulatedDevices", "QuenchGateway", "QuenchProfiles", "QuenchCore", "GATT", "BluetoothWire", "Threading",
        ]),
        // Not a layer's: the docs' samples run with the built quench, and their links (CONTRIBUTING.md).
        .testTarget(name: "DocSamplesTests", dependencies: ["QuenchTestSupport"]),
        .testTarget(name: "QuenchGatewayTests", dependencies: [
            "QuenchGateway", "QuenchStore", "QuenchCore", "QuenchSimulator", "GATT", "BluetoothLinux", "BluetoothWire", "QuenchTestSupport",
            "QuenchTools", "QuenchSimulatedDevices", "QuenchProfiles", "Threading", .product(name: "Logging", package: "swift-log"),
        ]),
        // ServiceNotifier alone, and as quenchd's gateway and `quench serve` speak it to systemd.
        .testTarget(name: "QuenchServiceTests", dependencies: [
            "QuenchService", "QuenchGateway", "QuenchSimulatedDevices", "QuenchProfiles", "QuenchStore", "QuenchCore", "BluetoothWire",
            "QuenchTestSupport", "Threading",
        ]),
        .testTarget(name: "QuenchServeTests", dependencies: [
            "QuenchServe", "QuenchConfig", "QuenchWeb", "QuenchTestSupport", "Threading",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "NIOCore", package: "swift-nio"),
        ]),

        // End to end: the built `quench` and `quenchd` run as processes (history, charts, first run,
        // bad files refused whole, the regression inputs), beside the test binary after `swift build --build-tests`.
        .testTarget(name: "QuenchCLITests", dependencies: ["QuenchHistory", "QuenchGateway", "QuenchStore", "QuenchCore", "QuenchTestSupport"]),
        // scripts/install.sh and uninstall.sh, the Debian package (dpkg-deb, lintian) and the systemd units.
        .testTarget(name: "PackagingTests", dependencies: ["QuenchTestSupport"]),
        // On the real Linux Bluetooth stack in ../shared/ble-vm (BLEVMHarness): BluetoothLinux's sockets,
        // then the built `quench` and `quenchd` against emulated devices. Skipped visibly when the harness is not ready.
        .testTarget(name: "BLEVMTests", dependencies: [
            "BLEVMHarness", "QuenchTestSupport", "QuenchCore", "QuenchProfiles", "QuenchStore", "QuenchSimulator", "BluetoothLinux", "BluetoothWire", "GATT", "Threading",
        ]),
    ]
)
