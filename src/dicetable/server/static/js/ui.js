// Small DOM helpers shared by the pages: element builders, money, dice, refusals, the event feed.

import { Refusal, get, logout } from "./api.js";

const SVG_NS = "http://www.w3.org/2000/svg";

function build(el, attrs, kids) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key === "text") el.textContent = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const kid of kids.flat(Infinity)) {
    if (kid === null || kid === undefined || kid === false) continue;
    el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return el;
}

/** An HTML element: h("div", {class: "x", onclick: f}, child, ...). */
export const h = (tag, attrs = {}, ...kids) => build(document.createElement(tag), attrs, kids);
/** An SVG element. */
export const s = (tag, attrs = {}, ...kids) => build(document.createElementNS(SVG_NS, tag), attrs, kids);

export function replace(el, ...kids) {
  el.replaceChildren();
  build(el, {}, kids);
  return el;
}

/** A page's card: a section with its heading and, beside it, a note (text, shown muted, or an
 * element such as a link). */
export function card(id, title, note, ...body) {
  const aside = typeof note === "string" ? h("span", { class: "muted" }, note) : note;
  return h("section", { class: "card", id }, h("header", {}, h("h2", {}, title), aside), ...body);
}

/** Read `url` now and every `every` ms, and `draw` what it reads into `body`; a failed read
 * shows its reason (in an element with id `closedId`, if given). A read that is what was drawn
 * last (with `also()`, the card's own state) is not drawn again: a redraw under the pointer
 * would swallow a click. Returns the read, for the card to call after it changes something. */
export function polled(body, url, draw, { every, closedId, also = () => null }) {
  let drawn = null;
  async function refresh() {
    let data;
    try {
      data = await get(url);
    } catch (e) {
      replace(body, h("div", { class: "muted", id: closedId }, e.message || String(e)));
      return;
    }
    const key = JSON.stringify([data, also()]);
    if (key === drawn) return;
    drawn = key;
    draw(data);
  }
  refresh();
  setInterval(refresh, every);
  return refresh;
}

// -- money: integer cents, never floats --------------------------------------------------------
export function money(cents) {
  if (cents === null || cents === undefined) return "–";
  const negative = cents < 0;
  const c = Math.abs(cents);
  const dollars = Math.floor(c / 100).toLocaleString("en-US");
  const rest = String(c % 100).padStart(2, "0");
  return `${negative ? "-" : ""}$${dollars}.${rest}`;
}

/** A short chip label: $5, $25, $1K, $2.50. */
export function chipText(cents) {
  if (cents % 100 !== 0) return money(cents).replace(/\.00$/, "");
  const d = cents / 100;
  if (d >= 1000 && d % 1000 === 0) return `$${d / 1000}K`;
  if (d >= 1000) return `$${(d / 1000).toFixed(1)}K`;
  return `$${d}`;
}

/** "$12.50" or "12.5" -> 1250 cents; null when it is not an amount. */
export function parseMoney(text) {
  const m = /^\s*\$?\s*(\d{1,9})(?:\.(\d{1,2}))?\s*$/.exec(text || "");
  if (!m) return null;
  return Number(m[1]) * 100 + Number((m[2] || "0").padEnd(2, "0"));
}

// -- dice -------------------------------------------------------------------------------------
const PIPS = {
  1: [[2, 2]], 2: [[1, 1], [3, 3]], 3: [[1, 1], [2, 2], [3, 3]],
  4: [[1, 1], [3, 1], [1, 3], [3, 3]], 5: [[1, 1], [3, 1], [2, 2], [1, 3], [3, 3]],
  6: [[1, 1], [3, 1], [1, 2], [3, 2], [1, 3], [3, 3]],
};

/** One die face as SVG content at (x, y), ``size`` wide (for use inside an <svg>). */
export function dieFace(n, x, y, size, cls = "") {
  const g = s("g", { class: `die ${cls}`.trim() });
  g.append(s("rect", { x, y, width: size, height: size, rx: size * 0.18 }));
  const r = size * 0.09;
  for (const [cx, cy] of PIPS[n] || []) {
    g.append(s("circle", { cx: x + (cx * size) / 4, cy: y + (cy * size) / 4, r }));
  }
  return g;
}

