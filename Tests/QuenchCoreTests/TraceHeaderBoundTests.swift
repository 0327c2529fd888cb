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

/// The bottle's calibration a header carries is kept as written, for replay.
@Suite struct TraceHeaderBottleTests {
    @Test func capacityEmptyWeightAndCurveAreKept() throws {
        let text = "# quench trace v1\n# unit: g\n# capacity-ml: 750\n# empty-weight-g: 180.5\nt,value\n0,900\n"
        let (header, _) = try TraceParser.parse(text)
        #expect(header["capacity-ml"] == "750" && header["empty-weight-g"] == "180.5")
        let (level, _) = try TraceParser.parse("# quench trace v1\n# unit: mm\n# level-curve: 0:0, 100:420 ,180:750\nt,value\n0,50\n")
        #expect(level["level-curve"] == "0:0, 100:420 ,180:750")
        #expect(try LevelCurve(parsing: "0:0,1.5e2:420").points.last?.level == 150)
        #expect(throws: CalibrationError.invalidPoint(index: 1, reason: "'0xC8:420' is not LEVEL:ML")) { try LevelCurve(parsing: "0:0,0xC8:420") }
    }
}
