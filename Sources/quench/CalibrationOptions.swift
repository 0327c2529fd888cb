import ArgumentParser
import QuenchCore
import QuenchGateway

/// Options shared by every command that turns readings into events.
struct CalibrationOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Level-sensor calibration: LEVEL:ML points, level increasing.", valueName: "L:ML,L:ML,..."),
            transform: parseLevelCurve)
    var levelCurve: LevelCurve?

    @Option(help: "Density of the liquid in g/mL.")
    var density: Double = 1.0

    @Option(help: "Bottle capacity in mL (to say what is left).")
    var capacity: Double?

    @Option(help: "Empty bottle's weight in g: to say what is left; under half of it, the bottle is taken to be off the scale.")
    var tare: Double?

    @Option(help: "Smallest sip reported, in mL.")
    var minSip: Double?

    @Option(help: "A fixed rule for pours: a loss across a lift of at least this many mL is a pour and a smaller one a sip, whatever its pace (default: its pace decides).")
    var pourML: Double?

    @Option(help: "Sensor kind, overriding the trace header (weight | level).")
    var sensor: SensorKind?

    @Option(help: "Unit, overriding the trace header (g | kg | lb | oz | mm | percent | raw).")
    var unit: MeasurementUnit?

    @Flag(help: "Also report the diagnostic lifted and placed events.")
    var diagnostics = false

    func validate() throws {
        if let pourML, !(pourML > 0 && pourML <= 100_000) {
            throw ValidationError("--pour-ml must be more than 0 and at most 100000 mL, not \(pourML.compactDescription)")
        }
        if let minSip, !(minSip >= 0 && minSip <= 1000) {
            throw ValidationError("--min-sip must be from 0 to 1000 mL, not \(minSip.compactDescription)")
        }
        // Named as the options they are: said as the trace's calibration, "FILE: density 5 g/mL …"
        // blamed the file for what the command line gave.
        if !BottleCalibration.densities.contains(density) {
            throw ValidationError("--density must be from 0.5 to 2 g/mL, not \(density.compactDescription)")
        }
        if let capacity, !BottleCalibration.capacitiesML.contains(capacity) {
            throw ValidationError("--capacity must be from 1 to 100000 mL, not \(capacity.compactDescription)")
        }
        if let tare, !BottleCalibration.emptyWeightsG.contains(tare) {
            throw ValidationError("--tare must be from 0 to 100000 g, not \(tare.compactDescription)")
        }
    }

    func replayOptions() -> ReplayOptions {
        var options = ReplayOptions()
        options.sensor = sensor
        options.unit = unit
        options.levelCurve = levelCurve
        options.density = density
        options.capacityML = capacity
        options.tareG = tare
        if let minSip { options.detector.minSipML = minSip }
        options.detector.pourML = pourML
        options.detector.emitDiagnostics = diagnostics
        return options
    }
}

/// `--level-curve`: ArgumentParser says the parser's reason after "The value … is invalid".
func parseLevelCurve(_ text: String) throws -> LevelCurve {
    do { return try LevelCurve(parsing: text) } catch { throw ValidationError(error.description) }
}

/// `--started`: ISO 8601 with a zone, or why not.
func parseInstant(_ text: String) throws -> Timestamp {
    guard let time = Timestamp(iso8601: text) else {
        throw ValidationError("expected ISO 8601 with a zone, such as 2026-03-02T07:30:00Z")
    }
    return time
}

extension SensorKind: ExpressibleByArgument {}
extension MeasurementUnit: ExpressibleByArgument {}