/** A standalone die image for HTML. */
export function dieIcon(n, size = 22) {
  const svg = s("svg", { width: size, height: size, viewBox: `0 0 ${size} ${size}`, class: "die-icon", "aria-label": `die ${n}` });
  const g = dieFace(n, 0.5, 0.5, size - 1);
  g.querySelector("rect").setAttribute("fill", "#fbfaf5");
  g.querySelector("rect").setAttribute("stroke", "#444");
  for (const c of g.querySelectorAll("circle")) c.setAttribute("fill", "#1a1a1a");
  svg.append(g);
  return svg;
}

export const faces = (roll) => (roll ? roll.split("-").map(Number) : []);

// -- refusals ---------------------------------------------------------------------------------
function refusalTray() {
  let tray = document.getElementById("refusals");
  if (!tray) {
    tray = h("div", { id: "refusals", "aria-live": "assertive" });
    document.body.append(tray);
  }
  return tray;
}

/** How refusals are shown on this page: players read plain words, staff the rule too. */
export const refusalStyle = { citations: true, me: null };

/** Player-facing words: no bet ids, no command class names, no raw timestamps. */
export function plainWords(text) {
  return String(text ?? "")
    .replace(/\bb\d+ \(([^)]+)\)/g, "the $1 bet")
    .replace(/\bb\d+\b/g, "that bet")
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})?/g, (iso) => fmtTime(iso))
    .replace(/\b(?:[A-Z][a-z]+){2,}\b/g, (word) => word.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase());
}

/** Refusals a player meets often, in the words a dealer would use (by the engine's wording). */
const PLAYER_SAYINGS = [
  [/^(?:wagers are closed|betting is not open) \((closed|settling|rolling)\)/i, "Bets are closed while the dice are rolling and the roll is settled; bet again once it is."],
  [/^a no roll returns the wagers first/i, "The dealer is returning the wagers after a no roll; bet again in a moment."],
  [/is not seated; only seated players may wager/i, "Only seated players may wager here: take a seat first."],
  [/^there is no shooter; offer the dice first/i, "Nobody has the dice yet: the stickperson offers them first."],
];

