import QuenchTestSupport
import Testing
@testable import BluetoothWire

/// `[0x02, 0x00, 0x02]` from a hex string, for fixtures.

/// Encodes `value`, checks the bytes, decodes them back through both the
/// type's own decoder and the `ATTPDU` dispatcher.
private func checkRoundTrip<P: ATTPDUCodable>(_ value: P, _ bytes: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let expected = hex(bytes)
    #expect(value.encode() == expected, sourceLocation: sourceLocation)
    #expect(try P(decoding: expected) == value, sourceLocation: sourceLocation)
    let any = try ATTPDU(decoding: expected)
    #expect(any.opcode == P.opcode, sourceLocation: sourceLocation)
    #expect(any.codable as? P == value, sourceLocation: sourceLocation)
    #expect(any.encode() == expected, sourceLocation: sourceLocation)
}

private let uuid128 = BluetoothUUID("6e0a0001-51a5-4c5b-9f1d-7e57b0771e00")!
/// The same UUID as it travels: little-endian.
private let uuid128LE = "001e77b0577e1d9f5b4ca5510100 0a6e"

@Suite struct ATTPDURoundTripTests {
    // Fixtures marked "test-gatt.c" are byte vectors from BlueZ unit/test-gatt.c
    // (SERVICE_DATA_1_PDUS, PRIMARY_DISC_SMALL_DB and the read/write tests).

    @Test func errorResponse() throws {
        // test-gatt.c: Read By Group Type from 0x0009 answered "Attribute Not Found".
        try checkRoundTrip(ATTErrorResponse(requestOpcode: .readByGroupTypeRequest, handle: 0x0009, errorCode: .attributeNotFound), "01 10 0900 0a")
        // Unknown and application codes still decode and keep their value.
        let app = try ATTErrorResponse(decoding: hex("01 12 0300 85"))
        #expect(app.errorCode.rawValue == 0x85 && app.errorCode.isApplicationError)
        let unknown = try ATTErrorResponse(decoding: hex("01 0a 0300 55"))
        #expect(unknown.errorCode == ATTErrorCode(rawValue: 0x55))
        #expect(unknown.errorCode.description == "error 0x55")
    }

    @Test func exchangeMTU() throws {
        // test-gatt.c MTU_EXCHANGE_CLIENT_PDUS: 512 both ways.
        try checkRoundTrip(ATTExchangeMTURequest(clientRxMTU: 512), "02 0002")
        try checkRoundTrip(ATTExchangeMTUResponse(serverRxMTU: 512), "03 0002")
        // test-gatt.c SERVER_MTU_EXCHANGE_PDU: 23.
        try checkRoundTrip(ATTExchangeMTURequest(clientRxMTU: 23), "02 1700")
    }

    @Test func findInformation() throws {
        // test-gatt.c: descriptors of the Device Name characteristic: 0x2901 at 0x0004.
        try checkRoundTrip(ATTFindInformationRequest(startingHandle: 4, endingHandle: 4), "04 0400 0400")
        let r16 = ATTFindInformationResponse(entries: [.init(handle: 4, type: BluetoothUUID(uuid16: 0x2901))])
        #expect(r16.format == .uuid16)
        try checkRoundTrip(r16, "05 01 0400 0129")
        let two = ATTFindInformationResponse(entries: [.init(handle: 4, type: BluetoothUUID(uuid16: 0x2902)),
                                                       .init(handle: 5, type: BluetoothUUID(uuid16: 0x2901))])
        try checkRoundTrip(two, "05 01 0400 0229 0500 0129")
        let r128 = ATTFindInformationResponse(entries: [.init(handle: 0x0010, type: uuid128)])
        #expect(r128.format == .uuid128)
        try checkRoundTrip(r128, "05 02 1000" + uuid128LE)
    }

    @Test func findByTypeValue() throws {
        // Primary service discovery by UUID 0x181D (Vol 3, Part G, 4.4.2).
        try checkRoundTrip(ATTFindByTypeValueRequest(startingHandle: 1, endingHandle: 0xFFFF, attributeType: 0x2800, attributeValue: [0x1D, 0x18]),
                           "06 0100 ffff 0028 1d18")
        try checkRoundTrip(ATTFindByTypeValueResponse(handlesInformation: [.init(foundAttributeHandle: 0x10, groupEndHandle: 0x18)]),
                           "07 1000 1800")
        try checkRoundTrip(ATTFindByTypeValueResponse(handlesInformation: [.init(foundAttributeHandle: 1, groupEndHandle: 4),
                                                                            .init(foundAttributeHandle: 9, groupEndHandle: 0xFFFF)]),
                           "07 0100 0400 0900 ffff")
    }

