"use strict";
const $ = (id) => document.getElementById(id);
const query = new URLSearchParams(location.search);
const person = query.get("person");
// `?date=2026-11-25`: that day instead of today (the calendar's days and the day links lead there).
const day = /^\d{4}-\d{2}-\d{2}$/.test(query.get("date") || "") ? query.get("date") : null;
const pageLink = (params) => {
  const q = new URLSearchParams();
  if (person) q.set("person", person);
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  const s = q.toString();
  return "/" + (s ? "?" + s : "");
};
const shiftDay = (date, days) => { const d = new Date(date + "T12:00:00Z"); d.setUTCDate(d.getUTCDate() + days); return d.toISOString().slice(0, 10); };
const OZ = 29.5735295625;
let units = "ml", zone = undefined;

function url(path, params = {}, who = person) {
  const q = new URLSearchParams(params);
  if (who) q.set("person", who);
  const s = q.toString();
  return "/api/" + path + (s ? "?" + s : "");
}
// Set when an answer came from the service worker's copy, not from the Pi.
let servedOffline = false;
// The Pi's clock, as its last answer's Date header said it (to the second): "ago", "today" and whether a time
// has come are counted on the clock that stamped the drinks, not on a phone's that is off (or a Pi's without a
// real-time clock, before it synced), which said a drink of 20 min ago "3 h 20 min ago". Within 5 s, the phone's.
let serverClockOffset = 0;
function noteServerClock(header) {
  const said = Date.parse(header || "");
  if (Number.isFinite(said)) serverClockOffset = Math.abs(said - Date.now()) >= 5000 ? said - Date.now() : 0;
}
const serverNow = () => Date.now() + serverClockOffset;
// A response that came, and came right; else an error in the page's words: the server's `error`,
// or "the Pi cannot be reached" rather than the browser's "Failed to fetch".
// A read waits at most READ_WAIT_MS: a Pi switched off answers nothing, not even a refusal, and the page
// waited on it with the figures shown as if current.
const READ_WAIT_MS = 15000;
async function reach(href, init) {
  let response;
  // An AbortController and a timer, not AbortSignal.timeout: Safari before 16 (an iPad Air 2) has none.
  const read = !init || !init.method || init.method === "GET";
  const giveUp = read ? new AbortController() : null;
  const timer = giveUp ? setTimeout(() => giveUp.abort(), READ_WAIT_MS) : null;
  try { response = await fetch(href, giveUp ? { ...init, signal: giveUp.signal } : init); }
  catch (_) { throw new Error("the Pi cannot be reached"); }
  finally { clearTimeout(timer); }
  if (response.headers.has("X-Quench-Offline")) servedOffline = true;
  else noteServerClock(response.headers.get("Date"));
  if (!response.ok) {
    let message = response.statusText;
    try { message = JSON.parse(await response.text()).error || message; } catch (_) {}
    throw new Error(message);
  }
  return response;
}
const call = async (path, params, init, who) => (await reach(url(path, params, who), init)).text();
const getJSON = async (path, params) => JSON.parse(await call(path, params));
const getLines = async (path, params) => (await call(path, params)).split("\n").filter((l) => l).map((l) => JSON.parse(l));
const post = async (path, body, who) =>
  JSON.parse(await call(path, {}, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) }, who));
// A key per add: the server stores a key once, however often it arrives (a retry, a slow network).
// getRandomValues, not randomUUID: the page is plain http on the LAN, not a secure context.
const newKey = () => Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");

const volume = (ml, unit = units) => unit === "oz" ? (ml / OZ).toFixed(1) + " fl oz" : Math.round(ml).toLocaleString("en") + " mL";
// A time with its offset is already the household's wall clock; a UTC one is shown in the household's zone.
const clock = (iso) => /[+-]\d\d:\d\d$/.test(iso) ? iso.slice(11, 16)
  : new Date(iso).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZone: zone });
// The household's wall clock now, HH:MM.
// Its date in the household's zone, as `clock` gives its time: the API's times may be UTC ("Z"),
// whose date is the next day's in the evening west of Greenwich (an edit sent that date moved a
// drink to tomorrow: refused as "in the future", found by the tests at 00:50 UTC).
const localDate = (iso) => {
  if (/[+-]\d\d:\d\d$/.test(iso)) return iso.slice(0, 10);
  const parts = Object.fromEntries(new Intl.DateTimeFormat("en-GB", { year: "numeric", month: "2-digit", day: "2-digit", timeZone: zone })
    .formatToParts(new Date(iso)).map((p) => [p.type, p.value]));
  return parts.year + "-" + parts.month + "-" + parts.day;
};
// Whole percent of the goal, rounded down as the share card and `quench today` say it (100 % only once met).
// `rounded`: amounts in tenths of a mL (the household's), so 25.0 of 50.0 fl oz came as 739.3 of 1,478.7 mL
// (49.997 %): the intake is taken up by what the two roundings can take away (the card said 49 % where the day
// said 50 %), and never to 100 % short of the goal.
const percentOf = (intake, goal, rounded = false) => {
  if (!(goal > 0)) return 0;
  const percent = Math.floor(Math.max(0, intake + (rounded ? 0.1 : 0)) * 100 / goal);
  return intake < goal ? Math.min(99, percent) : percent;
};
// A time with its day when that is not `today` (YYYY-MM-DD): a carer's alert sent yesterday at
// 13:30 read "Alert sent 13:30" at 12:51, a time still to come.
const stamp = (iso, today) => (localDate(iso) === today ? "" : longDay(localDate(iso)) + " ") + clock(iso);
const nowClock = () => new Date(serverNow()).toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZone: zone });
// Whether a time of day has not come yet in the household's day (which starts at its day start, 04:00
// unless set: at 01:00, 23:30 was last evening's, still today's).
function isToCome(time) {
  // `day_start` is the day's "HH:MM" (a full ISO time in older answers): read as the latter, "04:00"
  // was "", and at 01:00 a drink at 23:30 was refused as "not come yet".
  const given = shownDay && shownDay.day_start ? shownDay.day_start : "00:00";
  const now = nowClock(), start = given.length > 5 ? given.slice(11, 16) : given;
  return now >= start ? time > now : time > now && time < start;
}
function ago(iso) {
  // Under a minute is "just now", as the carer view says it (31 s was "1 min ago" here, "just now" there).
  const elapsed = serverNow() - new Date(iso).getTime();
  if (elapsed < 60000) return "just now";
  const minutes = Math.round(elapsed / 60000);
  return minutes < 36 * 60 ? span(minutes) + " ago" : Math.round(minutes / 1440) + " days ago";
}
function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attributes)) {
    if (k === "onclick") node.addEventListener("click", v); else node.setAttribute(k, v);
  }
  for (const child of children) node.append(child);
  return node;
}
function problem(message) {
  $("problem").hidden = !message;
  $("problem").textContent = message || "";
}
// What the last action did, or why it did nothing: it stays until the next action (a live update
// does not wipe it, as it does a loading problem).
function said(message, failed = false) {
  $("edit-status").textContent = message; $("edit-status").classList.toggle("failed", failed);
  if (message) { $("action-bar").hidden = false; document.documentElement.classList.add("acted"); pinActionBar(); }
}
// Pinned at the top of the screen for a few seconds after an action, where the person is; then back in
// its place at the top of the page, so it never stays over what they scroll to.
let unpin = null;
function pinActionBar() {
  $("action-bar").classList.add("pinned");
  clearTimeout(unpin);
  unpin = setTimeout(() => $("action-bar").classList.remove("pinned"), 8000);
}

