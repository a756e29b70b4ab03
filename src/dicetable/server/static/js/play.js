// The player's page: the layout, chips, the player's own wagers and balance, the dice and the
// shaker when it is the player's turn, the last rolls, hot and cold numbers, and game recall.

import { Refusal, del, get, moneyPush, patch, post, tablePath, whoami } from "./api.js";
import { startTable } from "./table-start.js";
import {
  Feed, attempt, dieIcon, faces, fmtTime, frequencyChart, h, money, parseMoney, playerSentence, refusalStyle, replace,
  rollStrip, s, showRefusal, statusPills, topbar, wagerName,
} from "./ui.js";
import { layoutFor } from "./layout.js";

const CHIPS = [100, 500, 2500, 10000, 50000];

const account = await whoami();
const params = new URLSearchParams(location.search);
const tableId = params.get("table") || Object.keys(account.tables || {})[0];
if (!params.get("table") && tableId) history.replaceState(null, "", `/play?table=${encodeURIComponent(tableId)}`);

const st = {
  view: null,
  chip: 500,
  connection: "offline",
  undo: [],                   // this round's actions, newest last: {kind, bet, from}
  thisRound: new Map(),       // wager code -> cents added this round
  lastRound: new Map(),       // what was added in the round before (for Repeat)
  lastRollSeq: null,         // the last roll seen (a new one ends the round's undo)
  chosenDice: [],
  moneyLoads: 0,              // readings of the player's money finished (or given up)
};

topbar(account, "", [["Tables", "/"]]);
const main = h("main", { class: "page play-grid" });
document.body.append(main);

if (!tableId) {
  main.append(h("div", { class: "card" }, "You are not seated at any table."));
  throw new Error("no table");
}

// -- the skeleton -----------------------------------------------------------------------------
const felt = h("div", { class: "felt-wrap", id: "felt" });
const hoverInfo = h("div", { class: "muted", id: "hover-info" }, "Tap or point at a spot to see the amounts it takes.");
const rack = h("div", { class: "rack", id: "rack" });
const rolls = h("div", { class: "rolls", id: "rolls" });
const freq = h("div", { class: "freq", id: "freq" });
const freqNote = h("div", { class: "muted", id: "freq-note" });
const balanceCard = h("section", { class: "card", id: "balance-card" });
const countdownCard = h("section", { class: "card hidden", id: "countdown-card" });
const turnCard = h("section", { class: "card", id: "turn" });
const betsCard = h("section", { class: "card", id: "my-bets-card" });
const feedEl = h("div", { class: "feed", id: "feed" });
const recallEl = h("div", { class: "scroll", id: "recall" }, h("div", { class: "muted" }, "Your last rounds: wagers, results and balances."));
refusalStyle.citations = account.kind === "staff";  // players read citations in the Rules panel
refusalStyle.me = account.username;
const feed = new Feed(feedEl, 120, { citations: account.kind === "staff" });
const resultBanner = h("div", { class: "result-banner hidden", id: "result-banner", "aria-live": "polite" });
const balanceBar = h("div", { class: "balance-bar", id: "balance-bar" });
const spotList = h("div", { class: "spot-list", id: "spot-list" });
const builderEl = h("div", { class: "builder", id: "builder" });
const rulesCard = h("details", { class: "card", id: "rules-panel" });
const moneyCard = h("section", { class: "card", id: "money-card" });
const zeroPrompt = h("div", { class: "notice hidden", id: "zero-prompt", role: "status" });
const moneyDialog = h("dialog", { id: "money-dialog", "aria-labelledby": "money-dialog-title" });
document.body.append(moneyDialog);

document.body.insertBefore(balanceBar, main);
main.append(
  h("section", { class: "stack" },
    resultBanner, zeroPrompt, felt, hoverInfo, rack, builderEl, spotList,
    h("div", { class: "row", style: "align-items:stretch" },
      h("section", { class: "card", style: "flex:1 1 340px" }, h("header", {}, h("h2", {}, "Last rolls"), h("span", { class: "muted" }, "newest first")), rolls),
      h("section", { class: "card", style: "flex:1 1 340px" }, h("header", {}, h("h2", {}, "Number frequencies"), freqNote), freq)),
    h("section", { class: "card" }, h("header", {}, h("h2", {}, "Table activity")), feedEl)),
  h("aside", { class: "stack" },
    balanceCard, moneyCard, countdownCard, turnCard, betsCard,
    h("section", { class: "card", id: "recall-card" },
      h("header", {}, h("h2", {}, "Game recall"), h("button", { class: "btn small", id: "load-recall", onclick: loadRecall }, "Show my last rounds")),
      recallEl),
    rulesCard));

// -- chips and the bet builder -----------------------------------------------------------------
// Chips stack on a spot until the player confirms (or, with one-tap betting the player turned
// on, as each chip is tapped); a stack the wager cannot take exactly snaps DOWN to the amount
// below (the server's ladder from the engine's own amount check), and the stacked line offers
// the amount above as a choice: nothing more is taken than the player stacked unless they say so.
const chipButtons = CHIPS.map((c) => h("button", {
  class: `chip-btn c${c / 100}`, dataset: { cents: c }, title: `${money(c)} chip`,
  onclick: () => { st.chip = c; drawRack(); },
}, `$${c / 100}`));
rack.append(h("span", { class: "muted" }, "Chip"), ...chipButtons,
  h("div", { class: "actions" },
    h("button", { class: "btn primary", id: "confirm", onclick: confirmBuilder, title: "place the chips you stacked" }, "Confirm"),
    h("button", { class: "btn", id: "repeat", onclick: repeat, title: "the wagers you made in the round before" }, "Repeat"),
    h("button", { class: "btn", id: "double", onclick: double, title: "double your wagers that may be pressed" }, "Double"),
    h("button", { class: "btn", id: "undo", onclick: undo, title: "take back your last chip or change" }, "Undo"),
    h("button", { class: "btn danger", id: "clear", onclick: clear, title: "take back the stacked chips, or this round's changes" }, "Clear")),
  h("label", { class: "one-tap", title: "place each chip as you tap it, without Confirm" },
    h("input", { type: "checkbox", id: "one-tap", checked: st.oneTap, onchange: (e) => {
      st.oneTap = e.target.checked;
      localStorage.setItem(ONE_TAP_KEY, st.oneTap ? "on" : "off");
      drawRack();
    } }), " One-tap betting"));

st.builder = new Map();   // key -> {key, code, base, bet, chips: [cents]}
st.order = [];            // builder keys, one per chip added (for Undo)
st.result = null;         // the last roll's outcome for this player
const ONE_TAP_KEY = "dicetable.oneTap";
st.oneTap = localStorage.getItem(ONE_TAP_KEY) === "on";  // off unless the player turns it on

