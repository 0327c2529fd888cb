#if canImport(Glibc)
import Threading
import BluetoothWire

/// A GATT server (the peripheral's side) over an `ATTBearer`: the in-process
/// peer for tests and the gateway's simulated peripheral.
///
/// `run()` answers the client's requests on the calling thread until the link
/// closes, byte-exactly as Vol 3, Part F, 3.4 describes (including the Error
/// Responses). Other threads push values with `updateValue(_:handle:)`,
/// which notifies or indicates according to the client's CCCD; indications
/// wait for the Handle Value Confirmation before the next one is sent
/// (Vol 3, Part F, 3.4.7.2).
public final class GATTServer: Sendable {
    public let bearer: any ATTBearer
    /// The server's receive MTU, offered in the MTU exchange.
    public let maximumMTU: UInt16
    /// How long an indication waits for its confirmation (30 s by the spec).
    public let indicationTimeout: Double

    /// What `updateValue` did with the value.
    public enum Delivery: Sendable, Hashable {
        /// Stored only: the client has not enabled updates for it.
        case stored
        case notified
        /// Sent and confirmed by the client.
        case indicated
    }

    private let state: Condition<ServerState>
    private let onWrite: (@Sendable (_ handle: UInt16, _ value: [UInt8]) -> Void)?

    /// - Parameter onWrite: called (on the serving thread) after the client
    ///   wrote a characteristic value or descriptor, e.g. a scale's tare command.
    public init(database: GATTDatabase, bearer: any ATTBearer, maximumMTU: UInt16 = 517, indicationTimeout: Double = 30,
                onWrite: (@Sendable (_ handle: UInt16, _ value: [UInt8]) -> Void)? = nil) {
        self.bearer = bearer
        self.maximumMTU = max(GATTClient.defaultMTU, maximumMTU)
        state = Condition(ServerState(database: database, maximumMTU: self.maximumMTU))
        self.indicationTimeout = indicationTimeout
        self.onWrite = onWrite
    }

    /// Whether the link is encrypted. Attributes that require encryption are
    /// refused with Insufficient Encryption until it is set — by the
    /// simulated link's security upgrade.
    public var isLinkEncrypted: Bool {
        get { state.withLock { $0.encrypted } }
        set { state.withLock { $0.encrypted = newValue } }
    }

    /// The ATT_MTU agreed with the client.
    public var currentMTU: UInt16 { state.withLock { $0.mtu } }

    /// A copy of the attribute table with the current values.
    public var currentDatabase: GATTDatabase { state.withLock { $0.database } }

    public func value(handle: UInt16) -> [UInt8]? { state.withLock { $0.database.attribute(handle)?.value } }

    /// The client's CCCD setting for a characteristic value handle.
    public func configuration(valueHandle: UInt16) -> ClientCharacteristicConfiguration {
        state.withLock { $0.configuration(valueHandle) }
    }

    /// Blocks until the client has enabled notifications or indications for
    /// the characteristic; false on timeout or when the link ended.
    public func waitForSubscription(valueHandle: UInt16, timeout: Double) -> Bool {
        state.wait(until: Deadline(seconds: timeout)) { s in
            if !s.configuration(valueHandle).isEmpty { return true }
            return s.linkEnded ? false : nil
        } ?? false
    }

    // MARK: - Serving

    /// Serves requests until the peer closes the link (then returns) or the
    /// bearer fails (then throws).
    public func run() throws(BearerError) {
        defer { state.changing { $0.linkEnded = true } }
        while true {
            let bytes: [UInt8]
            do {
                guard let received = try bearer.receive(timeout: .infinity) else { continue }
                bytes = received
            } catch .closed {
                return
            }
            let (reply, written) = state.changing { $0.respond(to: bytes) }
            if let written { onWrite?(written.handle, written.value) }
            guard let reply else { continue }
            do { try bearer.send(reply) } catch .closed { return }
        }
    }

    /// The reply to one PDU from the client (nil for commands, confirmations
    /// and anything needing no answer). Exposed for byte-level tests.
    public func respond(to pdu: [UInt8]) -> [UInt8]? {
        let (reply, written) = state.changing { $0.respond(to: pdu) }
        if let written { onWrite?(written.handle, written.value) }
        return reply
    }

    // MARK: - Updates