// A comma before one or two digits is a decimal comma ("0,3l", "70,5"); before three ("1,500") it may
// part thousands, which cannot be told: left for the server to ask about, not read as 1.5.
const decimalPoint = (text) => text.trim().replace(/^(\d+),(\d{1,2})(?!\d)/, "$1.$2");
const isBareNumber = (text) => /^\d+(\.\d+)?$/.test(text);

// What is wrong with a typed amount before it is sent, in the page's words; null when it may go.
// "1.5" on a mL page is almost always litres: said, not stored as a few drops.
function amountProblem(text) {
  const t = decimalPoint(text);
  if (!/^\d|^\.\d/.test(t)) return "Type an amount, such as " + (units === "oz" ? "12 (fl oz) or 330ml" : "330 (mL) or 0.3l");
  if (units !== "oz" && isBareNumber(t) && Number(t) > 0 && Number(t) < 10) return t + " mL is a few drops: type " + t + "l for litres (or " + t + "ml if you mean it)";
  return null;
}
// A typed amount: a bare number is in the person's own unit ("330" is 330 mL; for an fl oz person "12" is 12 fl oz).
// What the page last sent for what was typed (`12` became `12oz`): a refusal quotes what the person typed.
let lastTyped = null;
// A decimal comma read as a point; a bare number given the person's unit, except for a goal (`bare`),
// whose server side says what a bare number out of range was meant as ("2,5": did you mean 2.5l?).
function typedAmount(text, bare = false) {
  const t = decimalPoint(text);
  const sent = isBareNumber(t) && !bare ? t + (units === "oz" ? "oz" : "ml") : t;
  lastTyped = { sent, typed: text.trim() };
  return sent;
}
function inTheirWords(message) {
  return lastTyped ? message.split("'" + lastTyped.sent + "'").join("'" + lastTyped.typed + "'") : message;
}

function showToday(today, state) {
  units = today.units; zone = today.time_zone;
  // The person's units, from the first answer that came (a page opened while the Pi was away learns them late).
  quickButtons();
  $("custom-amount").placeholder = units === "oz" ? "e.g. 12" : "e.g. 330";
  $("amount-unit").textContent = units === "oz" ? "fl oz" : "mL";
  $("sips").caption.textContent = day ? "Drinks that day" : "Today's drinks";
  const goal = today.goal_ml, intake = today.intake_ml;
  $("intake").textContent = volume(intake); $("intake").dataset.ml = intake;
  $("goal").textContent = volume(goal); $("goal").dataset.ml = goal;
  const fraction = Math.min(1, goal > 0 ? intake / goal : 0);
  const circumference = 2 * Math.PI * 52;
  $("ring-fill").setAttribute("stroke-dasharray", (fraction * circumference) + " " + circumference);
  // Nothing drunk: no arc, where a round cap of no length drew a dot at the top.
  $("ring-fill").classList.toggle("empty", !(fraction > 0));
  const pace = Math.min(1, goal > 0 ? state.pace_ml / goal : 0);
  // The pace: a tick on the ring where the intake should be by now.
  $("ring-pace").setAttribute("transform", "rotate(" + (pace * 360).toFixed(1) + " 60 60)");
  // A finished day has no pace to keep.
  $("ring-pace").style.visibility = day ? "hidden" : "";
  const percent = percentOf(intake, goal);
  $("ring-percent").textContent = percent + "%";
  $("ring").classList.toggle("met", intake >= goal);
  $("ring").classList.remove("loading");
  $("ring").setAttribute("aria-label", volume(intake) + " of " + volume(goal) + ", " + percent + " percent");
  const paceText = $("pace");
  $("day-name").textContent = day ? longDay(today.date) : "Today";
  $("earlier-day").href = pageLink({ date: shiftDay(today.date, -1) });
  $("back-to-today").hidden = !day;
  // No later day than today: "Today" leads there.
  $("later-day").hidden = !day || shiftDay(today.date, 1) >= currentDay;
  if (day) { $("later-day").href = pageLink({ date: shiftDay(today.date, 1) }); $("back-to-today").href = pageLink({}); }
  if (day) {
    paceText.textContent = intake >= goal ? "Goal met." : volume(goal - intake) + " short of the goal."; paceText.className = intake >= goal ? "ahead" : "behind";
  } else if (intake >= goal) { paceText.textContent = "Goal met. Well done."; paceText.className = "ahead"; }
  // Someone who has never drunk here (a history just set up) is told the goal, not that they are behind; the pace
  // is said still, as the household's card and the reminders say it. Anyone with drinks before: behind, as ever.
  else if (!today.last_sip_at && intake === 0 && !(state.lifetime_ml > 0)) {
    paceText.textContent = "Today's goal: " + volume(goal) + (today.goal_is_default ? " (the usual starting point; set yours under Goal and reminders)." : ".")
      + (state.pace_ml > 0 ? " " + volume(state.pace_ml) + " by now keeps pace." : "");
    paceText.className = "";
  }
  else if (state.behind) { paceText.textContent = "Behind pace by " + volume(state.behind_by_ml) + " (" + volume(state.pace_ml) + " by now)"; paceText.className = "behind"; }
  else { paceText.textContent = "On pace (" + volume(state.pace_ml) + " by now)"; paceText.className = "ahead"; }
  $("last-sip").textContent = today.last_sip_at ? "Last drink " + clock(today.last_sip_at) + (day ? "" : " (" + ago(today.last_sip_at) + ")")
    : day ? "No drink that day" : "No drink yet today";
}

// Sips a sensor saw close together (each within 5 minutes of the next, from one bottle) are one
// drink: a row with their total that opens to its sips. A sensor's day stays a short list, and the
// rows of a closed drink are not built at all.
const DRINK_GAP_MS = 5 * 60 * 1000;
const opened = new Set();
function drinks(sips) {
  const groups = [];
  for (const e of sips) {  // newest first
    const last = groups[groups.length - 1];
    const joins = last && e.source === "sensor" && !e.deleted && last[0].source === "sensor" && !last[0].deleted
      && last[0].device === e.device && new Date(last[last.length - 1].at) - new Date(e.at) <= DRINK_GAP_MS;
    if (joins) last.push(e); else groups.push([e]);
  }
  return groups;
}
// A time on a day's list, with "(next day)" when the clock had passed midnight (a drink at 02:30 before
// the 04:00 day start is the day before's, and was listed above its 13:30 with nothing to say why).
const listClock = (iso) => clock(iso) + (shownDay && localDate(iso) > shownDay.date ? " (next day)" : "");
function sipRow(e, names, inDrink) {
  const when = listClock(e.at);
  const edit = e.deleted ? [] : [el("button", { type: "button", class: "write", "data-focus": "edit-" + e.id, "aria-label": "Edit the " + volume(e.ml) + " drink at " + when,
    onclick: () => { editing = editing === e.id ? null : e.id; refresh(); } }, "Edit")];
  const actions = e.deleted
    ? el("button", { type: "button", class: "write", "data-focus": "row-" + e.id, "aria-label": "Restore the " + volume(e.ml) + " drink at " + when,
        onclick: () => act("restore", { id: e.id }) }, "Restore")
    : el("button", { type: "button", class: "write", "data-focus": "row-" + e.id, "aria-label": "Delete the " + volume(e.ml) + " " + (inDrink ? "sip" : "drink") + " at " + when,
        onclick: () => act("delete", { id: e.id }) }, "Delete");
  const row = el("tr", { class: (e.deleted ? "deleted" : "") + (inDrink ? " sip-of-drink" : ""), "data-id": e.id, "data-ml": e.ml },
    el("td", {}, when), el("td", { class: "num" }, el("span", { class: "amount-text" }, volume(e.ml)), e.deleted ? " (deleted)" : "",
      ...(e.note ? [el("span", { class: "note-inline" }, e.note)] : [])),
    el("td", { class: "bottle" }, e.device ? names.get(e.device) || e.device : "—"),
    el("td", { class: "how" }, el("span", { class: "source" }, e.source === "sensor" ? "sensor" : "typed"), e.note ? ": " + e.note : ""), el("td", { class: "actions" }, ...edit, actions));
  return editing === e.id ? [row, editRow(e)] : [row];
}

