// The player's page: the layout, chips, the player's own wagers and balance, the dice and the
// shaker when it is the player's turn, the last rolls, hot and cold numbers, and game recall.

import { Refusal, del, get, liveTable, patch, post, tablePath, whoami } from "./api.js";
import {
  Feed, attempt, dieIcon, faces, fmtTime, frequencyChart, h, money, replace, rollStrip,
  showRefusal, statusPills, topbar,
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
const hoverInfo = h("div", { class: "muted", id: "hover-info" }, "Point at a spot to see its minimum and maximum.");
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
const feed = new Feed(feedEl);

main.append(
  h("section", { class: "stack" },
    felt, hoverInfo, rack,
    h("div", { class: "row", style: "align-items:stretch" },
      h("section", { class: "card", style: "flex:1 1 340px" }, h("header", {}, h("h2", {}, "Last rolls"), h("span", { class: "muted" }, "newest first")), rolls),
      h("section", { class: "card", style: "flex:1 1 340px" }, h("header", {}, h("h2", {}, "Number frequencies"), freqNote), freq)),
    h("section", { class: "card" }, h("header", {}, h("h2", {}, "Table activity")), feedEl)),
  h("aside", { class: "stack" },
    balanceCard, countdownCard, turnCard, betsCard,
    h("section", { class: "card", id: "recall-card" },
      h("header", {}, h("h2", {}, "Game recall"), h("button", { class: "btn small", id: "load-recall", onclick: loadRecall }, "Show my last rounds")),
      recallEl)));

// -- chips and actions ---------------------------------------------------------------------------
const chipButtons = CHIPS.map((c) => h("button", {
  class: `chip-btn c${c / 100}`, dataset: { cents: c }, title: `${money(c)} chip`,
  onclick: () => { st.chip = c; drawRack(); },
}, `$${c / 100}`));
rack.append(h("span", { class: "muted" }, "Chip"), ...chipButtons,
  h("div", { class: "actions" },
    h("button", { class: "btn", id: "repeat", onclick: repeat, title: "the wagers you made in the round before" }, "Repeat"),
    h("button", { class: "btn", id: "double", onclick: double, title: "double your wagers on the open spots" }, "Double"),
    h("button", { class: "btn", id: "undo", onclick: undo, title: "take back your last change" }, "Undo"),
    h("button", { class: "btn danger", id: "clear", onclick: clear, title: "take back this round's changes" }, "Clear")));

function drawRack() {
  for (const b of chipButtons) b.classList.toggle("selected", Number(b.dataset.cents) === st.chip);
  const v = st.view;
  const betting = v && v.phase === "betting";
  document.getElementById("undo").disabled = !st.undo.length;
  document.getElementById("clear").disabled = !st.undo.length;
  document.getElementById("repeat").disabled = !st.lastRound.size || !betting;
  document.getElementById("double").disabled = !(v && v.me && v.me.bets.length) || !betting;
}

// -- the layout ---------------------------------------------------------------------------------
let layout = null;

function buildLayout(view) {
  layout = layoutFor(view.game);
  felt.replaceChildren(layout.svg);
  for (const [code, spot] of layout.spots) {
    spot.g.addEventListener("click", () => onSpot(code));
    spot.g.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); onSpot(code); } });
    spot.g.addEventListener("mouseenter", () => showLimits(code));
    spot.g.addEventListener("focus", () => showLimits(code));
  }
}

function showLimits(code) {
  const v = st.view;
  const lim = code === "odds" ? v.limits.odds : v.limits[code];
  if (!lim) return;
  const open = code === "odds" ? Boolean(lineBase()) : v.me && v.me.placeable.includes(code);
  replace(hoverInfo,
    h("b", {}, code === "odds" ? "Odds" : lim.name), " · minimum ", h("b", { class: "num", id: "hover-min" }, money(lim.minimum)),
    " · maximum ", h("b", { class: "num", id: "hover-max" }, money(lim.maximum)),
    lim.unit > 1 ? ` · in steps of ${money(lim.unit)}` : "",
    " · ", open ? h("span", { style: "color:var(--ok)" }, "open") : h("span", { style: "color:var(--warn)" }, "closed now"));
}

