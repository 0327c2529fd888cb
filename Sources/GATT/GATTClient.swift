import BluetoothWire
import Threading

/// A GATT client (Core Spec v5.x Vol 3, Part G, 4) over an `ATTBearer`.
///
/// Synchronous and single-threaded: every call blocks the calling thread in
/// the bearer's `receive(timeout:)` until its response arrives; use one client
/// from one thread (the gateway gives each connection its own thread). There
/// is never more than one request in flight (Vol 3, Part F, 3.3.2). Not
/// `Sendable`, so the compiler keeps each client on the thread that made it.
///
/// Notifications and indications that arrive while a request is outstanding
/// are queued in arrival order and handed out by `nextValue(timeout:)`;
/// indications are confirmed as soon as they are received.
///
/// A request unanswered within `transactionTimeout` (30 s by the spec,
/// Vol 3, Part F, 3.3.3) fails with `.timeout`, after which the bearer is not
/// used again: every later call throws the same error. A bearer failure is
/// likewise final. An Insufficient Authentication or Insufficient Encryption
/// response makes the client call `bearer.upgradeSecurity(for:)` once and retry
/// the request once.
public final class GATTClient {
    public let bearer: any ATTBearer
    public let transactionTimeout: Double
    /// The ATT_MTU in use: 23 (the LE default, Vol 3, Part F, 3.2.8) until exchanged.
    public private(set) var mtu: UInt16 = GATTClient.defaultMTU
    public static let defaultMTU: UInt16 = 23

    private enum Incoming {
        case update(ValueUpdate)
        case malformed(DecodeError)
    }

    private var queue: [Incoming] = []
    private var queueHead = 0
    /// Set by a timeout or bearer failure; thrown by every later call.
    private var failure: GATTError?
    /// CCCD handle per characteristic value handle, found while subscribing.
    private var configurationHandles: [UInt16: UInt16] = [:]

    public init(bearer: any ATTBearer, transactionTimeout: Double = 30) {
        self.bearer = bearer
        self.transactionTimeout = transactionTimeout
    }

    /// Value updates received and not yet taken by `nextValue`.
    public var pendingValueCount: Int { queue.count - queueHead }

    // MARK: - Procedures

    /// Exchange MTU (Vol 3, Part G, 4.3.1). Returns the ATT_MTU now in use:
    /// the smaller of both receive MTUs, never below 23. A server that does not
    /// support the exchange leaves it at 23.
    @discardableResult
    public func exchangeMTU(clientRxMTU: UInt16 = 517) throws(GATTError) -> UInt16 {
        do {
            let rsp = try request(ATTExchangeMTURequest(clientRxMTU: clientRxMTU), expecting: ATTExchangeMTUResponse.self)
            mtu = max(Self.defaultMTU, min(clientRxMTU, rsp.serverRxMTU))
        } catch .attribute(let e) where e.errorCode == .requestNotSupported {
            mtu = Self.defaultMTU
        }
        return mtu
    }

    /// Discover All Primary Services (Vol 3, Part G, 4.4.1): Read By Group Type
    /// for 0x2800 from 0x0001, continuing after each group's end until
    /// Attribute Not Found or the last handle.
    public func discoverPrimaryServices() throws(GATTError) -> [GATTService] {
        var services: [GATTService] = []
        var start: UInt16 = 0x0001
        while true {
            guard let rsp = try untilNotFound({ () throws(GATTError) in
                try request(ATTReadByGroupTypeRequest(startingHandle: start, endingHandle: 0xFFFF,
                                                      attributeGroupType: GATTAttributeType.primaryService),
                            expecting: ATTReadByGroupTypeResponse.self)
            }) else { break }
            for entry in rsp.attributeData {
                let uuid: BluetoothUUID
                do { uuid = try BluetoothUUID(serviceDeclaration: entry.value, handle: entry.attributeHandle) } catch { throw .malformed(error) }
                services.append(GATTService(uuid: uuid, startHandle: entry.attributeHandle, endHandle: entry.endGroupHandle))
            }
            guard let next = Self.next(after: rsp.attributeData.last?.endGroupHandle, start: start, end: 0xFFFF) else { break }
            start = next
        }
        return services
    }