// A drink mended in place: its amount (in the person's units), its time, its note, and in a household
// who really drank it (a shared bottle on one scale counts every drink as its owner's).
let editing = null;
function editRow(e) {
  const amount = el("input", { id: "edit-amount", inputmode: "decimal", autocomplete: "off", value: units === "oz" ? (e.ml / OZ).toFixed(1) : String(Math.round(e.ml * 10) / 10) });
  const time = el("input", { id: "edit-time", type: "time", value: clock(e.at) });
  const note = el("input", { id: "edit-note", maxlength: "1000", autocomplete: "off", value: e.note || "" });
  const household = (knownPeople || []).map((p) => p.person);
  const owner = (personNamed(person) || {}).person;  // as stored: the address may spell it in another case
  const drinker = household.length > 1 && owner ? el("select", { id: "edit-to" },
    ...household.map((name) => el("option", name === owner ? { selected: "", value: name } : { value: name }, name))) : null;
  // Poured away, not drunk: on a scale a slow pour into the sink can look like a big drink (`edit --kind pour`).
  const poured = el("input", { id: "edit-poured", type: "checkbox" });
  const form = el("form", { class: "edit-form", "aria-label": "Edit the drink at " + clock(e.at) },
    el("label", { for: "edit-amount" }, "Amount (" + (units === "oz" ? "fl oz" : "mL") + ")"), amount,
    el("label", { for: "edit-time" }, "At"), time, el("label", { for: "edit-note" }, "Note"), note,
    ...(drinker ? [el("label", { for: "edit-to" }, "Drunk by"), drinker] : []),
    el("label", { for: "edit-poured" }, "Poured away"), poured,
    el("button", { type: "submit", class: "write", "data-focus": "edit-save" }, "Save"),
    el("button", { type: "button", onclick: () => { editing = null; refresh(); } }, "Cancel"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const change = { id: e.id };
    const typed = typedAmount(amount.value);
    const wrong = amount.value !== amount.defaultValue ? amountProblem(amount.value) : null;
    if (wrong) { amount.focus(); said(wrong + " (nothing was changed)", true); return; }
    if (amount.value.trim() && amount.value !== amount.defaultValue) change.amount = typed;
    if (time.value && time.value !== clock(e.at)) change.at = localDate(e.at) + " " + time.value;
    if (change.at && !day && localDate(e.at) === (currentDay || localDate(e.at)) && isToCome(time.value)) {
      time.focus(); said(time.value + " has not come yet today (nothing was changed)", true); return;
    }
    if (note.value !== (e.note || "")) change.note = note.value;
    if (drinker && drinker.value !== owner) change.to = drinker.value;
    if (poured.checked) change.kind = "pour";
    if (Object.keys(change).length === 1) { editing = null; refresh(); return; }
    const done = await act("edit", change, person, e);
    if (done) { editing = null; await refresh(); restoreFocus("edit-" + e.id); }
  });
  return el("tr", { class: "editing" }, el("td", { colspan: "5" }, form));
}
function showSips(events, bottles) {
  const names = new Map(bottles.map((b) => [b.device, b.name || b.device]));
  const rows = [];
  for (const group of drinks(events.filter((e) => e.kind === "sip"))) {
    if (group.length === 1) { rows.push(...sipRow(group[0], names, false)); continue; }
    const key = group[group.length - 1].id;  // the drink's first sip names it across redraws
    const isOpen = opened.has(key);
    const total = group.reduce((sum, e) => sum + e.ml, 0);
    const from = listClock(group[group.length - 1].at), to = listClock(group[0].at);
    const toggle = el("button", { type: "button", "aria-expanded": String(isOpen), "data-focus": "drink-" + key,
      "aria-label": (isOpen ? "Close" : "Open") + " the drink of " + group.length + " sips, " + volume(total) + " from " + from + " to " + to,
      onclick: () => { if (opened.has(key)) opened.delete(key); else opened.add(key); showSips(events, bottles); restoreFocus(); } },
      isOpen ? "Close" : group.length + " sips");
    rows.push(el("tr", { class: "drink", "data-drink": key, "data-ml": total },
      el("td", {}, from === to ? to : from + "–" + to), el("td", { class: "num" }, volume(total)),
      el("td", { class: "bottle" }, names.get(group[0].device) || group[0].device || "—"), el("td", {}, "sensor"), el("td", {}, toggle)));
    if (isOpen) for (const e of group) rows.push(...sipRow(e, names, true));
  }
  $("sips").tBodies[0].replaceChildren(...rows);
  $("no-sips").hidden = rows.length > 0;
}

// The paired bottles, then any other whose events say what was left this week (a trace replayed into
// the history from a bottle never paired here): the page said "No bottle paired" where `today` listed it.
function showBottles(bottles, heard = []) {
  const paired = new Set(bottles.map((b) => b.device));
  const others = heard.filter((b) => !paired.has(b.device));
  $("bottle-list").replaceChildren(...bottles.map((b) => el("li", {},
    el("strong", {}, b.name || b.device),
    el("span", {}, b.remaining_ml == null ? "level unknown" : volume(b.remaining_ml) + " left"),
    el("span", {}, b.remaining_at ? "last reading " + ago(b.remaining_at) : "no reading yet"),
    ...(b.battery_percent == null ? [] : [el("span", {}, "battery " + b.battery_percent + " %")]),
    el("span", { class: b.link_up ? "link-up" : "link-down" }, b.link_up ? "connected" : "not connected"))),
    ...others.map((b) => el("li", { class: "unpaired" },
      el("strong", {}, b.name || b.device),
      el("span", {}, volume(b.remaining_ml) + " left"),
      el("span", {}, "last reading " + ago(b.at)),
      el("span", {}, "not paired here"))));
  $("no-bottles").hidden = bottles.length + others.length > 0;
}

const longDay = (date) => new Date(date + "T12:00:00Z").toLocaleDateString("en-GB", { weekday: "long", day: "numeric", month: "long", timeZone: "UTC" });
const monthName = (month) => new Date(Date.UTC(+month.slice(0, 4), +month.slice(5, 7) - 1, 15)).toLocaleDateString("en-GB", { month: "long", year: "numeric", timeZone: "UTC" });
// The streak with its days: from its first day (a link to it), and marked on the calendar.
let streak = null;
function showStats(week, month) {
  streak = week.current_streak_from ? { from: week.current_streak_from, through: week.current_streak_through } : null;
  const n = week.current_streak;
  $("streaks").replaceChildren("Streak: " + n + " day" + (n === 1 ? "" : "s"),
    ...(streak ? [n === 1 ? ", " : ", since ", el("a", { href: pageLink({ date: streak.from }), id: "streak-start" }, longDay(streak.from))] : []),
    " (longest " + month.longest_streak + " in 30 days). Goal met " + week.goal_met_days + " of the last 7 days, " +
    month.goal_met_days + " of 30. Average " + volume(month.daily_average_ml) + " a day.");
}

