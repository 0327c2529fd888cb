import ArgumentParser
import BluetoothWire
import QuenchServe
import QuenchCore
import QuenchComposition
import QuenchGateway
import QuenchHistory
import QuenchProfiles
import QuenchStore
#if canImport(Glibc)
import Glibc
#endif

/// Whose the stored events are, after "stored: …", in a household. Events stored before stay whose they
/// were: "Alex's" of ten that stayed Sam's said what did not happen; with some new, the new ones are said.
private func whose(_ person: (name: String, by: PipelineStore.Attribution), new: Int, alreadyThere: Int) -> String {
    let name = person.name.shownSafely(limit: 40)
    let kept = " (those already there stay whose they were: `quench edit ID --to NAME` gives one to someone else)"
    switch person.by {
    case .named where alreadyThere > 0: return (new == 0 ? "" : ", the new ones \(name)'s") + kept
    case .named: return ", \(name)'s"
    case .owner: return ", \(name)'s (the device is theirs)"
    case .first:
        return ", \(name)'s (the household's first person: the device is nobody's; --person NAME stores a trace as someone's, "
            + "`quench edit ID --to NAME` gives one drink to who drank it)"
    }
}

struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Run a recorded trace, or a Bluetooth capture, through the sip detector.",
        discussion: """
            FILE is a trace v1 CSV (docs/trace-format.md), or - for standard input. With --btsnoop, the \
            readings come from a btsnoop capture instead (btmon -w, Android's HCI snoop log): one device's \
            advertisements or notifications, t = 0 at the capture's first record.
            """
    )

    @Argument(help: "Trace file, or - for standard input.")
    var file: String?

    @Option(help: ArgumentHelp("A btsnoop capture to take the readings from, instead of a trace (- for standard input).",
                               valueName: "FILE"))
    var btsnoop: String?

    @Option(help: ArgumentHelp("With --btsnoop: how to read the device (\(ProfileRegistry.identifiers.joined(separator: ", ")), "
                               + "or a profile file); default: what its traffic shows.", valueName: "P"))
    var profile: String?

    @Flag(help: "One JSON object a line per event.")
    var json = false

    @Option(help: "Wall-clock start (ISO-8601) for a trace without '# started:', or in place of one (a recorder's clock that was wrong).",
            transform: parseInstant)
    var started: Timestamp?

    @Flag(help: "Also write the events into the intake store (idempotent).")
    var store = false

    @Option(help: ArgumentHelp("Device the trace came from, when the header has no '# device:' (for --store); "
                               + "with --btsnoop, the address of the device to replay (default: the first that sends readings)."))
    var device: String?

    @Option(help: ArgumentHelp("Whose the stored events are, in a household (for --store; default: the device's owner, else the first person).",
                               valueName: "NAME"))
    var person: String?

    @Option(help: databaseHelp)
    var db: String?

    @OptionGroup var calibration: CalibrationOptions

    func validate() throws {
        if let curve = calibration.levelCurve, curve.points.count < 2 { throw ValidationError("bad --level-curve") }
        switch (file, btsnoop) {
        case (nil, nil): throw ValidationError("give a trace FILE, or --btsnoop FILE")
        case (.some, .some): throw ValidationError("give either a trace FILE or --btsnoop FILE, not both")
        default: break
        }
        if profile != nil && btsnoop == nil { throw ValidationError("--profile applies to --btsnoop captures") }
        // Ignored there before, silently: a capture's values are what its profile says they are.
        if btsnoop != nil, calibration.unit != nil || calibration.sensor != nil {
            throw ValidationError("--unit and --sensor apply to traces: a capture's values are what its profile reads (a profile file names its `unit`)")
        }
        // With a capture, --device picks the device by its address: said as the option's error (it exited 1, unnamed).
        if btsnoop != nil, let device, BluetoothAddress(device) == nil {
            throw ValidationError("--device \"\(device.shownSafely(limit: 40))\" is not a Bluetooth address (like F0:F1:F2:F3:F4:F5)")
        }
        if person != nil && !store { throw ValidationError("--person says whose the stored events are: give --store too") }
    }

    func run() throws {
        var options = calibration.replayOptions()
        options.started = started
        try runReporting {
            let output = StandardOutput()
            // Checked before the replay so a bad database fails fast; made only when there is something to store.
            let environment = store ? try HistoryEnvironment.process(database: db, units: nil) : nil
            try environment?.checkIntakeStoreCanBeOpened()
            let intakeStore = environment.map { env in { () throws in try env.openStore(creating: true) } }
            // Whose the events are, checked before the replay too: a history not made yet has its first person alone.
            if let person, let environment {
                let people = access(environment.databasePath, F_OK) == 0 ? try environment.openStore(creating: false).people().map(\.name) : [Person.defaultName]
                try PipelineStore.checkPerson(person, among: people)
            }
            var found: [DetectedEvent] = []
            var started: Timestamp?
            let onStart: (TraceHeader, BottleCalibration) throws -> Void = { header, _ in
                started = options.started ?? header.started
                if intakeStore != nil {
                    let source = file ?? btsnoop ?? "-"
                    _ = try PipelineStore.startTime(header: header, started: options.started, source: source)
                    _ = try PipelineStore.deviceLabel(header: header, device: device, source: source)
                }
                if !json { output.write(EventFormat.tableHeader + "\n") }
            }
            let onEvent: (DetectedEvent) -> Void = { event in
                if intakeStore != nil { found.append(event) }
                output.write((json ? EventFormat.jsonLine(event, started: started) : EventFormat.tableRow(event, started: started)) + "\n")
            }
            let summary: ReplaySummary
            let source = file ?? btsnoop!
            if let btsnoop {
                let capture = try BTSnoopReplayOptions(parsingDevice: device, profile: profile)
                let capturePath = TraceSource(argument: btsnoop)
                if capture.profile?.reportsSips == true {
                    _ = try replayBottle(capturePath, capture, into: intakeStore, output)
                    return
                }
                let result: BTSnoopReplayResult
                do {
                    result = try BTSnoopReplay.run(capturePath, capture: capture, options: options, onStart: onStart, onEvent: onEvent)
                } catch let error as BTSnoopReplayError {
                    // No readings: perhaps a bottle that reports its own sips (read again, as one).
                    guard case .noReadings = error, capture.profile == nil, btsnoop != "-" else { throw error }
                    if try replayBottle(capturePath, capture, into: intakeStore, output) { return }
                    // As the first reading said it: what the capture holds (it said "0 advertising reports"
                    // of a capture of 1,090).
                    throw error
                }
                summary = result.summary
                for line in BTSnoopReplay.notes(result, source: capturePath.description, choosing: " (choose with --device)") { FileHandleStderr.write("quench: \(line)\n") }
            } else {
                summary = try Replay.run(TraceSource(argument: source), options: options, onStart: onStart, onEvent: onEvent)
            }
            if !json { output.write("\n" + EventFormat.summary(summary) + "\n") }
            if !summary.doubts.isEmpty { output.flush() }
            for doubt in summary.doubts { FileHandleStderr.write("quench: \(source): \(doubt)\n") }
            if let line = summary.header.unterminatedReadingLine {
                FileHandleStderr.write("quench: \(source):\(line): the file ends without a line end after this reading: "
                                       + "if the recording was cut off there, the reading may be cut too (it was read as written)\n")
            }
            if summary.readings == 0 {
                // A header and nothing after it is a valid trace, but rarely the one meant (a logger that
                // stopped before its first reading, the wrong file): said, since "0 readings" is easy to miss.
                output.flush()
                FileHandleStderr.write("quench: \(source): no readings in it, only its header: nothing was replayed\n")
            }
            if summary.header.droppedMetadata > 0 {
                FileHandleStderr.write("quench: \(source): \(summary.header.droppedMetadata) header lines beyond the first \(TraceFormat.maximumMetadata) were not kept\n")
            }
            let now = environment?.now ?? .wallClockNow
            var refused: [PipelineStore.Refusal] = []
            // Nothing to store, or nothing a history can hold: no database is made for it (one that is there is
            // left as it is; a trace started in 1960 made an empty one).
            let unmade = intakeStore != nil && environment.map { access($0.databasePath, F_OK) != 0 } == true
            let judged = unmade ? PipelineStore.judge(found, started: try PipelineStore.startTime(header: summary.header, started: options.started, source: source),
                                                      now: now) : nil
            if let judged, !judged.kept.contains(where: { !$0.kind.isDiagnostic }) {
                if !json { output.write("stored: nothing to store\n") }
                refused = judged.refused
            } else if let intakeStore {
                let outcome = try PipelineStore.ingest(
                    found, header: summary.header, started: options.started, device: device, source: source,
                    now: now, person: person, into: intakeStore())
                if !json {
                    let (new, there) = (outcome.result.inserted, outcome.result.duplicates)
                    output.write("stored: \(new) new, \(there) already there"
                                 + (outcome.person.map { whose($0, new: new, alreadyThere: there) } ?? "") + "\n")
                }
                refused = outcome.refused
            }
            output.flush()
            for refusal in refused {
                let event = refusal.event
                FileHandleStderr.write("quench: \(source): not stored: a \(event.kind.rawValue) of \(event.ml) mL at t=\(event.start) s \(refusal.reason)\n")
            }
            if !refused.isEmpty { throw ExitCode(1) }
        }
    }

    /// A bottle that reports its own sips (HidrateSpark): its frames, not the
    /// detector; stored under the identities the gateway uses. False when the
    /// capture holds none of its sips.
    func replayBottle(_ capture: TraceSource, _ options: BTSnoopReplayOptions, into intakeStore: (() throws -> IntakeStore)?,
                      _ output: StandardOutput) throws -> Bool {
        let result = try HidrateSparkCapture.read(capture, device: options.device, capacityML: calibration.capacity ?? HidrateSpark.defaultCapacityML)
        guard let device = result.device, !result.sips.isEmpty else {
            if options.profile != nil { throw BTSnoopReplayError.noReadings(path: capture.description, device: options.device, profile: options.profile, advertisements: 0, attValues: 0) }
            return false
        }
        FileHandleStderr.write("quench: \(capture.description): replaying \(device) as hidrate-spark (\(result.layout?.rawValue ?? "legacy") frames)\n")
        for note in result.notes { FileHandleStderr.write("quench: \(capture.description): \(note)\n") }
        let (started, events) = HidrateSparkCapture.events(result.sips)
        if !json { output.write(EventFormat.tableHeader + "\n") }
        for event in events {
            output.write((json ? EventFormat.jsonLine(event, started: started, device: device.description)
                               : EventFormat.tableRow(event, started: started)) + "\n")
        }
        if !json { output.write("\n\(events.count) sip\(events.count == 1 ? "" : "s") the bottle sent, \(TraceWriter.fixed(events.reduce(0) { $0 + $1.ml }, places: 0)) mL\n") }
        if let intakeStore {
            let stored = try HidrateSparkCapture.store(result.sips, device: device.description, into: intakeStore())
            if !json { output.write("stored: \(stored.inserted) new, \(stored.duplicates) already there\n") }
        }
        output.flush()
        return true
    }
}
