/// Any ATT PDU, decoded by its opcode (Core Spec v5.x Vol 3, Part F, 3.3 and
/// 3.4.8). Opcodes without a codec here (Prepare/Execute Write, Signed Write,
/// Read Multiple Variable, newer ones) decode as `.unknown` with their bytes.
public enum ATTPDU: Sendable, Hashable {
    case errorResponse(ATTErrorResponse)
    case exchangeMTURequest(ATTExchangeMTURequest)
    case exchangeMTUResponse(ATTExchangeMTUResponse)
    case findInformationRequest(ATTFindInformationRequest)
    case findInformationResponse(ATTFindInformationResponse)
    case findByTypeValueRequest(ATTFindByTypeValueRequest)
    case findByTypeValueResponse(ATTFindByTypeValueResponse)
    case readByTypeRequest(ATTReadByTypeRequest)
    case readByTypeResponse(ATTReadByTypeResponse)
    case readRequest(ATTReadRequest)
    case readResponse(ATTReadResponse)
    case readBlobRequest(ATTReadBlobRequest)
    case readBlobResponse(ATTReadBlobResponse)
    case readMultipleRequest(ATTReadMultipleRequest)
    case readMultipleResponse(ATTReadMultipleResponse)
    case readByGroupTypeRequest(ATTReadByGroupTypeRequest)
    case readByGroupTypeResponse(ATTReadByGroupTypeResponse)
    case writeRequest(ATTWriteRequest)
    case writeResponse(ATTWriteResponse)
    case writeCommand(ATTWriteCommand)
    case handleValueNotification(ATTHandleValueNotification)
    case handleValueIndication(ATTHandleValueIndication)
    case handleValueConfirmation(ATTHandleValueConfirmation)
    /// An opcode this module has no codec for; `parameters` follow the opcode byte.
    case unknown(opcode: ATTOpcode, parameters: [UInt8])

    /// Decodes one whole PDU. An empty PDU, or a known opcode whose
    /// parameters do not fit, throws.
    public init(decoding pdu: [UInt8]) throws(DecodeError) {
        guard let first = pdu.first else {
            throw DecodeError(context: "ATT PDU", field: "opcode", offset: 0, reason: .truncated(needed: 1, available: 0))
        }
        switch ATTOpcode(first) {
        case .errorResponse: self = .errorResponse(try .init(decoding: pdu))
        case .exchangeMTURequest: self = .exchangeMTURequest(try .init(decoding: pdu))
        case .exchangeMTUResponse: self = .exchangeMTUResponse(try .init(decoding: pdu))
        case .findInformationRequest: self = .findInformationRequest(try .init(decoding: pdu))
        case .findInformationResponse: self = .findInformationResponse(try .init(decoding: pdu))
        case .findByTypeValueRequest: self = .findByTypeValueRequest(try .init(decoding: pdu))
        case .findByTypeValueResponse: self = .findByTypeValueResponse(try .init(decoding: pdu))
        case .readByTypeRequest: self = .readByTypeRequest(try .init(decoding: pdu))
        case .readByTypeResponse: self = .readByTypeResponse(try .init(decoding: pdu))
        case .readRequest: self = .readRequest(try .init(decoding: pdu))
        case .readResponse: self = .readResponse(try .init(decoding: pdu))
        case .readBlobRequest: self = .readBlobRequest(try .init(decoding: pdu))
        case .readBlobResponse: self = .readBlobResponse(try .init(decoding: pdu))
        case .readMultipleRequest: self = .readMultipleRequest(try .init(decoding: pdu))
        case .readMultipleResponse: self = .readMultipleResponse(try .init(decoding: pdu))
        case .readByGroupTypeRequest: self = .readByGroupTypeRequest(try .init(decoding: pdu))
        case .readByGroupTypeResponse: self = .readByGroupTypeResponse(try .init(decoding: pdu))
        case .writeRequest: self = .writeRequest(try .init(decoding: pdu))
        case .writeResponse: self = .writeResponse(try .init(decoding: pdu))
        case .writeCommand: self = .writeCommand(try .init(decoding: pdu))
        case .handleValueNotification: self = .handleValueNotification(try .init(decoding: pdu))
        case .handleValueIndication: self = .handleValueIndication(try .init(decoding: pdu))
        case .handleValueConfirmation: self = .handleValueConfirmation(try .init(decoding: pdu))
        case let op: self = .unknown(opcode: op, parameters: Array(pdu.dropFirst()))
        }
    }

    /// The decoded PDU value; nil for `.unknown`.
    public var codable: (any ATTPDUCodable)? {
        switch self {
        case .errorResponse(let p): p
        case .exchangeMTURequest(let p): p
        case .exchangeMTUResponse(let p): p
        case .findInformationRequest(let p): p
        case .findInformationResponse(let p): p
        case .findByTypeValueRequest(let p): p
        case .findByTypeValueResponse(let p): p
        case .readByTypeRequest(let p): p
        case .readByTypeResponse(let p): p
        case .readRequest(let p): p
        case .readResponse(let p): p
        case .readBlobRequest(let p): p
        case .readBlobResponse(let p): p
        case .readMultipleRequest(let p): p
        case .readMultipleResponse(let p): p
        case .readByGroupTypeRequest(let p): p
        case .readByGroupTypeResponse(let p): p
        case .writeRequest(let p): p
        case .writeResponse(let p): p
        case .writeCommand(let p): p
        case .handleValueNotification(let p): p
        case .handleValueIndication(let p): p
        case .handleValueConfirmation(let p): p
        case .unknown: nil
        }
    }

    public var opcode: ATTOpcode {
        if case .unknown(let op, _) = self { return op }
        return type(of: codable!).opcode
    }

    public func encode() -> [UInt8] {
        if case .unknown(let op, let parameters) = self { return [op.rawValue] + parameters }
        return codable!.encode()
    }
}