function showCalendar(calendar, today) {
  const days = calendar.days;
  if (!days.length) return;
  const first = new Date(days[0].date + "T12:00:00Z").getUTCDay();
  const cells = [];
  for (let i = 0; i < (first + 6) % 7; i++) cells.push(el("td", {}));
  for (const d of days) {
    const label = d.date.slice(8).replace(/^0/, "");
    const text = d.ml > 0 ? volume(d.ml) : "";
    const said = d.date + ": " + (d.ml > 0 ? volume(d.ml) : "nothing") + (d.met ? ", goal met" : "");
    // The day's number opens that day; a tap elsewhere on it says its amount.
    const inStreak = streak && d.date >= streak.from && d.date <= streak.through;
    cells.push(el("td", { class: (d.met ? "met" : "") + (d.date === today.date ? " today" : "") + (inStreak ? " streak" : ""), "aria-label": said + (inStreak ? ", in the streak" : ""),
      onclick: () => { $("calendar-day").textContent = said; } },
      // A day to come has nothing to open.
      d.date > currentDay ? el("span", { class: "day" }, label) : el("a", { class: "day", href: pageLink({ date: d.date }), "aria-label": "Open " + d.date }, label),
      el("span", { class: "amount" }, text), d.met ? " ✓" : ""));
  }
  const rows = [];
  for (let i = 0; i < cells.length; i += 7) rows.push(el("tr", {}, ...cells.slice(i, i + 7)));
  $("calendar").tBodies[0].replaceChildren(...rows);
  const month = /^\d{4}-\d{2}$/.test(calendar.month || "") ? calendar.month : null;
  $("calendar-title").textContent = month ? monthName(month) : "This month";
  // Earlier and later months: each button names the month it opens; none after the current one.
  if (month) {
    const earlier = shiftMonth(month, -1), later = shiftMonth(month, 1);
    $("earlier-month").textContent = "← " + monthName(earlier).replace(/ \d{4}$/, "");
    $("earlier-month").setAttribute("aria-label", "Show " + monthName(earlier));
    $("later-month").hidden = later > currentMonth;
    $("later-month").textContent = monthName(later).replace(/ \d{4}$/, "") + " →";
    $("later-month").setAttribute("aria-label", "Show " + monthName(later));
  }
}
const shiftMonth = (month, by) => { const d = new Date(Date.UTC(+month.slice(0, 4), +month.slice(5, 7) - 1 + by, 15)); return d.toISOString().slice(0, 7); };
// The month the calendar shows: the day's own until the person moves it.
let calendarMonth = null, currentMonth = "", currentDay = "", shownDay = null;
async function moveMonth(by, today = shownDay) {
  if (!today) return;
  calendarMonth = shiftMonth(calendarMonth || today.date.slice(0, 7), by);
  try { showCalendar(await getJSON("calendar", { month: calendarMonth }), today); $("calendar-day").textContent = ""; }
  catch (error) { $("calendar-day").textContent = "Cannot load " + monthName(calendarMonth) + ": " + error.message; }
}

// The width a chart is drawn for: the width it is shown at (a phone's text at its size, not an
// 800-wide drawing shrunk), 240 to 800.
const chartWidth = (kind) => Math.max(240, Math.min(800, Math.floor($("chart-" + kind).clientWidth || 800)));
// The width each chart was last drawn for.
const chartWidths = {};
const CHART_KINDS = ["day", "week", "30days"];
async function showCharts() {
  for (const kind of CHART_KINDS) {
    const width = chartWidth(kind);
    chartWidths[kind] = width;
    const params = day ? { date: day, width } : { width };
    try { $("chart-" + kind).innerHTML = await call("chart/" + kind + ".svg", params); } catch (_) { $("chart-" + kind).textContent = ""; }
  }
}

// Drawn again for a new width (a phone turned, a window narrowed), once it has settled: a drawing
// for the old one was scaled, its labels running together ("01:0004:00") or shrunk to 7 px.
let resizeTimer = null;
window.addEventListener("resize", () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => {
    const moved = CHART_KINDS.some((kind) =>
      $("chart-" + kind).clientWidth > 0 && chartWidths[kind] && Math.abs(chartWidth(kind) - chartWidths[kind]) >= 24);
    if (moved) showCharts();
  }, 250);
});

// The goal and the reminders, as `quench goal` and `quench remind` say them.
function showSettings(goal, remind) {
  for (const n of document.querySelectorAll(".unit-name")) n.textContent = units === "oz" ? "fl oz" : "mL";
  // Only goals from a later day: the first stands for today too, as `quench goal` says.
  const later = currentDay && goal.from > currentDay;
  $("goal-now").textContent = "Daily goal: " + volume(goal.current_ml) + (goal.is_default ? " (the usual starting point, not set yet)"
    : later ? ", the first goal set (from " + goal.from + ", and for the days before it)" : " since " + goal.from);
  if (document.activeElement !== $("goal-amount") && !$("goal-amount").value) $("goal-amount").placeholder = units === "oz" ? (goal.current_ml / OZ).toFixed(0) : String(Math.round(goal.current_ml));
  const next = remind.mode === "off" ? "Reminders are off."
    : remind.snoozed_until ? "Snoozed until " + clock(remind.snoozed_until) + "."
    : remind.due ? "A reminder is due now: " + remind.reason + "."
    : remind.next_at ? "Next reminder at " + clock(remind.next_at) + ": " + remind.reason + "."
    : "No reminder to come today: " + remind.reason + ".";
  $("next-reminder").textContent = next;
  // A night's waking hours across the hour the day begins: the pace starts again then, and one tap
  // begins their days while they sleep instead (`quench person day-start`).
  const fix = remind.suggested_day_start;
  $("day-start-note").hidden = $("day-start-fix").hidden = fix == null;
  if (fix != null) {
    const hour = String(fix).padStart(2, "0") + ":00";
    $("day-start-note").textContent = "Your waking hours, " + remind.window + ", run past the hour your days begin, so your pace starts again then.";
    $("day-start-fix").textContent = "Begin my days at " + hour + ", while I sleep";
    $("day-start-fix").dataset.hour = String(fix);
  }
  // A live update never overwrites a form the person has changed since it was last saved.
  if (reminderEdits === reminderEditsSaved) { $("reminder-mode").value = remind.mode; $("reminder-window").value = remind.window; }
}
let recommended = null;
let reminderEdits = 0, reminderEditsSaved = 0;

// A tap on a bar or a sip says what its tooltip says: a phone has no hover.
function chartTap(event) {
  for (let node = event.target; node && node.tagName !== "svg" && node !== event.currentTarget; node = node.parentNode) {
    const title = [...node.children].find((c) => c.tagName === "title");
    if (title) { $("chart-said").textContent = title.textContent; return; }
  }
}

