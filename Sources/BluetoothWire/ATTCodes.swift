/// An ATT PDU opcode (Core Spec v5.x Vol 3, Part F, 3.3.1 and 3.4.8).
/// Bits 0–5 are the method, bit 6 the command flag, bit 7 the
/// authentication-signature flag. Open-ended: unknown opcodes still decode.
public struct ATTOpcode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let errorResponse = ATTOpcode(0x01)
    public static let exchangeMTURequest = ATTOpcode(0x02)
    public static let exchangeMTUResponse = ATTOpcode(0x03)
    public static let findInformationRequest = ATTOpcode(0x04)
    public static let findInformationResponse = ATTOpcode(0x05)
    public static let findByTypeValueRequest = ATTOpcode(0x06)
    public static let findByTypeValueResponse = ATTOpcode(0x07)
    public static let readByTypeRequest = ATTOpcode(0x08)
    public static let readByTypeResponse = ATTOpcode(0x09)
    public static let readRequest = ATTOpcode(0x0A)
    public static let readResponse = ATTOpcode(0x0B)
    public static let readBlobRequest = ATTOpcode(0x0C)
    public static let readBlobResponse = ATTOpcode(0x0D)
    public static let readMultipleRequest = ATTOpcode(0x0E)
    public static let readMultipleResponse = ATTOpcode(0x0F)
    public static let readByGroupTypeRequest = ATTOpcode(0x10)
    public static let readByGroupTypeResponse = ATTOpcode(0x11)
    public static let writeRequest = ATTOpcode(0x12)
    public static let writeResponse = ATTOpcode(0x13)
    public static let prepareWriteRequest = ATTOpcode(0x16)
    public static let prepareWriteResponse = ATTOpcode(0x17)
    public static let executeWriteRequest = ATTOpcode(0x18)
    public static let executeWriteResponse = ATTOpcode(0x19)
    public static let handleValueNotification = ATTOpcode(0x1B)
    public static let handleValueIndication = ATTOpcode(0x1D)
    public static let handleValueConfirmation = ATTOpcode(0x1E)
    public static let readMultipleVariableRequest = ATTOpcode(0x20)
    public static let readMultipleVariableResponse = ATTOpcode(0x21)
    public static let multipleHandleValueNotification = ATTOpcode(0x23)
    public static let writeCommand = ATTOpcode(0x52)
    public static let signedWriteCommand = ATTOpcode(0xD2)

    /// Command flag (bit 6): no response is sent, and unknown commands are
    /// ignored rather than answered with an Error Response (3.4.9).
    public var isCommand: Bool { rawValue & 0x40 != 0 }

    /// Requests that expect a response PDU (3.4.8, "Attribute Opcode Summary").
    public var isRequest: Bool {
        switch self {
        case .exchangeMTURequest, .findInformationRequest, .findByTypeValueRequest, .readByTypeRequest,
             .readRequest, .readBlobRequest, .readMultipleRequest, .readByGroupTypeRequest, .writeRequest,
             .prepareWriteRequest, .executeWriteRequest, .readMultipleVariableRequest:
            true
        default:
            false
        }
    }

    /// The response opcode a request expects: every request's response is the
    /// next opcode (3.4.8).
    public var response: ATTOpcode? { isRequest ? ATTOpcode(rawValue + 1) : nil }

    public var name: String? {
        switch self {
        case .errorResponse: "Error Response"
        case .exchangeMTURequest: "Exchange MTU Request"
        case .exchangeMTUResponse: "Exchange MTU Response"
        case .findInformationRequest: "Find Information Request"
        case .findInformationResponse: "Find Information Response"
        case .findByTypeValueRequest: "Find By Type Value Request"
        case .findByTypeValueResponse: "Find By Type Value Response"
        case .readByTypeRequest: "Read By Type Request"
        case .readByTypeResponse: "Read By Type Response"
        case .readRequest: "Read Request"
        case .readResponse: "Read Response"
        case .readBlobRequest: "Read Blob Request"
        case .readBlobResponse: "Read Blob Response"
        case .readMultipleRequest: "Read Multiple Request"
        case .readMultipleResponse: "Read Multiple Response"
        case .readByGroupTypeRequest: "Read By Group Type Request"
        case .readByGroupTypeResponse: "Read By Group Type Response"
        case .writeRequest: "Write Request"
        case .writeResponse: "Write Response"
        case .prepareWriteRequest: "Prepare Write Request"
        case .prepareWriteResponse: "Prepare Write Response"
        case .executeWriteRequest: "Execute Write Request"
        case .executeWriteResponse: "Execute Write Response"
        case .handleValueNotification: "Handle Value Notification"
        case .handleValueIndication: "Handle Value Indication"
        case .handleValueConfirmation: "Handle Value Confirmation"
        case .readMultipleVariableRequest: "Read Multiple Variable Request"
        case .readMultipleVariableResponse: "Read Multiple Variable Response"
        case .multipleHandleValueNotification: "Multiple Handle Value Notification"
        case .writeCommand: "Write Command"
        case .signedWriteCommand: "Signed Write Command"
        default: nil
        }
    }

    public var description: String {
        let hex = "0x" + [rawValue].hexString
        return name.map { "\($0) (\(hex))" } ?? "opcode \(hex)"
    }
}