    /// Stores a characteristic's new value and, as the client configured,
    /// notifies it or indicates it and waits for the confirmation. Values
    /// longer than ATT_MTU − 3 are cut to fit (Vol 3, Part F, 3.4.7.1).
    /// Throws `.timeout` when an indication is not confirmed in time and
    /// `.bearer` when the link is gone.
    @discardableResult
    public func updateValue(_ value: [UInt8], handle: UInt16) throws(GATTError) -> Delivery {
        let deadline = Deadline(seconds: indicationTimeout)
        let (config, limit) = state.withLock { s in
            precondition(s.database.attribute(handle) != nil, "no attribute at handle \(handle)")
            s.database.attributes[Int(handle) - 1].value = value
            return (s.configuration(handle), Int(s.mtu) - 3)
        }
        let payload = Array(value.prefix(limit))
        if config.contains(.notifications) {
            do { try bearer.send(ATTHandleValueNotification(attributeHandle: handle, attributeValue: payload).encode()) } catch { throw .bearer(error) }
            return .notified
        }
        guard config.contains(.indications) else { return .stored }

        let timeout = GATTError.timeout(request: .handleValueIndication, seconds: indicationTimeout)
        // One indication at a time: wait for the previous one's confirmation.
        try waitForNoIndication(until: deadline, timeout, thenTake: true)
        do { try bearer.send(ATTHandleValueIndication(attributeHandle: handle, attributeValue: payload).encode()) } catch {
            state.changing { $0.indicationInFlight = false }
            throw .bearer(error)
        }
        // Unconfirmed: per 3.3.3 nothing more may be indicated, so the slot stays taken.
        try waitForNoIndication(until: deadline, timeout, thenTake: false)
        return .indicated
    }

    /// Waits until no indication awaits its confirmation (and then, with
    /// `thenTake`, marks one in flight); throws when the link ended or the
    /// deadline passed first.
    private func waitForNoIndication(until deadline: Deadline, _ timeout: GATTError, thenTake: Bool) throws(GATTError) {
        let free = state.wait(until: deadline) { s -> Bool? in
            if !s.indicationInFlight {
                if thenTake { s.indicationInFlight = true }
                return true
            }
            return s.linkEnded ? false : nil
        }
        switch free {
        case true?: return
        case false?: throw .bearer(.closed(errno: nil))
        case nil: throw timeout
        }
    }
}

/// What the server's threads share, behind one `Condition`: the attribute
/// table, the link's agreed MTU and encryption, and the indication in flight.
/// Requests are answered by its methods, always with the lock held.
struct ServerState {
    typealias Written = (handle: UInt16, value: [UInt8])

    var database: GATTDatabase
    let maximumMTU: UInt16
    var mtu: UInt16 = GATTClient.defaultMTU
    var encrypted = false
    var indicationInFlight = false
    var linkEnded = false

    init(database: GATTDatabase, maximumMTU: UInt16) {
        self.database = database
        self.maximumMTU = maximumMTU
    }



    func configuration(_ valueHandle: UInt16) -> ClientCharacteristicConfiguration {
        guard let cccd = database.configurationHandles[valueHandle], let v = database.attribute(cccd)?.value, v.count == 2 else { return [] }
        return ClientCharacteristicConfiguration(rawValue: UInt16(v[0]) | UInt16(v[1]) << 8)
    }

    mutating func respond(to bytes: [UInt8]) -> ([UInt8]?, Written?) {
        let pdu: ATTPDU
        do { pdu = try ATTPDU(decoding: bytes) } catch {
            // A request that does not parse is answered Invalid PDU; broken commands are dropped.
            guard let op = bytes.first.map(ATTOpcode.init(rawValue:)), !op.isCommand, op.isRequest else { return (nil, nil) }
            return (fail(op, 0, .invalidPDU), nil)
        }
        switch pdu {
        case .exchangeMTURequest(let r):
            // 3.4.2.2: both sides use the smaller of the two receive MTUs.
            mtu = max(GATTClient.defaultMTU, min(r.clientRxMTU, maximumMTU))
            return (ATTExchangeMTUResponse(serverRxMTU: maximumMTU).encode(), nil)
        case .findInformationRequest(let r):
            return (findInformation(r), nil)
        case .findByTypeValueRequest(let r):
            return (findByTypeValue(r), nil)
        case .readByTypeRequest(let r):
            return (readByType(r), nil)
        case .readRequest(let r):
            return (read(r), nil)
        case .readBlobRequest(let r):
            return (readBlob(r), nil)
        case .readMultipleRequest(let r):
            return (readMultiple(r), nil)
        case .readByGroupTypeRequest(let r):
            return (readByGroupType(r), nil)
        case .writeRequest(let r):
            if let error = write(r.attributeHandle, r.attributeValue, .writeRequest) { return (error.encode(), nil) }
            return (ATTWriteResponse().encode(), (r.attributeHandle, r.attributeValue))
        case .writeCommand(let c):
            // 3.4.5.3: no response, not even for an error.
            return (nil, write(c.attributeHandle, c.attributeValue, .writeCommand) == nil ? (c.attributeHandle, c.attributeValue) : nil)
        case .handleValueConfirmation:
            indicationInFlight = false
            return (nil, nil)
        case .unknown(let op, _):
            // 3.4.9 / 3.3.1: unsupported requests get Request Not Supported; unknown commands are ignored.
            return (op.isCommand ? nil : fail(op, 0, .requestNotSupported), nil)
        default:
            // Responses and value updates from the client: this side has no client role.
            return (nil, nil)
        }
    }