const ctl = () => (st.view && st.view.me ? st.view.me.controls : { open: {}, bets: {} });
const myBets = () => (st.view && st.view.me ? st.view.me.bets : []);
const betById = (id) => myBets().find((b) => b.id === id);

/** The most the wager takes that is not more than ``amount`` (null: under its minimum). */
function snapDown(ladder, amount) {
  if (!ladder || amount < ladder.first) return null;
  const capped = Math.min(ladder.last, amount);
  return Math.max(ladder.first, Math.floor(capped / ladder.step) * ladder.step);
}

/** The least the wager takes that is not less than ``amount`` (the player's choice). */
function snapUp(ladder, amount) {
  if (!ladder) return null;
  if (amount <= ladder.first) return ladder.first;
  return Math.min(ladder.last, Math.ceil(amount / ladder.step) * ladder.step);
}

/** The ladder and the current amount a builder entry adds to. */
function entryTarget(entry) {
  const c = ctl();
  if (entry.bet) {
    const bet = betById(entry.bet);
    const info = c.bets[entry.bet];
    if (!bet || !info || info.press_to === null) return null;
    return { ladder: info.ladder, from: bet.amount, name: bet.label || bet.name };
  }
  if (entry.base) {
    const info = c.bets[entry.base];
    const base = betById(entry.base);
    if (!info || !info.odds || !base) return null;
    return { ladder: info.odds, from: 0, name: `Odds on ${base.label || base.name}` };
  }
  const ladder = c.open[entry.code];
  return ladder ? { ladder, from: 0, name: nameOf(entry.code) } : null;
}

function entryAmount(entry) {
  const t = entryTarget(entry);
  if (!t) return null;
  const stacked = entry.chips.reduce((a, b) => a + b, 0);
  let amount = (entry.up ? snapUp : snapDown)(t.ladder, t.from + stacked);
  if (amount !== null && amount <= t.from) amount = null;  // too little to change it, or at its most
  return amount;
}

/** The amount above the stack, when the stack snapped down (offered, never taken unasked). */
function entryAbove(entry) {
  const t = entryTarget(entry);
  if (!t || entry.up) return null;
  const total = t.from + entry.chips.reduce((a, b) => a + b, 0);
  const above = snapUp(t.ladder, total);
  return above !== null && above > total && above > t.from ? above : null;
}

function builderEntries() {
  return [...st.builder.values()].map((e) => ({ ...e, amount: entryAmount(e), above: entryAbove(e), name: (entryTarget(e) || {}).name || nameOf(e.code) }));
}

/** Entries whose chips make an amount the wager takes now. */
const readyEntries = () => builderEntries().filter((e) => e.amount !== null);

/** The builder entry a chip on ``code`` goes to: the bet standing there, or a new one. */
function keyForSpot(code) {
  const existing = spotBet(code);
  if (existing) return { key: `bet:${existing.id}`, code, bet: existing.id };
  return { key: `new:${code}`, code };
}

function keyForOdds(baseId) {
  const odds = myBets().find((b) => b.base === baseId);
  if (odds) return { key: `bet:${odds.id}`, code: "odds", bet: odds.id };
  return { key: `odds:${baseId}`, code: "odds", base: baseId };
}

function addChip(target, cents = st.chip) {
  const entry = st.builder.get(target.key) || { ...target, chips: [] };
  if (!entryTarget(entry)) {
    hint(`${target.bet ? "That wager cannot be raised" : target.base ? "Odds are not open on that bet" : `${nameOf(target.code)} is closed`} now.`);
    return false;
  }
  entry.chips.push(cents);
  const t = entryTarget(entry);
  if (entryAmount(entry) === null && t.from >= t.ladder.last) {
    entry.chips.pop();
    hint("That wager is already at its maximum.");
    return false;
  }
  st.builder.set(target.key, entry);
  st.order.push(target.key);
  if (needed() > st.view.me.balance) {
    undoChip();
    hint(`Not enough chips: your balance is ${money(st.view.me.balance)}.`);
    return false;
  }
  schedule();
  render();
  return true;
}

/** What the stacked chips would take from the balance. */
function needed() {
  return readyEntries().reduce((sum, e) => sum + e.amount - (entryTarget(e) || { from: 0 }).from, 0);
}

/** One-tap betting (the player's own setting) places each chip as it is tapped. */
function schedule() {
  if (st.oneTap) confirmBuilder();
}

function undoChip() {
  const key = st.order.pop();
  const entry = key && st.builder.get(key);
  if (!entry) return;
  entry.chips.pop();
  if (!entry.chips.length) st.builder.delete(key);
}

let committing = false;
async function confirmBuilder() {
  if (committing || !st.builder.size) return;
  committing = true;
  // A stack under its wager's minimum stays stacked: the player adds to it or clears it.
  const entries = [...st.builder.values()].filter((e) => entryAmount(e) !== null);
  for (const entry of entries) st.builder.delete(entry.key);
  st.order = st.order.filter((key) => st.builder.has(key));
  try {
    for (const entry of entries) {
      const amount = entryAmount(entry);  // against the freshest view
      if (amount === null) continue;
      if (entry.bet) {
        const bet = betById(entry.bet);
        await change(bet, amount, bet.base ? null : entry.code, amount - bet.amount);
      } else if (entry.base) {
        await placeNew({ wager: "odds", amount, base: entry.base }, null);
      } else {
        await placeNew({ wager: entry.code, amount }, entry.code);
      }
    }
  } finally {
    committing = false;
    render();
  }
}

function drawRack() {
  for (const b of chipButtons) b.classList.toggle("selected", Number(b.dataset.cents) === st.chip);
  const v = st.view;
  const building = readyEntries().length > 0;
  const lastUndo = st.undo[st.undo.length - 1];
  const undoable = lastUndo && ctl().bets[lastUndo.bet] && ctl().bets[lastUndo.bet].remove;
  document.getElementById("confirm").disabled = !building;
  document.getElementById("undo").disabled = !(building || undoable);
  document.getElementById("clear").disabled = !(building || undoable);
  document.getElementById("repeat").disabled = !repeatable().length;
  document.getElementById("double").disabled = !doublable().length;
  drawBuilder();
  if (v && v.me) drawBar(v.me);
}

