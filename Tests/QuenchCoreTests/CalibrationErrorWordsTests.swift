import QuenchCore
import QuenchTestSupport
import Testing

/// Issue 24: a calibration error says what is missing or wrong; the command
/// line names its own option for it (`--level-curve`).
@Suite("calibration errors name no command, option or variable")
struct CalibrationErrorWordsTests {
    @Test func everyCaseSaysTheFactOnly() {
        let errors: [CalibrationError] = [
            .tooFewPoints(1), .invalidPoint(index: 0, reason: "level is not a number"), .invalidDensity(-1), .missingLevelCurve(.mm),
            .unitDoesNotFitSensor(.g, .level), .levelCurveForScale(.g), .invalidCapacity(0), .invalidEmptyWeight(-1),
        ]
        for error in errors { expectNoCommandLineText(error.description) }
        #expect(CalibrationError.missingLevelCurve(.mm).description == "a level sensor in mm needs a level curve")
    }
}