    @Test func readByType() throws {
        // test-gatt.c: characteristic discovery in 0x0001–0x0004 finds Device Name (0x2A00).
        try checkRoundTrip(ATTReadByTypeRequest(startingHandle: 1, endingHandle: 4, attributeType: BluetoothUUID(uuid16: 0x2803)),
                           "08 0100 0400 0328")
        try checkRoundTrip(ATTReadByTypeResponse(attributeData: [ATTHandleValue(handle: 2, value: hex("02 0300 002a"))]),
                           "09 07 0200 02 0300 002a")
        try checkRoundTrip(ATTReadByTypeRequest(startingHandle: 1, endingHandle: 0xFFFF, attributeType: uuid128),
                           "08 0100 ffff" + uuid128LE)
        try checkRoundTrip(ATTReadByTypeResponse(attributeData: [ATTHandleValue(handle: 2, value: [1, 2]),
                                                                 ATTHandleValue(handle: 7, value: [3, 4])]),
                           "09 04 0200 0102 0700 0304")
    }

    @Test func read() throws {
        // test-gatt.c test_read_1: handle 0x0003 reads 01 02 03.
        try checkRoundTrip(ATTReadRequest(attributeHandle: 3), "0a 0300")
        try checkRoundTrip(ATTReadResponse(attributeValue: [1, 2, 3]), "0b 010203")
        try checkRoundTrip(ATTReadResponse(attributeValue: []), "0b")
    }

    @Test func readBlob() throws {
        try checkRoundTrip(ATTReadBlobRequest(attributeHandle: 3, valueOffset: 22), "0c 0300 1600")
        try checkRoundTrip(ATTReadBlobResponse(partAttributeValue: [0xFF, 0xEE]), "0d ffee")
    }

    @Test func readMultiple() throws {
        try checkRoundTrip(ATTReadMultipleRequest(setOfHandles: [3, 7]), "0e 0300 0700")
        try checkRoundTrip(ATTReadMultipleResponse(setOfValues: [1, 2, 3, 4]), "0f 01020304")
    }

    @Test func readByGroupType() throws {
        // test-gatt.c SERVICE_DATA_1_PDUS: 0x1801 at 0x0001–0x0004.
        try checkRoundTrip(ATTReadByGroupTypeRequest(startingHandle: 1, endingHandle: 0xFFFF, attributeGroupType: BluetoothUUID(uuid16: 0x2800)),
                           "10 0100 ffff 0028")
        try checkRoundTrip(ATTReadByGroupTypeResponse(attributeData: [.init(attributeHandle: 1, endGroupHandle: 4, value: [0x01, 0x18])]),
                           "11 06 0100 0400 0118")
        // test-gatt.c PRIMARY_DISC_SMALL_DB: two services in one response.
        try checkRoundTrip(ATTReadByGroupTypeResponse(attributeData: [.init(attributeHandle: 0xF010, endGroupHandle: 0xF015, value: [0x00, 0x18]),
                                                                      .init(attributeHandle: 0xFFFF, endGroupHandle: 0xFFFF, value: [0x0A, 0x18])]),
                           "11 06 10f0 15f0 0018 ffff ffff 0a18")
        try checkRoundTrip(ATTReadByGroupTypeResponse(attributeData: [.init(attributeHandle: 0x20, endGroupHandle: 0x25, value: uuid128.littleEndianBytes)]),
                           "11 14 2000 2500" + uuid128LE)
    }

    @Test func writes() throws {
        // CCCD 0x0004 set to notify (0x0001).
        try checkRoundTrip(ATTWriteRequest(attributeHandle: 4, attributeValue: [0x01, 0x00]), "12 0400 0100")
        try checkRoundTrip(ATTWriteResponse(), "13")
        try checkRoundTrip(ATTWriteCommand(attributeHandle: 0x0B, attributeValue: [0x0A, 0x00]), "52 0b00 0a00")
    }

    @Test func serverInitiated() throws {
        try checkRoundTrip(ATTHandleValueNotification(attributeHandle: 3, attributeValue: [0x03, 0xCE, 0x01]), "1b 0300 03ce01")
        try checkRoundTrip(ATTHandleValueIndication(attributeHandle: 3, attributeValue: [0x02, 0x00]), "1d 0300 0200")
        try checkRoundTrip(ATTHandleValueConfirmation(), "1e")
        try checkRoundTrip(ATTHandleValueNotification(attributeHandle: 9, attributeValue: []), "1b 0900")
    }

    @Test func unknownOpcodeKeepsItsBytes() throws {
        // Prepare Write Request has no codec here: it stays whole.
        let bytes = hex("16 0300 0000 aabb")
        let pdu = try ATTPDU(decoding: bytes)
        #expect(pdu == .unknown(opcode: .prepareWriteRequest, parameters: hex("0300 0000 aabb")))
        #expect(pdu.encode() == bytes)
        #expect(pdu.opcode.isRequest && pdu.opcode.response == .prepareWriteResponse)
        #expect(try ATTPDU(decoding: [0x7F]) == .unknown(opcode: ATTOpcode(0x7F), parameters: []))
    }
}

