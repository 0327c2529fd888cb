#if os(Linux)
import ArgumentParser
import Foundation
import QuenchConfig
import QuenchComposition
import QuenchCore
import QuenchGateway
import QuenchMQTT
import QuenchServe
import QuenchService
import QuenchHistory
import QuenchProfiles
import QuenchStore
import QuenchTools
import Threading

/// Options of the commands that talk to devices.
struct LiveOptions: ParsableArguments {
    @Option(name: .long, help: databaseHelp)
    var db: String?

    @Option(help: "Log level (default: $QUENCH_LOG, else `log_level` in the config file, else info; warning for calibrate, watch and record).")
    var logLevel: LogLevel?

    /// The configuration with these options, and `more`, over the rest.
    func configuration(_ more: ConfigValues = ConfigValues()) throws -> Configuration {
        var values = more
        (values.database, values.logLevel) = (db, logLevel)
        return try HistoryEnvironment.configuration(values)
    }
}

extension Configuration {
    func openStore(creating: Bool) throws -> IntakeStore {
        try HistoryEnvironment.process(self).openStore(creating: creating)
    }
}

/// Runs a command whose work blocks (sockets, threads) on a thread of its own,
/// so Swift's small cooperative pool is never held.
func offPool(_ body: @escaping @Sendable () throws -> Void) async throws {
    try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
        _ = WorkerThread(name: "quench command") {
            do { try runReporting { try withCalibrationHints(body) }; c.resume() } catch { c.resume(throwing: error) }
        }
    }
}

/// The tools' calibration problems in the words of this command line's options.
func withCalibrationHints(_ body: () throws -> Void) throws {
    do { try body() } catch ToolError.calibrationRequest(let problem) {
        throw CommandLineHint(text: "calibrate: " + problem.withOptions)
    }
}

struct CommandLineHint: Error, CustomStringConvertible {
    var text: String
    var description: String { text }
}

extension CalibrationProblem {
    /// What to type instead, naming `quench calibrate`'s options.
    var withOptions: String {
        switch self {
        case .nothingToDo: "nothing to do: give --empty-now, --full-now, --full ML or --point LEVEL:ML (or run it on a terminal to be guided)"
        case .pointsNeedLevelSensor(let a, let p): "--point is for level sensors; \(a) is a \(p) (weight)"
        case .volumeNotPositive: "\(self) (--full ML)"
        case .fullNeedsEmptyWeight: "--full-now needs the empty bottle's weight: measure it first with --empty-now"
        case .fullNeedsVolume: "--full-now needs --full ML for a level sensor (the volume of the full bottle)"
        case .badPoint(let p): "--point '\(p.shownSafely())' is not LEVEL:ML (two numbers, e.g. 12.5:250)"
        case .fullNotHeavier: "\(self)"
        }
    }
}

struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "scan", abstract: "List nearby bottles and scales, with the profile each one fits.")
    @Option(help: "Seconds to scan.", transform: parseSeconds) var timeout: Double = 5
    @Flag(help: "Also list devices no profile fits.") var all = false
    @Flag(help: "One JSON object a line per device.") var json = false
    @Option(help: "Log level (default: $QUENCH_LOG, else `log_level` in the config file, else info).") var logLevel: LogLevel?

    func run() async throws {
        let (timeout, all, json) = (timeout, all, json)
        _ = LiveLogging.bootstrap(level: try HistoryEnvironment.configuration(ConfigValues(logLevel: logLevel)).logLevel.value.rawValue)
        try await offPool {
            let stop = StopSignal()
            let signals = StopSignals.handle { _ in stop.stop() }
            let found = try LiveScan.run(timeout: timeout, all: all, stop: stop)
            signals.cancel()
            if json { for f in found { LineOutput.write(LiveScan.jsonLine(f)) } } else { LineOutput.write(LiveScan.table(found)) }
        }
    }
}

