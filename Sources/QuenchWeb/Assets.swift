/// The page: one HTML file, one stylesheet, one small script, one icon, all
/// compiled in, so the Pi serves everything itself (no CDN, no web fonts) and
/// works with no internet.
enum Assets {
    /// Everything comes from this server; the charts' inline SVG carries a `<style>`.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        + "connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

    static let icon = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><path d="M16 3C11 10 7 15 7 20a9 9 0 0 0 18 0c0-5-4-10-9-17z" fill="#1e88e5"/></svg>
        """

    static let page = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="color-scheme" content="light dark">
        <title>Quench</title>
        <link rel="icon" href="/icon.svg" type="image/svg+xml">
        <link rel="stylesheet" href="/app.css">
        <script src="/app.js" defer></script>
        </head>
        <body>
        <a class="skip" href="#main">Skip to the day</a>
        <header>
          <h1><img src="/icon.svg" alt="" width="24" height="24"> Quench</h1>
          <nav aria-label="People and views">
            <label id="person-pick" hidden>Person <select id="person"></select></label>
            <a id="household-link" href="/?view=household" hidden>Household</a>
            <span id="live" role="status" aria-live="polite" class="live off">connecting…</span>
          </nav>
        </header>
        <main id="main">
        <p id="problem" role="alert" hidden></p>

        <section id="today" aria-labelledby="today-title">
          <h2 id="today-title">Today<span id="who"></span></h2>
          <div class="ring-row">
            <svg id="ring" viewBox="0 0 120 120" role="img" aria-labelledby="ring-text">
              <circle class="ring-track" cx="60" cy="60" r="52"/>
              <circle id="ring-fill" class="ring-fill" cx="60" cy="60" r="52"/>
              <line id="ring-pace" class="ring-pace" x1="60" y1="1" x2="60" y2="19"/>
              <text id="ring-percent" x="60" y="66" text-anchor="middle">0%</text>
            </svg>
            <div class="numbers">
              <p id="ring-text" class="big"><span id="intake" data-ml="0">0</span> of <span id="goal" data-ml="0">0</span></p>
              <p id="pace"></p>
              <p id="last-sip"></p>
            </div>
          </div>

          <form id="quick-add" aria-label="Add a drink">
            <div class="buttons" id="quick-buttons"></div>
            <label for="custom-amount">Other amount</label>
            <input id="custom-amount" name="amount" inputmode="decimal" placeholder="e.g. 330ml" autocomplete="off">
            <button type="submit">Add</button>
          </form>

          <table id="sips">
            <caption>Today's drinks</caption>
            <thead><tr><th scope="col">Time</th><th scope="col">Amount</th><th scope="col">Bottle</th><th scope="col">How</th><th scope="col"><span class="sr">Actions</span></th></tr></thead>
            <tbody></tbody>
          </table>
          <p id="no-sips" hidden>Nothing yet today.</p>
          <p><button type="button" id="undo">Undo the last drink</button> <span id="edit-status" role="status" aria-live="polite"></span></p>
        </section>

        <section id="bottles" aria-labelledby="bottles-title">
          <h2 id="bottles-title">Bottles</h2>
          <ul id="bottle-list"></ul>
          <p id="no-bottles" hidden>No bottle paired: <code>quench pair</code> adds one.</p>
        </section>

        <section id="history" aria-labelledby="history-title">
          <h2 id="history-title">History</h2>
          <p id="streaks"></p>
          <figure class="chart"><div id="chart-day"></div></figure>
          <figure class="chart"><div id="chart-week"></div></figure>
          <figure class="chart"><div id="chart-30days"></div></figure>
          <p class="share">Share: <a class="card" data-card="share/day.png" href="/api/share/day.png" download="quench-today.png">today's card</a> ·
            <a class="card" data-card="share/week.png" href="/api/share/week.png" download="quench-week.png">this week's card</a> (PNG)</p>
          <h3 id="calendar-title">This month</h3>
          <table id="calendar" aria-labelledby="calendar-title">
            <thead><tr><th scope="col" abbr="Monday">Mon</th><th scope="col" abbr="Tuesday">Tue</th><th scope="col" abbr="Wednesday">Wed</th><th scope="col" abbr="Thursday">Thu</th><th scope="col" abbr="Friday">Fri</th><th scope="col" abbr="Saturday">Sat</th><th scope="col" abbr="Sunday">Sun</th></tr></thead>
            <tbody></tbody>
          </table>
        </section>

        <section id="household" aria-labelledby="household-title" hidden>
          <h2 id="household-title">Household</h2>
          <table id="people">
            <thead><tr><th scope="col">Person</th><th scope="col">Today</th><th scope="col">Goal</th><th scope="col">Pace</th><th scope="col">Last drink</th></tr></thead>
            <tbody></tbody>
          </table>
        </section>
        </main>
        </body>
        </html>
        """

