import BluetoothWire
import QuenchCore
import QuenchStore

/// Writing what a replay or the demo found into the intake store: the same
/// path live ingestion takes.
public enum PipelineStore {
    public enum Failure: Error, Sendable, CustomStringConvertible {
        case noStartTime(source: String)
        /// `--device` names another device than the header's `# device:`.
        case deviceDiffers(source: String, header: String, given: String)
        /// A device label no history holds (a control character, too long), and where it was given.
        case badDevice(source: String, givenIn: String, problem: String)
        /// `--person` names nobody in the household.
        case unknownPerson(String, people: [String])
        case store(StoreError)

        public var description: String {
            switch self {
            case .noStartTime(let source): "\(source): the trace has no '# started:' time"
            case .deviceDiffers(let source, let header, let given):
                "\(source): the header says '# device: \(header.shownSafely(limit: 80))', not '\(given.shownSafely(limit: 80))': "
                    + "stored under another device, its events would be stored again (leave out --device)"
            case .badDevice(let source, let givenIn, let problem): "\(source): \(givenIn): \(problem); nothing was stored"
            case .unknownPerson(let name, let people):
                "nobody is called '\(name.shownSafely(limit: 40))' (people: \(people.map { $0.shownSafely(limit: 40) }.joined(separator: ", "))); nothing was stored"
            case .store(let error): error.description
            }
        }
    }

    /// What was stored, and the events the store cannot hold.
    public struct Outcome: Sendable {
        public var result: IngestResult
        /// Events outside what a history holds (an amount past 100 L, a time
        /// outside 1970–9999) or still to come: garbage from a broken trace or a
        /// wrong `--started`, named, not stored.
        public var refused: [Refusal]
        /// Whose the events are, said where several people share the history.
        public var person: (name: String, by: Attribution)?
    }

    /// Why the events are someone's: named (`--person`), the device's owner, else the household's first person.
    public enum Attribution: Sendable {
        case named, owner, first
    }

    /// An event not stored, and why, in words that end a sentence about it.
    public struct Refusal: Sendable {
        public var event: DetectedEvent
        public var reason: String
    }

    /// When the trace's t = 0 was on the wall clock, which storing needs: known from
    /// the header (or `--started`), so a replay that could not be stored fails before
    /// it reads a reading.
    public static func startTime(header: TraceHeader, started override: Timestamp?, source: String) throws(Failure) -> Timestamp {
        guard let started = override ?? header.started else { throw .noStartTime(source: source) }
        return started
    }

    /// The device the events are stored under: the header's `# device:`, else `device` (`--device`).
    /// Both, and different, is refused: an event's identity holds its device, so a trace stored
    /// again under another name would count every drink twice.
    /// A label no history holds is refused here, before the replay (it failed as the events were
    /// stored, after the whole table, with a database made for nothing).
    public static func deviceLabel(header: TraceHeader, device given: String?, source: String) throws(Failure) -> String? {
        // Empty is none, as the store takes it (`# device:` left blank, `--device ""`).
        let device = TextField.eventDevice.stored(given)
        guard let named = TextField.eventDevice.stored(header["device"]) else {
            if let device, let problem = TextField.eventDevice.problem(device) { throw .badDevice(source: source, givenIn: "--device", problem: problem) }
            return device
        }
        if let problem = TextField.eventDevice.problem(named) { throw .badDevice(source: source, givenIn: "'# device:' in its header", problem: problem) }
        // An address in any case, with `:` or `-`, is the same device (with --btsnoop, --device picks it).
        if let device, normalizedAddress(device) != normalizedAddress(named) { throw .deviceDiffers(source: source, header: named, given: device) }
        return named
    }

    /// Refuses a `--person` nobody in the household (`names`; a new history's: its first person alone) is
    /// called: checked before the replay, and again as the events are stored.
    public static func checkPerson(_ name: String, among names: [String]) throws(Failure) {
        guard names.contains(where: { Person.sameName($0, name) }) else { throw .unknownPerson(name, people: names) }
    }

    /// The events a history can hold (diagnostics among them), and those it cannot, each with why.
    public static func judge(_ events: [DetectedEvent], started: Timestamp, now: Timestamp) -> (kept: [DetectedEvent], refused: [Refusal]) {
        var kept: [DetectedEvent] = []
        var refused: [Refusal] = []
        for event in events {
            let time = started.secondsSince1970 + event.start
            if event.kind.isDiagnostic {
                kept.append(event)
            } else if !IntakeEvent.holds(ml: event.ml) {
                refused.append(Refusal(event: event, reason: "is more than a history holds (up to 100 L)"))
            } else if !IntakeEvent.plausibleTime.contains(time) {
                refused.append(Refusal(event: event, reason: "falls outside the years a history holds (1970-9999): check the trace's started time or --started"))
            } else if time > now.secondsSince1970 + IntakeEvent.clockSlack {
                refused.append(Refusal(event: event, reason: "is in the future (\(Timestamp(secondsSince1970: time).iso8601), now \(now.iso8601)): check the trace's started time or --started"))
            } else {
                kept.append(event)
            }
        }
        return (kept, refused)
    }

    /// Ingests `events` in one transaction; replaying the same trace again adds
    /// nothing. An event the store cannot hold is refused by itself and the
    /// others are stored: each event was judged on its own, so a garbage spike
    /// that made an absurd "refill" must not cost the real sips (the command
    /// names it and exits non-zero).
    /// Events after `now` (a `--started` tomorrow, or in 9999) are refused as
    /// `add` refuses a drink in the future: no today, streak or total could show them right.
    public static func ingest(
        _ events: [DetectedEvent], header: TraceHeader, started override: Timestamp?, device: String?,
        source: String, now: Timestamp, person: String? = nil, into store: IntakeStore
    ) throws(Failure) -> Outcome {
        let started = try startTime(header: header, started: override, source: source)
        let given = try deviceLabel(header: header, device: device, source: source)
        // An address is stored as pairing stores it (`AA:BB:…`), so the same trace given `aa:bb:…` or
        // `AA-BB-…` is the same device and adds nothing (each spelling stored every drink again), and
        // finds its paired device's owner. Events stored before under another spelling keep theirs, so
        // those are not doubled either.
        let label: String?
        do throws(StoreError) {
            label = try given.map { (text) throws(StoreError) in
                try BluetoothAddress(text).map { (address) throws(StoreError) in try store.deviceLabel(of: address) } ?? text
            }
        } catch {
            throw .store(error)
        }
        let (kept, refused) = judge(events, started: started, now: now)
        // Read once: storing events adds nobody.
        let people: [Person]
        do throws(StoreError) { people = try store.people() } catch { throw .store(error) }
        // Said before anything is stored, also when every event is there already.
        if let person { try checkPerson(person, among: people.map(\.name)) }
        let named = person.flatMap { name in people.first { Person.sameName($0.name, name) } }
        do throws(StoreError) {
            let result = try store.ingest(kept, device: label, started: started, person: person)
            // As the store gives them: to the person named, else the device's owner, else the household's first person.
            var whose: (name: String, by: Attribution)?
            if people.count > 1, let first = people.first {
                let owners = try store.deviceOwners()
                let owner = label.flatMap { owners[$0] }.flatMap { id in people.first { $0.id == id } }
                whose = named.map { ($0.name, .named) } ?? owner.map { ($0.name, .owner) } ?? (first.name, .first)
            }
            return Outcome(result: result, refused: refused, person: whose)
        } catch {
            throw .store(error)
        }
    }
}