    /// Discover Primary Service by Service UUID (Vol 3, Part G, 4.4.2): Find By
    /// Type Value for 0x2800 with the UUID as value.
    public func discoverPrimaryServices(uuid: BluetoothUUID) throws(GATTError) -> [GATTService] {
        var services: [GATTService] = []
        var start: UInt16 = 0x0001
        while true {
            guard let rsp = try untilNotFound({ () throws(GATTError) in
                try request(ATTFindByTypeValueRequest(startingHandle: start, endingHandle: 0xFFFF,
                                                      attributeType: GATTAttributeType.primaryService.uuid16!,
                                                      attributeValue: uuid.littleEndianBytes),
                            expecting: ATTFindByTypeValueResponse.self)
            }) else { break }
            for h in rsp.handlesInformation {
                services.append(GATTService(uuid: uuid, startHandle: h.foundAttributeHandle, endHandle: h.groupEndHandle))
            }
            guard let next = Self.next(after: rsp.handlesInformation.last?.groupEndHandle, start: start, end: 0xFFFF) else { break }
            start = next
        }
        return services
    }

    /// Discover All Characteristics of a Service (Vol 3, Part G, 4.6.1): Read By
    /// Type for 0x2803 over the service's range. Each characteristic ends just
    /// before the next declaration; the last one at the service's end.
    public func discoverCharacteristics(of service: GATTService) throws(GATTError) -> [GATTCharacteristic] {
        var found: [(handle: UInt16, declaration: GATTCharacteristicDeclaration)] = []
        var start = service.startHandle
        while start <= service.endHandle {
            guard let rsp = try untilNotFound({ () throws(GATTError) in
                try request(ATTReadByTypeRequest(startingHandle: start, endingHandle: service.endHandle,
                                                 attributeType: GATTAttributeType.characteristic),
                            expecting: ATTReadByTypeResponse.self)
            }) else { break }
            let entryLength = 2 + (rsp.attributeData.first?.value.count ?? 0)
            for (i, entry) in rsp.attributeData.enumerated() {
                // Handles must rise within the range, or the end-handle arithmetic below would be wrong.
                guard entry.handle >= start, entry.handle <= service.endHandle, entry.handle > (found.last?.handle ?? 0) else {
                    throw .malformed(DecodeError(context: "ATT Read By Type Response", field: "attribute handle", offset: 2 + i * entryLength,
                                                 reason: .invalidValue("\(entry.handle) is outside \(start)–\(service.endHandle) or out of order")))
                }
                do { found.append((entry.handle, try GATTCharacteristicDeclaration(decoding: entry.value))) } catch { throw .malformed(error) }
            }
            guard let next = Self.next(after: rsp.attributeData.last?.handle, start: start, end: service.endHandle) else { break }
            start = next
        }
        return found.indices.map { i in
            let end = i + 1 < found.count ? found[i + 1].handle - 1 : service.endHandle
            let d = found[i].declaration
            return GATTCharacteristic(uuid: d.uuid, declarationHandle: found[i].handle, valueHandle: d.valueHandle,
                                      endHandle: end, properties: d.properties)
        }
    }

    /// Discover All Characteristic Descriptors (Vol 3, Part G, 4.7.1): Find
    /// Information from the value handle + 1 to the characteristic's end.
    public func discoverDescriptors(of characteristic: GATTCharacteristic) throws(GATTError) -> [GATTDescriptor] {
        guard characteristic.valueHandle < characteristic.endHandle else { return [] }
        var descriptors: [GATTDescriptor] = []
        var start = characteristic.valueHandle + 1
        while start <= characteristic.endHandle {
            guard let rsp = try untilNotFound({ () throws(GATTError) in
                try request(ATTFindInformationRequest(startingHandle: start, endingHandle: characteristic.endHandle),
                            expecting: ATTFindInformationResponse.self)
            }) else { break }
            descriptors += rsp.entries.map { GATTDescriptor(uuid: $0.type, handle: $0.handle) }
            guard let next = Self.next(after: rsp.entries.last?.handle, start: start, end: characteristic.endHandle) else { break }
            start = next
        }
        return descriptors
    }

    /// Finds a characteristic by its UUID inside the first primary service with
    /// `service` UUID: Discover Primary Service by UUID, then its characteristics.
    /// nil when the peer has no such service or characteristic.
    public func characteristic(_ uuid: BluetoothUUID, inService service: BluetoothUUID) throws(GATTError) -> GATTCharacteristic? {
        guard let found = try discoverPrimaryServices(uuid: service).first else { return nil }
        return try discoverCharacteristics(of: found).first { $0.uuid == uuid }
    }

    /// Read Characteristic Value / Read Long Characteristic Values (Vol 3,
    /// Part G, 4.8.1 and 4.8.3): a Read Request, then Read Blob Requests while
    /// each part fills a whole PDU (ATT_MTU − 1 bytes).
    public func read(handle: UInt16) throws(GATTError) -> [UInt8] {
        var value = try request(ATTReadRequest(attributeHandle: handle), expecting: ATTReadResponse.self).attributeValue
        let full = Int(mtu) - 1
        var part = value.count
        while part == full, value.count <= Int(UInt16.max) {
            do {
                let rsp = try request(ATTReadBlobRequest(attributeHandle: handle, valueOffset: UInt16(value.count)),
                                      expecting: ATTReadBlobResponse.self)
                value += rsp.partAttributeValue
                part = rsp.partAttributeValue.count
            } catch .attribute(let e) where e.errorCode == .attributeNotLong || e.errorCode == .invalidOffset {
                // The value was exactly one PDU long.
                break
            }
        }
        return value
    }

