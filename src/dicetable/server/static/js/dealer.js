// The dealer console: betting, the throw and its physical facts (or the RNG cycle), no rolls,
// settlement in its order, the shooter and the shaker, the dice, chips, and every player's
// wagers and balance. The server picks the role from the account's assignment at the table.

import { del, get, moneyPush, patch, post, tablePath, whoami } from "./api.js";
import { ROLE_TITLES, cardsFor, consoleRole } from "./console-roles.js";
import { startTable } from "./table-start.js";
import {
  Feed, dieFace, dieIcon, faces, fmtTime, h, money, parseMoney, replace, rollStrip, s, showRefusal,
  statusPills, topbar,
} from "./ui.js";

const account = await whoami();
const params = new URLSearchParams(location.search);
if (account.kind === "player") location.replace(`/play${location.search}`);  // not a player's page
const myTables = Object.keys(account.tables || {});
const tableId = params.get("table") || myTables[0];
if (!params.get("table") && tableId) history.replaceState(null, "", `/dealer?table=${encodeURIComponent(tableId)}`);

const st = { view: null, connection: "offline", built: false, faces: [null, null], role: null, cards: [], auto: new Set(), skipped: [] };

topbar(account, "", [["Pit", "/pit"], ["Tables", "/"]]);
const main = h("main", { class: "page" });
document.body.append(main);
if (!tableId) {
  main.append(h("div", { class: "card" }, "You are not assigned at any table."));
  throw new Error("no table");
}

// -- shared bits --------------------------------------------------------------------------------
async function act(path, body = {}, method = post) {
  try {
    const r = await method(tablePath(tableId, path), body);
    feed.add(r.events, st.view);
    setView(r.view);
    return r;
  } catch (e) {
    showRefusal(e);
    return null;
  }
}

function button(label, id, onclick, cls = "btn") {
  return h("button", { class: cls, id, onclick }, label);
}

/** Who may do a thing at this table (the pack's matrix), marked when the viewer is one. */
function who(rule) {
  const roles = (st.view.rules.authority || {})[rule] || [];
  const mine = roles.some((r) => st.view.my_roles.includes(r));
  return h("span", { class: `who ${mine ? "mine" : ""}`, title: mine ? "your role may do this" : "the engine will refuse your role" }, roles.join(" / ") || "nobody");
}

function setOptions(select, options, keep = true) {
  const before = select.value;
  select.replaceChildren(...options.map(([value, label]) => h("option", { value }, label)));
  if (keep && options.some(([value]) => value === before)) select.value = before;
}

function card(id, title, rule, ...body) {
  return h("section", { class: "card", id }, h("header", {}, h("h2", {}, title), rule ? h("span", { class: "who-slot", dataset: { rule } }) : null), ...body);
}

// -- the cards: built once, updated with every view ---------------------------------------------
const feedEl = h("div", { class: "feed", id: "feed", style: "max-height:380px" });
const feed = new Feed(feedEl, 200);
const el = {};

