import ArgumentParser
import QuenchServe
import QuenchHistory
import QuenchComposition

extension History.ChartKind: ExpressibleByArgument {}

/// Whose history to draw, from which database, in which units.
struct DrawingOptions: ParsableArguments {
    @Option(name: .long, help: databaseHelp) var db: String?
    @Option(name: .long, help: "Show volumes in ml or oz (US fl oz); default: `units` in the config file, else the setting.")
    var units: String?
    @OptionGroup var who: PersonOption

    func environment() throws -> HistoryEnvironment {
        try HistoryEnvironment.process(database: db, units: units, person: who.person)
    }
}

struct ChartCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chart", abstract: "Draw intake as an SVG chart: daily bars against the goal, or a day's sips over time.")
    @OptionGroup var drawing: DrawingOptions
    @Argument(help: "week (7 days), 30days, month (the calendar month) or day (sips over the day).")
    var kind: History.ChartKind
    @Option(help: "The day the chart ends on or shows, as YYYY-MM-DD, today or yesterday (default: today).") var date: String?
    @Option(help: "The SVG file to write, or - for standard output.") var out: String
    @Option(help: "The width to lay it out for, 240 to 800 pixels (default 800; a phone's is about 350).") var width: Int?

    func run() throws {
        emit(try History.chart(drawing.environment(), kind: kind, date: date, out: out, width: width))
    }
}

struct ShareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "share", abstract: "Make a card to share (1200 x 630) of today or the last 7 days, as PNG or SVG.")
    @OptionGroup var drawing: DrawingOptions
    @Flag(help: "Today: the intake as a ring of the goal, the sips and the streak (the default).") var day = false
    @Flag(help: "The last 7 days: bars against the goal, total, average and days the goal was met.") var week = false
    @Option(help: "A name for the heading (\"Ann's day\").") var name: String?
    @Option(help: "The card to write: FILE.png (needs rsvg-convert, Debian librsvg2-bin) or FILE.svg.") var out: String

    func validate() throws {
        if day && week { throw ValidationError("choose one of --day and --week") }
    }

    func run() throws {
        emit(try History.share(drawing.environment(), period: week ? .week : .day, name: name, out: out))
    }
}