    /// Write Characteristic Value (Vol 3, Part G, 4.9.3): a Write Request,
    /// answered by a Write Response. At most ATT_MTU − 3 bytes.
    public func write(handle: UInt16, value: [UInt8]) throws(GATTError) {
        try checkLength(value)
        _ = try request(ATTWriteRequest(attributeHandle: handle, attributeValue: value), expecting: ATTWriteResponse.self)
    }

    /// Write Without Response (Vol 3, Part G, 4.9.1): a Write Command, not
    /// acknowledged. At most ATT_MTU − 3 bytes.
    public func writeWithoutResponse(handle: UInt16, value: [UInt8]) throws(GATTError) {
        try checkLength(value)
        try send(ATTWriteCommand(attributeHandle: handle, attributeValue: value).encode())
    }

    /// Turns notifications or indications on by writing the characteristic's
    /// CCCD (Vol 3, Part G, 4.10 and 4.11). `mode` nil picks notifications when
    /// the characteristic supports them, else indications. Descriptors are
    /// discovered once per characteristic to find the CCCD.
    public func subscribe(to characteristic: GATTCharacteristic, mode: ClientCharacteristicConfiguration? = nil) throws(GATTError) {
        let chosen = mode ?? (characteristic.properties.contains(.notify) ? .notifications : .indications)
        try configure(characteristic, chosen)
    }

    /// Writes 0x0000 to the characteristic's CCCD.
    public func unsubscribe(from characteristic: GATTCharacteristic) throws(GATTError) {
        try configure(characteristic, [])
    }

    /// The characteristic's Client Characteristic Configuration descriptor handle.
    public func configurationDescriptorHandle(of characteristic: GATTCharacteristic) throws(GATTError) -> UInt16 {
        if let known = configurationHandles[characteristic.valueHandle] { return known }
        let descriptors = try discoverDescriptors(of: characteristic)
        guard let cccd = descriptors.first(where: { $0.uuid == GATTAttributeType.clientCharacteristicConfiguration }) else {
            throw .noConfigurationDescriptor(characteristic: characteristic.uuid, valueHandle: characteristic.valueHandle)
        }
        configurationHandles[characteristic.valueHandle] = cccd.handle
        return cccd.handle
    }

    private func configure(_ characteristic: GATTCharacteristic, _ value: ClientCharacteristicConfiguration) throws(GATTError) {
        try write(handle: try configurationDescriptorHandle(of: characteristic), value: value.bytes)
    }

    /// The next notification or indication: a queued one at once, else waits
    /// up to `timeout` seconds (0 only checks; `.infinity` waits for ever).
    /// Returns nil when none arrived in time. Updates queued before the link
    /// failed are still delivered before the failure is thrown.
    public func nextValue(timeout: Double) throws(GATTError) -> ValueUpdate? {
        let deadline = Deadline(seconds: timeout)
        while true {
            if queueHead < queue.count {
                let item = queue[queueHead]
                queueHead += 1
                if queueHead == queue.count { queue.removeAll(keepingCapacity: true); queueHead = 0 }
                switch item {
                case .update(let update): return update
                case .malformed(let error): throw .malformed(error)
                }
            }
            if let failure { throw failure }
            guard let bytes = try receive(timeout: deadline.remaining) else {
                if deadline.hasPassed { return nil }
                continue
            }
            let pdu: ATTPDU
            do { pdu = try ATTPDU(decoding: bytes) } catch { try handleMalformed(bytes, error); continue }
            try handleUnsolicited(pdu)
        }
    }

    // MARK: - Transactions

    /// Sends `pdu` and returns its response, after one security upgrade and
    /// retry when the server asks for it.
    private func request<Request: ATTPDUCodable, Response: ATTPDUCodable>(
        _ pdu: Request, expecting: Response.Type
    ) throws(GATTError) -> Response {
        var upgraded = false
        while true {
            let response = try transaction(pdu.encode(), opcode: Request.opcode, expecting: Response.opcode)
            if case .errorResponse(let e) = response {
                if e.errorCode.isSecurityError, !upgraded {
                    upgraded = true
                    do { try bearer.upgradeSecurity(for: e.errorCode) } catch { throw .securityUpgradeFailed(e, error) }
                    continue
                }
                throw .attribute(e)
            }
            guard let typed = response.codable as? Response else {
                throw .unexpectedResponse(request: Request.opcode, received: response.opcode)
            }
            return typed
        }
    }