function build(v) {
  const live = v.mode === "live";
  const { has_shooter: shooter, has_shaker: shaker } = v.variant;
  const cards = [];

  // Betting
  el.betting = h("div", {});
  cards.push(card("betting-card", "Betting", "authority.close_betting", el.betting,
    h("div", { class: "row" }, button("No more bets", "no-more-bets", () => act("/no-more-bets"), "btn primary")),
    h("div", { class: "muted", style: "font-size:.85rem" }, "Betting opens again when the roll is settled.")));

  // The throw, or the RNG cycle
  if (live) {
    const picker = (i) => h("div", { class: "face-pick", id: `die-${i + 1}` }, [1, 2, 3, 4, 5, 6].map((n) => {
      const b = h("button", { type: "button", dataset: { face: n }, title: `die ${i + 1}: ${n}`, onclick: () => { st.faces[i] = n; drawFaces(); } });
      const svg = s("svg", { width: 30, height: 30, viewBox: "0 0 30 30" });
      const g = dieFace(n, 1, 1, 28);
      g.querySelector("rect").setAttribute("fill", "#fbfaf5");
      for (const c of g.querySelectorAll("circle")) c.setAttribute("fill", "#1a1a1a");
      svg.append(g);
      b.append(svg);
      return b;
    }));
    el.unreadable = h("input", { type: "checkbox", id: "unreadable", onchange: () => drawInputBound(st.view) });
    // The facts this pack's no-roll rules name come first; the rest fold away.
    const named = new Set([...v.rules.noroll_automatic, ...v.rules.noroll_grounds.map((g) => g.ground), ...v.rules.noroll_excluded]);
    const fact = (f) => h("label", { class: "check", title: f.text },
      h("input", { type: "checkbox", value: f.fact, dataset: { fact: f.fact } }),
      h("span", {}, f.fact, v.rules.noroll_automatic.includes(f.fact) ? h("small", { style: "color:var(--warn)" }, "automatic no roll") : null, h("small", {}, f.text)));
    const others = v.rules.throw_facts.filter((f) => !named.has(f.fact));
    el.facts = h("div", { id: "facts" },
      h("div", { class: "facts" }, v.rules.throw_facts.filter((f) => named.has(f.fact)).map(fact)),
      others.length ? h("details", { style: "margin-top:6px" }, h("summary", { class: "muted" }, `Other facts (${others.length})`), h("div", { class: "facts" }, others.map(fact))) : null);
    el.distance = h("input", { type: "text", id: "distance", placeholder: "e.g. 3/4", size: 6, title: "how far the dice travelled, as a fraction of the table's length" });
    el.thrower = h("select", { id: "thrower" });
    el.rollSummary = h("div", { class: "muted", id: "roll-summary" });
    cards.push(card("throw-card", "Record the throw", "authority.record_roll",
      h("div", { class: "row" }, h("span", { class: "muted", style: "width:52px" }, "Die 1"), picker(0)),
      h("div", { class: "row" }, h("span", { class: "muted", style: "width:52px" }, "Die 2"), picker(1)),
      h("label", { class: "check" }, el.unreadable, h("span", {}, "A face cannot be read (record the throw without faces)")),
      // the button comes before the facts: on a tablet it stays above the fold
      h("div", { class: "row" }, button("Record throw", "record-roll", recordRoll, "btn primary"), el.rollSummary),
      h("fieldset", {}, h("legend", {}, "What happened (physical facts, recorded with the throw)"), el.facts),
      h("div", { class: "row" }, h("label", { class: "row" }, "Distance", el.distance), h("label", { class: "row" }, "Thrower", el.thrower))));
  } else {
    el.rng = h("div", { id: "rng" });
    cards.push(card("rng-card", "RNG cycle", null, el.rng));
  }

  // No roll
  if (live) {
    el.grounds = h("div", { class: "facts", id: "grounds", onchange: () => drawInputBound(st.view) }, v.rules.noroll_grounds.map((g) => h("label", { class: "check", title: g.text },
      h("input", { type: "checkbox", value: g.ground }), h("span", {}, g.ground, h("small", {}, g.text)))));
    el.overturnReason = h("input", { type: "text", id: "overturn-reason", placeholder: "reason", size: 18 });
    // A call is held against the recorded throw: a fact not recorded with it is recorded as seen by the caller.
    el.observed = h("input", { type: "checkbox", id: "noroll-observed", onchange: () => drawInputBound(st.view) });
    cards.push(card("noroll-card", "No roll", "noroll.callers",
      h("div", { class: "stack", dataset: { actRule: "noroll.callers" } },
        h("div", { class: "muted", style: "font-size:.8rem" }, v.rules.noroll_citation),
        h("div", { class: "row" }, button("Call no roll", "call-no-roll", callNoRoll, "btn danger"), h("span", { class: "muted" }, "on the ticked grounds")),
        el.grounds,
        h("label", { class: "check" }, el.observed, h("span", {}, "I saw it: record the ticked facts with my call (they are not on the recorded throw)")),
        v.rules.noroll_excluded.length ? h("div", { class: "muted", style: "font-size:.8rem" }, `Not grounds here: ${v.rules.noroll_excluded.join(", ")}`) : null),
      h("div", { class: "row", dataset: { actRule: "authority.overturn_no_roll" } }, el.overturnReason, el.overturn = button("Overturn the no roll", "overturn", () => act("/overturn", { reason: el.overturnReason.value })), h("span", { class: "who-slot", dataset: { rule: "authority.overturn_no_roll" } }))));
  }

  // Settlement
  el.settle = h("div", { id: "settlement" });
  el.skipped = h("div", { class: "muted", id: "skipped-chores" });
  cards.push(card("settle-card", "Settlement", "authority.settle", el.settle, el.skipped));

  // The shooter or the shaker
  if (live && shooter) {
    el.shooter = h("div", { id: "shooter-info" });
    el.offerButton = button("Offer the dice", "offer-dice", () => act("/offer-dice", { patron: st.view.next_shooter || "" }), "btn primary");
    el.removalGround = h("select", { id: "removal-ground", "aria-label": "ground for removing the shooter" }, v.rules.removal_grounds.map((g) => h("option", { value: g }, g)));
    cards.push(card("shooter-card", "Shooter", "authority.offer_dice", el.shooter,
      h("div", { class: "row", dataset: { actRule: "authority.offer_dice" } }, el.offerButton),
      h("div", { class: "row", dataset: { actRule: "authority.remove_shooter" } }, el.removalGround, button("Remove the shooter", "remove-shooter", () => act("/remove-shooter", { ground: el.removalGround.value }), "btn danger"),
        h("span", { class: "who-slot", dataset: { rule: "authority.remove_shooter" } }))));
  }
  if (live && shaker) {
    el.shaker = h("div", { id: "shaker-info" });
    el.offerShaker = button("Offer the shaker", "offer-shaker", () => act("/offer-shaker", { player: st.view.shaker.next || "" }), "btn primary");
    cards.push(card("shaker-card", "Shaker", "authority.shaker", el.shaker,
      h("div", { class: "row" }, button("Shake", "dealer-shake", () => act("/shake")), el.offerShaker, button("Uncover", "uncover", () => act("/uncover")))));
  }

  // Dice
  if (live) {
    el.dice = h("div", { id: "dice-info", onchange: () => drawInputBound(st.view) });
    el.bringSerials = h("input", { type: "text", id: "bring-serials", placeholder: "serials, e.g. A1 A2 A3", size: 22, oninput: () => drawInputBound(st.view) });
    el.witness = h("input", { type: "text", id: "bring-witness", placeholder: "witness (optional)", size: 12 });
    el.removeReason = h("input", { type: "text", id: "remove-reason", "aria-label": "reason the dice are taken from the table", value: "replaced", size: 12 });
    cards.push(card("dice-card", "Dice", "authority.dice", el.dice,
      h("div", { class: "row" }, el.bringSerials, el.witness, button("Bring dice", "bring-dice", bringDice)),
      el.bringCheck = h("div", { class: "muted", id: "bring-check", "aria-live": "polite" }),
      h("div", { class: "row" }, el.removeReason, button("Remove the ticked dice", "remove-dice", removeDice, "btn danger"))));
  }

  // Chips
  el.chipPlayer = h("select", { id: "chip-player", "aria-label": "player" });
  el.chipAmount = h("input", { type: "text", id: "chip-amount", placeholder: "$100.00", size: 9 });
  el.chipPlayer.addEventListener("change", () => drawChips(st.view));
  el.chipAmount.addEventListener("input", () => drawChips(st.view));
  cards.push(card("chips-card", "Chips", "authority.chips",
    h("div", { class: "row" }, el.chipPlayer, el.chipAmount,
      el.sellButton = button("Sell chips", "sell-chips", () => chips("/chips"), "btn primary"), el.cashButton = button("Cash out", "cash-out", () => chips("/cash-out"))),
    // The cash-out of a player's whole balance: nothing to type.
    h("div", { class: "console-slot row", id: "cash-out-all-slot", dataset: { slot: "cash-out-all" } },
      button("Cash out all", "cash-out-all", () => cashOutAll(el.chipPlayer.value))),
    h("div", { class: "muted", style: "font-size:.8rem" }, "Cash out all: the player's whole table balance, nothing to type. Chips go with the player to the cage (58 Pa. Code 603a.10(d)).")));

  // What players ask of the dealer: a colour-up, leaving (one click confirms)
  el.requests = h("div", { id: "requests", "aria-live": "polite" });
  cards.push(card("requests-card", "Player requests", "authority.chips", el.requests));

  // The throw in dispute: what was recorded, by whom, what was called on it, and the hand so far.
  el.dispute = h("div", { id: "dispute" });
  cards.push(card("dispute-card", "The throw in question", null, el.dispute,
    h("div", { class: "row" }, button("Look back over this hand", "recall", () => drawRecall(), "btn small")),
    el.recall = h("div", { id: "dispute-recall", class: "scroll" })));

  // The table's bank: its inventory and the counts, in the pit's books.
  cards.push(card("bank-card", "The table's bank", null,
    h("p", { class: "muted" }, "Fills, credits, the opening and closing counts and the drop are steps in the pit's books."),
    h("a", { class: "btn small", id: "bank-link", href: `/pit?bank=${encodeURIComponent(tableId)}#bank-card` }, "Open this table's bank")));

  // Booking the bets players call (the dealer acts on the player's behalf)
  el.bookPlayer = h("select", { id: "book-player", "aria-label": "player", onchange: () => drawBooking(st.view) });
  el.bookWager = h("select", { id: "book-wager", "aria-label": "wager", onchange: () => drawBookingHint(st.view) });
  el.bookAmount = h("input", { type: "text", id: "book-amount", placeholder: "$6.00", size: 8, oninput: () => drawBookingHint(st.view) });
  el.bookHint = h("div", { class: "muted", id: "book-hint" });
  el.bookButton = button("Book the bet", "book-bet", bookBet, "btn primary");
  cards.push(card("book-card", "Book a called bet", "authority.wager",
    h("div", { class: "row" }, el.bookPlayer, el.bookWager, el.bookAmount, el.bookButton), el.bookHint,
    h("div", { class: "muted", style: "font-size:.8rem" }, "Recorded as your command on the player's behalf; the player sees it on their page.")));

  // Players and the feed
  el.players = h("div", { id: "players" });
  const playersCard = card("players-card", "Players: wagers and balances", null, el.players);
  playersCard.classList.add("wide");
  el.rolls = h("div", { class: "rolls", id: "rolls" });
  const rollsCard = card("rolls-card", "Last rolls", null, el.rolls);
  const feedCard = card("feed-card", "Table log", null, feedEl);

  // Each role gets the cards its role may act on (the pack's matrix), its main action first;
  // then what everyone at the table watches: the players' wagers and balances, the rolls, the log.
  st.role = consoleRole(v.my_roles, params.get("role"));
  const byId = new Map(cards.map((c) => [c.id, c]));
  st.cards = cardsFor(st.role, v.rules.authority || {}, new Set(byId.keys()));
  replace(main, h("div", { class: "console-grid", dataset: { role: st.role } }, ...st.cards.map((id) => byId.get(id)), playersCard, rollsCard, feedCard));
  for (const slot of main.querySelectorAll(".who-slot")) slot.replaceWith(who(slot.dataset.rule));
  // inside a card, what this role may not do is not offered at all
  for (const part of main.querySelectorAll("[data-act-rule]")) part.classList.toggle("hidden", !((v.rules.authority || {})[part.dataset.actRule] || []).includes(st.role));
  st.built = true;
}