/** The line bet (pass or don't pass) the player may take or lay odds on, if any. */
function lineBase() {
  const me = st.view && st.view.me;
  if (!me) return null;
  const line = me.bets.find((b) => (b.wager === "pass" || b.wager === "dontpass") && !b.base && oddsOpen(b.id));
  return line ? line.id : null;
}

/** May odds be taken or laid on this bet now, or the odds on it raised? */
function oddsOpen(id) {
  const me = st.view.me;
  return me.odds_bases.includes(id) || (st.view.phase === "betting" && me.bets.some((o) => o.base === id));
}

/** The bet standing on a spot that a chip would add to (not a come bet already moved). */
function spotBet(code) {
  const me = st.view.me;
  return me.bets.find((b) => b.wager === code && !b.base && !((code === "come" || code === "dontcome") && /point \d+/.test(b.state)));
}

async function onSpot(code) {
  const v = st.view;
  if (!v || !v.me) return;
  if (code === "odds") {
    const base = lineBase();
    if (!base) { hint("Odds: you need a pass or don't pass bet with a point, and betting open."); return; }
    await betOdds(base);
    return;
  }
  if (!v.me.placeable.includes(code)) {
    hint(`${v.limits[code] ? v.limits[code].name : code} is closed now.`);
    return;
  }
  await addTo(code, st.chip);
}

async function addTo(code, cents) {
  const existing = spotBet(code);
  if (existing) return change(existing, existing.amount + cents, code, cents);
  const r = await act(() => post(tablePath(tableId, "/bets"), { wager: code, amount: cents }));
  if (!r) return null;
  const placed = r.events.find((e) => e.type === "BetPlaced" && e.player === account.username);
  if (placed) {
    st.undo.push({ kind: "place", bet: placed.bet });
    st.thisRound.set(code, (st.thisRound.get(code) || 0) + cents);
    flash(code);
  }
  drawRack();
  return r;
}

async function change(bet, amount, code, added) {
  const r = await act(() => patch(tablePath(tableId, `/bets/${encodeURIComponent(bet.id)}`), { amount }));
  if (!r) return null;
  st.undo.push({ kind: "change", bet: bet.id, from: bet.amount });
  if (code) st.thisRound.set(code, (st.thisRound.get(code) || 0) + added);
  if (code) flash(code);
  drawRack();
  return r;
}

async function betOdds(base) {
  const existing = st.view.me.bets.find((b) => b.base === base);
  if (existing) return change(existing, existing.amount + st.chip, null, 0);
  const r = await act(() => post(tablePath(tableId, "/bets"), { wager: "odds", amount: st.chip, base }));
  if (!r) return null;
  const placed = r.events.find((e) => e.type === "BetPlaced" && e.player === account.username);
  if (placed) st.undo.push({ kind: "place", bet: placed.bet });
  drawRack();
  return r;
}

async function undo() {
  const step = st.undo.pop();
  if (!step) return;
  if (step.kind === "place") await act(() => del(tablePath(tableId, `/bets/${encodeURIComponent(step.bet)}`)));
  else await act(() => patch(tablePath(tableId, `/bets/${encodeURIComponent(step.bet)}`), { amount: step.from }));
  drawRack();
}

async function clear() {
  while (st.undo.length) await undo();
  st.thisRound.clear();
  drawRack();
}

async function repeat() {
  for (const [code, cents] of st.lastRound) {
    if (!st.view.me.placeable.includes(code)) continue;
    await addTo(code, cents);
  }
}

