import QuenchCore
import Testing

/// A header cannot make the parser keep without bound: the first lines are
/// kept, the rest counted (replay says how many it did not keep).
@Suite struct TraceHeaderBoundTests {
    @Test func metadataBeyondTheBoundIsCountedNotKept() throws {
        var text = "# quench trace v1\n# sensor: weight\n# unit: g\n"
        for i in 0..<(TraceFormat.maximumMetadata + 44) { text += "# key-\(i): value \(i)\n" }
        text += "t,value\n0,1000\n0.1,1000\n"
        let (header, readings) = try TraceParser.parse(text)
        #expect(header.metadata.count == TraceFormat.maximumMetadata)
        #expect(header.droppedMetadata == 44)
        #expect(header.metadata.last?.key == "key-\(TraceFormat.maximumMetadata - 1)")
        #expect(readings.count == 2)
    }
}