function drawFaces() {
  for (let i = 0; i < 2; i++) {
    for (const b of document.querySelectorAll(`#die-${i + 1} button`)) b.classList.toggle("chosen", Number(b.dataset.face) === st.faces[i]);
  }
  const [a, b] = st.faces;
  if (el.rollSummary) el.rollSummary.textContent = a && b ? `${a}-${b} — total ${a + b}` : "pick both faces";
  if (st.view) drawInputBound(st.view);
}

async function recordRoll() {
  const unreadable = el.unreadable.checked;
  const [a, b] = st.faces;
  if (!unreadable && !(a && b)) {
    showRefusal({ message: "pick both faces, or tick 'a face cannot be read'" });
    return;
  }
  const facts = [...el.facts.querySelectorAll("input:checked")].map((i) => i.value);
  const body = { faces: unreadable ? null : `${a}-${b}`, facts, distance: el.distance.value.trim() || null, thrower: el.thrower.value || null };
  const r = await act("/roll", body);
  if (r) {
    st.faces = [null, null];
    el.unreadable.checked = false;
    for (const i of el.facts.querySelectorAll("input:checked")) i.checked = false;
    el.distance.value = "";
    drawFaces();
  }
}

async function callNoRoll() {
  const grounds = [...el.grounds.querySelectorAll("input:checked")].map((i) => i.value);
  if (!grounds.length) { showRefusal({ message: "tick at least one ground" }); return; }
  const facts = new Set([...el.facts.querySelectorAll("input")].map((i) => i.value));
  const observed = el.observed.checked ? grounds.filter((g) => facts.has(g)) : [];
  const r = await act("/no-roll", { grounds, observed });
  if (r) {
    for (const i of el.grounds.querySelectorAll("input:checked")) i.checked = false;
    el.observed.checked = false;
  }
}

async function bringDice() {
  const serials = el.bringSerials.value.split(/[\s,]+/).filter(Boolean);
  if (!serials.length) { showRefusal({ message: "type the serial numbers of the dice brought" }); return; }
  const r = await act("/dice", { serials, witness: el.witness.value.trim() || null });
  if (r) el.bringSerials.value = "";
}

async function removeDice() {
  const serials = [...el.dice.querySelectorAll("input:checked")].map((i) => i.value);
  if (!serials.length) { showRefusal({ message: "tick the dice to remove" }); return; }
  await act("/dice/remove", { serials, reason: el.removeReason.value.trim() || "replaced" });
}

// -- players' money requests (colour-up, leaving) and cash out all ---------------------------------
async function loadRequests() {
  try {
    st.money = await get(tablePath(tableId, "/money"));
  } catch (e) {
    return;
  }
  drawRequests();
}

