import Foundation
import QuenchCore
import QuenchSimulator
import QuenchStore

/// A person's years with a sensor bottle, as `quench serve` would find them on
/// a Pi: 6–12 sips a day (or as many as asked) from a paired HidrateSpark-type bottle (with its
/// refills and what was left after each sip), a manual drink (coffee, tea) on
/// most days, now and then a sip deleted by hand, a goal changed a few times,
/// in Europe/Berlin (daylight saving, a day starting at 04:00). Written in bulk:
/// `IntakeStore.insert` transactions of 5 000 events.
struct WebHistory {
    static let bottle = "E4:15:F6:21:7A:03"
    static let zone = "Europe/Berlin"

    struct Summary {
        var days = 0
        var sips = 0
        var manual = 0
        var refills = 0
        var deleted = 0
        var goals = 0
        var seconds = 0.0
        var bytes = 0
        var events: Int { sips + manual + refills }
    }

    static func build(path: String, years: Int, sips: ClosedRange<Int> = 6...12, now: Date, seed: UInt64 = 2026) throws -> Summary {
        let started = ContinuousClock.now
        var summary = try fill(IntakeStore(path: path), years: years, sips: sips, now: now, seed: seed)
        // The store is closed by now (its WAL checkpointed into the file).
        summary.seconds = inSeconds(ContinuousClock.now - started)
        summary.bytes = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        return summary
    }

    private static func fill(_ store: IntakeStore, years: Int, sips perDay: ClosedRange<Int>, now: Date, seed: UInt64) throws -> Summary {
        var random = SeededRandom(seed: seed)
        func uniform() -> Double { Double(random.next() >> 11) / Double(1 << 53) }

        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: zone)!
        // The day's start hour is 4: before 04:00 it is still yesterday.
        let todayStart = calendar.startOfDay(for: now.addingTimeInterval(-4 * 3600))
        let days = years * 365 + years / 4
        func civil(_ date: Date) -> CivilDay {
            let c = calendar.dateComponents([.year, .month, .day], from: date)
            return CivilDay(year: c.year!, month: c.month!, day: c.day!)!
        }
        func stamp(_ date: Date) -> Timestamp { Timestamp(secondsSince1970: (date.timeIntervalSince1970 * 1000).rounded() / 1000) }

        var summary = Summary(days: days + 1)
        try store.saveSettings(Settings(units: .ml, dayStartHour: 4, timeZone: zone))
        let firstDay = calendar.date(byAdding: .day, value: -days, to: todayStart)!
        try store.saveDevice(Device(address: bottle, name: "Blue bottle", profile: "hidrate-spark", sensor: .level,
                                    addedAt: stamp(firstDay.addingTimeInterval(9 * 3600)), lastSeenAt: stamp(now), addressType: "random"))
        try store.recordDeviceStatus(address: bottle, batteryPercent: 64, capOpen: false, seenAt: stamp(now))
        try store.recordLink(address: bottle, up: true, at: stamp(now.addingTimeInterval(-600)))

        // Goals: 2 L at first, raised for a hot summer, lowered, raised again.
        for (offset, ml) in [(0, 2000.0), (days * 3 / 10, 2500.0), (days * 4 / 10, 2200.0), (days * 8 / 10, 2400.0)] {
            let day = calendar.date(byAdding: .day, value: offset, to: firstDay)!
            try store.setGoal(ml: ml, from: civil(day), setAt: stamp(day.addingTimeInterval(8 * 3600)))
            summary.goals += 1
        }

        var left = 750.0
        var batch: [IntakeEvent] = []
        func add(_ kind: EventKind, _ ml: Double, at date: Date, left: Double?, source: EventSource, note: String? = nil, deleted: Bool = false) {
            let time = stamp(date)
            let identity = source == .manual ? "manual|bench-\(batch.count)-\(Int64(time.secondsSince1970 * 1000))"
                : IntakeEvent.sensorIdentity(device: bottle, kind: kind, time: time)
            batch.append(IntakeEvent(identity: identity, kind: kind, ml: ml, time: time, remainingML: left, source: source,
                                     device: source == .sensor ? bottle : nil, note: note, deleted: deleted,
                                     recordedAt: source == .sensor ? time : Timestamp(secondsSince1970: time.secondsSince1970 + 30)))
        }
        for offset in 0...days {
            let day = calendar.date(byAdding: .day, value: offset, to: firstDay)!
            // 07:00 to 22:00 local, 6–12 sips of about 110–310 mL (by default; about 1.9 L a day whatever
            // their number); the bottle (750 mL) refilled when it runs low.
            let sips = perDay.lowerBound + Int(uniform() * Double(perDay.count))
            let typical = 1900 / Double(perDay.lowerBound + perDay.upperBound) * 2
            var hour = 7.0 + uniform()
            for _ in 0..<sips {
                hour += (15.0 / Double(sips)) * (0.6 + 0.8 * uniform())
                let at = day.addingTimeInterval(min(hour, 23.5) * 3600)
                guard at < now else { break }
                let ml = max(5, (typical * (0.51 + 0.98 * uniform())).rounded())
                if left < ml + 30 {
                    add(.refill, 750 - left, at: at.addingTimeInterval(-120), left: 750, source: .sensor)
                    summary.refills += 1
                    left = 750
                }
                left -= ml
                let deleted = uniform() < 0.005
                add(.sip, ml, at: at, left: left, source: .sensor, deleted: deleted)
                summary.sips += 1
                if deleted { summary.deleted += 1 }
            }
            // A coffee or a tea on two days in three, typed in by hand.
            if uniform() < 0.67 {
                let at = day.addingTimeInterval((8 + 8 * uniform()) * 3600)
                if at < now {
                    add(.sip, uniform() < 0.5 ? 200 : 250, at: at, left: nil, source: .manual, note: uniform() < 0.5 ? "coffee" : "tea")
                    summary.manual += 1
                }
            }
            if batch.count >= 5000 || offset == days {
                _ = try store.insert(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        return summary
    }
}