    private func fail(_ op: ATTOpcode, _ handle: UInt16, _ code: ATTErrorCode) -> [UInt8] {
        ATTErrorResponse(requestOpcode: op, handle: handle, errorCode: code).encode()
    }

    /// Invalid Handle when the range starts at 0x0000 or runs backwards (3.4.3.1 and others).
    private func badRange(_ start: UInt16, _ end: UInt16) -> Bool { start == 0 || start > end }

    private func attributes(in start: UInt16, _ end: UInt16) -> ArraySlice<GATTAttribute> {
        let count = database.attributes.count
        let lower = Int(start) - 1
        guard lower < count else { return [] }
        return database.attributes[lower..<min(Int(end), count)]
    }

    private func readError(_ a: GATTAttribute) -> ATTErrorCode? {
        if !a.permissions.contains(.read) { return .readNotPermitted }
        if a.requiresEncryption && !encrypted { return .insufficientEncryption }
        return nil
    }

    private func writeError(_ a: GATTAttribute) -> ATTErrorCode? {
        if !a.permissions.contains(.write) { return .writeNotPermitted }
        if a.requiresEncryption && !encrypted { return .insufficientEncryption }
        return nil
    }

    /// 3.4.3.1–2: handle–type pairs of one UUID size, as many as fit.
    private func findInformation(_ r: ATTFindInformationRequest) -> [UInt8] {
        let op = ATTFindInformationRequest.opcode
        if badRange(r.startingHandle, r.endingHandle) { return fail(op, r.startingHandle, .invalidHandle) }
        let found = attributes(in: r.startingHandle, r.endingHandle)
        guard let first = found.first else { return fail(op, r.startingHandle, .attributeNotFound) }
        let short = first.type.uuid16 != nil
        let entrySize = short ? 4 : 18
        var entries: [ATTFindInformationResponse.Entry] = []
        for a in found {
            guard (a.type.uuid16 != nil) == short, 2 + (entries.count + 1) * entrySize <= Int(mtu) else { break }
            entries.append(.init(handle: a.handle, type: a.type))
        }
        return ATTFindInformationResponse(entries: entries).encode()
    }

    /// 3.4.3.3–4: attributes of a 16-bit type with an exact value, with their group ends.
    private func findByTypeValue(_ r: ATTFindByTypeValueRequest) -> [UInt8] {
        let op = ATTFindByTypeValueRequest.opcode
        if badRange(r.startingHandle, r.endingHandle) { return fail(op, r.startingHandle, .invalidHandle) }
        let type = BluetoothUUID(uuid16: r.attributeType)
        var list: [ATTFindByTypeValueResponse.HandlesInformation] = []
        for a in attributes(in: r.startingHandle, r.endingHandle) where a.type == type && a.value == r.attributeValue {
            guard 1 + (list.count + 1) * 4 <= Int(mtu) else { break }
            list.append(.init(foundAttributeHandle: a.handle, groupEndHandle: a.groupEndHandle ?? a.handle))
        }
        if list.isEmpty { return fail(op, r.startingHandle, .attributeNotFound) }
        return ATTFindByTypeValueResponse(handlesInformation: list).encode()
    }

    /// 3.4.4.1–2: values of one type, all of the first one's length (cut to
    /// ATT_MTU − 4 or 253), stopping at the first that cannot be read.
    private func readByType(_ r: ATTReadByTypeRequest) -> [UInt8] {
        let op = ATTReadByTypeRequest.opcode
        if badRange(r.startingHandle, r.endingHandle) { return fail(op, r.startingHandle, .invalidHandle) }
        let matching = attributes(in: r.startingHandle, r.endingHandle).filter { $0.type == r.attributeType }
        guard let first = matching.first else { return fail(op, r.startingHandle, .attributeNotFound) }
        if let code = readError(first) { return fail(op, first.handle, code) }
        let cap = min(Int(mtu) - 4, 253)
        let length = min(first.value.count, cap)
        var list: [ATTHandleValue] = []
        for a in matching {
            guard readError(a) == nil, min(a.value.count, cap) == length, 2 + (list.count + 1) * (2 + length) <= Int(mtu) else { break }
            list.append(ATTHandleValue(handle: a.handle, value: Array(a.value.prefix(length))))
        }
        return ATTReadByTypeResponse(attributeData: list).encode()
    }