function drawRequests() {
  if (!el.requests || !st.money) return;
  const pending = st.money.requests || [];
  const words = { "colour-up": "colour up", leave: "is leaving" };
  // A push redraws the list: the field being typed in keeps its focus.
  const active = el.requests.contains(document.activeElement) ? document.activeElement : null;
  const typing = active && active.id ? [active.id, active.selectionStart, active.selectionEnd] : null;
  replace(el.requests, pending.length ? h("ul", { class: "request-list" }, pending.map((r) => h("li", { class: "request", dataset: { request: r.id, player: r.player, what: r.what } },
    h("span", {}, h("b", {}, r.player), ` asks to ${r.what === "leave" ? "leave" : "colour up"} · balance ${money(r.balance)}`),
    r.what === "colour-up" ? exchangeInputs(r) : null,
    h("button", { class: "btn primary small", id: `confirm-request-${r.id}`, title: r.what === "leave" ? "seat given up, whole balance cashed out in chips" : "equal value: the balance does not change", onclick: () => confirmRequest(r) },
      `Confirm: ${r.player} ${words[r.what]}`))))
    : h("div", { class: "muted", id: "no-requests" }, "No requests waiting."));
  const again = typing && document.getElementById(typing[0]);
  if (again) {
    again.focus();
    if (again.setSelectionRange && typing[1] !== null) again.setSelectionRange(typing[1], typing[2]);
  }
}

// A colour-up's exchange for the bank's record (465a.36(b)(4)): the chips the dealer counted in
// from the player, and the chips out of the tray (suggested by the server, largest first). What
// the dealer types survives the console's redraws; both empty confirms without a bank record.
const typedExchange = {};
function exchangeInputs(r) {
  const typed = typedExchange[r.id] || (typedExchange[r.id] = { in: "", out: r.suggested_out || "", suggested: r.suggested_out || "" });
  if (typed.out === typed.suggested && r.suggested_out !== undefined) {  // not edited: follow the balance
    typed.out = typed.suggested = r.suggested_out;
  }
  const field = (side, words, hint) => h("label", { class: "exchange-field" }, h("span", { class: "muted" }, words),
    h("input", { type: "text", id: `chips-${side}-${r.id}`, size: 14, value: typed[side], placeholder: hint,
      title: "DENOMINATION_CENTSxCOUNT, comma-separated, e.g. 500x20,2500x4", oninput: (ev) => { typed[side] = ev.target.value; } }));
  return h("span", { class: "exchange", dataset: { request: r.id } },
    field("in", "Chips in (counted)", "e.g. 500x100"), field("out", "Chips out", "e.g. 10000x5"));
}

function exchangeText(r) {
  const typed = typedExchange[r.id];
  if (!typed) return "";
  const parts = (text) => text.split(",").map((p) => p.trim()).filter(Boolean);
  // Out of the tray is a negative count in the bank's notation (+ in, - out).
  return [...parts(typed.in), ...parts(typed.out).map((p) => p.replace(/x\s*-?\s*/, "x-"))].join(",");
}

async function confirmRequest(r) {
  const chips = r.what === "colour-up" ? exchangeText(r) : "";
  try {
    st.money = await post(tablePath(tableId, `/money/requests/${r.id}/confirm`), chips ? { chips } : {});
    delete typedExchange[r.id];
  } catch (e) {
    showRefusal(e);  // the request stays pending, with what was typed
  }
  drawRequests();
}

async function cashOutAll(player) {
  if (!player) return;
  try {
    st.money = await post(tablePath(tableId, "/money/cash-out-all"), { player });
  } catch (e) {
    showRefusal(e);
  }
  drawRequests();
}

async function chips(path) {
  const amount = parseMoney(el.chipAmount.value);
  if (!amount) { showRefusal({ message: "type an amount such as 100 or 25.50" }); return; }
  const r = await act(path, { player: el.chipPlayer.value, amount });
  if (r) el.chipAmount.value = "";
}

// -- every player's bets (the staff view's ``bets``, by id) ------------------------------------------
const byPlayerOf = new WeakMap();  // each view's bets grouped once, not once per player drawn

/** ``v.bets`` grouped by player, in id order (a view's own, worked out once). */
function betsByPlayer(v) {
  let out = byPlayerOf.get(v);
  if (!out) {
    out = new Map();
    const ids = Object.keys(v.bets || {}).sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
    for (const id of ids) {
      const bet = v.bets[id];
      if (!out.has(bet.player)) out.set(bet.player, []);
      out.get(bet.player).push(bet);
    }
    byPlayerOf.set(v, out);
  }
  return out;
}

const betsOf = (v, player) => betsByPlayer(v).get(player) || [];

// -- booking a called bet --------------------------------------------------------------------------
// The push carries the engine's answers on every player's bets (``v.bet_controls[player]``);
// the wagers still open to a player (a ladder each) are asked for the one being booked, when
// chosen and again after each view: every player's would make a big table's push megabytes.
const betControls = (v, player) => (v.bet_controls && v.bet_controls[player]) || {};
const opened = { player: null, seq: null, open: {}, asked: 0 };

/** The open wagers of the player chosen, asked of the server once per view (a later answer wins). */
async function askOpen(v) {
  const player = el.bookPlayer.value;
  if (!player || !v.bet_controls || !st.cards.includes("book-card")) return;  // not booking here
  if (opened.player === player && opened.seq === v.seq) return;
  const ask = ++opened.asked;
  try {
    const c = await get(tablePath(tableId, `/controls?player=${encodeURIComponent(player)}`));
    if (ask !== opened.asked) return;  // asked again since (a newer view, another player)
    Object.assign(opened, { player, seq: v.seq, open: c.open });
    drawBooking(st.view);
  } catch (e) {
    if (ask !== opened.asked) return;
    Object.assign(opened, { player, seq: v.seq, open: {} });  // offer nothing, not the last answer
    drawBooking(st.view);
  }
}

/** The open wagers known for ``player`` (those of the previous view until the answer comes);
 * none where this account books for nobody here (no ``bet_controls`` in its view). */
const openFor = (v, player) => (v.bet_controls && opened.player === player ? opened.open : {});

/** The wagers the engine would take from this dealer for the chosen player, odds included. */
function bookOptions(v, player) {
  const answers = betControls(v, player);
  const out = Object.keys(openFor(v, player)).map((code) => [code, wagerName(code)]);
  for (const b of betsOf(v, player)) {
    const info = answers[b.id];
    if (info && info.odds) out.push([`odds:${b.id}`, `Odds on ${b.label || b.name}`]);
  }
  return out;
}

function bookLadder(v) {
  const player = el.bookPlayer.value;
  const choice = el.bookWager.value || "";
  if (choice.startsWith("odds:")) {
    const info = betControls(v, player)[choice.slice(5)];
    return info ? info.odds : null;
  }
  return openFor(v, player)[choice] || null;
}

