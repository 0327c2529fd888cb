/// Something to tell a person's phone: a reminder to drink now; a carer's alert
/// later (nobody drank for hours) goes the same way, with its own `kind`.
public struct PushMessage: Sendable, Equatable {
    /// What it is about; open-ended, so a newer kind needs no change here.
    public struct Kind: RawRepresentable, Sendable, Hashable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let reminder = Kind(rawValue: "reminder")
        public static let carerAlert = Kind(rawValue: "carer-alert")
    }

    /// How insistently the phone shows it (ntfy's priorities 1 to 5: min, low, default, high, urgent).
    public struct Priority: RawRepresentable, Sendable, Hashable {
        public var rawValue: Int
        public init(rawValue: Int) { self.rawValue = min(5, max(1, rawValue)) }
        public static let low = Priority(rawValue: 2)
        public static let normal = Priority(rawValue: 3)
        public static let high = Priority(rawValue: 4)
    }

    public var kind: Kind
    /// One line: "Time to drink".
    public var title: String
    /// The text the phone shows.
    public var message: String
    public var priority: Priority
    /// ntfy's tags (an emoji's short name shows as the icon: `droplet`).
    public var tags: [String]
    /// The facts behind it, by name (`person`, `intake_ml`, ...): a webhook's JSON carries them.
    public var fields: [String: String]

    public init(kind: Kind, title: String, message: String, priority: Priority = .normal, tags: [String] = [], fields: [String: String] = [:]) {
        self.kind = kind
        self.title = title
        self.message = message
        self.priority = priority
        self.tags = tags
        self.fields = fields
    }
}

extension PushMessage {
    /// A reminder to drink (`quench remind --notify`): `message` as the reminder
    /// says it ("drink something: 300 mL of 2,000 mL so far, ..."), `fields` its facts;
    /// `person` named in the title when the household has several.
    public static func reminder(message: String, fields: [String: String], person: String? = nil) -> PushMessage {
        let text = message.first.map { $0.uppercased() + message.dropFirst() } ?? message
        return PushMessage(kind: .reminder, title: "Time to drink" + (person.map { ", \($0)" } ?? ""), message: text,
                            priority: .normal, tags: ["droplet"], fields: fields)
    }
}

extension PushMessage {
    /// A carer's alert (`quench carer --notify`): someone has gone past their threshold without a
    /// drink in their waking hours. High priority: it is about someone else, and it is sent once a spell.
    public static func carerAlert(person: String, message: String, fields: [String: String]) -> PushMessage {
        PushMessage(kind: .carerAlert, title: "\(person) has not had a drink", message: message,
                    priority: .high, tags: ["warning", "droplet"], fields: fields)
    }
}