/// An ATT error code carried by an Error Response (Core Spec v5.x Vol 3,
/// Part F, 3.4.1.1, Table 3.4). Open-ended: application (0x80–0x9F) and
/// profile (0xE0–0xFF) codes, and codes from newer specs, still decode.
public struct ATTErrorCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let invalidHandle = ATTErrorCode(0x01)
    public static let readNotPermitted = ATTErrorCode(0x02)
    public static let writeNotPermitted = ATTErrorCode(0x03)
    public static let invalidPDU = ATTErrorCode(0x04)
    public static let insufficientAuthentication = ATTErrorCode(0x05)
    public static let requestNotSupported = ATTErrorCode(0x06)
    public static let invalidOffset = ATTErrorCode(0x07)
    public static let insufficientAuthorization = ATTErrorCode(0x08)
    public static let prepareQueueFull = ATTErrorCode(0x09)
    public static let attributeNotFound = ATTErrorCode(0x0A)
    public static let attributeNotLong = ATTErrorCode(0x0B)
    public static let encryptionKeySizeTooShort = ATTErrorCode(0x0C)
    public static let invalidAttributeValueLength = ATTErrorCode(0x0D)
    public static let unlikelyError = ATTErrorCode(0x0E)
    public static let insufficientEncryption = ATTErrorCode(0x0F)
    public static let unsupportedGroupType = ATTErrorCode(0x10)
    public static let insufficientResources = ATTErrorCode(0x11)
    public static let databaseOutOfSync = ATTErrorCode(0x12)
    public static let valueNotAllowed = ATTErrorCode(0x13)
    /// Common Profile and Service Error Codes (Core Spec Supplement, Part B, 1.2).
    public static let writeRequestRejected = ATTErrorCode(0xFC)
    public static let cccdImproperlyConfigured = ATTErrorCode(0xFD)
    public static let procedureAlreadyInProgress = ATTErrorCode(0xFE)
    public static let outOfRange = ATTErrorCode(0xFF)

    /// Application error codes, defined by the higher layer (3.4.1.1).
    public var isApplicationError: Bool { (0x80...0x9F).contains(rawValue) }

    /// The two codes after which a client may raise the link's security and retry.
    public var isSecurityError: Bool { self == .insufficientAuthentication || self == .insufficientEncryption }

    public var name: String? {
        switch self {
        case .invalidHandle: "Invalid Handle"
        case .readNotPermitted: "Read Not Permitted"
        case .writeNotPermitted: "Write Not Permitted"
        case .invalidPDU: "Invalid PDU"
        case .insufficientAuthentication: "Insufficient Authentication"
        case .requestNotSupported: "Request Not Supported"
        case .invalidOffset: "Invalid Offset"
        case .insufficientAuthorization: "Insufficient Authorization"
        case .prepareQueueFull: "Prepare Queue Full"
        case .attributeNotFound: "Attribute Not Found"
        case .attributeNotLong: "Attribute Not Long"
        case .encryptionKeySizeTooShort: "Encryption Key Size Too Short"
        case .invalidAttributeValueLength: "Invalid Attribute Value Length"
        case .unlikelyError: "Unlikely Error"
        case .insufficientEncryption: "Insufficient Encryption"
        case .unsupportedGroupType: "Unsupported Group Type"
        case .insufficientResources: "Insufficient Resources"
        case .databaseOutOfSync: "Database Out Of Sync"
        case .valueNotAllowed: "Value Not Allowed"
        case .writeRequestRejected: "Write Request Rejected"
        case .cccdImproperlyConfigured: "Client Characteristic Configuration Descriptor Improperly Configured"
        case .procedureAlreadyInProgress: "Procedure Already in Progress"
        case .outOfRange: "Out of Range"
        default: isApplicationError ? "Application Error" : nil
        }
    }

    public var description: String {
        let hex = "0x" + [rawValue].hexString
        return name.map { "\($0) (\(hex))" } ?? "error \(hex)"
    }
}