// Everyone at a glance (the carer's view), and the person picker once several share the Pi: each person
// a card with their ring, in their own units, with a quick add for them.
// Someone of the household, as its last answer said them (names compare without case).
const personNamed = (name) => (name && knownPeople && knownPeople.find((p) => p.person.toLowerCase() === name.toLowerCase())) || null;
// Whose page this is: the person named in its address, else the household's first (its only one, on a page with a day).
const shownPerson = () => personNamed(person) || (knownPeople || [])[0] || null;
// What a tap adds for them, in their units, as the server says (Home Assistant's buttons add the same).
const quickAmounts = (name) => (personNamed(name) || {}).quick_amounts || [];
const amountText = (a) => a.replace("ml", " mL").replace("oz", " fl oz");
// The HTML parser puts an <svg> in the SVG namespace itself (the page names no URL, not even that one).
function smallRing(fraction, met) {
  const circumference = 2 * Math.PI * 52;
  const holder = document.createElement("span");
  holder.innerHTML = '<svg viewBox="0 0 120 120" class="small-ring' + (met ? " met" : "") + '" aria-hidden="true">'
    + '<circle class="ring-track" cx="60" cy="60" r="52"/>'
    + '<circle class="ring-fill' + (fraction > 0 ? "" : " empty") + '" cx="60" cy="60" r="52" stroke-dasharray="' + (fraction * circumference).toFixed(1) + " " + circumference.toFixed(1) + '"/></svg>';
  return holder.firstChild;
}
function showHousehold(people) {
  const several = people.length > 1, today = localDate(new Date(serverNow()).toISOString());
  $("household-link").hidden = !several || (!person && query.get("view") !== "carer");
  $("carer-link").hidden = query.get("view") === "carer";
  // Whose page this is, as the household spells them (an address's name compares without case); a
  // bookmark of someone removed is shown as chosen but cannot be chosen, so that "Everyone" and each
  // person are changes (with "Everyone" shown selected, choosing it did nothing), and the picker is
  // there to choose with even when one person is left.
  const named = person ? people.find((p) => p.person.toLowerCase() === person.toLowerCase()) : null;
  const gone = Boolean(person) && !named;
  const chosen = person ? (named && named.person) : (several ? "" : people[0] && people[0].person);
  $("person-pick").hidden = !several && !gone;
  // "Everyone" stays in the list on a person's page: the household is one choice away.
  $("person").replaceChildren(...(gone ? [el("option", { value: person, selected: "", disabled: "" }, person + " (not here now)")] : []),
    ...(several ? [el("option", chosen === "" ? { value: "", selected: "" } : { value: "" }, "Everyone")] : []),
    ...people.map((p) => el("option", p.person === chosen ? { selected: "", value: p.person } : { value: p.person }, p.person)));
  $("who").textContent = several && person ? " · " + person : "";
  $("people").replaceChildren(...people.map((p) => {
    const quiet = p.last_sip_at ? (serverNow() - new Date(p.last_sip_at).getTime()) / 3600000 : null;
    const percent = percentOf(p.intake_ml, p.goal_ml, true);
    const amount = quickAmounts(p.person)[1];
    return el("li", { class: "person-card", "data-person": p.person },
      smallRing(Math.min(1, p.goal_ml > 0 ? p.intake_ml / p.goal_ml : 0), p.intake_ml >= p.goal_ml),
      el("div", { class: "person-text" },
        el("a", { href: "/?person=" + encodeURIComponent(p.person), class: "person-name" }, p.person),
        el("p", {}, el("span", { class: "intake", "data-ml": p.intake_ml }, volume(p.intake_ml, p.units)), " of " + volume(p.goal_ml, p.units) + " · " + percent + "\u00a0%"),
        el("p", { class: p.behind ? "behind" : "ahead" }, p.intake_ml >= p.goal_ml ? "Goal met" : p.behind ? "Behind by " + volume(p.behind_by_ml, p.units) : "On pace"),
        el("p", { class: "last" + (quiet !== null && quiet >= 3 ? " behind" : "") },
          p.last_sip_at ? "Last drink " + stamp(p.last_sip_at, today) + " (" + ago(p.last_sip_at) + ")" : "No drink yet"),
        // The carer's alert is on everyone's card, not only in the carer's view: "On pace" beside
        // an unanswered alert let a glance at the household miss it.
        ...(p.carer_alert_open ? [el("p", { class: "alert-state behind" },
          el("a", { href: "/?view=carer" }, "Carer alert sent " + stamp(p.carer_alert_sent_at, today)), ", not acknowledged")] : [])),
      el("button", { type: "button", class: "add write", "data-focus": "quick-" + amount + "-" + p.person, "aria-label": "Add " + amountText(amount) + " for " + p.person,
        onclick: () => { carerHeld = [...document.querySelectorAll("#carer-list li")].map((li) => li.dataset.person); carerHeldAt = Date.now(); act("add", { amount }, p.person); } },
        "+" + amountText(amount)));
  }));
}

// The carer's view: everyone, the one longest without a drink (in their waking hours) first, as
// `quench carer` sorts them; over their threshold, marked and said first. The threshold is set here.
const THRESHOLDS = [["off", "Not flagged"], ["60", "after 1 h"], ["120", "after 2 h"], ["180", "after 3 h"], ["240", "after 4 h"], ["360", "after 6 h"], ["480", "after 8 h"]];
// Waking hours, never days (58 of them are four days of the calendar): as `quench carer` says them.
const span = (minutes) => minutes < 60 ? minutes + " min" : minutes < 2880
  ? Math.floor(minutes / 60) + " h" + (minutes % 60 ? " " + (minutes % 60) + " min" : "")
  : Math.floor(minutes / 60) + " h";