function drawBooking(v) {
  const seated = Object.keys(v.players || {}).sort();
  setOptions(el.bookPlayer, seated.map((p) => [p, p]));
  const options = bookOptions(v, el.bookPlayer.value);
  setOptions(el.bookWager, options.length ? options : [["", "nothing open for this player now"]]);
  drawBookingHint(v);
  askOpen(v);
}

function onLadder(ladder, amount) {
  return ladder && amount >= ladder.first && amount <= ladder.last && (amount - ladder.first) % ladder.step === 0;
}

function drawBookingHint(v) {
  const ladder = bookLadder(v);
  const choice = el.bookWager.value || "";
  const amount = parseMoney(el.bookAmount.value);
  const label = choice && !choice.startsWith("odds:") && v.ladders[choice] ? v.ladders[choice].label
    : ladder ? `Odds: ${money(ladder.first)} to ${money(ladder.last)} in steps of ${money(ladder.step)}` : "";
  el.bookButton.disabled = !ladder || !onLadder(ladder, amount);
  el.bookHint.textContent = !ladder ? "Nothing can be booked for this player now." : amount && !onLadder(ladder, amount) ? `${label} — ${money(amount)} is not one of them` : label;
}

async function bookBet() {
  const v = st.view;
  const ladder = bookLadder(v);
  const amount = parseMoney(el.bookAmount.value);
  if (!onLadder(ladder, amount)) { drawBookingHint(v); return; }
  const choice = el.bookWager.value;
  const body = choice.startsWith("odds:") ? { wager: "odds", base: choice.slice(5), amount, player: el.bookPlayer.value }
    : { wager: choice, amount, player: el.bookPlayer.value };
  const r = await act("/bets", body);
  if (r) el.bookAmount.value = "";
}

/** The dealer's buttons on one bet of a player: take down, press, on/off, odds (engine answers). */
function betActions(v, bet) {
  const info = betControls(v, bet.player)[bet.id] || {};
  const path = `/bets/${encodeURIComponent(bet.id)}`;
  return h("span", { class: "bet-actions" },
    info.press_to ? h("button", { class: "btn small", dataset: { action: "press", bet: bet.id }, title: `press to ${money(info.press_to)}`, onclick: () => act(path, { amount: info.press_to }, patch) }, `press ${money(info.press_to)}`) : null,
    info.toggle ? h("button", { class: "btn small", dataset: { action: "toggle", bet: bet.id }, onclick: () => act(path, { working: !bet.working_now }, patch) }, bet.working_now ? "off" : "on") : null,
    info.odds ? h("button", { class: "btn small", dataset: { action: "odds", bet: bet.id }, onclick: () => { el.bookPlayer.value = bet.player; drawBooking(v); el.bookWager.value = `odds:${bet.id}`; el.bookAmount.value = money(info.odds.first).slice(1); drawBookingHint(v); el.bookAmount.focus(); } }, "odds") : null,
    info.remove ? h("button", { class: "btn small danger", dataset: { action: "remove", bet: bet.id }, onclick: () => act(path, undefined, del) }, "down") : null);
}

// -- buttons that also need what is typed or ticked -----------------------------------------------
/** Lit when the engine would take the command (``can``) and the form holds what it sends. */
const INPUT_BOUND = new Set(["record-roll", "remove-dice", "sell-chips", "cash-out", "call-no-roll"]);
const mayRule = (v, rule) => ((v.rules.authority || {})[rule] || []).some((r) => v.my_roles.includes(r));

function drawInputBound(v) {
  const can = v.can || {};
  const rec = document.getElementById("record-roll");
  if (rec && el.unreadable) rec.disabled = !can["record-roll"] || !(el.unreadable.checked || (st.faces[0] && st.faces[1]));
  const rem = document.getElementById("remove-dice");
  if (rem && el.dice) rem.disabled = !can["remove-dice"] || !el.dice.querySelector("input:checked");
  const call = document.getElementById("call-no-roll");
  if (call && el.grounds) {
    // each ticked ground as the recorded throw shows it, or as the caller saw it ("I saw it")
    const ticked = [...el.grounds.querySelectorAll("input:checked")].map((i) => i.value);
    const key = el.observed.checked ? "call-no-roll-seen" : "call-no-roll";
    call.disabled = !ticked.length || !ticked.every((g) => can[`${key}:${g}`]);
    call.title = ticked.length ? "" : "tick the grounds first";
  }
  const bring = document.getElementById("bring-dice");
  // lit only when the table (asking custody) would take these very dice now
  if (bring && el.bringSerials) {
    const text = el.bringSerials.value.trim();
    const c = st.diceCheck;
    const current = c && c.text === text && c.seq === v.seq;
    bring.disabled = v.mode !== "live" || !mayRule(v, "authority.dice") || !text || !(current && c.ok);
    // custody moves without the table's: an answer is asked again after a few seconds
    if (text && (!current || performance.now() - c.at > 3000)) checkDice(text, v.seq);
    const why = text && current && !c.ok ? c.answer : null;
    replace(el.bringCheck, why ? `Not accepted: ${why.message} — ${why.rule}${why.citation ? `, ${why.citation}` : ""}` : "");
  }
}

/** Ask the table whether it would take the typed serials (custody issued them to it, in
 * time): once the typing pauses, and again whenever the table moves on. */
function checkDice(text, seq) {
  clearTimeout(st.diceCheckTimer);
  st.diceCheckTimer = setTimeout(async () => {
    let answer;
    try {
      answer = await get(tablePath(tableId, `/dice/check?action=bring&serials=${encodeURIComponent(text)}`));
    } catch (e) {
      answer = { ok: false, message: e.message || String(e), rule: e.rule || "", citation: e.citation || "" };
    }
    st.diceCheck = { text, seq, ok: !!answer.ok, answer, at: performance.now() };
    if (st.view) drawInputBound(st.view);
  }, 250);
}
setInterval(() => { if (st.view && el.bringSerials && el.bringSerials.value.trim()) drawInputBound(st.view); }, 3000);

function drawChips(v) {
  if (!v || !el.chipPlayer || !el.chipPlayer.isConnected) return;
  const can = v.can || {};
  const player = el.chipPlayer.value;
  const amount = parseMoney(el.chipAmount.value);
  const balance = ((v.players || {})[player] || {}).balance || 0;
  el.sellButton.disabled = !can[`sell-chips:${player}`] || !(amount > 0);
  // a cash-out of more than the balance is refused (the engine's own check, in the form)
  el.cashButton.disabled = !can[`cash-out:${player}`] || !(amount > 0 && amount <= balance);
}