async function double() {
  for (const id of st.view.me.bets.map((b) => b.id)) {
    const me = st.view.me;  // fresh after each change
    const bet = me.bets.find((b) => b.id === id);
    if (!bet) continue;
    const onSpot = spotBet(bet.wager);
    const open = bet.base ? oddsOpen(bet.base) : me.placeable.includes(bet.wager) && onSpot && onSpot.id === bet.id;
    if (!open) continue;
    await change(bet, bet.amount * 2, bet.base ? null : bet.wager, bet.amount);
  }
}

function flash(code) {
  const spot = layout && layout.spots.get(code);
  if (!spot) return;
  spot.g.classList.add("flash");
  setTimeout(() => spot.g.classList.remove("flash"), 250);
}

function hint(text) {
  replace(hoverInfo, h("span", { style: "color:var(--warn)" }, text));
}

// -- talking to the server -------------------------------------------------------------------
async function act(call) {
  try {
    const r = await call();
    if (r && r.events) feed.add(r.events, st.view);
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
  if (first || !layout || layout.game !== view.game) buildLayout(view);
  const last = view.history.length ? view.history[view.history.length - 1].seq : null;
  if (!first && last !== st.lastRollSeq) {  // a roll: this round's wagers become Repeat's
    if (st.thisRound.size) st.lastRound = new Map(st.thisRound);
    st.thisRound = new Map();
    st.undo = [];
  }
  st.lastRollSeq = last;
  render();
}

// -- rendering -----------------------------------------------------------------------------------
function render() {
  const v = st.view;
  const me = v.me;
  document.title = `${v.name} — dicetable`;
  replace(document.getElementById("page-title"), h("b", {}, v.name), h("span", { class: "muted" }, ` · ${v.table}`));
  replace(document.getElementById("status-pills"), statusPills(v, st.connection));
  layout.draw(v, me ? me.bets : [], {
    placeable: me ? me.placeable : [], limits: v.limits, oddsOpen: Boolean(lineBase()),
  });
  drawBalance(v, me);
  drawCountdown();
  drawTurn(v, me);
  drawBets(v, me);
  replace(rolls, v.history.length ? rollStrip(v.history.slice(-30), v.point) : h("span", { class: "muted" }, "No rolls yet."));
  replace(freq, frequencyChart(v.frequencies));
  replace(freqNote, v.frequencies.rolls ? h("span", { class: "muted" }, `${v.frequencies.rolls} rolls · `, h("span", { style: "color:var(--red)" }, "hot"), " / ", h("span", { style: "color:var(--blue)" }, "cold")) : "");
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
      v.game === "props-and-hops"
        ? [h("dt", {}, "Round"), h("dd", {}, v.round)]
        : [h("dt", {}, "Hand"), h("dd", {}, `${v.hand} · round ${v.round}`), h("dt", {}, "Shooter"), h("dd", { id: "shooter" }, v.shooter || "—")],
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
  const existing = countdownCard.querySelector(".countdown");
  if (existing && existing.dataset.text === text) return;
  replace(countdownCard, h("header", {}, h("h2", {}, "Bets close in"), h("span", { class: "muted" }, "electronic table · CSPRNG")),
    h("div", { class: `countdown ${cls}`, id: "countdown", dataset: { text } }, text));
}

function drawTurn(v, me) {
  const name = account.username;
  const parts = [];
  if (v.mode === "electronic") {
    parts.push(h("h2", {}, "The dice"), h("p", { class: "muted" }, "This table rolls its own dice (a cryptographic random number generator) when betting closes."));
  } else if (v.game === "props-and-hops") {
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
      parts.push(h("p", {}, sh.holder ? `The shaker is with ${sh.holder === name ? "you" : sh.holder}.` : "The dealer holds the shaker.",
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
  const rows = (me ? me.bets : []).map((b) => h("div", { class: "bet-row", dataset: { bet: b.id, wager: b.wager } },
    h("div", {}, h("div", { class: "name" }, b.base ? `Odds on ${describeBase(me, b.base)}` : b.name), h("div", { class: "state" }, `${b.state}${b.working === false ? " · off" : ""}${b.commission ? ` · commission ${money(b.commission)}` : ""}`)),
    h("div", { class: "amt" }, money(b.amount)),
    h("div", { class: "row", style: "gap:4px" },
      !b.base && oddsOpen(b.id) ? h("button", { class: "btn small", title: `add ${money(st.chip)} odds`, onclick: () => betOdds(b.id) }, "+ odds") : null,
      h("button", { class: "btn small", title: "take this wager down", onclick: () => act(() => del(tablePath(tableId, `/bets/${encodeURIComponent(b.id)}`))) }, "×"))));
  replace(betsCard, h("header", {}, h("h2", {}, "My wagers"), h("span", { class: "muted" }, `${rows.length}`)),
    rows.length ? h("div", { class: "bets-list", id: "my-bets" }, rows) : h("div", { class: "muted", id: "my-bets" }, "No wagers on the layout. Pick a chip and click a lit spot."));
}

function describeBase(me, id) {
  const base = me.bets.find((b) => b.id === id);
  return base ? `${base.name}${/point/.test(base.state) ? ` (${base.state})` : ""}` : id;
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
    h("div", { class: "row", style: "gap:4px" }, r.rolls.map((roll) => roll.roll ? [dieIcon(faces(roll.roll)[0], 16), dieIcon(faces(roll.roll)[1], 16), h("span", {}, ` ${roll.total} `)] : "unreadable "),
      r.no_roll ? h("span", { class: "tag red" }, `no roll: ${r.no_roll.join(", ")}`) : null,
      r.seven_out ? h("span", { class: "tag red" }, "seven out") : null,
      r.point_after && r.point_after !== r.point_before ? h("span", { class: "tag gold" }, `point ${r.point_after}`) : null),
    r.wagers.length ? h("div", {}, "Wagers: ", r.wagers.map((w) => `${w.base ? "Odds" : nameOf(w.wager)} ${money(w.amount)}`).join(", ")) : null,
    r.collections.length ? h("div", { style: "color:#ffb3aa" }, "Lost: ", r.collections.map((c) => `${nameOf(c.wager)} ${money(c.amount)}`).join(", ")) : null,
    r.payments.length ? h("div", { style: "color:#a5e8bb" }, "Won: ", r.payments.map((p) => `${nameOf(p.wager)} ${money(p.win)}`).join(", ")) : null,
    r.returns.length ? h("div", { style: "color:var(--warn)" }, "Returned: ", r.returns.map((p) => `${nameOf(p.wager)} ${money(p.amount)}`).join(", ")) : null,
    me in r.balances_before && me in r.balances_after ? h("div", { class: "muted" }, `Balance ${money(r.balances_before[me])} → ${money(r.balances_after[me])}`) : null))
    : h("div", { class: "muted" }, "No rounds yet."));
}

const nameOf = (code) => (st.view.limits[code] ? st.view.limits[code].name : code);

// -- start ---------------------------------------------------------------------------------------
try {
  setView(await get(tablePath(tableId)));
} catch (e) {
  showRefusal(e);
  throw e;
}

const live = liveTable(tableId, {
  onMessage(msg, { reconnected }) {
    if (msg.events && msg.events.length) feed.add(msg.events, msg.view || st.view, { away: reconnected });
    if (msg.view) setView(msg.view);
    if (msg.events && msg.events.some((e) => e.type === "PuckMoved" || e.type === "RoundCompleted" || e.type === "WagersReturned")
        && document.getElementById("load-recall").textContent === "Refresh") loadRecall();
  },
  onStatus(status) {
    st.connection = status;
    if (st.view) replace(document.getElementById("status-pills"), statusPills(st.view, status));
  },
});

// For the browser tests and the curious: the page's state and its live connection.
window.dicetable = { live, st, tableId };