// After a tap here the rows keep their places (a glass logged for Gran must not slide Sam's button
// under the finger); "Sort again", or a minute without a tap, puts them in the server's order.
let carerHeld = null, carerHeldAt = 0;
function carerOrder(people) {
  if (!carerHeld || Date.now() - carerHeldAt > 60000) { carerHeld = null; return people; }
  const place = new Map(carerHeld.map((name, i) => [name, i]));
  return [...people].sort((a, b) => (place.get(a.person) ?? 1e9) - (place.get(b.person) ?? 1e9));
}
function showCarer(report) {
  const people = carerOrder(report.people), today = localDate(report.at);
  const held = carerHeld !== null && people.some((p, i) => p.person !== report.people[i].person);
  $("carer-resort").hidden = !held;
  const over = report.people.filter((p) => p.overdue);
  // At night nobody is over, yet an alert sent in the day may still be open: said, as `quench carer` says it.
  const asleepOpen = report.people.filter((p) => !p.awake && p.alert_sent_at && !p.alert_acknowledged_at).map((p) => p.person);
  // At a hub: a corridor's gateway gone quiet, said, or its residents' quiet hours read as theirs.
  const whose = (g) => g.people && g.people.length ? " (" + g.people.join(", ") + ")" : "";
  const quietGateways = (report.gateways_offline || []).map((g) => " The gateway " + g.node + " has been offline since "
    + stamp(g.offline_since, today) + ": drinks logged there" + whose(g) + " are not reaching this history.")
    .concat((report.gateways_without_bluetooth || []).map((g) => " The gateway " + g.node + "'s Bluetooth service (quenchd) has not been running since "
      + stamp(g.stopped_since, today) + ": its bottles' drinks" + whose(g) + " are not being recorded."));
  // The hub stopped, or without the broker: nothing arrives, and every quiet hour may be that.
  const hub = report.hub, hubSince = hub && hub.since ? " since " + stamp(hub.since, today) : "";
  const hubSaid = !hub ? "" : hub.problem === "stopped"
    ? "The hub is not running: nothing logged at the gateways has reached this history" + hubSince + ". "
    : "The hub has been without the MQTT broker" + hubSince + ": drinks logged at the gateways are not reaching this history. ";
  $("carer-summary").textContent = hubSaid + (over.length === 0 && asleepOpen.length > 0
    ? "Nobody is over their threshold now: it counts in waking hours, and " + asleepOpen.join(", ") + (asleepOpen.length === 1 ? " is" : " are")
      + " outside theirs (the alert is still open)."
    : over.length === 0 ? "Nobody is over their threshold."
    : over.map((p) => p.person).join(", ") + (over.length === 1 ? " is" : " are") + " over their threshold.") + quietGateways.join("");
  // Where someone is watched, who is not (a resident added at a gateway comes without a threshold).
  const unwatched = report.not_watched || [];
  $("carer-unwatched").hidden = unwatched.length === 0;
  $("carer-unwatched").textContent = unwatched.length ? "No alert is set for " + unwatched.join(", ") + ": choose when to flag them beside their name." : "";
  // "Just now" by the clock: counted in waking hours, a drink at 22:30 is still 0 minutes at 07:30.
  const justNow = (at) => at && Date.parse(report.at) - Date.parse(at) < 60000;
  $("carer-list").replaceChildren(...people.map((p) => {
    const amount = quickAmounts(p.person)[1];
    const quiet = p.quiet_beyond_reach ? "Over 30 days without a drink"
      : p.quiet_minutes < 1 && justNow(p.last_drink_at) ? "Drank just now"
      : p.quiet_minutes < 1 && justNow(p.no_drink_since) ? "Added just now" : span(p.quiet_minutes) + " without a drink";
    const current = p.alert_after_minutes == null ? "off" : String(p.alert_after_minutes);
    const choices = THRESHOLDS.some(([v]) => v === current) ? THRESHOLDS
      : [...THRESHOLDS, [current, "after " + span(+current)]].sort((a, b) => (a[0] === "off" ? -1 : +a[0]) - (b[0] === "off" ? -1 : +b[0]));
    const select = el("select", { "data-focus": "alert-" + p.person, "aria-label": "Flag " + p.person + " after" },
      ...choices.map(([value, text]) => el("option", value === current ? { value, selected: "" } : { value }, text)));
    select.addEventListener("change", () => setting("person/alert", { person: p.person, after: select.value === "off" ? "off" : select.value + "min" },
      (r) => r.detail ? p.person + " is flagged after " + span(+r.detail) + " without a drink"
        : p.person + " is no longer flagged" + (r.acknowledged_alert ? ", and the alert about them is acknowledged" : "")));
    return el("li", { class: "carer-row" + (p.overdue ? " overdue" : ""), "data-person": p.person },
      el("div", { class: "person-text" },
        el("a", { href: "/?person=" + encodeURIComponent(p.person), class: "person-name" }, p.person),
        el("p", { class: "quiet" }, quiet + (p.overdue ? " (over " + (p.alert_after_minutes != null ? span(p.alert_after_minutes) : "") + ")" : "")),
        // With none recorded, the time counts from their adding, and says so where the last drink would be.
        el("p", {}, (p.last_drink_at ? "Last drink " + stamp(p.last_drink_at, today) + " · today "
          : p.no_drink_since ? "No drink recorded since added " + stamp(p.no_drink_since, today) + " · today " : "Today ")
          + volume(p.intake_ml, p.units) + " of " + volume(p.goal_ml, p.units)),
        el("p", { class: "hint" }, "Waking hours " + p.waking_hours.replace("-", "–") + (p.awake ? "" : " (outside them now)")),
        ...(p.alert_sent_at ? [el("p", { class: "alert-state" }, "Alert sent " + stamp(p.alert_sent_at, today)
          + (p.alert_last_sent_at && p.alert_last_sent_at !== p.alert_sent_at ? ", again " + stamp(p.alert_last_sent_at, today) : "")
          + (p.alert_acknowledged_at ? ", acknowledged " + stamp(p.alert_acknowledged_at, today) : ""))] : [])),
      ...(p.alert_sent_at && !p.alert_acknowledged_at ? [el("button", { type: "button", class: "write", "data-focus": "ack-" + p.person,
        "aria-label": "Acknowledge the alert about " + p.person,
        onclick: () => setting("carer/ack", { person: p.person }, () => "Acknowledged the alert about " + p.person) }, "Acknowledge")] : []),
      el("label", {}, "Flag", select),
      el("button", { type: "button", class: "add write", "data-focus": "carer-" + amount + "-" + p.person, "aria-label": "Add " + amountText(amount) + " for " + p.person,
        onclick: () => { carerHeld = [...document.querySelectorAll("#carer-list li")].map((li) => li.dataset.person); carerHeldAt = Date.now(); act("add", { amount }, p.person); } },
        "+" + amountText(amount)));
  }));
}

// Which view the page is: the query's, and the household when several share the Pi and nobody is chosen
// (known once the people are; until then, the last answer's, so a failed load keeps the right sections).
let knownPeople = null;
function pageView(people = knownPeople) {
  if (people) knownPeople = people;
  const asked = query.get("view");
  if (asked === "carer" || asked === "household") return asked;
  return knownPeople && knownPeople.length > 1 && !person ? "household" : "day";
}
function showView(view) {
  for (const id of ["today", "bottles", "history", "settings"]) $(id).hidden = view !== "day";
  $("household").hidden = view !== "household";
  $("carer").hidden = view !== "carer";
}

// The page at its address with `name` set to `value` (null: left out), in place of this one in the history.
function readdress(name, value) {
  const q = new URLSearchParams(location.search);
  if (value === null) q.delete(name); else q.set(name, value);
  location.replace("/" + (q.toString() ? "?" + q.toString() : "") + location.hash);
}

let refreshing = null, again = false;
async function refresh() {
  if (refreshing) { again = true; return refreshing; }
  refreshing = (async () => {
    servedOffline = false;
    showView(pageView());
    try {
      const people = await getJSON("household");
      // The household's zone, before anything is drawn: at 00:05 UTC, 13:05 in a zone nine hours
      // behind read "Monday 30 November 13:05" on the household view, today's date taken in the phone's zone.
      if (people[0] && people[0].time_zone) zone = people[0].time_zone;
      // Several people and nobody chosen: the household is the page; `?view=carer`: the carer's.
      const view = pageView(people);
      const carer = view === "carer", household = view === "household";
      showView(view);
      // The day of whoever the page shows: a night shift's days may begin at an hour of their own.
      const shown = shownPerson();
      if (shown) { units = shown.units || units; currentDay = shown.date; currentMonth = currentDay.slice(0, 7); }
      showHousehold(people);
      if (carer) showCarer(await getJSON("carer"));
      if (!household && !carer) {
        const asked = query.get("date");
        const [today, state] = await Promise.all([getJSON("today", day ? { date: day } : asked ? { date: asked } : {}), getJSON("state")]);
        // `?date=yesterday` (as /api/today takes it) showed today without a word: the address takes the day it names.
        if (asked && !day && !servedOffline) return readdress("date", today.date === currentDay ? null : today.date);
        // Opened by a name they had before a rename (a bookmark): the address takes the name they have now.
        // Not from the offline copy: names renamed there and back could send it round in a circle.
        if (person && today.person && today.person !== person && !servedOffline) return readdress("person", today.person);
        showToday(today, state);
        shownDay = today;
        const [events, week, month, calendar, goal, remind] = await Promise.all([
          getLines("log", { since: today.date, until: today.date, deleted: "true" }), getJSON("stats", { days: 7 }), getJSON("stats", { days: 30 }),
          getJSON("calendar", { month: calendarMonth || today.date.slice(0, 7) }), getJSON("goal"), getJSON("remind")]);
        showSettings(goal, remind);
        showSips(events, state.bottles);
        showBottles(state.bottles, today.bottles);
        showStats(week, month);
        showCalendar(calendar, today);
        await showCharts();
      }
      restoreFocus();
      document.body.dataset.loaded = String(Date.now());
      if (servedOffline) throw new Error("the Pi cannot be reached; this is what it said when last seen");
      problem("");
      $("quick-add").hidden = false; $("share").hidden = false;
      document.body.classList.remove("stale");
    } catch (error) {
      // What is on screen is no longer known to be true: said, greyed, and the live dot says so.
      // A bookmark of someone removed (or renamed, the name since taken): said so, with no form to add for them.
      const gone = person && /^Nobody is called /.test(error.message);
      problem(gone ? person + " is not in this household now (removed, or renamed): choose someone under Person."
        : (document.body.dataset.loaded ? "Not up to date: " : "Cannot load the day: ") + error.message);
      // Nor a goal, a reminder or a card of theirs: each failed with "Nobody is called …" when tapped.
      if (gone) for (const id of ["quick-add", "settings", "share"]) $(id).hidden = true;
      document.body.classList.add("stale");
      $("live").textContent = "not loading"; $("live").className = "live off";
    }
  })();
  await refreshing;
  refreshing = null;
  if (again) { again = false; return refresh(); }
}