function drawDispute(v) {
  const last = v.history.length ? v.history[v.history.length - 1] : null;
  const p = v.pending;
  const w = (p && p.noroll_window) || null;
  replace(el.dispute, last ? h("dl", { class: "kv" },
    h("dt", {}, "Throw"), h("dd", { class: "row", style: "gap:4px" }, ...(last.roll ? faces(last.roll) : []).map((n) => dieIcon(n, 20)), h("b", {}, ` ${last.total ?? "?"}`),
      last.valid === false ? h("span", { class: "tag red", id: "dispute-standing" }, "no roll") : h("span", { class: "tag green", id: "dispute-standing" }, "stands")),
    h("dt", {}, "Shot by"), h("dd", {}, last.shooter || v.shooter || "—"),
    h("dt", {}, "No roll"), h("dd", { id: "dispute-window" }, last.valid === false ? noRollCall(last.no_roll)
      : last.no_roll && last.no_roll.overturned ? `overturned by ${last.no_roll.overturned.by} (${last.no_roll.overturned.role})${last.no_roll.overturned.reason ? `: ${last.no_roll.overturned.reason}` : ""}`
        : w && w.open ? "may still be called (until the losers are collected)" : "can no longer be called: the roll stands"),
    last.no_roll ? [h("dt", {}, "Grounds"), h("dd", {}, h("ul", { id: "dispute-grounds", class: "plain" }, last.no_roll.grounds.map((g) => groundLine(v, g, last.no_roll))))] : null)
    : h("p", { class: "muted" }, "No throw recorded yet."));
}

/** Who called the no roll, and the rule that lets them. */
function noRollCall(call) {
  if (!call) return "called";
  return call.automatic ? `void by rule (automatic)` : `called by ${call.by} (${call.role}) · ${call.citation}`;
}

/** One ground of a no roll: what it means, whether the caller saw it, and its citation. */
function groundLine(v, ground, call) {
  const listed = v.rules.noroll_grounds.find((g) => g.ground === ground);
  const automatic = v.rules.noroll_automatic.includes(ground);
  const citation = automatic && !listed ? v.rules.noroll_automatic_citation : v.rules.noroll_citation;
  const seen = call.observed.includes(ground) ? ` · seen by ${call.by}` : "";
  return h("li", { dataset: { ground } }, h("b", {}, listed ? listed.text : ground), ` (${ground})${seen} — `, h("span", { class: "muted citation" }, citation));
}

async function drawRecall() {
  try {
    const rounds = await get(tablePath(tableId, "/recall?rounds=2"));
    replace(el.recall, rounds.length ? [...rounds].reverse().map((r) => h("div", { class: "recall-round" },
      h("div", { class: "head" }, r.label, r.complete ? "" : " (in progress)"),
      h("div", {}, r.rolls.map((x) => x.roll ? `${x.roll} = ${x.total} (recorded by ${x.actor}) ` : "unreadable ").join(" · ")),
      r.no_roll ? h("div", { class: "tag red" }, `no roll: ${r.no_roll.join(", ")}`) : null,
      r.wagers.length ? h("div", { class: "muted" }, `Wagers: ${r.wagers.map((x) => `${x.player} ${wagerName(x.wager)} ${money(x.amount)}`).join(", ")}`) : null))
      : h("p", { class: "muted" }, "No rounds yet."));
  } catch (e) {
    showRefusal(e);
  }
}

// -- updates ------------------------------------------------------------------------------------
function setView(view) {
  if (st.view && view.seq < st.view.seq) return;
  st.view = view;
  if (!st.built) build(view);
  render();
}

function render() {
  const v = st.view;
  document.title = `${v.name} console — dicetable`;
  const picker = h("select", { id: "table-picker", "aria-label": "table", onchange: (e) => { location.href = `/dealer?table=${encodeURIComponent(e.target.value)}`; } },
    myTables.map((t) => h("option", { value: t, selected: t === tableId }, t)));
  document.title = `${ROLE_TITLES[st.role] || st.role}'s console · ${v.name} — dicetable`;
  const rolePicker = v.my_roles.length > 1 ? h("select", { id: "role-picker", "aria-label": "console for role", onchange: (e) => { location.href = `/dealer?table=${encodeURIComponent(tableId)}&role=${encodeURIComponent(e.target.value)}`; } },
    v.my_roles.map((r) => h("option", { value: r, selected: r === st.role }, ROLE_TITLES[r] || r))) : null;
  replace(document.getElementById("page-title"), h("b", { id: "console-role" }, `${ROLE_TITLES[st.role] || st.role}`), " · ", h("b", {}, `${v.name}`), " ", picker, rolePicker,
    v.my_roles.length ? null : h("span", { class: "muted" }, " · not assigned here: watching"));
  replace(document.getElementById("status-pills"), statusPills(v, st.connection));

  replace(el.betting, h("div", { class: "row" },
    h("span", { class: `pill phase-${v.phase}`, id: "betting-state" }, v.phase === "betting" ? "Bets open" : v.phase === "closed" ? "No more bets" : "Settling"),
    v.variant.has_puck ? h("span", {}, v.point ? `Point ${v.point}` : "Come-out") : h("span", {}, `Round ${v.round}`),
    v.variant.has_shooter ? h("span", { id: "betting-shooter" }, v.shooter ? `shooter ${v.shooter}` : "no shooter") : null,
    v.last_roll ? h("span", { class: "muted" }, `last roll ${v.last_roll}${v.last_roll_valid === false ? " (no roll)" : ""}`) : null));
  // Each simple button is offered exactly when the engine would take it from this account.
  for (const [name, ok] of Object.entries(v.can || {})) {
    const button = document.getElementById(name === "shake" ? "dealer-shake" : name);
    if (button && !button.closest(".step") && !INPUT_BOUND.has(name)) button.disabled = !ok;
  }
  drawInputBound(v);
  if (el.dispute) drawDispute(v);

  if (el.thrower) {
    const seated = Object.keys(v.seats || {}).sort();
    setOptions(el.thrower, [["", v.shooter ? `the shooter (${v.shooter})` : v.shaker && v.shaker.holder ? `the shaker's holder (${v.shaker.holder})` : "the shooter"], ...seated.map((p) => [p, p])]);
    drawFaces();
  }
  if (el.rng) drawRng(v);
  drawSettlement(v);
  if (el.shooter) {
    replace(el.shooter, h("dl", { class: "kv" },
      h("dt", {}, "Shooter"), h("dd", { id: "current-shooter" }, v.shooter || "—"),
      h("dt", {}, "Offered to"), h("dd", {}, v.offer_to ? `${v.offer_to} (${v.offered.join(", ")})` : "—"),
      h("dt", {}, "Next in turn"), h("dd", { id: "next-shooter" }, v.next_shooter || "—"),
      h("dt", {}, "Bowl"), h("dd", {}, v.dice.bowl.join(", ") || "empty"),
      h("dt", {}, "Shooter's dice"), h("dd", {}, v.dice.shooter_dice.join(", ") || "—")));
    el.offerButton.textContent = v.next_shooter ? `Offer the dice to ${v.next_shooter}` : "Offer the dice";
    el.offerButton.disabled = !(v.can && v.can["offer-dice"]);
  }
  if (el.shaker) {
    const sh = v.shaker;
    replace(el.shaker, h("dl", { class: "kv" },
      h("dt", {}, "Shaker"), h("dd", { id: "shaker-state" }, sh.state),
      h("dt", {}, "Held by"), h("dd", {}, sh.holder || "the dealer"),
      h("dt", {}, "Player's shakes"), h("dd", {}, `${sh.shakes} (at least ${v.rules.min_shakes})`),
      h("dt", {}, "Dealer shook"), h("dd", {}, sh.dealer_shook ? "yes" : "not yet this round"),
      h("dt", {}, "Next"), h("dd", {}, sh.next || "—")));
    el.offerShaker.textContent = sh.next ? `Offer the shaker to ${sh.next}` : "Offer the shaker";
  }
  if (el.dice) drawDice(v);
  setOptions(el.chipPlayer, Object.keys(v.players || {}).map((p) => [p, p]));
  drawChips(v);
  drawBooking(v);
  drawPlayers(v);
  if (el.overturnReason) {
    // Only a no roll standing on the last throw can be overturned.
    const overturn = el.overturn;
    overturn.disabled = !(v.can && v.can.overturn);
    // Where the pack lets nobody overturn a no roll, the control is not shown at all.
    const mayOverturn = ((v.rules.authority || {})["authority.overturn_no_roll"] || []).length > 0;
    overturn.hidden = el.overturnReason.hidden = !mayOverturn;
  }
  replace(el.rolls, v.history.length ? rollStrip(v.history.slice(-40), v.point) : h("span", { class: "muted" }, "No rolls yet."));
}