/** A refusal as a player reads it: their own name as "you", no ids, a sentence. */
export function playerSentence(refusal, me = refusalStyle.me) {
  const message = String(refusal.message || "");
  for (const [pattern, words] of PLAYER_SAYINGS) if (pattern.test(message)) return words;
  let text = plainWords(message);
  if (me) {
    const name = me.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    text = text.replace(new RegExp(`\\b${name} has\\b`, "g"), "you have")
      .replace(new RegExp(`\\b${name} is\\b`, "g"), "you are")
      .replace(new RegExp(`\\b${name}\\b`, "g"), "you");
  }
  text = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/** Show a refusal with its rule and citation (other errors are shown plainly). */
export function showRefusal(err) {
  const local = !(err instanceof Refusal);  // caught here before anything was sent
  const refusal = local ? new Refusal(0, { error: "Not sent", message: String(err && err.message ? err.message : err) }) : err;
  const box = h("div", { class: "refusal", role: "alert", dataset: { rule: refusal.rule } },
    h("button", { class: "close", title: "dismiss", onclick: () => box.remove() }, "×"),
    h("div", { class: "kind" }, local ? plainWords(refusal.error) : refusalStyle.citations ? `Refused: ${plainWords(refusal.error)}` : "Not accepted"),
    h("div", { class: "message" }, refusalStyle.citations ? refusal.message : playerSentence(refusal)),
    refusalStyle.citations ? h("dl", {},
      h("dt", {}, "Rule"), h("dd", { class: "rule" }, refusal.rule || "—"),
      h("dt", {}, "Citation"), h("dd", { class: "citation" }, refusal.citation || "—"))
      : h("div", { class: "muted", style: "font-size:.8rem" }, "The table's rules are in the Rules panel."));
  const tray = refusalTray();
  tray.append(box);
  while (tray.children.length > 4) tray.firstElementChild.remove();
  setTimeout(() => box.remove(), 15000);
  return box;
}

/** Run an async action; a refusal is shown, not thrown. Returns the result or null. */
export async function attempt(action) {
  try {
    return await action();
  } catch (e) {
    showRefusal(e);
    return null;
  }
}

// -- the top bar ------------------------------------------------------------------------------
export function topbar(account, title, links = []) {
  const bar = h("header", { class: "topbar" },
    h("a", { class: "brand", href: "/" }, "dice", h("span", {}, "table")),
    h("div", { class: "title", id: "page-title" }, title),
    h("div", { class: "row", id: "status-pills" }),
    h("div", { class: "spacer" }),
    h("nav", {}, links.map(([label, href]) => h("a", { href }, label))),
    h("span", { class: "pill", id: "who" }, account ? `${account.display || account.username}` : ""),
    account ? h("button", { class: "btn small", id: "logout", onclick: logout }, "Log out") : null);
  document.body.prepend(bar);
  return bar;
}

// -- events as lines of text ------------------------------------------------------------------
export function wagerName(view, code) {
  if (code === "odds:take") return "Odds";
  if (code === "odds:lay") return "Lay odds";
  return view && view.limits && view.limits[code] ? view.limits[code].name : plainWords(code);
}

/** A bet of the view by id: the player's own, or (the staff's view: every bet, by id) anyone's. */
function betById(view, id) {
  const mine = ((view && view.me && view.me.bets) || []).find((b) => b.id === id);
  return mine || (view && view.bets && view.bets[id]) || null;
}

function betName(view, id) {
  const bet = betById(view, id);
  return bet ? `${bet.player === (view.me && view.me.player) ? "Your" : `${bet.player}'s`} ${bet.label || bet.name}` : "A wager";
}

/** "dee (dealer) for you: " when staff acted on a player's behalf, else "". */
function onBehalf(e, view, owner) {
  if (!e.role || e.role === "player" || e.role === "system") return "";
  const me = view && view.me && view.me.player;
  const whom = owner ? (owner === me ? "you" : owner) : "the player";
  return `${e.actor} (${e.role}) for ${whom}: `;
}

function ownerOf(view, id) {
  const bet = betById(view, id);
  return bet ? bet.player : null;
}

export function describe(e, view) {
  const w = (code) => wagerName(view, code);
  switch (e.type) {
    case "DiceRolled": {
      const facts = e.facts && e.facts.length ? ` [${e.facts.join(", ")}]` : "";
      if (!e.roll) return { text: `Throw recorded, faces unreadable${facts}`, cls: "roll" };
      const [a, b] = faces(e.roll);
      return { text: `Roll ${e.roll} — ${a + b}${facts}`, cls: "roll" };
    }
    case "NoRollCalled":
      return { text: `NO ROLL${e.automatic ? " (automatic)" : ""}: ${e.grounds.join(", ")}${e.observed && e.observed.length ? ` (seen by ${e.actor}: ${e.observed.join(", ")})` : ""}`, cls: "void" };
    case "NoRollOverturned": return { text: `No roll overturned${e.reason ? `: ${e.reason}` : ""}`, cls: "roll" };
    case "BettingClosed": return { text: "No more bets", cls: "" };
    case "LosersCollected":
      return { text: e.items.length ? `Collected: ${e.items.map((i) => `${i.player} ${w(i.wager)} ${money(i.amount)}`).join("; ")}` : "No losing wagers", cls: "lose" };
    case "WinnersPaid":
    {
      // A push (the odds on a come bet that was off, a bar 12) returns the stake: no win.
      const paid = e.items.filter((i) => i.win > 0);
      const back = e.items.filter((i) => i.win === 0);
      const parts = [];
      if (paid.length) parts.push(`Paid: ${paid.map((i) => `${i.player} ${w(i.wager)} ${money(i.win)}${i.commission ? ` (less ${money(i.commission)} commission)` : ""}`).join("; ")}`);
      if (back.length) parts.push(`Returned: ${back.map((i) => `${i.player} ${w(i.wager)} ${money(i.stake_returned)}`).join("; ")}`);
      return { text: parts.length ? parts.join(" · ") : "No winning wagers", cls: "win" };
    }
    case "WagersReturned":
      return { text: e.items.length ? `Returned: ${e.items.map((i) => `${i.player} ${w(i.wager)} ${money(i.amount)}`).join("; ")}` : "No wagers to return", cls: "void" };
    case "PuckMoved":
      if (e.seven_out) return { text: "Seven out — puck OFF", cls: "lose" };
      return { text: e.point ? `Puck ON ${e.point}` : "Puck OFF", cls: "" };
    case "RoundCompleted": return { text: `Round ${e.round} complete${e.total ? ` (total ${e.total})` : ""}`, cls: "" };
    case "BetPlaced": return { text: `${onBehalf(e, view, e.player)}${e.player} bets ${money(e.amount)} on ${e.base ? `odds behind ${betName(view, e.base).replace(/^Your /, "the ")}` : w(e.wager)}`, cls: "" };
    case "BetChanged": return { text: `${onBehalf(e, view, ownerOf(view, e.bet))}${betName(view, e.bet)} now ${money(e.amount)}`, cls: "" };
    case "BetRemoved": return { text: `${onBehalf(e, view, ownerOf(view, e.bet))}${betName(view, e.bet)} taken down, ${money(e.returned)} returned`, cls: "" };
    case "BetWorkingSet": return { text: `${onBehalf(e, view, ownerOf(view, e.bet))}${betName(view, e.bet)} ${e.working ? "working" : "off"}`, cls: "" };
    case "ChipsBought": return { text: `${e.player} buys ${money(e.amount)} in chips`, cls: "" };
    case "ChipsCashedOut": return { text: `${e.player} cashes out ${money(e.amount)}`, cls: "" };
    case "PlayerJoined": return { text: `${e.player} joins${e.seat ? ` at position ${e.seat}` : ""}`, cls: "" };
    case "PlayerLeft": return { text: `${e.player} leaves`, cls: "" };
    case "DiceOffered": return { text: `Dice offered to ${e.patron} (${e.serials.join(", ")})`, cls: "" };
    case "DiceDeclined": return { text: `${e.patron} declines the dice`, cls: "" };
    case "ShooterSelected": return { text: `${e.shooter} is the shooter, with ${e.dice.join(" & ")}`, cls: "" };
    case "ShooterEnded": return { text: `${e.shooter}'s hand ends (${e.reason})`, cls: "lose" };
    case "ShakerShaken": return { text: "The dealer shakes the covered shaker", cls: "" };
    case "ShakerOffered": return { text: `Shaker offered to ${e.player}`, cls: "" };
    case "ShakerShakenByPlayer": return { text: `${e.player} shakes ×${e.times}`, cls: "" };
    case "ShakerLidRemoved": return { text: `${e.player} lifted the lid: shake again`, cls: "void" };
    case "ShakerReturned": return { text: `${e.player} returns the shaker`, cls: "" };
    case "ShakerUncovered": return { text: "The dealer uncovers the shaker", cls: "" };
    case "DiceBrought": return { text: `Dice brought to the table: ${e.serials.join(", ")}`, cls: "" };
    case "DiceTakenFromTable": return { text: `Dice taken from the table: ${(e.serials || []).join(", ")}${e.reason ? ` (${e.reason})` : ""}`, cls: "" };
    case "StaffAssigned": return { text: `${e.person} assigned as ${e.staff_role}`, cls: "" };
    case "StaffRelieved": return { text: `${e.person} relieved as ${e.staff_role}`, cls: "" };
    case "AlertRaised": return { text: `ALERT ${e.name || ""}: ${e.message || ""}`, cls: "lose" };
    case "TableOpened": return { text: `Table opened (${e.game}, ${e.mode})`, cls: "" };
    default: return { text: plainWords(e.type), cls: "" };
  }
}

/** A feed of event lines, newest first, shown once per sequence number. */
export class Feed {
  constructor(el, limit = 120, { citations = true } = {}) {
    this.el = el; this.seen = new Set(); this.limit = limit; this.citations = citations;
    this.point = null;  // the puck as the feed last told it
    // A scrolling log: reachable by keyboard and named for screen readers.
    if (!el.hasAttribute("tabindex")) el.tabIndex = 0;
    if (!el.hasAttribute("role")) el.setAttribute("role", "log");
    if (!el.hasAttribute("aria-label")) el.setAttribute("aria-label", "Table activity");
  }
  /** Nothing happened: no loser, no winner, the puck where it was (the feed stays quiet). */
  quiet(e) {
    if ((e.type === "LosersCollected" || e.type === "WinnersPaid" || e.type === "WagersReturned") && !(e.items || []).length) return true;
    if (e.type === "PuckMoved") {
      const same = !e.seven_out && (e.point ?? null) === this.point && !(e.moves || []).length;
      this.point = e.point ?? null;
      return same;
    }
    return false;
  }

  add(events, view, { away = false } = {}) {
    const fresh = (events || []).filter((e) => !this.seen.has(e.seq));
    if (!fresh.length) return;
    const lines = fresh.filter((e) => {
      this.seen.add(e.seq);
      return !this.quiet(e);
    }).map((e) => {
      const d = describe(e, view);
      const title = this.citations ? `${e.actor} (${e.role}) — ${e.rule}` : `${e.actor} (${e.role})`;
      return h("div", { class: `line ${d.cls ? `ev-${d.cls}` : ""}`, title, dataset: { type: e.type, seq: e.seq, actor: e.actor, role: e.role } },
        h("span", { class: "seq" }, fmtTime(e.at)), h("span", {}, d.text));
    }).reverse();
    if (away) {
      const box = h("div", { class: "away", id: "while-away" }, `Back online. While you were away (${fresh.length} event${fresh.length === 1 ? "" : "s"}):`);
      this.el.prepend(box, ...lines);
    } else {
      this.el.prepend(...lines);
    }
    while (this.el.children.length > this.limit) this.el.lastElementChild.remove();
  }
}

/** The last rolls, newest first, with both faces and where each shooter's hand ended. */
export function rollStrip(history, point) {
  const out = [];
  for (const r of [...(history || [])].reverse()) {
    if (r.end_of_hand) out.push(h("span", { class: "hand-end", title: "the shooter's hand ended here" }, "HAND"));
    const [a, b] = faces(r.roll);
    const cls = ["roll"];
    if (!r.valid) cls.push("void");
    else if (r.total === 7) cls.push("seven");
    else if (point && r.total === point) cls.push("point");
    out.push(h("span", { class: cls.join(" "), title: `${r.roll || "unreadable"}${r.valid ? "" : " — no roll"} (#${r.seq})`, dataset: { roll: r.roll || "", valid: String(r.valid) } },
      h("span", { class: "faces" }, r.roll ? [dieIcon(a, 20), dieIcon(b, 20)] : "?"),
      h("span", { class: "total" }, r.valid ? (r.total ?? "?") : "NO ROLL")));
  }
  return out;
}

/** Hot and cold numbers as a bar chart. */
export function frequencyChart(freq) {
  const counts = freq ? freq.counts : {};
  const max = Math.max(1, ...Object.values(counts));
  const hot = new Set(freq && freq.rolls ? freq.hot.filter((t) => counts[String(t)] > 0) : []);
  const cold = new Set(freq && freq.rolls ? freq.cold : []);
  return Array.from({ length: 11 }, (_, i) => i + 2).map((t) => {
    const n = counts[String(t)] || 0;
    const cls = hot.has(t) ? "hot" : cold.has(t) ? "cold" : "";
    return h("div", { class: `bar ${cls}`, title: `${t}: ${n} roll${n === 1 ? "" : "s"}${cls ? ` (${cls})` : ""}`, dataset: { total: t, count: n } },
      h("span", { class: "muted" }, n), h("i", { style: `height:${Math.round((n / max) * 70)}%` }), h("b", {}, t));
  });
}

/** Why play is stopped, in a player's words: the alerts standing, else the dice's time. */
export function blockedWhy(view) {
  const alerts = (view.alerts || []).map((a) => plainWords(a.message || a.name)).filter(Boolean);
  if (alerts.length) return `Play stopped: ${alerts.join("; ")}`;
  return "Dice being replaced — play resumes shortly";
}

export function statusPills(view, connection) {
  const pills = [];
  const phase = view.blocked ? "Betting paused" : view.phase === "betting" ? "Betting open" : view.phase === "closed" ? "No more bets" : view.phase === "settling" ? "Paying and collecting" : plainWords(view.phase);
  pills.push(h("span", { class: `pill phase-${view.blocked ? "closed" : view.phase}`, id: "phase" }, phase));
  if (view.variant.has_puck) {
    pills.push(view.point ? h("span", { class: "pill on", id: "puck" }, `ON ${view.point}`) : h("span", { class: "pill off", id: "puck" }, "OFF"));
  }
  pills.push(h("span", { class: "pill" }, `${view.mode === "electronic" ? "Electronic" : "Live"} · ${view.jurisdiction}`));
  if (view.blocked) pills.push(h("span", { class: "pill alert", id: "blocked-why" }, blockedWhy(view)));
  if (connection) pills.push(h("span", { class: `pill ${connection}`, id: "connection" }, connection === "live" ? "Live" : "Reconnecting…"));
  return pills;
}

export function fmtTime(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}