    private func readable(_ handle: UInt16, _ op: ATTOpcode) -> Result<GATTAttribute, ATTErrorResponse> {
        guard let a = database.attribute(handle) else { return .failure(.init(requestOpcode: op, handle: handle, errorCode: .invalidHandle)) }
        if let code = readError(a) { return .failure(.init(requestOpcode: op, handle: handle, errorCode: code)) }
        return .success(a)
    }

    /// 3.4.4.3–4: the value's first ATT_MTU − 1 bytes.
    private func read(_ r: ATTReadRequest) -> [UInt8] {
        switch readable(r.attributeHandle, ATTReadRequest.opcode) {
        case .failure(let e): return e.encode()
        case .success(let a): return ATTReadResponse(attributeValue: Array(a.value.prefix(Int(mtu) - 1))).encode()
        }
    }

    /// 3.4.4.5–6: from an offset; Invalid Offset past the end.
    private func readBlob(_ r: ATTReadBlobRequest) -> [UInt8] {
        switch readable(r.attributeHandle, ATTReadBlobRequest.opcode) {
        case .failure(let e): return e.encode()
        case .success(let a):
            let offset = Int(r.valueOffset)
            guard offset <= a.value.count else { return fail(ATTReadBlobRequest.opcode, r.attributeHandle, .invalidOffset) }
            return ATTReadBlobResponse(partAttributeValue: Array(a.value[offset...].prefix(Int(mtu) - 1))).encode()
        }
    }

    /// 3.4.4.7–8: values concatenated; the first unreadable handle fails the lot.
    private func readMultiple(_ r: ATTReadMultipleRequest) -> [UInt8] {
        var values: [UInt8] = []
        for handle in r.setOfHandles {
            switch readable(handle, ATTReadMultipleRequest.opcode) {
            case .failure(let e): return e.encode()
            case .success(let a): values += a.value
            }
        }
        return ATTReadMultipleResponse(setOfValues: Array(values.prefix(Int(mtu) - 1))).encode()
    }

    /// 3.4.4.9–10: service groups of one value length (cut to ATT_MTU − 6 or 251).
    private func readByGroupType(_ r: ATTReadByGroupTypeRequest) -> [UInt8] {
        let op = ATTReadByGroupTypeRequest.opcode
        if badRange(r.startingHandle, r.endingHandle) { return fail(op, r.startingHandle, .invalidHandle) }
        guard r.attributeGroupType == GATTAttributeType.primaryService || r.attributeGroupType == GATTAttributeType.secondaryService else {
            return fail(op, r.startingHandle, .unsupportedGroupType)
        }
        let groups = attributes(in: r.startingHandle, r.endingHandle).filter { $0.type == r.attributeGroupType }
        guard let first = groups.first else { return fail(op, r.startingHandle, .attributeNotFound) }
        let cap = min(Int(mtu) - 6, 251)
        let length = min(first.value.count, cap)
        var list: [ATTReadByGroupTypeResponse.AttributeData] = []
        for g in groups {
            guard min(g.value.count, cap) == length, 2 + (list.count + 1) * (4 + length) <= Int(mtu) else { break }
            list.append(.init(attributeHandle: g.handle, endGroupHandle: g.groupEndHandle ?? g.handle, value: Array(g.value.prefix(length))))
        }
        return ATTReadByGroupTypeResponse(attributeData: list).encode()
    }

    /// 3.4.5.1: stores the value, or says why not. A CCCD takes exactly two bytes.
    private mutating func write(_ handle: UInt16, _ value: [UInt8], _ op: ATTOpcode) -> ATTErrorResponse? {
        guard let a = database.attribute(handle) else { return .init(requestOpcode: op, handle: handle, errorCode: .invalidHandle) }
        if let code = writeError(a) { return .init(requestOpcode: op, handle: handle, errorCode: code) }
        // 3.2.9: no attribute value is longer than 512 bytes.
        if value.count > 512 || (a.type == GATTAttributeType.clientCharacteristicConfiguration && value.count != 2) {
            return .init(requestOpcode: op, handle: handle, errorCode: .invalidAttributeValueLength)
        }
        database.attributes[Int(handle) - 1].value = value
        return nil
    }
}
#endif