    static let style = """
        :root { --bg: #fff; --fg: #1b1f23; --muted: #5b6570; --line: #d5dbe1; --accent: #1565c0; --good: #1b7f3b;
                --warn: #a15c00; --card: #f5f8fb; font-family: "DejaVu Sans", Verdana, system-ui, sans-serif; }
        @media (prefers-color-scheme: dark) {
          :root { --bg: #101418; --fg: #e8edf2; --muted: #9aa6b2; --line: #2c353e; --accent: #64b5f6; --good: #66bb6a;
                  --warn: #ffb74d; --card: #182028; }
        }
        * { box-sizing: border-box; }
        body { margin: 0; background: var(--bg); color: var(--fg); line-height: 1.45; }
        header { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; justify-content: space-between;
                 padding: .6rem 1rem; border-bottom: 1px solid var(--line); }
        h1 { font-size: 1.25rem; margin: 0; display: flex; gap: .4rem; align-items: center; }
        nav { display: flex; gap: 1rem; align-items: center; flex-wrap: wrap; }
        a { color: var(--accent); }
        main { display: grid; gap: 1rem; padding: 1rem; max-width: 72rem; margin: 0 auto; }
        @media (min-width: 900px) { main { grid-template-columns: 1fr 1fr; } #today { grid-row: span 2; } }
        section { background: var(--card); border: 1px solid var(--line); border-radius: .75rem; padding: 1rem; min-width: 0; }
        h2 { margin: 0 0 .75rem; font-size: 1.15rem; }
        .ring-row { display: flex; gap: 1rem; align-items: center; flex-wrap: wrap; }
        #ring { width: 9rem; height: 9rem; flex: none; }
        #ring circle { fill: none; stroke-width: 12; transform: rotate(-90deg); transform-origin: 60px 60px; }
        .ring-track { stroke: var(--line); }
        #ring .ring-pace { stroke: var(--fg); stroke-width: 3; stroke-linecap: round; }
        .ring-fill { stroke: var(--accent); stroke-linecap: round; transition: stroke-dasharray .4s; }
        .met .ring-fill { stroke: var(--good); }
        #ring text { fill: var(--fg); font-size: 20px; font-weight: bold; }
        .big { font-size: 1.5rem; font-weight: bold; margin: 0; }
        .numbers p { margin: .2rem 0; }
        .behind { color: var(--warn); }
        .ahead { color: var(--good); }
        form { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: 1rem 0; }
        .buttons { display: flex; gap: .5rem; flex-wrap: wrap; }
        button, input, select { font: inherit; color: inherit; background: var(--bg); border: 1px solid var(--line);
                                border-radius: .5rem; padding: .45rem .8rem; min-height: 2.5rem; }
        button { cursor: pointer; }
        button.add { background: var(--accent); color: var(--bg); border-color: var(--accent); font-weight: bold; }
        input { width: 8rem; }
        :focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
        table { border-collapse: collapse; width: 100%; }
        caption { text-align: left; font-weight: bold; padding: .25rem 0; }
        th, td { text-align: left; padding: .35rem .4rem; border-bottom: 1px solid var(--line); }
        td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
        tr.deleted td { text-decoration: line-through; color: var(--muted); }
        #bottle-list { list-style: none; padding: 0; margin: 0; display: grid; gap: .5rem; }
        #bottle-list li { display: flex; justify-content: space-between; gap: .5rem; flex-wrap: wrap; }
        .link-up::before { content: "● "; color: var(--good); }
        .link-down::before { content: "○ "; color: var(--muted); }
        .chart { margin: .5rem 0; }
        .chart svg { width: 100%; height: auto; }
        #calendar td { text-align: center; font-size: .8rem; height: 2.6rem; vertical-align: top; }
        #calendar td.met { background: color-mix(in srgb, var(--good) 22%, transparent); }
        #calendar td.today { outline: 2px solid var(--accent); outline-offset: -2px; }
        #calendar .day { display: block; font-weight: bold; }
        .live { font-size: .85rem; }
        .live.on::before { content: "● "; color: var(--good); }
        .live.off::before { content: "○ "; color: var(--warn); }
        #problem { background: var(--warn); color: var(--bg); padding: .5rem 1rem; border-radius: .5rem; margin: 0; }
        .sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
        .skip { position: absolute; left: -999px; }
        .skip:focus { left: 1rem; top: .5rem; background: var(--bg); padding: .25rem .5rem; }
        @media (max-width: 480px) { main { padding: .5rem; } section { padding: .75rem; } td, th { padding: .3rem .2rem; } }
        """
}
