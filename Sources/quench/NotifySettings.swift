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