function drawRng(v) {
  const at = v.bets_close_at ? Date.parse(v.bets_close_at) : null;
  const left = at ? Math.ceil((at - Date.now()) / 1000) : null;
  const last = v.history.length ? v.history[v.history.length - 1] : null;
  replace(el.rng,
    h("p", { class: "muted" }, "This table's dice are a cryptographic random number generator. Each cycle: bets open for the countdown, no more bets, the RNG rolls, settlement runs by itself."),
    h("div", { class: `countdown ${left === null || left <= 0 ? "closed" : left <= 5 ? "closing" : ""}`, id: "countdown", style: "font-size:1.7rem" },
      left === null ? "waiting" : left > 0 ? `${left}s to no more bets` : "rolling"),
    last ? h("div", { class: "row" }, "Last RNG roll:", ...faces(last.roll).map((n) => dieIcon(n, 24)), h("b", {}, last.total)) : null);
}
setInterval(() => { if (st.view && el.rng) drawRng(st.view); }, 500);

function wagerName(code) {
  return st.view.limits[code] ? st.view.limits[code].name : code;
}

const CHORE_LABELS = { "return-wagers": "Return the wagers (no roll)", "pass-shaker": "Pass the shaker on" };

function drawSettlement(v) {
  const p = v.pending;
  const chores = (v.chores || []).filter((c) => CHORE_LABELS[c]);
  sayEmptyReturn(v, v.chores || []);
  if (!p && chores.length) {
    replace(el.settle, h("div", { class: "row" }, chores.map((c) =>
      h("button", { class: "btn primary", id: c, disabled: !(v.can || {})[c], onclick: () => act(`/${c}`) }, CHORE_LABELS[c]))));
    return;
  }
  if (!p) {
    const text = v.mode === "electronic" ? "The table settles each roll by itself." : v.phase === "settling" ? "Waiting for the settlement." : "Nothing to settle: record a throw first.";
    replace(el.settle, h("p", { class: "muted", id: "nothing-to-settle" }, text));
    return;
  }
  const [a, b] = faces(p.roll);
  const { has_puck: puck, final_chore: last } = v.variant;
  const step = (n, label, id, path, body) => h("div", { class: `step ${p.step > n ? "done" : p.step === n ? "now" : ""}` },
    h("button", { class: `btn small ${p.step === n ? "step-now" : ""}`, id, disabled: p.step !== n || !mayDo(id), onclick: () => act(path) }, `${n + 1}. ${label}`), body);
  const w = p.noroll_window || { open: false };
  runEmptyPay(v, p);
  // A settlement step is lit only where the engine would take it from this account.
  const mayDo = (id) => !v.can || !(id in v.can) || v.can[id];
  replace(el.settle,
    w.open ? h("p", { class: "muted", id: "noroll-window", title: w.citation },
      "A no roll may still be called on this throw; what it settles shows once the losers are collected, and then the roll stands (", h("code", {}, w.rule), ").") : null,
    h("div", { class: "row" }, "Roll", dieIcon(a, 24), dieIcon(b, 24), h("b", {}, a + b),
      p.seven_out ? h("span", { class: "tag red" }, "seven out") : null,
      puck && p.point_after !== v.point ? h("span", { class: "tag gold" }, p.point_after ? `point becomes ${p.point_after}` : "puck goes OFF") : null),
    h("div", { class: "step-list" },
      step(0, "Collect the losers", "collect", "/collect", w.open ? null : itemsTable(p.losers, "collect", (i) => money(i.amount))),
      p.step === 0 && !w.open && !p.losers.length ? h("div", { class: "muted", id: "empty-collect" }, "No losing wagers: the collect step records that nothing was collected.") : null,
      step(1, "Pay the winners", "pay", "/pay", w.open ? null : itemsTable(p.payments, "pay", (i) => `${money(i.win)}${i.commission ? ` − ${money(i.commission)} comm.` : ""}${i.stake_returned ? ` + stake ${money(i.stake_returned)}` : ""}`)),
      step(2, last.label, last.command, `/${last.route}`, null)),
    h("div", { class: "row" }, h("button", { class: "btn primary", id: "settle", disabled: !["collect", "pay", last.command].some(mayDo), onclick: () => act("/settle") }, "Settle all (in order)")));
}