function drawBuilder() {
  const entries = builderEntries();
  const line = (e) => {
    const chips = e.chips.reduce((a, b) => a + b, 0);
    const from = (entryTarget(e) || { from: 0 }).from;
    const t = entryTarget(e);
    const words = e.amount === null
      ? `${e.name}: chips ${money(chips)}, not enough for the next amount it takes${from ? "" : ` (${money(t ? t.ladder.first : 0)})`} — add a chip, or clear`
      : `${e.name} ${money(e.amount)}${from + chips !== e.amount ? ` (chips ${money(chips)}: ${money(from + chips - e.amount)} stays with you)` : ""}`;
    return h("span", { class: `tag gold stack-line${e.amount === null ? " short" : ""}`, dataset: { key: e.key, amount: e.amount ?? "" } }, words,
      e.above ? h("button", { class: "btn small make-above", dataset: { key: e.key }, onclick: () => { const x = st.builder.get(e.key); if (x) { x.up = true; render(); } } }, `Make it ${money(e.above)}`) : null);
  };
  replace(builderEl, entries.length
    ? [h("b", {}, "Stacked: "), entries.map(line), h("span", { class: "muted" }, st.oneTap ? " · one-tap betting is on" : " · press Confirm to place")]
    : h("span", { class: "muted" }, st.oneTap ? "One-tap betting is on: each chip you tap is placed at once." : "Pick a chip and tap a lit spot; chips stack until you confirm."));
}

// -- the layout ---------------------------------------------------------------------------------
let layout = null;

function buildLayout(view) {
  layout = layoutFor(view.variant);
  felt.replaceChildren(layout.svg);
  for (const [code, spot] of layout.spots) {
    spot.g.addEventListener("click", () => { showLimits(code); onSpot(code); });
    spot.g.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); onSpot(code); } });
    spot.g.addEventListener("mouseenter", () => showLimits(code));
    spot.g.addEventListener("focus", () => showLimits(code));
  }
}

function showLimits(code) {
  const v = st.view;
  if (!v) return;
  if (code === "odds") {
    const base = lineBase();
    const info = base && ctl().bets[base];
    const odds = info && info.odds;
    replace(hoverInfo, h("b", {}, "Odds"), paysOf("odds"), odds ? ` · ${money(odds.first)} to ${money(odds.last)} in steps of ${money(odds.step)}` : " · behind a Pass or Don't Pass bet with its point", " · ",
      base ? h("span", { style: "color:var(--ok)" }, "open") : h("span", { style: "color:var(--warn)" }, "closed now"));
    return;
  }
  const lad = v.ladders[code];
  if (!lad) return;
  const open = Boolean(ctl().open[code]) || Boolean(spotBet(code) && (ctl().bets[spotBet(code).id] || {}).press_to);
  replace(hoverInfo, h("b", { id: "spot-label" }, lad.label), paysOf(code),
    lad.ladder ? [" · minimum ", h("b", { class: "num", id: "hover-min" }, money(lad.ladder.first)), " · maximum ", h("b", { class: "num", id: "hover-max" }, money(lad.ladder.last))] : "",
    " · ", open ? h("span", { style: "color:var(--ok)" }, "open") : h("span", { style: "color:var(--warn)" }, "closed now"));
}

/** " · pays 9 to 5" from the pack's paytable (the view's), as a printed layout says it. */
function paysOf(code) {
  const entry = st.view && st.view.paytable && st.view.paytable[code];
  if (!entry) return null;
  return [" · ", h("span", { class: "pays", id: "hover-pays", dataset: { code } }, `pays ${entry.pays}`), entry.note ? h("span", { class: "muted" }, ` (${entry.note})`) : null];
}

/** The line bet (pass or don't pass) the player may take or lay odds on, or raise them. */
function lineBase() {
  const line = myBets().find((b) => (b.wager === "pass" || b.wager === "dontpass") && !b.base && oddsOpen(b.id));
  return line ? line.id : null;
}

/** May odds be made behind this bet now, or the odds on it raised? (The engine's answer.) */
function oddsOpen(id) {
  const c = ctl();
  if (c.bets[id] && c.bets[id].odds) return true;
  const odds = myBets().find((o) => o.base === id);
  return Boolean(odds && c.bets[odds.id] && c.bets[odds.id].press_to !== null);
}

/** The bet standing on a spot that a chip would add to (not a come bet already moved). */
function spotBet(code) {
  return myBets().find((b) => b.wager === code && !b.base && !((code === "come" || code === "dontcome") && b.point));
}

function onSpot(code) {
  const v = st.view;
  if (!v || !v.me) return;
  if (code === "odds") {
    const base = lineBase();
    if (!base) { hint("Odds: you need a Pass or Don't Pass bet with its point, and betting open."); return; }
    addChip(keyForOdds(base));
    return;
  }
  addChip(keyForSpot(code));
}

/** A chip on the felt: a come bet on its number takes odds; any other adds to the bet. */
function onChip(bet) {
  if (bet.base) { addChip({ key: `bet:${bet.id}`, code: "odds", bet: bet.id }); return; }
  if (bet.point && ["come", "dontcome", "pass", "dontpass"].includes(bet.wager) || bet.wager.startsWith("put")) {
    addChip(keyForOdds(bet.id));
    return;
  }
  addChip({ key: `bet:${bet.id}`, code: bet.wager, bet: bet.id });
}

async function placeNew(body, code) {
  const r = await act(() => post(tablePath(tableId, "/bets"), body));
  if (!r) return null;
  const placed = r.events.find((e) => e.type === "BetPlaced" && e.player === account.username);
  if (placed) {
    st.undo.push({ kind: "place", bet: placed.bet });
    if (code) st.thisRound.set(code, (st.thisRound.get(code) || 0) + body.amount);
    if (code) flash(code);
  }
  return r;
}

async function change(bet, amount, code, added) {
  const r = await act(() => patch(tablePath(tableId, `/bets/${encodeURIComponent(bet.id)}`), { amount }));
  if (!r) return null;
  st.undo.push({ kind: "change", bet: bet.id, from: bet.amount });
  if (code) st.thisRound.set(code, (st.thisRound.get(code) || 0) + added);
  if (code) flash(code);
  return r;
}

async function undo() {
  if (st.builder.size) { undoChip(); render(); return; }
  const step = st.undo.pop();
  if (!step) return;
  if (step.kind === "place") await act(() => del(tablePath(tableId, `/bets/${encodeURIComponent(step.bet)}`)));
  else await act(() => patch(tablePath(tableId, `/bets/${encodeURIComponent(step.bet)}`), { amount: step.from }));
  drawRack();
}

async function clear() {
  if (st.builder.size) {
    st.builder.clear();
    st.order = [];
    render();
    return;
  }
  while (st.undo.length) {
    const step = st.undo[st.undo.length - 1];
    if (!(ctl().bets[step.bet] && ctl().bets[step.bet].remove)) break;
    await undo();
  }
  st.thisRound.clear();
  drawRack();
}

/** Last round's wagers that are open now (the engine's answer for each). */
function repeatable() {
  return [...st.lastRound].filter(([code]) => ctl().open[code] || (spotBet(code) && (ctl().bets[spotBet(code).id] || {}).press_to));
}

function repeat() {
  for (const [code, cents] of repeatable()) {
    const target = keyForSpot(code);
    if (!st.builder.has(target.key)) addChip(target, cents);
  }
}

/** Bets the engine would let the player raise now. */
function doublable() {
  return myBets().filter((b) => ctl().bets[b.id] && ctl().bets[b.id].press_to !== null);
}

