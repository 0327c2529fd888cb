#if canImport(Glibc)
import CMosquitto
import Glibc

/// Why an MQTT operation failed: libmosquitto's code (MOSQ_ERR_*), the errno
/// behind MOSQ_ERR_ERRNO, or the broker's CONNACK refusal.
public struct MQTTError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Cause: Sendable, Hashable {
        /// A libmosquitto return code.
        case library(Int32)
        /// MOSQ_ERR_ERRNO: a system call failed.
        case system(errno: Int32)
        /// The broker refused the connection (CONNACK return code, MQTT 3.1.1 §3.2.2.3).
        case refused(Int32)
        /// No CONNACK or acknowledgement in time.
        case timeout(seconds: Double)
        /// The TLS handshake failed: OpenSSL's reason, as libmosquitto logged it.
        case tls(String)
        /// The broker closed the connection before its CONNACK. Over TLS 1.3 that is how a broker that
        /// wants a client certificate (or not this one) says so: the handshake itself succeeded.
        case closedBeforeAnswer(overTLS: Bool, clientCertificate: Bool)
        /// The client closed the connection itself, for what it heard there (the reason).
        case declined(String)
    }

    /// What was being done: `connect to 127.0.0.1:1883`, `publish quench/…`.
    public var operation: String
    public var cause: Cause

    public init(_ operation: String, _ cause: Cause) {
        self.operation = operation
        self.cause = cause
    }

    /// The broker said the user or password is wrong, or the client is not allowed.
    public var isNotAuthorized: Bool {
        if case .refused(let code) = cause { return code == 4 || code == 5 }
        return cause == .library(Int32(MOSQ_ERR_AUTH.rawValue))
    }

    public var description: String {
        switch cause {
        case .library(let code) where code == MOSQ_ERR_EAI.rawValue:
            // libmosquitto's words are "Lookup error."
            return "\(operation): the host name is not known here (DNS or /etc/hosts): check its spelling, or give an IP address"
        case .library(let code):
            return "\(operation): \(String(cString: mosquitto_strerror(code)))"
        case .system(let e):
            return "\(operation): \(String(cString: strerror(e))) (errno \(e))"
        case .refused(let code):
            let what = String(cString: mosquitto_connack_string(code))
            let hint = code == 4 || code == 5 ? " (check the user and the password file)" : ""
            return "\(operation): the broker refused the connection: \(what)\(hint)"
        case .timeout(let s):
            return "\(operation): no answer from the broker within \(s) s"
        case .tls(let reason):
            return "\(operation): TLS: \(reason)\(Self.tlsHint(reason))"
        case .closedBeforeAnswer(let overTLS, let clientCertificate):
            let hint = !overTLS ? " (a broker that speaks TLS on that port does this to plain MQTT: mqtts:// then)"
                : clientCertificate ? " (over TLS that is how a broker refuses a client certificate: is it signed by a CA in the broker's cafile, and unexpired?)"
                : " (over TLS that is how a broker that wants a client certificate refuses a client without one: --cert and --key, mqtt.cert_file and mqtt.key_file)"
            return "\(operation): the broker closed the connection before answering\(hint)"
        case .declined(let reason):
            return "\(operation): \(reason)"
        }
    }

    /// What to look at for OpenSSL's most common reasons.
    static func tlsHint(_ reason: String) -> String {
        let r = reason.lowercased()
        if r.contains("hostname mismatch") || r.contains("host name") {
            return " (the broker's certificate is not made for this host name: use the name it was made for in the broker URL)"
        }
        if r.contains("certificate verify failed") || r.contains("unable to get local issuer") || r.contains("self-signed") || r.contains("self signed") {
            return " (the broker's certificate is not signed by the CA in --ca-file / mqtt.ca_file, has expired, "
                + "or was not made for the host name in the broker URL)"
        }
        if r.contains("expired") { return " (a certificate has expired)" }
        if r.contains("wrong version number") || r.contains("packet length too long") || r.contains("record layer failure")
            || r.contains("unexpected eof") {
            return " (the broker does not speak TLS on that port: mqtt:// for a plain port, mqtts:// for a TLS one)"
        }
        if r.contains("certificate required") || r.contains("handshake failure") || r.contains("bad certificate") || r.contains("unknown ca") {
            return " (the broker wants a client certificate it accepts: --cert and --key, mqtt.cert_file and mqtt.key_file)"
        }
        if r.contains("protocol version") { return " (the broker and this client share no TLS version)" }
        return ""
    }
}