struct PairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair", abstract: "Find a device, confirm its readings arrive, and save it with its calibration.",
        discussion: "Profiles: \(ProfileRegistry.identifiers.joined(separator: ", ")), or the path of a profile file (docs/profiles.md).")
    @Argument(help: "The device's Bluetooth address.") var address: String
    @Option(help: "Profile name or profile file (default: the one its advertisement fits).") var profile: String?
    @Option(help: "A name for the device.") var name: String?
    @Flag(help: "Encrypt the link (pairing and bonding through the kernel).") var bond = false
    @Flag(help: "The device uses a random static address (skips the scan when --profile is given).") var random = false
    @Option(help: "Bottle capacity in mL.") var capacity: Double?
    @Option(help: "Empty bottle's weight in g.") var tare: Double?
    @Option(help: ArgumentHelp("Level-sensor calibration points.", valueName: "L:ML,L:ML,..."), transform: parseLevelCurve)
    var levelCurve: LevelCurve?
    @Option(help: "Density of the liquid in g/mL.") var density: Double = 1
    @Option(help: "Seconds allowed for finding, connecting and the first reading, each.", transform: parseSeconds) var timeout: Double = 10
    @OptionGroup var who: PersonOption
    @OptionGroup var live: LiveOptions

    func run() async throws {
        var r = Pairing.Request(address: address)
        (r.profile, r.name, r.bond, r.random) = (profile, name, bond, random)
        (r.capacityML, r.tareG, r.levelCurve, r.density, r.timeout) = (capacity, tare, levelCurve, density, timeout)
        var values = ConfigValues()
        values.person = who.person
        let configuration = try live.configuration(values)
        // Whose it will be, known before any wait.
        r.person = try History.pairingOwner(HistoryEnvironment.process(configuration))
        let request = r
        _ = LiveLogging.bootstrap(level: configuration.logLevel.value.rawValue)
        try await offPool {
            let environment = HistoryEnvironment.process(configuration)
            let stop = StopSignal()
            let signals = StopSignals.handle { _ in stop.stop() }
            let outcome = try Pairing.pair(request, checkStore: { () throws(StoreError) in try environment.checkIntakeStoreCanBeOpened() },
                                           openStore: { () throws(StoreError) in try environment.openIntakeStore(creating: true) },
                                           stop: stop) { LineOutput.write($0) }
            signals.cancel()
            let d = outcome.device
            LineOutput.write(outcome.confirmation)
            LineOutput.write("paired \(d.address) (\(d.addressType ?? "public"), \(outcome.how)) as \(d.profile ?? "-")"
                             + (d.name.map { " \"\($0)\"" } ?? "") + (request.person.map { " for \($0)" } ?? ""))
            if let c = d.calibration {
                LineOutput.write("calibration: \(DeviceListing.summary(c))")
            } else {
                LineOutput.write("not calibrated yet: run `quench calibrate \(d.address)` (a level sensor needs a level curve)")
            }
        }
    }
}

struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices", abstract: "List paired devices, or give one to someone.",
        subcommands: [List.self, Assign.self], defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List paired devices.")
        @OptionGroup var store: StoreOptions
        func run() throws {
            try runReporting {
                let devices = try store.environment().openStore(creating: false).listDevices()
                if store.json { for d in devices { print(DeviceListing.jsonLine(d)) } } else { print(DeviceListing.table(devices)) }
            }
        }
    }

    struct Assign: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Give a paired device to someone: its next events are theirs, its past ones stay with whoever drank them (with --since, from then on theirs too).")
        @Argument(help: "The device's address.") var address: String
        @Option(help: ArgumentHelp("Its events from this time on are theirs too (someone else's bottle this morning): 07:00, today, 2026-11-30 07:00.",
                                   valueName: "TIME"))
        var since: String?
        @OptionGroup var store: StoreOptions
        @OptionGroup var who: PersonOption
        func run() throws {
            emit(try History.assignDevice(store.environment(who), address: QuenchGateway.normalizedAddress(address), since: since, json: store.json))
        }
    }
}