function double() {
  for (const bet of doublable()) addChip({ key: `bet:${bet.id}`, code: bet.base ? "odds" : bet.wager, bet: bet.id }, bet.amount);
}

function flash(code) {
  const spot = layout && layout.spots.get(code);
  if (!spot) return;
  spot.g.classList.add("flash");
  setTimeout(() => spot.g.classList.remove("flash"), 250);
}

function hint(text) {
  replace(hoverInfo, h("span", { style: "color:var(--warn)", id: "hint" }, text));
}

// -- talking to the server -------------------------------------------------------------------
async function act(call) {
  try {
    const r = await call();
    if (r && r.events) { feed.add(r.events, r.view || st.view); noteResult(r.events, r.view || st.view); }
    if (r && r.view) setView(r.view);
    return r;
  } catch (e) {
    showRefusal(e);
    if (e instanceof Refusal && e.status === 401) location.href = "/";
    return null;
  }
}

function setView(view) {
  if (st.view && view.seq < st.view.seq) return;  // an older picture than the one shown
  const first = !st.view;
  st.view = view;
  if (first || !layout || !layout.fits(view.variant)) buildLayout(view);
  const last = view.history.length ? view.history[view.history.length - 1].seq : null;
  if (!first && last !== st.lastRollSeq) {  // a roll: this round's wagers become Repeat's
    if (st.thisRound.size) st.lastRound = new Map(st.thisRound);
    st.thisRound = new Map();
    st.undo = [];
    st.builder.clear();
    st.order = [];
  }
  st.lastRollSeq = last;
  render();
}

/** The result banner: what this roll did to the player's wagers, and the net. */
function noteResult(events, view) {
  const me = account.username;
  for (const e of events || []) {
    if (e.type === "DiceRolled") st.result = { seq: e.seq, roll: e.roll, lines: [], net: 0, done: false, noRoll: false, hadBets: myBets().length > 0, point: null };
    if (!st.result || st.result.done) continue;
    const name = (i) => wagerName(view, i.wager);
    if (e.type === "LosersCollected") for (const i of e.items.filter((x) => x.player === me)) { st.result.lines.push(`${name(i)} ${money(i.amount)} lost`); st.result.net -= i.amount; }
    if (e.type === "WinnersPaid") for (const i of e.items.filter((x) => x.player === me)) {
      const net = i.win - (i.commission || 0);
      if (i.win > 0) { st.result.lines.push(`${name(i)} wins ${money(net)}`); st.result.net += net; }
      else st.result.lines.push(`${name(i)} returned ${money(i.stake_returned)}`);
    }
    if (e.type === "WagersReturned") for (const i of e.items.filter((x) => x.player === me)) st.result.lines.push(`${name(i)} returned ${money(i.amount)}`);
    if (e.type === "PuckMoved") {
      // The point is the table's news; a come bet travelling to its number is the player's.
      st.result.point = e.seven_out ? "Seven out" : e.point ? `The point is ${e.point}` : null;
      for (const m of e.moves || []) {
        const bet = myBets().find((b) => b.id === m.bet);
        const number = /(\d+)$/.exec(m.state_name || "");
        if (bet && number && !["pass", "dontpass"].includes(bet.wager)) st.result.lines.push(`Your ${bet.name} bet goes to the ${number[1]}`);
      }
    }
    if (e.type === "NoRollCalled") st.result.noRoll = true;
    if (view.variant.round_ends.includes(e.type)) st.result.done = true;
  }
}

function drawResult() {
  const r = st.result;
  const el = document.getElementById("result-banner");
  if (!r || !r.done) { el.classList.add("hidden"); return; }
  el.classList.remove("hidden");
  const net = r.net > 0 ? `+${money(r.net)}` : r.net < 0 ? `-${money(-r.net)}` : "$0.00";
  const point = r.point ? ` · ${r.point}` : "";
  replace(el, r.roll ? h("b", {}, `${faces(r.roll).reduce((a, b) => a + b, 0)}${r.noRoll ? " · no roll" : ""}`) : "", point,
    r.lines.length ? ` · ${r.lines.join(" · ")} · net ${net}` : r.noRoll ? " · No roll: nothing was settled"
      : r.hadBets ? " · Your wagers stay up: none was decided" : " · You had no wagers on this roll");
  if (matchMedia("(max-width: 700px)").matches) el.scrollIntoView({ block: "nearest" });  // in view on a phone
  el.dataset.net = r.net;
  el.className = `result-banner ${r.net > 0 ? "up" : r.net < 0 ? "down" : ""}`;
}

// -- the player's own money: buy-in, cash-out, colour-up, leaving ------------------------------
async function loadMoney() {
  try {
    if (account.kind !== "player") return;
    try {
      st.money = await get(tablePath(tableId, "/money"));
    } catch (e) {
      return;
    }
    if (st.view) { drawMoney(); drawBets(st.view, st.view.me); }
  } finally {
    st.moneyLoads += 1;  // the browser tests wait for the push's first reading before acting
  }
}

async function moneyAct(call) {
  try {
    st.money = await call();
  } catch (e) {
    showRefusal(e);
    return null;
  }
  setView(await get(tablePath(tableId)));
  return st.money;
}

/** The house's rule values the player's money follows (from the money view). */
function houseRule(id) {
  const r = ((st.money && st.money.rules) || []).find((x) => x.id === id);
  return r ? r.value : null;
}

/** One unit to press by: the house rule press.unit over the wager's own amounts. */
function pressUnit(ladder) {
  const unit = houseRule("press.unit");
  if (!ladder) return st.chip;
  if (unit === "step") return ladder.step;
  if (typeof unit === "number") return unit;
  return ladder.first;  // "wager-minimum", the default
}

