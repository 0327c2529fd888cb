"use strict";
const $ = (id) => document.getElementById(id);
const query = new URLSearchParams(location.search);
const person = query.get("person");
const OZ = 29.5735295625;
let units = "ml", zone = undefined;

function url(path, params = {}) {
  const q = new URLSearchParams(params);
  if (person) q.set("person", person);
  const s = q.toString();
  return "/api/" + path + (s ? "?" + s : "");
}
async function call(path, params, init) {
  const response = await fetch(url(path, params), init);
  const text = await response.text();
  if (!response.ok) {
    let message = response.statusText;
    try { message = JSON.parse(text).error || message; } catch (_) {}
    throw new Error(message);
  }
  return text;
}
const getJSON = async (path, params) => JSON.parse(await call(path, params));
const getLines = async (path, params) => (await call(path, params)).split("\n").filter((l) => l).map((l) => JSON.parse(l));
const post = (path, body) => call(path, {}, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

const volume = (ml) => units === "oz" ? (ml / OZ).toFixed(1) + " fl oz" : Math.round(ml).toLocaleString("en") + " mL";
// A time with its offset is already the household's wall clock; a UTC one is shown in the household's zone.
const clock = (iso) => /[+-]\d\d:\d\d$/.test(iso) ? iso.slice(11, 16)
  : new Date(iso).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZone: zone });
function ago(iso) {
  const minutes = Math.round((Date.now() - new Date(iso).getTime()) / 60000);
  if (minutes < 1) return "just now";
  if (minutes < 90) return minutes + " min ago";
  const hours = Math.round(minutes / 60);
  return hours < 36 ? hours + " h ago" : Math.round(hours / 24) + " days ago";
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
function said(message) { $("edit-status").textContent = message; }

function showToday(today, state) {
  units = today.units; zone = today.time_zone;
  const goal = today.goal_ml, intake = today.intake_ml;
  $("intake").textContent = volume(intake); $("intake").dataset.ml = intake;
  $("goal").textContent = volume(goal); $("goal").dataset.ml = goal;
  const fraction = Math.min(1, goal > 0 ? intake / goal : 0);
  const circumference = 2 * Math.PI * 52;
  $("ring-fill").setAttribute("stroke-dasharray", (fraction * circumference) + " " + circumference);
  const pace = Math.min(1, goal > 0 ? state.pace_ml / goal : 0);
  // The pace: a tick on the ring where the intake should be by now.
  $("ring-pace").setAttribute("transform", "rotate(" + (pace * 360).toFixed(1) + " 60 60)");
  $("ring-percent").textContent = Math.round(today.progress * 100) + "%";
  $("ring").classList.toggle("met", intake >= goal);
  $("ring").setAttribute("aria-label", volume(intake) + " of " + volume(goal) + ", " + Math.round(today.progress * 100) + " percent");
  const paceText = $("pace");
  if (intake >= goal) { paceText.textContent = "Goal met. Well done."; paceText.className = "ahead"; }
  else if (state.behind) { paceText.textContent = "Behind pace by " + volume(state.behind_by_ml) + " (" + volume(state.pace_ml) + " by now)"; paceText.className = "behind"; }
  else { paceText.textContent = "On pace (" + volume(state.pace_ml) + " by now)"; paceText.className = "ahead"; }
  $("last-sip").textContent = today.last_sip_at ? "Last drink " + clock(today.last_sip_at) + " (" + ago(today.last_sip_at) + ")" : "No drink yet today";
}

function showSips(events, bottles) {
  const names = new Map(bottles.map((b) => [b.device, b.name || b.device]));
  const rows = events.filter((e) => e.kind === "sip").map((e) => {
    const when = clock(e.at);
    const actions = e.deleted
      ? el("button", { type: "button", "aria-label": "Restore the " + volume(e.ml) + " drink at " + when, onclick: () => edit("restore", { id: e.id }, "Restored") }, "Restore")
      : el("button", { type: "button", "aria-label": "Delete the " + volume(e.ml) + " drink at " + when, onclick: () => edit("delete", { id: e.id }, "Deleted") }, "Delete");
    return el("tr", { class: e.deleted ? "deleted" : "", "data-id": e.id, "data-ml": e.ml },
      el("td", {}, when), el("td", { class: "num" }, volume(e.ml) + (e.deleted ? " (deleted)" : "")),
      el("td", {}, e.device ? names.get(e.device) || e.device : "—"),
      el("td", {}, e.source === "sensor" ? "sensor" : e.source + (e.note ? ": " + e.note : "")), el("td", {}, actions));
  });
  $("sips").tBodies[0].replaceChildren(...rows);
  $("no-sips").hidden = rows.length > 0;
}

function showBottles(bottles) {
  $("bottle-list").replaceChildren(...bottles.map((b) => el("li", {},
    el("strong", {}, b.name || b.device),
    el("span", {}, b.remaining_ml == null ? "level unknown" : volume(b.remaining_ml) + " left"),
    el("span", {}, b.remaining_at ? "last reading " + ago(b.remaining_at) : "no reading yet"),
    el("span", { class: b.link_up ? "link-up" : "link-down" }, b.link_up ? "connected" : "not connected"))));
  $("no-bottles").hidden = bottles.length > 0;
}

function showStats(week, month) {
  $("streaks").textContent = "Streak: " + week.current_streak + " day" + (week.current_streak === 1 ? "" : "s") +
    " (longest " + month.longest_streak + " in 30 days). Goal met " + week.goal_met_days + " of the last 7 days, " +
    month.goal_met_days + " of 30. Average " + volume(month.daily_average_ml) + " a day.";
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
    cells.push(el("td", { class: (d.met ? "met" : "") + (d.date === today.date ? " today" : ""),
      "aria-label": d.date + ": " + (d.ml > 0 ? volume(d.ml) : "nothing") + (d.met ? ", goal met" : "") },
      el("span", { class: "day" }, label), text + (d.met ? " ✓" : "")));
  }
  const rows = [];
  for (let i = 0; i < cells.length; i += 7) rows.push(el("tr", {}, ...cells.slice(i, i + 7)));
  $("calendar").tBodies[0].replaceChildren(...rows);
  $("calendar-title").textContent = calendar.month || "This month";
}