struct ForgetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "forget", abstract: "Remove a paired device (its history stays).")
    @Argument(help: "The device's address.") var address: String
    @OptionGroup var store: StoreOptions
    func run() throws {
        try runReporting {
            let key = QuenchGateway.normalizedAddress(address)
            guard try store.environment().openStore(creating: false).forgetDevice(address: key) else {
                throw LiveError.unknownDevice(address)
            }
            print("forgot \(key); its events stay in the history")
        }
    }
}

struct CalibrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calibrate", abstract: "Calibrate a paired device: empty and full bottle (weight), or level points (level).",
        discussion: "Without flags, and on a terminal, it guides you step by step. Non-interactively: --empty-now measures the bottle on the device now as empty; --full-now measures it as full (with --full ML for a level sensor); --point LEVEL:ML adds a level point by hand.")
    @Argument(help: "The device's address.") var device: String
    @Flag(help: "Measure the empty bottle now.") var emptyNow = false
    @Flag(help: "Measure the full bottle now.") var fullNow = false
    @Option(help: "The full bottle's volume in mL (its capacity).") var full: Double?
    @Option(help: ArgumentHelp("A level point (repeatable).", valueName: "LEVEL:ML")) var point: [String] = []
    @Option(help: "Seconds to listen for each measurement.", transform: parseSeconds) var seconds: Double = 5
    @OptionGroup var live: LiveOptions

    func run() async throws {
        var r = Calibration.Request(address: device)
        (r.emptyNow, r.fullNow, r.fullML, r.points, r.seconds) = (emptyNow, fullNow, full, point, seconds)
        r.interactive = !emptyNow && !fullNow && point.isEmpty && full == nil && isatty(0) == 1
        let (request, configuration) = (r, try live.configuration())
        let logger = LiveLogging.bootstrap(level: configuration.logLevel(otherwise: .warning).rawValue)
        try await offPool {
            let store = try configuration.openStore(creating: false)
            try Calibration.run(request, store: store, transport: .kernel(), logger: logger,
                                ask: { LineOutput.write($0); return readLine() }, write: LineOutput.write)
        }
    }
}

struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "watch", abstract: "Show a device's live readings and the detector's state.")
    @Argument(help: "A paired device's address.") var address: String
    @Option(help: "Stop after this many seconds (default: Ctrl-C).", transform: parseSeconds) var seconds: Double?
    @Option(help: .hidden, transform: parseClockRate) var clockRate: Double = 1
    @OptionGroup var live: LiveOptions

    func run() async throws {
        let (address, seconds, configuration, rate) = (address, seconds, try live.configuration(), clockRate)
        let logger = LiveLogging.bootstrap(level: configuration.logLevel(otherwise: .warning).rawValue)
        try await offPool {
            let store = try configuration.openStore(creating: false)
            let device = try Gateway.devices(in: store, only: [address])[0]
            LineOutput.write("watching \(device.label) (\(ProfileRegistry.identifier(device.profile))); Ctrl-C to stop")
            LineOutput.write(Watch.header)
            var options = Gateway.Options()
            options.clockRate = rate
            Watch.run(device, seconds: seconds, options: options, transport: .kernel(), logger: logger) { LineOutput.write($0.line) }
        }
    }
}

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run", abstract: "The gateway: log sips from every paired device into the store until stopped.",
        discussion: "GATT devices are connected and subscribed, broadcast scales heard through one shared scan. Events are stored as they become final. SIGINT or SIGTERM stops it cleanly.")
    @Option(name: .customLong("device"), help: "Only this device (repeatable; default: `devices` in [gateway] of the config file, else all paired).")
    var devices: [String] = []
    @Flag(help: "Print events as JSON lines.") var json = false
    @Option(help: "Seconds allowed for each connection attempt (default: `connect_timeout` in [gateway] of the config file, else 10).",
            transform: parseSeconds)
    var connectTimeout: Double?
    @Option(help: ArgumentHelp("The Bluetooth adapter to scan and connect with (default: `adapter` in [gateway] of the config file, else the first).",
                               valueName: "hciN"))
    var adapter: String?
    @Option(help: "Stop after this many seconds (default: until a signal).", transform: parseSeconds) var seconds: Double?
    @Option(help: ArgumentHelp("Bottles that keep their own sips (HidrateSpark): connect every MIN minutes, drain, disconnect "
                               + "(default: `drain_every` in [gateway] of the config file, else stay connected).", valueName: "MIN"))
    var drainEvery: Double?
    @Flag(help: "Connected bottles other gateways are configured for too: connect one only when the claims on the broker say this gateway hears it best (default: `hand_over` in [gateway] of the config file).")
    var handOver = false
    @Option(help: .hidden, transform: parseClockRate) var clockRate: Double = 1
    @Flag(help: "Also publish to the MQTT broker of [mqtt] in the config file (or $QUENCH_MQTT) while running; the service uses quench-mqtt.service instead.")
    var mqtt = false
    @OptionGroup var live: LiveOptions

    func validate() throws {
        if let drainEvery, !(drainEvery.isFinite && drainEvery > 0) { throw ValidationError("--drain-every must be a positive number of minutes") }
        if let adapter, BluetoothAdapterName.index(adapter) == nil { throw ValidationError("--adapter '\(adapter)' is not an adapter hci0 to hci15") }
    }

    func run() async throws {
        var values = ConfigValues(devices: devices.isEmpty ? nil : devices, connectTimeout: connectTimeout, drainEvery: drainEvery)
        values.adapter = adapter.flatMap(BluetoothAdapterName.index)
        values.handOver = handOver ? true : nil
        let configuration = try live.configuration(values)
        var request = Gateway.RunRequest(databasePath: configuration.database.value)
        request.devices = configuration.devices.value
        request.logLevel = configuration.logLevel.value.rawValue
        request.options.connectTimeout = configuration.connectTimeout.value
        request.options.drainInterval = configuration.drainEvery.value.map { $0 * 60 }
        request.options.handOver = configuration.handOver.value ? HandOverRule() : nil
        request.adapter = configuration.adapter.value
        request.seconds = seconds
        request.options.clockRate = clockRate
        request.createsDatabase = false
        let (runRequest, json) = (request, json)
        let publisher = try mqtt ? BackgroundPublisher(settings: configuration.mqttSettings(), environment: HistoryEnvironment.process(configuration),
                                                       logger: LiveLogging.bootstrap(level: request.logLevel)) : nil
        defer { publisher?.stop() }
        try await offPool {
            do {
                try Gateway.runUntilStopped(runRequest) { LineOutput.write(EventFormat.line($0, json: json)) }
            } catch let error as LiveError where error.exitStatus != 1 {
                // A status of its own (75: the adapter did not recover), as quenchd's.
                FileHandleStderr.write("quench: error: \(commandLineMessage(for: error))\n")
                throw ExitCode(error.exitStatus)
            }
        }
    }
}

struct RecordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "record", abstract: "Record a device's readings as a trace v1 file, for replay.")
    @Argument(help: "A paired device's address.") var address: String
    @Option(help: "The trace file to write.") var out: String
    @Option(help: "Seconds to record, counted from the first reading (default: until Ctrl-C); with no reading within \(Int(TraceRecorder.firstReadingWithin)) s, it gives up.",
            transform: parseSeconds) var seconds: Double?
    @Option(help: .hidden, transform: parseClockRate) var clockRate: Double = 1
    @OptionGroup var live: LiveOptions

    func run() async throws {
        let (address, out, seconds, configuration) = (address, out, seconds, try live.configuration())
        var options = Gateway.Options()
        options.clockRate = clockRate
        let recordOptions = options
        let logger = LiveLogging.bootstrap(level: configuration.logLevel(otherwise: .warning).rawValue)
        try await offPool {
            let store = try configuration.openStore(creating: false)
            let device = try Gateway.devices(in: store, only: [address])[0]
            LineOutput.write("recording \(device.label) (\(ProfileRegistry.identifier(device.profile))) to \(out); Ctrl-C to stop")
            let n = try TraceRecorder.record(device, to: out, seconds: seconds, options: recordOptions, transport: .kernel(), logger: logger)
            LineOutput.write("wrote \(out): \(n) readings from \(device.label)")
        }
    }
}
#endif