function drawMoney() {
  const m = st.money;
  if (!m || account.kind !== "player") { moneyCard.classList.add("hidden"); zeroPrompt.classList.add("hidden"); return; }
  moneyCard.classList.remove("hidden");
  const me = st.view && st.view.me;
  const balance = me ? me.balance : m.balance;
  const onLayout = me ? me.bets.reduce((sum, b) => sum + b.amount, 0) : m.on_layout;
  const seated = m.seated;
  const parts = [h("header", {}, h("h2", {}, "Your money"), h("span", { class: "muted" }, m.self_service ? "electronic table" : "live table"))];
  if (m.self_service) {
    parts.push(h("dl", { class: "kv" }, h("dt", {}, "Wallet"), h("dd", { class: "num", id: "wallet", dataset: { cents: m.wallet } }, money(m.wallet)),
      h("dt", {}, "At the table"), h("dd", { class: "num", id: "table-balance" }, money(balance))),
      h("div", { class: "row" },
        h("button", { class: "btn primary", id: "open-buy-in", disabled: !seated, onclick: () => openMoneyDialog("buy-in") }, "Buy in"),
        h("button", { class: "btn", id: "open-cash-out", disabled: !balance, onclick: () => openMoneyDialog("cash-out") }, "Cash out"),
        seated ? h("button", { class: "btn danger", id: "leave-table", onclick: leaveElectronic }, "Leave the table") : null));
  } else {
    const pending = m.requests || [];
    const asked = (what) => pending.find((r) => r.what === what);
    parts.push(h("p", { class: "muted" }, "The dealer sells you chips for cash and you take chips to the cage to cash them (58 Pa. Code 603a.10)."),
      seated ? h("div", { class: "row" },
        asked("colour-up") ? null : h("button", { class: "btn", id: "ask-colour-up", onclick: () => ask("colour-up"), title: "the dealer swaps your chips for fewer, larger ones of equal value" }, "Colour up"),
        asked("leave") ? null : h("button", { class: "btn", id: "ask-leave", onclick: () => ask("leave") }, "I'm leaving")) : null,
      pending.length ? h("ul", { class: "request-list", id: "my-requests" }, pending.map((r) => h("li", { dataset: { what: r.what } },
        r.what === "leave" ? "You told the dealer you are leaving: waiting for the dealer to cash you out." : "You asked to colour up: waiting for the dealer.",
        " ", h("button", { class: "btn small", onclick: () => moneyAct(() => del(tablePath(tableId, `/money/requests/${r.id}`))) }, "Withdraw")))) : null);
  }
  replace(moneyCard, parts);
  drawZeroPrompt(m, balance, onLayout, seated);
}

function drawZeroPrompt(m, balance, onLayout, seated) {
  const out = m.last_cash_out;
  const byDealer = out && out.role !== "system" && out.by !== account.username;
  if (balance > 0 || onLayout > 0 || (!seated && !byDealer)) { zeroPrompt.classList.add("hidden"); return; }
  const lines = [];
  if (byDealer) lines.push(h("b", {}, `The dealer cashed you out: ${money(out.amount)} in chips.`), " Take them to the cage to redeem them.");
  else lines.push(h("b", {}, "Your balance is $0."));
  if (!seated) lines.push(" You are no longer seated at this table.");
  const buttons = [];
  if (m.self_service) {
    if (seated) buttons.push(h("button", { class: "btn primary", id: "zero-buy-in", onclick: () => openMoneyDialog("buy-in") }, `Buy in (wallet ${money(m.wallet)})`));
  } else if (seated) lines.push(" Hand cash to the dealer to buy in.");
  if (seated) buttons.push(h("button", { class: "btn", id: "zero-leave", onclick: () => (m.self_service ? leaveElectronic() : act(() => post(tablePath(tableId, "/leave"))).then(loadMoney)) }, "Leave the table"));
  else buttons.push(h("button", { class: "btn primary", id: "zero-join", onclick: () => act(() => post(tablePath(tableId, "/join"), {})).then(loadMoney) }, "Take a seat"));
  zeroPrompt.classList.remove("hidden");
  replace(zeroPrompt, h("div", {}, lines), h("div", { class: "row" }, buttons));
}

function openMoneyDialog(kind) {
  const m = st.money;
  const buy = kind === "buy-in";
  const input = h("input", { type: "text", id: "money-amount", inputmode: "decimal", placeholder: "100.00", autocomplete: "off" });
  const note = h("div", { class: "muted", id: "money-note" }, buy
    ? `From your wallet (${money(m.wallet)}) to the table. Smallest ${money(houseRule("wallet.buy_in.minimum") || 0)}, largest ${money(houseRule("wallet.buy_in.maximum") || 0)}.`
    : `From the table (${money(st.view.me ? st.view.me.balance : m.balance)}) back to your wallet.`);
  const submit = async (amount) => {
    if (!amount) { showRefusal({ message: "Type an amount such as 100 or 25.50." }); return; }
    const done = await moneyAct(() => post(tablePath(tableId, `/money/${kind}`), { amount }));
    if (done) moneyDialog.close();
  };
  replace(moneyDialog, h("form", { method: "dialog", onsubmit: (e) => { e.preventDefault(); submit(parseMoney(input.value)); } },
    h("h2", { id: "money-dialog-title" }, buy ? "Buy in" : "Cash out"), note,
    h("label", { for: "money-amount" }, "Amount in dollars"), input,
    h("div", { class: "row" }, [50_00, 100_00, 500_00].map((c) => h("button", { type: "button", class: "btn small", onclick: () => { input.value = (c / 100).toFixed(2); } }, money(c)))),
    h("div", { class: "row" },
      h("button", { type: "submit", class: "btn primary", id: "money-submit" }, buy ? "Buy in" : "Cash out"),
      buy ? null : h("button", { type: "button", class: "btn", id: "money-all", onclick: async () => { if (await moneyAct(() => post(tablePath(tableId, "/money/cash-out"), {}))) moneyDialog.close(); } }, "Cash out all"),
      h("button", { type: "button", class: "btn", id: "money-cancel", onclick: () => moneyDialog.close() }, "Cancel"))));
  moneyDialog.showModal();
  input.focus();
}

async function leaveElectronic() {
  await moneyAct(() => post(tablePath(tableId, "/money/leave")));
}

async function ask(what) {
  await moneyAct(() => post(tablePath(tableId, "/money/requests"), { what }));
}

// -- rendering -----------------------------------------------------------------------------------
function render() {
  const v = st.view;
  const me = v.me;
  document.title = `${v.name} — dicetable`;
  replace(document.getElementById("page-title"), h("b", {}, v.name), h("span", { class: "muted" }, ` · ${v.table}`));
  replace(document.getElementById("status-pills"), statusPills(v, st.connection));
  layout.draw(v, me ? me.bets : [], {
    open: me ? Object.keys(me.controls.open).concat(me.bets.filter((b) => !b.base && spotBet(b.wager) === b && me.controls.bets[b.id].press_to !== null).map((b) => b.wager)) : [],
    ladders: v.ladders, oddsOpen: Boolean(lineBase()), builder: builderEntries().map((e) => ({ ...e, amount: e.amount ?? e.chips.reduce((a, b) => a + b, 0) })),
    onChip: me ? onChip : null,
  });
  drawResult();
  drawSpotList(v, me);
  drawRules(v);
  drawBalance(v, me);
  drawMoney();
  drawCountdown();
  drawTurn(v, me);
  drawBets(v, me);
  replace(rolls, v.history.length ? rollStrip(v.history.slice(-30), v.point) : h("span", { class: "muted" }, "No rolls yet."));
  replace(freq, frequencyChart(v.frequencies));
  replace(freqNote, v.frequencies.rolls ? h("span", { class: "muted" }, `${v.frequencies.rolls} rolls · `, h("span", { style: "color:#ff8a80" }, "hot"), " / ", h("span", { style: "color:var(--blue)" }, "cold")) : "");
  drawRack();
}