/// A message received on a subscription.
public struct MQTTMessage: Sendable, Hashable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: Int32
    public var retain: Bool
}

/// One connection to a broker through libmosquitto (MQTT 3.1.1), driven by
/// the caller: `loop` does the network work and runs the callbacks on the
/// calling thread, so an owner that uses a client from one thread needs no
/// locks. QoS 1 publications are acknowledged (PUBACK) through `onPublish`
/// with the message id `publish` returned.
public final class MQTTClient {
    private let handle: OpaquePointer
    /// The broker's last CONNACK code: a refusal makes `loop` fail with it, in words.
    private var connack: Int32?
    private var target = ""
    /// OpenSSL's last reason as libmosquitto logged it: the TLS error's cause (libmosquitto's own code says only "A TLS error occurred").
    private var tlsReason: String?
    /// Set by `setTLS`: what a connection closed before the broker's answer most likely means.
    private var overTLS = false
    private var clientCertificate = false
    /// The connection closed before the broker's CONNACK, as a cause that says what that means here.
    private var closedBeforeAnswer: MQTTError.Cause { .closedBeforeAnswer(overTLS: overTLS, clientCertificate: clientCertificate) }
    public var onConnect: ((_ connack: Int32) -> Void)?
    public var onDisconnect: ((_ reason: Int32) -> Void)?
    public var onPublish: ((_ messageID: Int32) -> Void)?
    public var onMessage: ((MQTTMessage) -> Void)?

    private static let initialised: Bool = {
        mosquitto_lib_init()
        return true
    }()

