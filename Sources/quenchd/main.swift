// quenchd: the gateway alone (`quench run` without the rest of the command
// line), for the service. No argument-parsing framework: the runtime type
// lookups it needs fault in megabytes of a static binary, and this process
// runs for months on a Pi.
//
//   quenchd [--db PATH] [--device ADDRESS]... [--seconds S] [--json]
//           [--connect-timeout S] [--drain-every MIN] [--log-level LEVEL]
#if canImport(Glibc)
import Glibc
#endif
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
        guard let n = Double(text), n.isFinite, n > 0 else { fail("\(flag): '\(text)' is not a positive number", status: 64) }
        return n
    }
}

var arguments = Arguments(rest: CommandLine.arguments.dropFirst())
var database: String?
var request = Gateway.RunRequest(databasePath: "")
var json = false
while let flag = arguments.rest.popFirst() {
    switch flag {
    case "--db": database = arguments.value(after: flag)
    case "--device": request.devices.append(arguments.value(after: flag))
    case "--seconds": request.seconds = arguments.seconds(after: flag)
    case "--connect-timeout": request.options.connectTimeout = arguments.seconds(after: flag)
    case "--clock-rate": request.options.clockRate = arguments.seconds(after: flag)
    case "--drain-every": request.options.drainInterval = arguments.seconds(after: flag) * 60
    case "--log-level": request.logLevel = arguments.value(after: flag)
    case "--json": json = true
    case "-h", "--help":
        print("usage: quenchd [--db PATH] [--device ADDRESS]... [--seconds S] [--json] [--connect-timeout S] [--drain-every MIN] [--log-level LEVEL]")
        exit(0)
    default: fail("unknown argument '\(flag)' (see quenchd --help)", status: 64)
    }
}
var environment: [String: String] = [:]
for name in ["QUENCH_DB", "XDG_DATA_HOME", "HOME"] {
    if let v = getenv(name) { environment[name] = String(cString: v) }
}
request.databasePath = StoreLocation.resolve(explicit: database, environment: environment)
let printJSON = json
do {
    // Each stored event, as it is committed, to standard output (the journal, under systemd).
    try Gateway.runUntilStopped(request) { committed in
        try? writeAll(Array((EventFormat.line(committed, json: printJSON) + "\n").utf8), to: 1)
    }
} catch {
    fail("error: \(error)", status: 1)
}
