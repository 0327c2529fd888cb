import Testing
import QuenchCore

@Suite struct CalibrationTests {
    @Test func weightUnitsConvertThroughDensity() throws {
        #expect(try BottleCalibration(unit: .g).millilitres(500) == 500)
        #expect(try BottleCalibration(unit: .kg).millilitres(0.25) == 250)
        #expect(abs(try BottleCalibration(unit: .lb).millilitres(1) - 453.59237) < 1e-9)
        #expect(abs(try BottleCalibration(unit: .oz).millilitres(1) - 28.349523125) < 1e-9)
        #expect(try BottleCalibration(unit: .g, density: 1.25).millilitres(500) == 400)
    }

    @Test func levelCurveInterpolatesPiecewise() throws {
        let curve = try LevelCurve(parsing: "0:0,100:400,200:900")
        let c = try BottleCalibration(unit: .mm, levelCurve: curve)
        #expect(c.millilitres(50) == 200)
        #expect(c.millilitres(150) == 650)
        #expect(c.millilitres(200) == 900)
        #expect(c.millilitres(-10) == 0)       // never negative
        #expect(c.millilitres(220) == 1000)    // extrapolates along the last segment
    }

    @Test func percentIsOfTheHighestLevel() throws {
        let c = try BottleCalibration(unit: .percent, levelCurve: LevelCurve(parsing: "0:0,180:750"))
        #expect(c.millilitres(50) == 375)
        #expect(c.millilitres(100) == 750)
    }

    @Test(arguments: [
        ("0:0", "at least two"),
        ("0:0,0:100", "point 2: level 0 is not above the previous point's 0"),
        ("0:100,10:50", "point 2: 50 mL is less than the previous point's 100 mL"),
        ("0:0,10:x", "point 2: '10:x' is not LEVEL:ML"),
        ("0:0,,10:5", "point 2"),
        ("5:-1,10:5", "point 1: mL is negative"),
    ])
    func invalidCurvesSayWhichPoint(text: String, message: String) {
        #expect {
            _ = try LevelCurve(parsing: text)
        } throws: { error in
            (error as? CalibrationError)?.description.contains(message) == true
        }
    }

    /// What no bottle is, from any door (an option, a profile file, an import): refused with the reason.
    @Test func aCalibrationIsBoundedToWhatBottlesAre() {
        func reason(_ body: () throws -> Void) -> String {
            do { try body(); return "accepted" } catch { return "\(error)" }
        }
        #expect(reason { _ = try LevelCurve(parsing: "0:0,100:0") } == "level curve point 2: the curve never rises: its mL are the same everywhere")
        #expect(reason { _ = try LevelCurve(parsing: "0:0,1e300:1e300") }.hasPrefix("level curve point 2: beyond what a bottle is"))
        #expect(reason { _ = try LevelCurve(parsing: "0:0,100:1e9") }.hasPrefix("level curve point 2: beyond what a bottle is"))
        #expect(reason { _ = try BottleCalibration(unit: .g, density: 1e300) } == "density 1e+300 g/mL is not from 0.5 to 2 g/mL")
        #expect(reason { _ = try BottleCalibration(unit: .g, capacityML: 1e-320) }.hasPrefix("capacity "))
        #expect(reason { _ = try BottleCalibration(unit: .g, emptyWeightG: 1e300) } == "empty weight 1e+300 g is not from 0 to 100,000 g")
        #expect(reason { _ = try BottleCalibration(unit: .g, density: 1.03, capacityML: 750, emptyWeightG: 320) } == "accepted", "milk in a 750 mL bottle")
    }

    @Test func levelSensorNeedsACurve() {
        #expect(throws: CalibrationError.missingLevelCurve(.mm)) { _ = try BottleCalibration(unit: .mm) }
        #expect(throws: CalibrationError.invalidDensity(0)) { _ = try BottleCalibration(unit: .g, density: 0) }
    }

    @Test func remainingFromTareAndCapacity() throws {
        let c = try BottleCalibration(unit: .g, capacityML: 750, emptyWeightG: 250)
        #expect(c.remaining(settledML: 650) == 400)
        #expect(c.remaining(settledML: 1200) == 750)
        #expect(c.remaining(settledML: 100) == 0)
        #expect(try BottleCalibration(unit: .g).remaining(settledML: 650) == nil)
    }

    @Test func timestampsRoundTrip() {
        let t = Timestamp(iso8601: "2026-03-02T07:30:00Z")!
        #expect(t.secondsSince1970 == 1_772_436_600)
        #expect(t.iso8601 == "2026-03-02T07:30:00Z")
        #expect(Timestamp(iso8601: "2026-03-02T08:30:00.250+01:00")!.iso8601 == "2026-03-02T07:30:00.250Z")
        #expect(Timestamp(iso8601: "2024-02-29T00:00:00Z") != nil)
        #expect(Timestamp(iso8601: "2023-02-29T00:00:00Z") == nil)
        #expect(Timestamp(secondsSince1970: -1).iso8601 == "1969-12-31T23:59:59Z")
    }
}
