// quenchd: the gateway alone (`quench run` without the rest of the command
// line), for the service. No argument-parsing framework: the runtime type
// lookups it needs fault in megabytes of a static binary, and this process
// runs for months on a Pi. Options left out come from the configuration
// file (/etc/quench/quench.toml, or --config / $QUENCH_CONFIG), then the defaults.
//
//   quenchd [--config PATH] [--db PATH] [--device ADDRESS]... [--seconds S] [--json]
//           [--connect-timeout S] [--adapter hciN] [--drain-every MIN] [--log-level LEVEL]
#if canImport(Glibc)
import Glibc
#endif
import BluetoothWire
import CommandLineAdvice
import QuenchConfig
import QuenchCore
import QuenchGateway
import QuenchStore

func fail(_ message: String, status: Int32) -> Never {
    let text = "quenchd: \(message)\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
    exit(status)
}

struct Arguments {
    var rest: ArraySlice<String>

    mutating func value(after flag: String) -> String {
        guard let v = rest.popFirst() else { fail("\(flag) needs a value", status: 64) }
        return v
    }

    mutating func seconds(after flag: String) -> Double {
        let text = value(after: flag)
        guard let n = Double(text).flatMap(Configuration.duration) else {
            fail("\(flag): '\(text)' is not a positive number, a year at most", status: 64)
        }
        return n
    }
}

if let problem = ArgumentBytes.firstNotUTF8() { fail(problem, status: 64) }
// Nothing to reload (the configuration is read at start): a `kill -HUP` ended the gateway, as a clean
// stop that Restart=on-failure does not restart (the service trial). `systemctl restart quench` reads it again.
signal(SIGHUP, SIG_IGN)
var arguments = Arguments(rest: CommandLine.arguments.dropFirst())
var given = ConfigValues()
var configFile: String?
var request = Gateway.RunRequest(databasePath: "")
var json = false
while let flag = arguments.rest.popFirst() {
    switch flag {
    case "--config": configFile = arguments.value(after: flag)
    case "--db": given.database = arguments.value(after: flag)
    case "--device":
        // Here, not as the configuration's key: a usage error (64), in the option's words (it said 78, "an array").
        let address = arguments.value(after: flag)
        guard BluetoothAddress(address) != nil else { fail("--device: '\(address)' is not a Bluetooth address like F0:F1:F2:F3:F4:F5", status: 64) }
        given.devices = (given.devices ?? []) + [address]
    case "--seconds": request.seconds = arguments.seconds(after: flag)
    case "--connect-timeout": given.connectTimeout = arguments.seconds(after: flag)
    case "--adapter":
        let name = arguments.value(after: flag)
        guard let index = BluetoothAdapterName.index(name) else { fail("--adapter: '\(name)' is not an adapter hci0 to hci15", status: 64) }
        given.adapter = index
    case "--clock-rate": request.options.clockRate = arguments.seconds(after: flag)
    case "--drain-every": given.drainEvery = arguments.seconds(after: flag)
    case "--hand-over": given.handOver = true
    case "--log-level":
        let name = arguments.value(after: flag)
        guard let level = LogLevel(name: name) else { fail("--log-level: '\(name)' is not \(LogLevel.expected)", status: 64) }
        given.logLevel = level
    case "--json": json = true
    case "-h", "--help":
        print("usage: quenchd [--config PATH] [--db PATH] [--device ADDRESS]... [--seconds S] [--json] [--connect-timeout S] [--adapter hciN] [--drain-every MIN] [--hand-over] [--log-level LEVEL]")
        exit(0)
    default: fail("unknown argument '\(flag)' (see quenchd --help)", status: 64)
    }
}
let inputs = ConfigInputs.process()
let configuration: Configuration
do {
    configuration = try Configuration.resolve(commandLine: given, configFile: configFile, for: .quenchd,
                                              defaultDatabase: StoreLocation.defaultPath(environment: inputs.variables), inputs: inputs)
} catch {
    // EX_CONFIG (sysexits.h).
    fail("\(error)", status: 78)
}
request.databasePath = configuration.database.value
request.devices = configuration.devices.value
request.logLevel = configuration.logLevel.value.rawValue
request.options.connectTimeout = configuration.connectTimeout.value
request.adapter = configuration.adapter.value
request.options.drainInterval = configuration.drainEvery.value.map { $0 * 60 }
request.options.handOver = configuration.handOver.value ? HandOverRule() : nil
let printJSON = json
do {
    // Each stored event, as it is committed, to standard output (the journal, under systemd).
    // Nothing paired (yet) is no failure: it waits for a pairing (`Gateway.serve`).
    try Gateway.serve(request, explain: { CommandLineAdvice.message("\($0)", leaf: $0) }) { committed in
        try? writeAll(Array((EventFormat.line(committed, json: printJSON) + "\n").utf8), to: 1)
    }
} catch {
    // 75 (EX_TEMPFAIL) when the adapter stayed stuck through the recovery ladder: systemd restarts it;
    // 78 (EX_CONFIG) for a database a restart cannot mend.
    fail("error: " + CommandLineAdvice.message("\(error)", leaf: error), status: error.exitStatus)
}