    /// `cleanSession` false keeps the broker's session (subscriptions, QoS 1
    /// messages queued for this client id) across reconnections.
    public init(clientID: String, cleanSession: Bool = true) throws(MQTTError) {
        _ = MQTTClient.initialised
        guard let h = mosquitto_new(clientID, cleanSession, nil) else {
            throw MQTTError("create a client \(clientID)", .system(errno: errno))
        }
        handle = h
        mosquitto_user_data_set(h, Unmanaged.passUnretained(self).toOpaque())
        mosquitto_connect_callback_set(h) { _, obj, rc in
            guard let owner = MQTTClient.owner(obj) else { return }
            owner.connack = rc
            owner.onConnect?(rc)
        }
        mosquitto_disconnect_callback_set(h) { _, obj, rc in MQTTClient.owner(obj)?.onDisconnect?(rc) }
        mosquitto_log_callback_set(h) { _, obj, _, text in
            guard let owner = MQTTClient.owner(obj), let text else { return }
            let line = String(cString: text)
            // "OpenSSL Error[0]: error:0A000086:SSL routines::certificate verify failed": the words after the last ':'.
            if line.hasPrefix("OpenSSL Error") || line.contains("SSL routines") {
                owner.tlsReason = line.split(separator: ":").last.map { String($0.drop { $0 == " " }) } ?? line
            }
        }
        mosquitto_publish_callback_set(h) { _, obj, mid in MQTTClient.owner(obj)?.onPublish?(mid) }
        mosquitto_message_callback_set(h) { _, obj, message in
            guard let owner = MQTTClient.owner(obj), let m = message?.pointee else { return }
            let payload = m.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(m.payloadlen))) } ?? []
            owner.onMessage?(MQTTMessage(topic: String(cString: m.topic), payload: payload, qos: m.qos, retain: m.retain))
        }
    }

    private static func owner(_ obj: UnsafeMutableRawPointer?) -> MQTTClient? {
        obj.map { Unmanaged<MQTTClient>.fromOpaque($0).takeUnretainedValue() }
    }

    deinit { mosquitto_destroy(handle) }

    private func check(_ rc: Int32, _ operation: @autoclosure () -> String) throws(MQTTError) {
        guard rc != MOSQ_ERR_SUCCESS.rawValue else { return }
        if rc == MOSQ_ERR_ERRNO.rawValue {
            let e = errno
            // libmosquitto reports OpenSSL's failures after the handshake (a TLS 1.3 alert such as
            // "certificate required", read while the CONNECT is written) as EPROTO: OpenSSL's reason
            // when it was logged, else what such an alert before any answer means.
            if e == EPROTO, let reason = tlsReason { throw MQTTError(operation(), .tls(reason)) }
            if e == EPROTO, overTLS, connack == nil { throw MQTTError(operation(), closedBeforeAnswer) }
            throw MQTTError(operation(), .system(errno: e))
        }
        if rc == MOSQ_ERR_TLS.rawValue, let reason = tlsReason { throw MQTTError(operation(), .tls(reason)) }
        throw MQTTError(operation(), .library(rc))
    }

    public func setCredentials(user: String, password: String?) throws(MQTTError) {
        try check(mosquitto_username_pw_set(handle, user, password), "set the user name")
    }

    /// TLS with the broker's certificate checked against `caFile` (or the system's CAs when nil),
    /// and this client's own certificate and key when the broker asks for one.
    public func setTLS(caFile: String?, certFile: String? = nil, keyFile: String? = nil) throws(MQTTError) {
        overTLS = true
        clientCertificate = certFile != nil
        if caFile != nil || certFile != nil {
            let what = [caFile.map { "the CA file \($0)" }, certFile.map { "the certificate \($0)" }, keyFile.map { "the key \($0)" }]
                .compactMap { $0 }.joined(separator: ", ")
            if caFile == nil { try check(mosquitto_int_option(handle, MOSQ_OPT_TLS_USE_OS_CERTS, 1), "use the system's CA certificates") }
            try check(mosquitto_tls_set(handle, caFile, caFile == nil ? "/etc/ssl/certs" : nil, certFile, keyFile, nil), "use \(what)")
        } else {
            try check(mosquitto_int_option(handle, MOSQ_OPT_TLS_USE_OS_CERTS, 1), "use the system's CA certificates")
        }
    }

    /// What the broker publishes for this client if it goes away without saying goodbye.
    public func setWill(topic: String, payload: [UInt8], qos: Int32, retain: Bool) throws(MQTTError) {
        let rc = payload.withUnsafeBytes { mosquitto_will_set(handle, topic, Int32($0.count), $0.baseAddress, qos, retain) }
        try check(rc, "set the last will on \(topic)")
    }

    /// QoS 1 messages sent and not yet acknowledged, at most (libmosquitto queues the rest).
    public func setMaxInflight(_ count: UInt32) {
        _ = mosquitto_max_inflight_messages_set(handle, count)
    }

    /// Opens the TCP (or TLS) connection and sends CONNECT; the broker's answer
    /// comes through `loop` as `onConnect`.
    public func connect(host: String, port: Int32, keepalive: Int32 = 30) throws(MQTTError) {
        _ = mosquitto_int_option(handle, MOSQ_OPT_TCP_NODELAY, 1)
        target = "\(host):\(port)"
        connack = nil
        tlsReason = nil
        try check(mosquitto_connect(handle, host, port, keepalive), "connect to \(host):\(port)")
    }

    /// Queues a message; returns its id (acknowledged through `onPublish` for QoS 1).
    @discardableResult
    public func publish(topic: String, payload: [UInt8], qos: Int32, retain: Bool) throws(MQTTError) -> Int32 {
        var mid: Int32 = 0
        let rc = payload.withUnsafeBytes { mosquitto_publish(handle, &mid, topic, Int32($0.count), $0.baseAddress, qos, retain) }
        try check(rc, "publish on \(topic)")
        return mid
    }

    public func subscribe(_ pattern: String, qos: Int32) throws(MQTTError) {
        try check(mosquitto_subscribe(handle, nil, pattern, qos), "subscribe to \(pattern)")
    }

    /// Network work for up to `timeoutMS` milliseconds: reads, writes, keepalive; callbacks run here.
    public func loop(timeoutMS: Int32) throws(MQTTError) {
        let rc = mosquitto_loop(handle, timeoutMS, 1)
        if rc != MOSQ_ERR_SUCCESS.rawValue, let code = connack, code != 0 {
            throw MQTTError("connect to \(target)", .refused(code))
        }
        if rc == MOSQ_ERR_CONN_LOST.rawValue, connack == nil { throw MQTTError("connect to \(target)", closedBeforeAnswer) }
        try check(rc, "exchange with \(target)")
    }

    /// Sends DISCONNECT (the will is not published).
    public func disconnect() {
        _ = mosquitto_disconnect(handle)
    }

    /// Reconnects with the same options after a lost connection.
    public func reconnect() throws(MQTTError) {
        try check(mosquitto_reconnect(handle), "reconnect")
    }
}
#endif