struct DoctorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor", abstract: "Check what logging sips needs here: Bluetooth, the adapter, permissions, the database, the service, the clock.",
        discussion: "Each problem comes with a command that fixes it. Exit status 0 when nothing is a FAIL (warnings allowed), 1 otherwise.")
    @OptionGroup var store: StoreOptions
    func run() throws {
        let configuration: Configuration
        do {
            configuration = try store.configuration()
        } catch ConfigError.untrusted(let problem) {
            // A configuration file refused: name it and its fix; the rest waits until it is read.
            let report = Doctor.report(Doctor.trust([Doctor.TrustedFile(name: "config file", path: problem.file)]))
            print(store.json ? Doctor.json(report) : Doctor.text(report))
            throw ExitCode(1)
        } catch let error as ConfigError {
            // One that does not read: said first, and the machine checked as if there were no file.
            let path = StoreLocation.resolve(explicit: store.db, environment: ProcessInfo.processInfo.environment)
            let checked = Doctor.run(databasePath: path, files: [Doctor.TrustedFile(name: "database file", path: path, isData: true)])
            let report = Doctor.report([Doctor.unreadableConfiguration("\(error)")] + checked.checks)
            print(store.json ? Doctor.json(report) : Doctor.text(report))
            throw ExitCode(1)
        }
        let environment = try store.environment()
        let path = environment.databasePath
        var probes = Doctor.Probes.system
        // The history commands' clock (QUENCH_NOW when set, read once there): a backup or a drink "in the future"
        // is judged by the same clock.
        probes.now = { environment.now }
        if configuration.mqttBroker.value != nil {
            let settings = try configuration.mqttSettings()
            let node = NodeID.resolve(configured: settings.configuredNodeID,
                                      database: (try? IntakeStore(path: path, mode: .existing).mqttIdentity().nodeID) ?? "unknown")
            probes.mqtt = { ("\(settings.broker) (node id \(node.id), from \(node.from))", MQTTPublisher.probe(settings)) }
        }
        // Each file Quench obeys or keeps a secret in: only root or this user may be able to write it.
        var files = configuration.files.filter { $0.present == true }.map { Doctor.TrustedFile(name: "config file (\($0.role))", path: $0.path) }
        files.append(Doctor.TrustedFile(name: "database file", path: path, isData: true))
        files.append(Doctor.TrustedFile(name: "web token file", path: configuration.tokenPath, isData: true))
        for (name, file) in [("mqtt password file", configuration.mqttPasswordFile.value), ("mqtt CA file", configuration.mqttCAFile.value),
                             ("reminders command", configuration.reminderCommand.value)] {
            if let file { files.append(Doctor.TrustedFile(name: name, path: file)) }
        }
        var report = Doctor.run(databasePath: path, files: files, probes: probes)
        let backups = BackupSet(folder: configuration.backupDir.value ?? BackupSet.defaultFolder(forDatabase: path), database: path)
        report = Doctor.report(report.checks + [Doctor.lastBackup(backups, now: probes.now(), databaseExists: FileManager.default.fileExists(atPath: path))])
        print(store.json ? Doctor.json(report) : Doctor.text(report))
        if !report.healthy { throw ExitCode(1) }
    }
}