@Suite struct ATTOpcodeTests {
    @Test func requestsAndResponses() {
        #expect(ATTOpcode.readByTypeRequest.response == .readByTypeResponse)
        #expect(ATTOpcode.writeRequest.response == .writeResponse)
        #expect(ATTOpcode.writeCommand.response == nil)
        #expect(ATTOpcode.writeCommand.isCommand && ATTOpcode.signedWriteCommand.isCommand)
        #expect(!ATTOpcode.writeRequest.isCommand)
        #expect(ATTOpcode.handleValueIndication.response == nil)
        #expect(ATTOpcode.readRequest.description == "Read Request (0x0a)")
    }

    @Test func securityCodes() {
        #expect(ATTErrorCode.insufficientEncryption.isSecurityError)
        #expect(ATTErrorCode.insufficientAuthentication.isSecurityError)
        #expect(!ATTErrorCode.insufficientAuthorization.isSecurityError)
        #expect(ATTErrorCode(rawValue: 0x0F).description == "Insufficient Encryption (0x0f)")
    }
}

@Suite struct ATTDecodeErrorTests {
    @Test func emptyPDU() {
        #expect(throws: DecodeError(context: "ATT PDU", field: "opcode", offset: 0, reason: .truncated(needed: 1, available: 0))) {
            try ATTPDU(decoding: [])
        }
    }

    @Test func truncatedErrorResponse() {
        #expect(throws: DecodeError(context: "ATT Error Response", field: "attribute handle in error", offset: 2,
                                    reason: .truncated(needed: 2, available: 1))) {
            try ATTPDU(decoding: hex("01 0a 03"))
        }
    }

    @Test func trailingBytes() {
        #expect(throws: DecodeError(context: "ATT Exchange MTU Response", field: "end of payload", offset: 3, reason: .trailingBytes(1))) {
            try ATTExchangeMTUResponse(decoding: hex("03 1700 00"))
        }
    }

    @Test func wrongOpcodeForType() {
        #expect(throws: DecodeError(context: "ATT Read Request", field: "opcode", offset: 0, reason: .invalidValue("0x0b, expected 0x0a"))) {
            try ATTReadRequest(decoding: hex("0b 0300"))
        }
    }

    @Test func readByTypeValueCutShort() {
        // Length says 7 (handle + 5 value bytes) but the second entry has only 3 value bytes.
        #expect(throws: DecodeError(context: "ATT Read By Type Response", field: "attribute value", offset: 11,
                                    reason: .truncated(needed: 5, available: 3))) {
            try ATTPDU(decoding: hex("09 07 0200 02 0300 002a 0600 02 0700"))
        }
    }

    @Test func readByTypeLengthTooSmall() {
        #expect(throws: DecodeError(context: "ATT Read By Type Response", field: "length", offset: 1, reason: .invalidValue("1, must be at least 2"))) {
            try ATTPDU(decoding: hex("09 01 0200"))
        }
    }

    @Test func readByTypeRequestBadUUIDSize() {
        #expect(throws: DecodeError(context: "ATT Read By Type Request", field: "attribute type", offset: 5,
                                    reason: .invalidValue("4 bytes, expected a 2- or 16-byte UUID"))) {
            try ATTPDU(decoding: hex("08 0100 ffff 0328 0000"))
        }
    }

    @Test func findInformationBadFormat() {
        #expect(throws: DecodeError(context: "ATT Find Information Response", field: "format", offset: 1, reason: .invalidValue("0x03, expected 0x01 or 0x02"))) {
            try ATTPDU(decoding: hex("05 03 0400 0229"))
        }
    }

    @Test func emptyLists() {
        #expect(throws: DecodeError.self) { try ATTPDU(decoding: hex("07")) }
        #expect(throws: DecodeError.self) { try ATTPDU(decoding: hex("11 06")) }
        #expect(throws: DecodeError.self) { try ATTPDU(decoding: hex("05 01")) }
        #expect(throws: DecodeError.self) { try ATTPDU(decoding: hex("0e 0300")) }
    }
}

@Suite struct ATTFuzzTests {
    /// Random PDUs, mostly with known opcodes so the decoders get exercised:
    /// every outcome is a value that re-encodes to something decoding to
    /// itself, or a DecodeError that points inside the input.
    @Test func randomBytesNeverCrash() {
        var rng = FuzzRandom(seed: 0x5155_454E_4348)
        let known: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D,
                              0x0E, 0x0F, 0x10, 0x11, 0x12, 0x13, 0x1B, 0x1D, 0x1E, 0x52]
        var decoded = 0, rejected = 0
        for _ in 0..<20_000 {
            let length = Int.random(in: 0...40, using: &rng)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if !bytes.isEmpty, Int.random(in: 0..<10, using: &rng) < 9 {
                bytes[0] = known.randomElement(using: &rng)!
            }
            do {
                let pdu = try ATTPDU(decoding: bytes)
                let again = try ATTPDU(decoding: pdu.encode())
                #expect(again == pdu, "re-decoding \(bytes.hexString)")
                decoded += 1
            } catch {
                #expect(error.offset >= 0 && error.offset <= bytes.count, "\(error) for \(bytes.hexString)")
                rejected += 1
            }
        }
        // Both paths must have been taken for the test to mean anything.
        #expect(decoded > 1_000)
        #expect(rejected > 1_000)
    }
}
