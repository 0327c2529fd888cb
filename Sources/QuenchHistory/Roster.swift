import QuenchCore
import QuenchStore

extension History {
    /// `quench hub assign ADDRESS --person NAME` at the hub: who drinks from that bottle or scale.
    /// Every gateway learns it from the broker (`quench hub run` publishes the roster) and gives the
    /// device to that person if it is paired there. `nobody` takes the device off the roster.
    public static func assignAtHub(_ environment: HistoryEnvironment, address typed: String, nobody: Bool, json: Bool) throws(HistoryError) -> String {
        let address: String
        switch DeviceAddress.canonical(typed) {
        case .success(let canonical): address = canonical
        case .failure(let error): throw .invalidArgument(error.description)
        }
        guard nobody || environment.person != nil else {
            throw .invalidArgument("say whose it is with --person NAME (or take it off the roster with --nobody)")
        }
        let store = try environment.openStore(creating: false)
        if nobody {
            try HistoryContext.run { () throws(StoreError) in try store.setRoster(address: address, person: nil) }
            if json { return JSONOutput.encode(PersonChange(action: "unassigned", person: "", detail: address)) }
            return "\(address) is off the roster; each gateway keeps it with whoever has it there."
        }
        let person = try environment.selectedPerson(in: store)
        try HistoryContext.run { () throws(StoreError) in try store.setRoster(address: address, person: person.id) }
        if json { return JSONOutput.encode(PersonChange(action: "assigned", person: person.name, detail: address)) }
        return "\(address) is \(person.name.shownSafely(limit: 40))'s on every gateway that has it paired (once `quench hub run` has published it)."
    }

    /// `quench hub roster`: who drinks from which bottle, as the hub tells the gateways.
    public static func roster(_ environment: HistoryEnvironment, json: Bool) throws(HistoryError) -> String {
        let store = try environment.openStore(creating: false)
        let roster = try HistoryContext.run { () throws(StoreError) in try store.roster() }
        if json { return JSONOutput.encode(roster) }
        guard !roster.isEmpty else { return "the roster is empty: each gateway gives its devices to people itself (quench hub assign ADDRESS --person NAME)" }
        return roster.map { "\($0.address)  \($0.person.shownSafely(limit: 40))" }.joined(separator: "\n")
    }
}