/** A pay step with nothing to pay is run by the console of whoever may pay, once per roll, and
 * said in one line; a collect step is not (collecting closes the no-roll window: a person's call). */
function runEmptyPay(v, p) {
  const last = v.history[v.history.length - 1];
  const key = last ? last.seq : p.roll;
  if (p.step !== 1 || p.payments.length || !(v.can || {}).pay || st.auto.has(key)) return;
  st.auto.add(key);
  post(tablePath(tableId, "/pay")).then((r) => {
    feed.add(r.events, st.view);
    replace(el.skipped, `Roll ${p.roll}: no winning wagers — the empty pay step was done by itself.`);
    setView(r.view);
  }).catch(() => { /* someone else did it first: the next view shows it */ });
}

/** A no roll whose wagers go back, with none on the layout: the engine leaves no return to
 * do (a chore that would move nothing is not a chore); the console says so in one line. */
function sayEmptyReturn(v, chores) {
  const last = v.history[v.history.length - 1];
  const call = last && last.valid === false ? last.no_roll : null;
  if (!call || v.rules.noroll_effect !== "wagers-returned" || "returned" in call || chores.includes("return-wagers")) return;
  replace(el.skipped, `No roll on ${last.roll || "an unreadable throw"}: no wagers were on the layout, so there was nothing to return (${v.rules.noroll_effect_citation}).`);
}

function itemsTable(items, kind, amount) {
  if (!items.length) return h("span", { class: "muted" }, kind === "collect" ? "no losing wagers" : "no winning wagers");
  return h("table", { class: "data", id: `${kind}-items` }, h("tbody", {}, items.map((i) => h("tr", {},
    h("td", {}, i.player), h("td", {}, wagerName(i.wager)), h("td", { class: "money" }, amount(i))))));
}

function drawDice(v) {
  const maxH = v.rules.dice_max_hours || 24;
  const rows = Object.entries(v.dice.at_table).map(([serial, since]) => {
    const left = Date.parse(since) + maxH * 3600_000 - Date.now();
    const where = v.dice.shooter_dice.includes(serial) ? "shooter" : v.dice.bowl.includes(serial) ? "bowl" : v.dice.offered.includes(serial) ? "offered" : "shaker";
    return h("tr", {}, h("td", {}, h("label", { class: "check" }, h("input", { type: "checkbox", value: serial }), serial)),
      h("td", {}, where), h("td", { class: "muted" }, fmtTime(since)), h("td", { class: "money" }, hoursLeft(left)));
  });
  const checked = new Set([...el.dice.querySelectorAll("input:checked")].map((i) => i.value));
  replace(el.dice, rows.length ? h("table", { class: "data" }, h("thead", {}, h("tr", {}, h("th", {}, "Serial"), h("th", {}, "Where"), h("th", {}, "Arrived"), h("th", { class: "money" }, `Left of ${maxH} h`))), h("tbody", {}, rows)) : h("p", { class: "muted" }, "No dice at the table."));
  for (const i of el.dice.querySelectorAll("input")) i.checked = checked.has(i.value);
}

export function hoursLeft(ms) {
  if (ms <= 0) return "expired";
  const m = Math.floor(ms / 60000);
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, "0")}m`;
}

function drawPlayers(v) {
  const byPlayer = betsByPlayer(v);
  const rows = Object.entries(v.players || {}).map(([name, info]) => {
    const mine = byPlayer.get(name) || [];
    const onLayout = mine.reduce((sum, b) => sum + b.amount, 0);
    return h("tr", { dataset: { player: name } },
      h("td", {}, info.seat ?? "–"),
      h("td", {}, h("b", {}, name), v.shooter === name ? h("span", { class: "tag gold", style: "margin-left:6px" }, "shooter") : null,
        v.shaker && v.shaker.holder === name ? h("span", { class: "tag gold", style: "margin-left:6px" }, "shaker") : null),
      h("td", {}, mine.length ? mine.map((b) => h("div", { class: `bet-line${b.working_now === false ? " is-off" : ""}`, dataset: { bet: b.id, wager: b.wager } },
        h("span", { class: "tag", title: b.state }, `${b.label || b.name} ${money(b.amount)}`, b.working_now === false ? h("b", { class: "off-tag" }, " OFF") : null),
        betActions(v, b))) : h("span", { class: "muted" }, "—")),
      h("td", { class: "money" }, money(onLayout)),
      h("td", { class: "money balance-cell", dataset: { cents: info.balance } }, money(info.balance),
        info.balance > 0 && v.mode === "live" ? h("button", { class: "btn small", dataset: { action: "cash-out-all" }, "aria-label": `cash out all of ${name}'s balance`, onclick: () => cashOutAll(name) }, "Cash out all") : null));
  });
  replace(el.players, h("table", { class: "data", id: "players-table" },
    h("thead", {}, h("tr", {}, h("th", {}, "Pos."), h("th", {}, "Player"), h("th", {}, "Wagers"), h("th", { class: "money" }, "On layout"), h("th", { class: "money" }, "Balance"))),
    h("tbody", {}, rows)),
    h("div", { class: "muted", style: "font-size:.85rem" }, `House result ${money(v.house)} · ${Object.keys(v.bets || {}).length} wagers on the layout`));
}

// -- start ---------------------------------------------------------------------------------------
// A relieving dealer sees the table's last 200 events; players' requests are looked for again
// after every table change.
const live = await startTable(tableId, {
  st, feed, setView, earlier: 200,
  afterView(msg) {
    if (msg.events && msg.events.length) loadRequests();
  },
});
window.dicetable = { live, st, tableId };
await loadRequests();
// Requests are not table events: pushed on their own socket (polled only while it is shut),
// and looked for after every table change.
const requestsPushed = moneyPush(tableId, loadRequests);
setInterval(() => { if (!requestsPushed()) loadRequests(); }, 3000);