// What was done on this page, newest last: Undo takes back the last of them (not the newest drink,
// which may be someone else's or one deleted on purpose). The last 100: a care home's tablet, never
// reloaded, kept every drink logged on it for months.
const done = [], mostUndone = 100;
const unitOf = (name) => (personNamed(name) || {}).units || units;
const describe = (e, who = person) => volume(e.ml, unitOf(who)) + " at " + clock(e.at);
let writing = false;

// Focus stays where the person was: a control redrawn (a live update, an answer) or disabled for a
// moment is focused again. The key follows the focus, and is dropped when the person taps outside any
// control (a control removed or disabled loses the focus too, which must not drop it).
const focusKeyOf = (node) => node && node !== document.body && node.dataset ? node.dataset.focus || node.id || null : null;
let focusKey = null;
document.addEventListener("focusin", (e) => { focusKey = focusKeyOf(e.target); });
document.addEventListener("pointerdown", (e) => { if (!e.target.closest("button, a, input, select, label")) focusKey = null; });
function restoreFocus(key = focusKey) {
  if (!key || (document.activeElement && document.activeElement !== document.body)) return;
  const target = document.querySelector('[data-focus="' + CSS.escape(key) + '"]') || document.getElementById(key);
  if (target && !target.disabled) target.focus({ preventScroll: true });
}

// One write at a time: every write control is off until the answer comes (an impatient second tap
// does nothing), and the person hears what happened.
async function write(action, body, who) {
  if (writing) return null;
  writing = true;
  document.body.classList.add("writing");
  for (const b of document.querySelectorAll("button.write, #quick-add button")) b.disabled = true;
  said("Saving…");
  try {
    return await post(action, body, who);
  } catch (error) {
    const message = inTheirWords(error.message);
    said(message + (/nothing was (saved|changed)/.test(message) ? "" : " (nothing was changed)"), true);
    return null;
  } finally {
    writing = false;
    document.body.classList.remove("writing");
    for (const b of document.querySelectorAll("button.write, #quick-add button")) b.disabled = false;
    updateUndo();
  }
}

async function act(action, body, who = person, before = null) {
  const report = await write(action, action === "add" ? { ...body, key: newKey() } : body, who);
  restoreFocus();
  if (!report) return false;
  const words = { add: "Added", delete: "Deleted", restore: "Restored", edit: "Changed to" }[action];
  // A drink given to someone else is theirs now: said with their units, and undone in their name.
  const to = body.to ? report.person : null;
  const note = report.event.note ? " (" + report.event.note + ")" : "";
  // A time before the day start counts for the day before: said, or it is missing from today's ring without a word.
  const elsewhere = action === "add" && !day && report.event.day && report.event.day !== currentDay
    ? " (it counts for " + longDay(report.event.day)
      + ", whose day runs until your day starts)" : "";
  const pouredAway = action === "edit" && body.kind === "pour";
  said(to ? "Gave " + describe(report.event, to) + " to " + to + note
    : pouredAway ? "Marked " + describe(report.event, who) + " as poured away, not drunk" + note
    : words + " " + describe(report.event, who) + note + (who !== person ? " for " + report.person : "") + elsewhere);
  done.push({ action, event: report.event, who, before, to });
  if (done.length > mostUndone) done.shift();
  updateUndo();
  await refresh();
  restoreFocus();
  return true;
}

// A change of setting: written, said, and the page redrawn (the goal moves the ring).
async function setting(path, body, words) {
  const report = await write(path, body);
  if (!report) return false;
  said(words(report));
  await refresh();
  restoreFocus();
  return true;
}

function updateUndo() {
  const last = done[done.length - 1];
  // Out of the way until something was done here; then it stays, focus and all.
  if (last) { $("action-bar").hidden = false; document.documentElement.classList.add("acted"); }
  const words = { add: "adding", delete: "deleting", restore: "restoring", edit: "the change to" };
  // aria-disabled, not disabled: the button keeps the focus of someone who undoes twice.
  $("undo").setAttribute("aria-disabled", String(writing || !last));
  $("undo").textContent = last ? "Undo " + (last.to ? "giving" : words[last.action]) + " " + describe(last.event, last.to || last.who) + whose(last) : "Undo";
}

// Whose drink a thing done here was, when not this page's person's: or to whom it was given.
const whose = (last) => last.to ? " to " + last.to : last.who !== person ? " for " + last.who : "";

async function undoLast() {
  const last = done[done.length - 1];
  if (!last || writing) return;
  // An edit is undone by putting back what it changed; a delete by a restore; an add or a restore by a delete.
  const [reverse, body] = last.action === "edit"
    ? ["edit", { id: last.event.id, amount: last.before.ml + "ml", at: last.before.at, note: last.before.note || "", ...(last.to ? { to: last.who } : {}),
        ...(last.event.kind !== last.before.kind ? { kind: last.before.kind } : {}) }]
    : [last.action === "delete" ? "restore" : "delete", { id: last.event.id }];
  const report = await write(reverse, body, last.to || last.who);
  if (!report) return;
  done.pop();
  updateUndo();
  said("Undone: " + (last.to ? "giving" : { add: "added", delete: "deleted", restore: "restored", edit: "changed" }[last.action]) + " " + describe(last.event, last.to || last.who) + whose(last));
  await refresh();
}

let quickShown = "";
function quickButtons() {
  const key = JSON.stringify([person, (knownPeople || []).map((p) => [p.person, p.quick_amounts])]);
  if (key === quickShown) return;  // redrawn only when they change: a tap's focus stays
  quickShown = key;
  const chosen = person || (knownPeople && knownPeople.length === 1 ? knownPeople[0].person : null);
  $("quick-buttons").replaceChildren(...quickAmounts(chosen).map((a) => el("button", { type: "button", class: "add", "data-amount": a, "data-focus": "quick-" + a,
    "aria-label": "Add " + amountText(a), onclick: () => act("add", { amount: a }) }, "+" + amountText(a))));
}

// The card through the phone's share sheet where the browser has one (Web Share, files level 2;
// browsers offer it only to a secure context: HTTPS, or this machine); elsewhere the link downloads the PNG.
// A browser lets a page share only straight after a tap: the card is fetched as the finger goes down
// (pointerdown, before the click), and if the moment has passed anyway (NotAllowedError) it is saved.
const cardFetches = new Map();
function fetchCard(link) {
  if (!cardFetches.has(link.href)) {
    const file = (async () => new File([await (await reach(link.href)).blob()], link.getAttribute("download"), { type: "image/png" }))();
    cardFetches.set(link.href, file);
    // Made again next time: the history may have changed by then.
    file.finally(() => setTimeout(() => cardFetches.delete(link.href), 5000)).catch(() => {});
  }
  return cardFetches.get(link.href);
}
function saveFile(file) {
  const save = el("a", { href: URL.createObjectURL(file), download: file.name });
  save.click();
  setTimeout(() => URL.revokeObjectURL(save.href), 10000);
}
async function shareCard(event) {
  if (!navigator.canShare) return;
  event.preventDefault();
  const link = event.currentTarget;
  let file = null;
  try {
    file = await fetchCard(link);
    if (navigator.canShare({ files: [file] })) {
      await navigator.share({ files: [file], title: "Quench", text: link.textContent === "today's card" ? "My water today" : "My water this week" });
      said("Shared " + link.textContent);
    } else {
      saveFile(file);
    }
  } catch (error) {
    if (error.name === "AbortError") return;  // closed in the sheet: nothing to say
    if (error.name === "NotAllowedError" && file) { saveFile(file); said("Saved " + link.textContent + " (this browser would not share it)"); return; }
    said("Could not share " + link.textContent + ": " + error.message, true);
  }
}