function drawBalance(v, me) {
  if (!me && account.kind === "staff") {
    replace(balanceCard, h("h2", {}, "Staff"), h("p", { class: "muted" }, "This is the players' view of the table."),
      h("a", { class: "btn primary", href: `/dealer?table=${encodeURIComponent(tableId)}` }, "Open the console"));
    return;
  }
  if (!me) {
    replace(balanceCard, h("h2", {}, "Not seated"), h("p", { class: "muted" }, "Take a position at this table to play."),
      h("button", { class: "btn primary", onclick: () => act(() => post(tablePath(tableId, "/join"), {})) }, "Take a seat"));
    return;
  }
  const onLayout = me.bets.reduce((sum, b) => sum + b.amount, 0);
  replace(balanceCard,
    h("header", {}, h("h2", {}, "Balance"), h("span", { class: "muted" }, `${account.display} · position ${me.seat ?? "–"}`)),
    h("div", { class: "balance", id: "balance", dataset: { cents: me.balance } }, money(me.balance)),
    h("dl", { class: "kv" },
      h("dt", {}, "On the layout"), h("dd", { class: "num", id: "on-layout" }, money(onLayout)),
      !v.variant.has_shooter
        ? [h("dt", {}, "Round"), h("dd", {}, v.round)]
        // The round is shown only once it has moved on (at Craps a hand is one round).
        : [h("dt", {}, "Hand"), h("dd", { id: "hand" }, v.round > 1 ? `${v.hand} · round ${v.round}` : `${v.hand}`), h("dt", {}, "Shooter"), h("dd", { id: "shooter" }, v.shooter || "—")],
      h("dt", {}, "Last roll"), h("dd", {}, v.last_roll ? lastRoll(v) : "—")));
}

function lastRoll(v) {
  const [a, b] = faces(v.last_roll);
  return h("span", { class: "row", style: "gap:4px" }, dieIcon(a, 18), dieIcon(b, 18), ` ${a + b}${v.last_roll_valid === false ? " (no roll)" : ""}`);
}

let countdownTimer = null;
function drawCountdown() {
  const v = st.view;
  const electronic = v.mode === "electronic";
  countdownCard.classList.toggle("hidden", !electronic);
  if (!electronic) return;
  if (!countdownTimer) countdownTimer = setInterval(drawCountdown, 250);
  const at = v.bets_close_at ? Date.parse(v.bets_close_at) : null;
  const left = at ? Math.ceil((at - Date.now()) / 1000) : null;
  const cls = left === null || left <= 0 ? "closed" : left <= 5 ? "closing" : "";
  const text = left === null ? "Waiting for the next round" : left > 0 ? `${left}s` : "No more bets — rolling";
  // The ring empties as betting time runs out (the longest wait seen is the whole ring).
  if (at !== st.ringAt) { st.ringAt = at; st.ringTotal = left; }
  const share = left && left > 0 && st.ringTotal ? Math.min(1, left / st.ringTotal) : 0;
  const existing = countdownCard.querySelector(".countdown");
  if (existing && existing.dataset.text === text) return;
  const r = 26;
  const ring = s("svg", { class: "countdown-ring", viewBox: "0 0 64 64", width: 64, height: 64, "aria-hidden": "true" },
    s("circle", { cx: 32, cy: 32, r, class: "track" }),
    s("circle", { cx: 32, cy: 32, r, class: "left", "stroke-dasharray": `${(2 * Math.PI * r).toFixed(1)}`, "stroke-dashoffset": `${(2 * Math.PI * r * (1 - share)).toFixed(1)}`, transform: "rotate(-90 32 32)" }));
  replace(countdownCard, h("header", {}, h("h2", {}, "Bets close in"), h("span", { class: "muted" }, "electronic table · CSPRNG")),
    h("div", { class: "row countdown-row" }, ring, h("div", { class: `countdown ${cls}`, id: "countdown", dataset: { text } }, text)));
}

/** The last roll, large: two dice that tumble and land on the faces the table recorded. */
function bigDice(v) {
  const [a, b] = faces(v.last_roll);
  const key = `${v.last_roll}@${(v.history || []).length}`;
  if (v.last_roll && st.shownRoll !== undefined && st.shownRoll !== key) st.rollingUntil = Date.now() + 900;
  st.shownRoll = key;
  const animate = Date.now() < (st.rollingUntil || 0);
  if (!v.last_roll) return h("div", { class: "big-dice", id: "big-dice" }, h("span", { class: "muted" }, "No roll yet"));
  return h("div", { class: `big-dice${animate ? " rolling" : ""}`, id: "big-dice", dataset: { roll: v.last_roll }, role: "img", "aria-label": `last roll ${a} and ${b}, ${a + b}` },
    dieIcon(a, 64), dieIcon(b, 64), h("b", { class: "big-total" }, `${a + b}${v.last_roll_valid === false ? " · no roll" : ""}`));
}

