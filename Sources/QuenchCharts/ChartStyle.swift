/// The charts' style sheets.
///
/// Every selector starts with the document's own class (`.qc-chart`, `.qc-card`)
/// and every class name with `qc-`: a page that inlines a chart gets its
/// `<style>` too, and the rules must neither reach the page nor be reached by it.
/// Colours come in light and dark (`prefers-color-scheme`); whether a bar met its
/// goal is also said by a check mark and in its title, never by colour alone.
/// Blues of two lightnesses tell met from under the goal for every kind of
/// colour vision; the goal line is amber and dashed. Text over the plot has a
/// halo of the background (`qc-halo`) so the goal line never strikes it through.
enum ChartStyle {
    static let chart = """
        .qc-chart text{fill:#1f2937;font-size:13px}
        .qc-chart .qc-bg{fill:#ffffff}
        .qc-chart .qc-heading{font-size:17px;font-weight:bold}
        .qc-chart .qc-narrow{font-size:13px}
        .qc-chart .qc-muted{fill:#4b5563}
        .qc-chart .qc-small{font-size:11px}
        .qc-chart .qc-grid{stroke:#e5e7eb;stroke-width:1}
        .qc-chart .qc-axis{stroke:#6b7280;stroke-width:1}
        .qc-chart .qc-bar{fill:#bfdbfe;stroke:#1d4ed8;stroke-width:1}
        .qc-chart .qc-bar.qc-met{fill:#1d4ed8}
        .qc-chart .qc-check{fill:#15803d;font-weight:bold}
        .qc-chart .qc-halo{paint-order:stroke;stroke:#ffffff;stroke-width:4px;stroke-linejoin:round}
        .qc-chart .qc-goal{fill:none;stroke:#b45309;stroke-width:2;stroke-dasharray:7 4}
        .qc-chart .qc-line{fill:none;stroke:#1d4ed8;stroke-width:2.5;stroke-linejoin:round}
        .qc-chart .qc-area{fill:#1d4ed8;fill-opacity:0.12}
        .qc-chart .qc-sip{fill:#0e7490}
        .qc-chart .qc-now{stroke:#6b7280;stroke-width:1;stroke-dasharray:2 3}
        @media (prefers-color-scheme: dark){
        .qc-chart text{fill:#e5e7eb}
        .qc-chart .qc-bg{fill:#111827}
        .qc-chart .qc-muted{fill:#9ca3af}
        .qc-chart .qc-grid{stroke:#374151}
        .qc-chart .qc-axis{stroke:#9ca3af}
        .qc-chart .qc-bar{fill:#1e3a8a;stroke:#93c5fd}
        .qc-chart .qc-bar.qc-met{fill:#60a5fa}
        .qc-chart .qc-check{fill:#4ade80}
        .qc-chart .qc-halo{stroke:#111827}
        .qc-chart .qc-goal{stroke:#fbbf24}
        .qc-chart .qc-line{stroke:#60a5fa}
        .qc-chart .qc-area{fill:#60a5fa;fill-opacity:0.18}
        .qc-chart .qc-sip{fill:#22d3ee}
        .qc-chart .qc-now{stroke:#9ca3af}
        }
        """

    /// The share card keeps one palette in both schemes: it is a picture of its
    /// own (a PNG looks the same everywhere), light text on deep blue.
    static let card = """
        .qc-card text{fill:#ffffff;font-size:28px}
        .qc-card .qc-bg{fill:#0c4a6e}
        .qc-card .qc-panel{fill:#075985}
        .qc-card .qc-heading{font-size:56px;font-weight:bold}
        .qc-card .qc-big{font-size:84px;font-weight:bold}
        .qc-card .qc-stat{font-size:44px;font-weight:bold}
        .qc-card .qc-percent{font-size:76px;font-weight:bold}
        .qc-card .qc-muted{fill:#bae6fd}
        .qc-card .qc-small{font-size:22px}
        .qc-card .qc-brand{font-size:30px;font-weight:bold;fill:#7dd3fc}
        .qc-card .qc-drop{fill:#7dd3fc}
        .qc-card .qc-track{fill:none;stroke:#0369a1;stroke-width:40}
        .qc-card .qc-ring{fill:none;stroke:#38bdf8;stroke-width:40;stroke-linecap:round}
        .qc-card .qc-ring.qc-met{stroke:#4ade80}
        .qc-card .qc-grid{stroke:#0369a1;stroke-width:1}
        .qc-card .qc-axis{stroke:#7dd3fc;stroke-width:1}
        .qc-card .qc-bar{fill:#0369a1;stroke:#7dd3fc;stroke-width:2}
        .qc-card .qc-bar.qc-met{fill:#38bdf8}
        .qc-card .qc-check{fill:#4ade80;font-weight:bold}
        .qc-card .qc-value{font-size:22px}
        .qc-card .qc-halo{paint-order:stroke;stroke:#075985;stroke-width:6px;stroke-linejoin:round}
        .qc-card .qc-goal{fill:none;stroke:#fbbf24;stroke-width:3;stroke-dasharray:10 6}
        """
}