// The live stream. A page left for another (a person's link, the household) closes its stream: a
// browser keeps six connections to a server, and pages kept for the Back button with their streams
// open used them up, so the seventh page waited a minute for one.
let source = null, checkDropped = null, lastHeard = 0;
const STREAM_GRACE_MS = 5000;
// The server pings every 15 s. A Pi switched off (or a Wi-Fi gone) sends no error: the stream just falls
// silent, and the page showed the figures as current. Silent for this long, it is opened again and the page read.
const SILENCE_MS = 40000;
setInterval(() => {
  if (source && source.readyState === EventSource.OPEN && Date.now() - lastHeard > SILENCE_MS) {
    source.close(); source = null;
    $("live").textContent = "reconnecting…"; $("live").className = "live off";
    live(); refresh();
  }
}, 10000);
function live() {
  if (source) return;
  const stream = source = new EventSource("/api/events");
  lastHeard = Date.now();
  stream.addEventListener("change", () => { lastHeard = Date.now(); refresh(); });
  stream.addEventListener("ping", () => { lastHeard = Date.now(); });
  // Open again after a drop (the server restarted, the phone woke): what changed meanwhile is fetched.
  let dropped = false;
  stream.onopen = () => {
    lastHeard = Date.now();
    $("live").textContent = "live"; $("live").className = "live on";
    if (dropped) { dropped = false; refresh(); }
  };
  stream.onerror = () => {
    dropped = true;
    $("live").textContent = document.body.classList.contains("stale") ? "not loading" : "reconnecting…"; $("live").className = "live off";
    // Still not back after a few seconds: the page is read again, and if the Pi does not answer, what it shows is
    // greyed and said to be "Not up to date" (it stayed as if current: a carer could not tell, a LAN trial).
    // One check at a time: the stream retries every 2 s, and a check put off at each retry never came.
    // A refused stream (503, too many live pages) is closed, and is no Pi gone: not checked.
    if (!checkDropped) checkDropped = setTimeout(() => { checkDropped = null; if (stream.readyState === EventSource.CONNECTING) refresh(); }, STREAM_GRACE_MS);
    // A refusal (503: too many live pages) closes it for good; a dropped stream reconnects by itself.
    if (stream.readyState === EventSource.CLOSED) {
      if (source === stream) source = null;
      setTimeout(live, 30000);
    }
  };
}
window.addEventListener("pagehide", () => { if (source) { source.close(); source = null; } });
window.addEventListener("pageshow", (e) => { if (e.persisted) { live(); refresh(); } });

document.addEventListener("DOMContentLoaded", async () => {
  if (person) $("who").textContent = " · " + person;
  $("person").addEventListener("change", (e) => { location.search = e.target.value ? "?person=" + encodeURIComponent(e.target.value) : ""; });
  for (const link of document.querySelectorAll("a.card")) {
    link.href = url(link.dataset.card);
    link.addEventListener("click", shareCard);
    link.addEventListener("pointerdown", () => { if (navigator.canShare) fetchCard(link).catch(() => {}); });
  }
  $("earlier-month").addEventListener("click", () => moveMonth(-1));
  $("later-month").addEventListener("click", () => moveMonth(1));
  $("quick-add").addEventListener("submit", async (e) => {
    e.preventDefault();
    const amount = $("custom-amount").value.trim();
    // Said, not left to the bar's last word (an earlier refusal stayed there as if it were this one's).
    if (!amount) { $("custom-amount").focus(); said("Type an amount first, such as " + (units === "oz" ? "8" : "250") + " (nothing was changed)", true); return; }
    const time = $("custom-time").value, note = $("custom-note").value.trim();
    const wrong = amountProblem(amount);
    if (wrong) { $("custom-amount").focus(); said(wrong + " (nothing was changed)", true); return; }
    if (day && !time) { $("add-more").open = true; $("custom-time").focus(); said("Give the time it was drunk on " + day, true); return; }
    // A time to come is refused here: the command line would take it as yesterday's.
    if (!day && time && isToCome(time)) { $("custom-time").focus(); said(time + " has not come yet today (nothing was changed)", true); return; }
    const body = { amount: typedAmount(amount) };
    if (time) body.at = day ? day + " " + time : time;
    if (note) body.note = note;
    // What was typed stays after an error, to be mended rather than typed again.
    if (await act("add", body)) { $("custom-amount").value = ""; $("custom-time").value = ""; $("custom-note").value = ""; }
  });
  $("undo").addEventListener("click", undoLast);
  $("carer-resort").addEventListener("click", () => { carerHeld = null; refresh(); });
  for (const kind of ["day", "week", "30days"]) $("chart-" + kind).addEventListener("click", chartTap);
  $("goal-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const goal = $("goal-amount").value.trim();
    if (!goal) { $("goal-amount").focus(); return; }
    if (await setting("goal", { goal: typedAmount(goal, true) }, (r) => "Daily goal set to " + volume(r.current_ml))) $("goal-amount").value = "";
  });
  $("recommend-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      // A bare weight is kg and a bare time minutes (the fields say so); "154lb" or "1h" are sent as typed.
      const exercise = decimalPoint($("exercise").value) || "0";
      const r = await getJSON("goal/recommend", { weight: decimalPoint($("weight").value), exercise: isBareNumber(exercise) ? exercise + "min" : exercise });
      recommended = r.recommended_ml;
      $("recommendation").textContent = "About " + volume(r.recommended_ml) + " a day (" + r.rule + ").";
      $("use-recommendation").hidden = false;
    } catch (error) { recommended = null; $("use-recommendation").hidden = true; $("recommendation").textContent = error.message; }
  });
  $("use-recommendation").addEventListener("click", () => setting("goal", { goal: recommended + "ml" }, (r) => "Daily goal set to " + volume(r.current_ml)));
  for (const b of document.querySelectorAll("[data-snooze]")) {
    b.addEventListener("click", () => setting("remind/snooze", { duration: b.dataset.snooze },
      (r) => r.snoozed_until ? "Reminders snoozed until " + clock(r.snoozed_until) : "Reminders back on"));
  }
  $("day-start-fix").addEventListener("click", () => setting("person/day-start", { person: shownPerson().person, hour: $("day-start-fix").dataset.hour },
    (r) => "Your days now begin at " + r.detail));
  for (const kind of ["input", "change"]) $("reminder-form").addEventListener(kind, () => { reminderEdits++; });
  $("reminder-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const edits = reminderEdits;
    const saved = await setting("remind", { mode: $("reminder-mode").value, window: $("reminder-window").value.trim() || undefined }, () => "Reminders saved");
    // Saved as it stood when sent; a change made since stays on screen, unsaved.
    if (saved && reminderEdits === edits) { reminderEditsSaved = edits; await refresh(); }
  });
  updateUndo();
  // An earlier day: a drink is added with its time; the quick buttons would add it now.
  $("quick-buttons").hidden = !!day;
  if (day) $("add-more").open = true;
  await refresh();
  live();
  // The last data when the Pi cannot be reached (only where the browser allows a service worker).
  if ("serviceWorker" in navigator) navigator.serviceWorker.register("/sw.js").catch(() => {});
  // The pace moves with the clock: redraw each minute even when nothing is drunk.
  setInterval(refresh, 60000);
});