async function showCharts() {
  for (const kind of ["day", "week", "30days"]) {
    try { $("chart-" + kind).innerHTML = await call("chart/" + kind + ".svg"); } catch (_) { $("chart-" + kind).textContent = ""; }
  }
}

// Everyone at a glance: the carer's view, and the person picker once several share the Pi.
function showHousehold(people) {
  const several = people.length > 1;
  $("household-link").hidden = !several;
  $("person-pick").hidden = !several;
  const chosen = person || (several ? "" : people[0] && people[0].person);
  $("person").replaceChildren(...(person ? [] : [el("option", { value: "" }, "Everyone")]),
    ...people.map((p) => el("option", p.person === chosen ? { selected: "", value: p.person } : { value: p.person }, p.person)));
  $("who").textContent = several && person ? " · " + person : "";
  $("people").tBodies[0].replaceChildren(...people.map((p) => {
    const quiet = p.last_sip_at ? (Date.now() - new Date(p.last_sip_at).getTime()) / 3600000 : null;
    return el("tr", { "data-person": p.person },
      el("th", { scope: "row" }, el("a", { href: "/?person=" + encodeURIComponent(p.person) }, p.person)),
      el("td", { class: "num", "data-ml": p.intake_ml }, volume(p.intake_ml)), el("td", { class: "num" }, volume(p.goal_ml)),
      el("td", { class: p.behind ? "behind" : "ahead" }, p.intake_ml >= p.goal_ml ? "goal met" : p.behind ? "behind by " + volume(p.behind_by_ml) : "on pace"),
      el("td", { class: quiet !== null && quiet >= 3 ? "behind" : "" },
        p.last_sip_at ? clock(p.last_sip_at) + " (" + ago(p.last_sip_at) + ")" + (quiet >= 3 ? ": no drink for " + Math.floor(quiet) + " h" : "") : "none today"));
  }));
}

let refreshing = null, again = false;
async function refresh() {
  if (refreshing) { again = true; return refreshing; }
  refreshing = (async () => {
    try {
      const people = await getJSON("household");
      // Several people and nobody chosen: the household is the page.
      const household = query.get("view") === "household" || (people.length > 1 && !person);
      for (const id of ["today", "bottles", "history"]) $(id).hidden = household;
      $("household").hidden = !household;
      if (people[0]) { units = people[0].units || units; }
      showHousehold(people);
      if (!household) {
        const [today, state] = await Promise.all([getJSON("today"), getJSON("state")]);
        showToday(today, state);
        const [events, week, month, calendar] = await Promise.all([
          getLines("log", { since: "today", deleted: "true" }), getJSON("stats", { days: 7 }), getJSON("stats", { days: 30 }), getJSON("calendar")]);
        showSips(events, state.bottles);
        showBottles(state.bottles);
        showStats(week, month);
        showCalendar(calendar, today);
        await showCharts();
      }
      problem("");
      document.body.dataset.loaded = String(Date.now());
    } catch (error) { problem("Cannot load the day: " + error.message); }
  })();
  await refreshing;
  refreshing = null;
  if (again) { again = false; return refresh(); }
}

async function edit(action, body, done) {
  try { await post(action, body); said(done); await refresh(); }
  catch (error) { said(""); problem(error.message); }
}

function quickButtons() {
  const amounts = units === "oz" ? ["4oz", "8oz", "16oz"] : ["100ml", "250ml", "500ml"];
  $("quick-buttons").replaceChildren(...amounts.map((a) => el("button", { type: "button", class: "add", "data-amount": a,
    "aria-label": "Add " + a.replace("ml", " mL").replace("oz", " fl oz"), onclick: () => edit("add", { amount: a }, "Added " + a) },
    "+" + a.replace("ml", " mL").replace("oz", " oz"))));
}

function live() {
  const source = new EventSource("/api/events");
  source.addEventListener("change", () => refresh());
  source.onopen = () => { $("live").textContent = "live"; $("live").className = "live on"; };
  source.onerror = () => {
    $("live").textContent = "reconnecting…"; $("live").className = "live off";
    // A refusal (503: too many live pages) closes it for good; a dropped stream reconnects by itself.
    if (source.readyState === EventSource.CLOSED) setTimeout(live, 30000);
  };
}

document.addEventListener("DOMContentLoaded", async () => {
  $("person").addEventListener("change", (e) => { location.search = e.target.value ? "?person=" + encodeURIComponent(e.target.value) : ""; });
  for (const link of document.querySelectorAll("a.card")) link.href = url(link.dataset.card);
  $("quick-add").addEventListener("submit", (e) => {
    e.preventDefault();
    const amount = $("custom-amount").value.trim();
    if (!amount) { $("custom-amount").focus(); return; }
    edit("add", { amount }, "Added " + amount).then(() => { $("custom-amount").value = ""; });
  });
  $("undo").addEventListener("click", () => edit("undo", {}, "Undone"));
  await refresh();
  quickButtons();
  live();
  // The pace moves with the clock: redraw each minute even when nothing is drunk.
  setInterval(refresh, 60000);
});