    /// One request and its response or Error Response; value updates that
    /// arrive meanwhile are queued.
    private func transaction(_ bytes: [UInt8], opcode: ATTOpcode, expecting: ATTOpcode) throws(GATTError) -> ATTPDU {
        if let failure { throw failure }
        try send(bytes)
        let deadline = Deadline(seconds: transactionTimeout)
        while true {
            guard !deadline.hasPassed else {
                let error = GATTError.timeout(request: opcode, seconds: transactionTimeout)
                failure = error
                throw error
            }
            guard let reply = try receive(timeout: deadline.remaining) else { continue }
            let pdu: ATTPDU
            do { pdu = try ATTPDU(decoding: reply) } catch {
                // A broken response still ends the transaction; anything else is unsolicited.
                if reply.first == expecting.rawValue || reply.first == ATTOpcode.errorResponse.rawValue { throw .malformed(error) }
                try handleMalformed(reply, error)
                continue
            }
            switch pdu {
            case .errorResponse(let e) where e.requestOpcode == opcode:
                return pdu
            case _ where pdu.opcode == expecting:
                return pdu
            case .handleValueNotification, .handleValueIndication, .handleValueConfirmation,
                 _ where pdu.opcode.isRequest || pdu.opcode.isCommand:
                try handleUnsolicited(pdu)
            default:
                throw .unexpectedResponse(request: opcode, received: pdu.opcode)
            }
        }
    }

    /// Queues value updates (confirming indications at once) and answers
    /// requests from the server, which this client does not serve, with
    /// Request Not Supported (Vol 3, Part F, 3.4.1.1). Commands and stray
    /// responses are ignored.
    private func handleUnsolicited(_ pdu: ATTPDU) throws(GATTError) {
        switch pdu {
        case .handleValueNotification(let n):
            queue.append(.update(ValueUpdate(handle: n.attributeHandle, value: n.attributeValue, wasIndication: false)))
        case .handleValueIndication(let i):
            queue.append(.update(ValueUpdate(handle: i.attributeHandle, value: i.attributeValue, wasIndication: true)))
            try send(ATTHandleValueConfirmation().encode())
        case _ where pdu.opcode.isRequest:
            try send(ATTErrorResponse(requestOpcode: pdu.opcode, handle: 0, errorCode: .requestNotSupported).encode())
        default:
            break
        }
    }

    /// A value update that does not decode is queued as an error in its
    /// place; a broken indication is still confirmed so the server is not
    /// left waiting.
    private func handleMalformed(_ bytes: [UInt8], _ error: DecodeError) throws(GATTError) {
        switch bytes.first.map(ATTOpcode.init(rawValue:)) {
        case ATTOpcode.handleValueNotification?:
            queue.append(.malformed(error))
        case ATTOpcode.handleValueIndication?:
            queue.append(.malformed(error))
            try send(ATTHandleValueConfirmation().encode())
        case let op? where op.isRequest:
            try send(ATTErrorResponse(requestOpcode: op, handle: 0, errorCode: .invalidPDU).encode())
        default:
            break
        }
    }

    // MARK: - Bearer access

    private func send(_ bytes: [UInt8]) throws(GATTError) {
        if let failure { throw failure }
        do { try bearer.send(bytes) } catch {
            failure = .bearer(error)
            throw .bearer(error)
        }
    }

    private func receive(timeout: Double) throws(GATTError) -> [UInt8]? {
        do { return try bearer.receive(timeout: timeout) } catch {
            failure = .bearer(error)
            throw .bearer(error)
        }
    }

    private func checkLength(_ value: [UInt8]) throws(GATTError) {
        let maximum = Int(mtu) - 3
        guard value.count <= maximum else { throw .valueTooLong(length: value.count, maximum: maximum) }
    }

    /// nil when the procedure ends with Attribute Not Found (Vol 3, Part G, 4.4.1 and on).
    private func untilNotFound<T>(_ body: () throws(GATTError) -> T) throws(GATTError) -> T? {
        do { return try body() } catch .attribute(let e) where e.errorCode == .attributeNotFound { return nil }
    }

    /// The handle to continue a discovery from, or nil when the last handle
    /// reached the end — or did not move forward, so a faulty server cannot
    /// loop the client for ever.
    private static func next(after last: UInt16?, start: UInt16, end: UInt16) -> UInt16? {
        guard let last, last >= start, last < end else { return nil }
        return last + 1
    }
}
