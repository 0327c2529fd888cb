import Foundation

/// Test support for `../shared/ble-vm`: a qemu VM with a real Linux Bluetooth
/// stack and emulated peripherals (see its README). Shared by the socket-layer
/// and the gateway's VM tests (the package root comes from QuenchTestSupport's
/// `TestPackage.root`); nothing here is linked into `quench`.
public enum BLEVMHarness {
    /// `../shared/ble-vm` beside the package.
    public static func folder(packageRoot: URL) -> URL {
        packageRoot.deletingLastPathComponent().appendingPathComponent("shared/ble-vm")
    }

    public struct Result: Sendable {
        public var status: Int32
        public var output: String
        /// run.sh's own failure (usage, setup stale, a peripheral or the VM did not start).
        public var harnessFailed: Bool { status == 125 }
    }

    /// The one command that prepares the harness (`.ci/run` runs it); tests never run it themselves,
    /// since it installs system packages.
    public static func prepareCommand(packageRoot: URL) -> String {
        folder(packageRoot: packageRoot).appendingPathComponent("setup.sh").path
    }

    /// Why the harness cannot be used here, or nil when it is ready. Checks what
    /// run.sh checks before it boots (the cache setup.sh builds, its fingerprint,
    /// the kernel files and qemu) without installing or building anything.
    public static func unavailableReason(packageRoot: URL) -> String? {
        let harness = folder(packageRoot: packageRoot)
        let runScript = harness.appendingPathComponent("run.sh").path
        guard FileManager.default.isExecutableFile(atPath: runScript) else { return "no ble-vm harness at \(runScript)" }
        let check = """
            . "$1/lib.sh" || exit 2
            CACHE=$(ble_vm_cache_dir)
            [ -f "$CACHE/setup.env" ] || { echo "no harness cache in $CACHE"; exit 1; }
            . "$CACHE/setup.env"
            [ "$FINGERPRINT" = "$(ble_vm_fingerprint)" ] || { echo "the cache in $CACHE was built from other harness files"; exit 1; }
            [ -f "$VMLINUX" ] && [ -f "$INITRD" ] || { echo "kernel files missing from $CACHE"; exit 1; }
            for t in $BLE_VM_TOOLS; do [ -x "$CACHE/bin/$t" ] || { echo "$CACHE/bin/$t missing"; exit 1; }; done
            command -v qemu-system-x86_64 > /dev/null || { echo "qemu-system-x86_64 is not installed"; exit 1; }
            """
        let prepare = "run `\(prepareCommand(packageRoot: packageRoot))` once (it installs qemu and builds the harness's cache; .ci/run does it)"
        guard let result = try? run("/bin/bash", ["-c", check, "check", harness.path], in: packageRoot) else {
            return "the ble-vm readiness check could not be started; \(prepare)"
        }
        guard result.status == 0 else {
            return "the ble-vm harness is not ready: \(result.output.trimmingCharacters(in: .whitespacesAndNewlines)); \(prepare)"
        }
        return nil
    }

    /// Boots a VM with `peripherals` (peripheral.py arguments each) and runs `command` in it.
    ///
    /// When the guest's kernel crashes (exit 123: Debian 12's 6.1, under a heavily loaded host, seen in
    /// hci_chan_del while an L2CAP socket closed during a link drop, and once during boot), it is said
    /// and the run made once more on a fresh VM, the peripherals' `--log`s emptied first; a second crash
    /// is the result. `beforeRetry` runs just before that second run, once the logs are emptied.
    public static func boot(packageRoot: URL, options: [String] = [], peripherals: [String], command: [String],
                            beforeRetry: () -> Void = {}) throws -> Result {
        var arguments = options
        for p in peripherals { arguments += ["--peripheral", advertisingOnceASecond(p)] }
        arguments += ["--"] + command
        let script = folder(packageRoot: packageRoot).appendingPathComponent("run.sh").path
        let first = try run(script, arguments, in: packageRoot)
        guard first.status == 123 else { return first }
        print("ble-vm: exit 123 (the guest kernel crashed)\n\(first.output)\nble-vm: running it once more on a fresh VM")
        for log in peripheralLogs(peripherals) { FileManager.default.createFile(atPath: log, contents: nil) }
        beforeRetry()
        return try run(script, arguments, in: packageRoot)
    }

    /// A device the gateway connects to advertises once a second unless its arguments say otherwise
    /// (real scales and bottles advertise every 0.1 to 2 s; the harness's default is 0.1): each report,
    /// twice per advertisement here, is work for the emulated guest, and with eight devices in a room
    /// 0.1 s cost a guest a fifth of its CPU (allProfiles: qemu 74 CPU-s, 60 at 1 s). A broadcast scale
    /// keeps 0.1 s: its readings ride in its advertisements.
    static func advertisingOnceASecond(_ peripheral: String) -> String {
        let words = peripheral.split(separator: " ")
        if words.contains("--adv-interval") || peripheral.contains("--profile mi-scale") { return peripheral }
        return peripheral + " --adv-interval 1000"
    }

    /// The `--log FILE`s the peripherals append to.
    static func peripheralLogs(_ peripherals: [String]) -> [String] {
        peripherals.flatMap { spec -> [String] in
            let words = spec.split(separator: " ").map(String.init)
            return zip(words, words.dropFirst()).compactMap { $0.0 == "--log" ? $0.1 : nil }
        }
    }

    /// Runs a program to its end with stdout and stderr together (through a file,
    /// so a chatty child cannot block on a full pipe).
    public static func run(_ executable: String, _ arguments: [String], in directory: URL) throws -> Result {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("quench-blevm-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: log) }
        let handle = try FileHandle(forWritingTo: log)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try handle.close()
        return Result(status: process.terminationStatus, output: (try? String(contentsOf: log, encoding: .utf8)) ?? "")
    }
}