function drawTurn(v, me) {
  const name = account.username;
  const parts = [];
  if (v.mode === "electronic") {
    parts.push(h("h2", {}, "The dice"), bigDice(v), h("p", { class: "muted" }, "This table rolls its own dice (a cryptographic random number generator) when betting closes; the dice land on the faces it recorded."));
  } else if (v.variant.has_shaker) {
    const sh = v.shaker;
    const min = v.rules.min_shakes || 3;
    parts.push(h("header", {}, h("h2", {}, "The shaker"), h("span", { class: "tag" }, sh.state)));
    if (sh.holder === name && sh.state === "offered") {
      if (sh.lid_off) {
        // 585.3(e): a lid taken off is put back, and the shaker is shaken again from zero
        parts.push(h("div", { class: "notice" }, "The lid is off. Put it back on, then shake the covered shaker again."),
          h("div", { class: "row" },
            h("button", { class: "btn primary", id: "re-cover-shaker", onclick: () => act(() => post(tablePath(tableId, "/re-cover-shaker"))) }, "Put the lid back on")));
      } else parts.push(h("div", { class: "notice" }, "The dealer has offered you the covered shaker. Shake it at least ", h("b", {}, min), " times, then return it."),
        h("div", { class: "shakes", id: "shakes" }, `${sh.shakes} / ${min} shakes`),
        h("div", { class: "row" },
          h("button", { class: "btn", id: "shake-once", onclick: () => act(() => post(tablePath(tableId, "/player-shake"), { times: 1 })) }, "Shake"),
          h("button", { class: "btn", id: "shake-three", onclick: () => act(() => post(tablePath(tableId, "/player-shake"), { times: 3 })) }, "Shake ×3"),
          h("button", { class: "btn primary", id: "return-shaker", disabled: sh.shakes < min, onclick: () => act(() => post(tablePath(tableId, "/return-shaker"))) }, "Return the shaker"),
          h("button", { class: "btn danger small", id: "remove-lid", title: "the lid came off: the shaker is covered and shaken again", onclick: () => act(() => post(tablePath(tableId, "/remove-lid"))) }, "The lid came off")));
    } else {
      const withHolder = sh.holder && sh.state === "offered";
      parts.push(h("p", { id: "shaker-where" }, withHolder ? `The shaker is with ${sh.holder === name ? "you" : sh.holder}.`
        : sh.state === "returned" ? `${sh.holder === name ? "You" : sh.holder} returned the shaker; the dealer uncovers it.` : "The dealer holds the shaker.",
        sh.next && sh.next !== sh.holder ? ` Next: ${sh.next === name ? "you" : sh.next}.` : ""));
    }
  } else {
    parts.push(h("header", {}, h("h2", {}, "The dice"), v.shooter ? h("span", { class: "tag gold" }, `shooter: ${v.shooter}`) : null));
    if (v.offer_to === name) {
      const need = 2;
      st.chosenDice = st.chosenDice.filter((d) => v.offered.includes(d));
      parts.push(h("div", { class: "notice" }, "The stickperson offers you the dice. Choose two to shoot with."),
        h("div", { class: "dice-pick", id: "offered-dice" }, v.offered.map((serial) => h("button", {
          class: st.chosenDice.includes(serial) ? "chosen" : "", dataset: { serial },
          onclick: () => {
            st.chosenDice = st.chosenDice.includes(serial) ? st.chosenDice.filter((d) => d !== serial) : [...st.chosenDice, serial].slice(-need);
            render();
          },
        }, dieIcon(6, 22), h("div", {}, serial)))),
        h("div", { class: "row" },
          h("button", { class: "btn primary", id: "take-dice", disabled: st.chosenDice.length !== need, onclick: takeDice }, "Take these dice"),
          h("button", { class: "btn", id: "decline-dice", onclick: () => act(() => post(tablePath(tableId, "/decline-dice"))) }, "Decline")));
    } else if (v.shooter === name) {
      parts.push(h("div", { class: "notice" }, "You are the shooter."),
        v.rules.may_relinquish ? h("button", { class: "btn", id: "relinquish", onclick: () => act(() => post(tablePath(tableId, "/relinquish-dice"))) }, "Give up the dice") : null);
    } else if (v.shooter) {
      parts.push(h("p", {}, `${v.shooter} is shooting.`));
    } else {
      parts.push(h("p", {}, v.offer_to ? `The dice are offered to ${v.offer_to}.` : `Waiting for the stickperson to offer the dice${v.next_shooter ? ` (next: ${v.next_shooter === name ? "you" : v.next_shooter})` : ""}.`));
    }
  }
  replace(turnCard, parts);
}

async function takeDice() {
  const r = await act(() => post(tablePath(tableId, "/select-dice"), { serials: st.chosenDice }));
  if (r) st.chosenDice = [];
}

function drawBets(v, me) {
  const c = me ? me.controls : { bets: {} };
  const rows = (me ? me.bets : []).map((b) => {
    const info = c.bets[b.id] || {};
    return h("div", { class: `bet-row${b.working_now === false ? " is-off" : ""}`, dataset: { bet: b.id, wager: b.wager, point: b.point ?? "" } },
      h("div", {}, h("div", { class: "name" }, b.label || b.name),
        h("div", { class: "state" }, b.working_now === false ? h("span", { class: "tag off-tag" }, "OFF") : "working",
          b.commission ? ` · commission ${money(b.commission)}` : "")),
      h("div", { class: "amt" }, money(b.amount)),
      h("div", { class: "row", style: "gap:4px" },
        info.odds ? h("button", { class: "btn small", dataset: { action: "odds" }, title: `odds ${money(info.odds.first)} to ${money(info.odds.last)}`, onclick: () => addChip(keyForOdds(b.id)) }, "+ odds") : null,
        info.press_to !== null && info.press_to !== undefined ? [
          // "Press it" doubles the bet (snapped down to what it takes); "by a unit" adds one
          // unit, as the house rule press.unit defines it.
          h("button", { class: "btn small", dataset: { action: "press" }, title: "press: double this bet", onclick: () => addChip({ key: `bet:${b.id}`, code: b.base ? "odds" : b.wager, bet: b.id }, b.amount) }, "Press"),
          h("button", { class: "btn small", dataset: { action: "press-unit", unit: pressUnit(info.ladder) }, title: "house rule press.unit (industry-default)", onclick: () => addChip({ key: `bet:${b.id}`, code: b.base ? "odds" : b.wager, bet: b.id }, pressUnit(info.ladder)) }, `by a unit (${money(pressUnit(info.ladder))})`)] : null,
        info.toggle ? h("button", { class: "btn small", dataset: { action: "toggle" }, title: b.working_now ? "call this wager off for the next roll" : "call this wager on", onclick: () => act(() => patch(tablePath(tableId, `/bets/${encodeURIComponent(b.id)}`), { working: !b.working_now })) }, b.working_now ? "Turn off" : "Turn on") : null,
        info.remove ? h("button", { class: "btn small", dataset: { action: "remove" }, title: "take this wager down", onclick: () => act(() => del(tablePath(tableId, `/bets/${encodeURIComponent(b.id)}`))) }, "Take down") : null));
  });
  replace(betsCard, h("header", {}, h("h2", {}, "My wagers"), h("span", { class: "muted" }, `${rows.length}`)),
    rows.length ? h("div", { class: "bets-list", id: "my-bets" }, rows) : h("div", { class: "muted", id: "my-bets" }, "No wagers on the layout. Pick a chip and tap a lit spot."));
}

/** The balance, what is on the layout and what is stacked: in view on a phone at all times. */
function drawBar(me) {
  const onLayout = me.bets.reduce((sum, b) => sum + b.amount, 0);
  const stacked = st.builder.size ? needed() : 0;
  replace(balanceBar, h("span", {}, "Balance ", h("b", { id: "bar-balance", dataset: { cents: me.balance } }, money(me.balance))),
    h("span", { class: "muted" }, `on layout ${money(onLayout)}`),
    stacked ? h("span", { class: "tag gold" }, `stacked ${money(stacked)}`) : null,
    readyEntries().length ? h("button", { class: "btn primary small", id: "bar-confirm", onclick: confirmBuilder }, "Confirm") : null);
}

const FAMILY_ORDER = ["line", "come", "put", "odds", "place", "buy", "lay", "lose", "field", "big", "hard", "prop", "horn", "hop", "double", "fire", "bonus"];

