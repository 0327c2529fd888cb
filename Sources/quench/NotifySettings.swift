import QuenchConfig
import QuenchNotify

extension Configuration {
    /// `[notify]` as the notifier's settings; nil without a URL (reminders then go to the journal and the command only).
    var notifierSettings: NotifierSettings? {
        guard let url = notifyURL.value else { return nil }
        return NotifierSettings(url: url, format: NotifierSettings.Format(rawValue: notifyFormat.value) ?? .ntfy,
                                tokenFile: notifyTokenFile.value, caFile: notifyCAFile.value, timeout: notifyTimeout.value)
    }
}

extension Notifier {
    /// Sends `push`, saying where on stdout; false, with the error on stderr (`what` names it; `urlFrom`, where the
    /// URL was set: a leftover file's URL took a carer's alerts elsewhere, and only `config show` said whose), when it failed.
    func deliver(_ push: PushMessage, what: String, urlFrom: String? = nil) -> Bool {
        do {
            let receipt = try send(push)
            emit("pushed to \(destination) (HTTP \(receipt.status)\(receipt.attempts > 1 ? ", try \(receipt.attempts)" : ""))")
            return true
        } catch {
            FileHandleStderr.write("quench: error: \(what) push: \(error)" + (urlFrom.map { " (notify.url from \($0))" } ?? "") + "\n")
            return false
        }
    }
}