/** The wagers as a list of buttons: the phone's way to bet (the felt above shows the chips). */
function drawSpotList(v, me) {
  if (!me) { spotList.replaceChildren(); return; }
  const groups = new Map();
  for (const [code, lim] of Object.entries(v.limits)) {
    if (code === "odds" || !v.ladders[code]) continue;
    const fam = lim.family || "other";
    if (!groups.has(fam)) groups.set(fam, []);
    groups.get(fam).push(code);
  }
  const order = [...groups.keys()].sort((a, b) => (FAMILY_ORDER.indexOf(a) + 99) % 99 - (FAMILY_ORDER.indexOf(b) + 99) % 99);
  const button = (code) => {
    const bet = spotBet(code);
    const open = Boolean(me.controls.open[code]) || Boolean(bet && me.controls.bets[bet.id].press_to !== null);
    const pending = readyEntries().find((e) => e.code === code && !e.base);
    return h("button", { class: `btn spot-btn${open ? "" : " shut"}`, dataset: { code }, disabled: !open, title: v.ladders[code].label,
      onclick: () => { showLimits(code); onSpot(code); } },
      h("span", { class: "spot-name" }, v.limits[code].name),
      v.paytable && v.paytable[code] ? h("span", { class: "pays" }, `pays ${v.paytable[code].pays}`) : null,
      bet ? h("b", {}, ` ${money(bet.amount)}`) : null, pending ? h("span", { class: "tag gold" }, `→ ${money(pending.amount)}`) : null);
  };
  const base = lineBase();
  const drawn = replace(document.createElement("div"), h("h2", {}, "Wagers"),
    base ? h("button", { class: "btn spot-btn", dataset: { code: "odds" }, onclick: () => { showLimits("odds"); onSpot("odds"); } },
      h("span", { class: "spot-name" }, "Odds behind the line"),
      v.paytable && v.paytable.odds ? h("span", { class: "pays" }, `pays ${v.paytable.odds.pays}`) : null) : null,
    order.map((fam) => h("div", { class: "spot-group" }, groups.get(fam).map(button))));
  // Each push redraws the page; a list that has not changed is left alone, so the button a
  // player is on (keyboard focus, a tap under way) is not swapped for a copy.
  if (drawn.innerHTML !== spotList.innerHTML) spotList.replaceChildren(...drawn.childNodes);
}

function drawRules(v) {
  if (rulesCard.dataset.pack === v.pack) return;
  rulesCard.dataset.pack = v.pack;
  replace(rulesCard, h("summary", {}, h("h2", { style: "display:inline" }, "Rules")),
    h("p", {}, h("a", { class: "btn", href: `/rules?table=${encodeURIComponent(tableId)}`, id: "rules-link" }, "Rules and payouts of this table")),
    h("p", { class: "muted" }, `${v.placard.name}: ${v.placard.lines.join(" · ")}. Citations are shown for ${v.jurisdiction} regulations; house rules are the casino's own choices.`),
    h("table", { class: "data" }, h("tbody", {}, v.rules_panel.map((r) => h("tr", { dataset: { rule: r.rule, status: r.status } },
      h("td", {}, r.rule), h("td", {}, r.value), h("td", { class: "citation" }, r.citation || h("span", { class: "muted" }, r.status)))))));
}

// -- game recall ---------------------------------------------------------------------------------
async function loadRecall() {
  const rounds = await attempt(() => get(tablePath(tableId, "/recall?rounds=10")));
  if (!rounds) return;
  document.getElementById("load-recall").textContent = "Refresh";
  const me = account.username;
  const played = rounds.filter((r) => r.rolls.length);  // not the round now being bet on
  replace(recallEl, played.length ? [...played].reverse().map((r) => h("div", { class: "recall-round", dataset: { label: r.label } },
    h("div", { class: "head" }, h("span", {}, r.label), h("span", { class: "muted" }, fmtTime(r.ended || r.started))),
    h("div", { class: "row", style: "gap:4px" }, r.rolls.map((roll) => roll.roll ? [dieIcon(faces(roll.roll)[0], 16), dieIcon(faces(roll.roll)[1], 16), h("span", {}, ` ${roll.total}${roll.shooter ? ` · ${roll.shooter === me ? "you" : roll.shooter} shooting` : ""} `)] : "unreadable "),
      r.no_roll ? h("span", { class: "tag red" }, `no roll: ${r.no_roll.join(", ")}`) : null,
      r.seven_out ? h("span", { class: "tag red" }, "seven out") : null,
      r.point_after && r.point_after !== r.point_before ? h("span", { class: "tag gold" }, `point ${r.point_after}`) : null),
    r.wagers.length ? h("div", {}, "Wagers: ", r.wagers.map((w) => `${w.base ? "Odds" : nameOf(w.wager)} ${money(w.amount)}${w.working ? "" : " (off)"}`).join(", ")) : null,
    resultLines(r).map(([cls, text]) => h("div", { class: `recall-line ${cls}` }, text))))
    : h("div", { class: "muted" }, "No rounds yet."));
}

const nameOf = (code) => wagerName(st.view, code);

/** Each of the player's wagers decided in a round, with its own result: "Field $5.00 lost". */
function resultLines(r) {
  const staked = new Map(r.wagers.map((w) => [w.bet, w.amount]));
  const label = (x) => `${x.base ? "Odds" : nameOf(x.wager)} ${money(staked.get(x.bet) ?? x.amount ?? x.stake_returned ?? 0)}`;
  return [
    ...r.collections.map((c) => ["lost", `${x(c)} lost`]),
    ...r.payments.filter((p) => p.win > 0).map((p) => ["won", `${x(p)} won ${money(p.win)}`]),
    ...r.payments.filter((p) => p.win === 0).map((p) => ["returned", `${x(p)} returned (a push)`]),
    ...r.returns.map((p) => ["returned", `${x(p)} returned`]),
  ];
  function x(item) { return label(item); }
}

// -- start ---------------------------------------------------------------------------------------
// The player sees the last 150 events of the table (their own view of the log).
const live = await startTable(tableId, {
  st, feed, setView, earlier: 150, onEvents: noteResult,
  afterView(msg) {
    if (msg.events && msg.events.some((e) => ["ChipsBought", "ChipsCashedOut", "PlayerLeft", "PlayerJoined"].includes(e.type))) loadMoney();
    if (msg.events && msg.events.some((e) => e.type === "PuckMoved" || e.type === "RoundCompleted" || e.type === "WagersReturned")
        && document.getElementById("load-recall").textContent === "Refresh") loadRecall();
  },
});

// For the browser tests and the curious: the page's state and its live connection.
window.dicetable = { live, st, tableId, confirm: confirmBuilder, loadMoney, playerSentence };
await loadMoney();
// Requests and wallets are not table events: pushed on their own socket, polled only while it
// is shut.
const moneyPushed = moneyPush(tableId, loadMoney);
setInterval(() => { if (!moneyPushed()) loadMoney(); }, 4000);

// the player's own rating (exact theo beside the formula), below their bets
if (account.kind === "player") import("./my-rating.js");
