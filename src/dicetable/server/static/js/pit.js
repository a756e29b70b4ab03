// The pit console: every table at a glance (phase, point, shooter, dice and their 24-hour
// timers, alerts), the audit (hash-chain verification and the log) and game recall of any table,
// and unlocking a locked account.

import { get, post, tablePath, whoami } from "./api.js";
import { cageSection } from "./pit-cage.js";
import { ratingsSection } from "./pit-ratings.js";
import { attempt, card, describe, dieIcon, faces, fmtTime, h, money, replace, showRefusal, topbar } from "./ui.js";

const account = await whoami();
if (account.kind === "player") location.replace("/play");  // not a player's page
topbar(account, "Pit console", [["Tables", "/"]]);
const main = h("main", { class: "page stack" });
document.body.append(main);

const st = { pit: null, load: null, selected: null, drawn: null, replacing: null };
// The connection to the server: every figure on the page is as of the server's time of the
// last answer (``pit.now``); when answers stop, the page says so and retries with backoff.
const link = { state: "connecting", failures: 0, receivedAt: 0, timer: null, retryAt: 0, error: "" };
const FIRST_WAIT = 3000;
const LONGEST_WAIT = 30000;
const floorEl = h("div", { class: "floor", id: "floor" });
const detail = h("div", { class: "pit-detail", id: "detail" });
const accountsEl = h("div", { id: "accounts" });
const faultsEl = h("div", { id: "faults" });
const custodyEl = h("div", { id: "pit-custody" });

const linkEl = h("section", { class: "card", id: "pit-link" });
main.append(
  linkEl,
  faultsEl,
  h("section", { class: "stack" }, h("h2", {}, "The floor"), floorEl),
  card("custody-card", "Dice custody", h("a", { class: "btn small", href: "/dice-room" }, "Dice room"), custodyEl),
  ratingsSection(),
  cageSection(),
  detail,
  card("accounts-card", "Accounts", "an account locks after repeated failed logins", accountsEl));
// the pit's books follow the floor (its module may have run before this page's main existed)
const books = document.getElementById("bank-card");
if (books) main.append(books);

/** The server's time now: its last answer's time plus what the page's monotonic clock has
 * counted since (the browser's wall clock is never read). */
function serverNow() {
  return st.pit ? Date.parse(st.pit.now) + (performance.now() - link.receivedAt) : null;
}

function schedule(ms) {
  clearTimeout(link.timer);
  link.wait = ms;
  link.retryAt = performance.now() + ms;
  link.timer = setTimeout(refresh, ms);
}

async function refresh() {
  try {
    st.pit = await get("/api/pit");
    link.receivedAt = performance.now();
  } catch (e) {
    link.failures += 1;
    link.state = e.status === 401 ? "signed-out" : "offline";
    link.error = e.message || String(e);
    if (!st.pit && link.failures === 1) showRefusal(e);
    drawLink();
    if (link.state !== "signed-out") schedule(Math.min(LONGEST_WAIT, FIRST_WAIT * 2 ** (link.failures - 1)));
    return;
  }
  link.state = "live";
  link.failures = 0;
  try {
    st.load = await get("/api/floor/load");
  } catch (e) {
    st.load = null;  // the floor's figures stand; the load line says it is not known
  }
  drawLink();
  schedule(FIRST_WAIT);
  // Redraw only what changed (and the dice timers once a minute of server time): a redraw
  // under the pointer would swallow a click.
  const key = JSON.stringify({ ...st.pit, now: null }) + Math.floor(serverNow() / 60000);
  if (key === st.drawn) return;
  st.drawn = key;
  drawFaults();
  drawFloor();
  drawAccounts();
}

/** The connection, the server's time of the figures, the load and what was refused for it. */
function drawLink() {
  document.body.classList.toggle("stale", link.state !== "live");
  const asOf = st.pit ? fmtTime(st.pit.now) : "never";
  const wait = Math.max(0, Math.round((link.retryAt - performance.now()) / 1000));
  const pill = link.state === "live" ? h("span", { class: "pill live", id: "connection", dataset: { state: "live" } }, `Live · server time ${asOf}`)
    : link.state === "signed-out" ? h("span", { class: "pill offline", id: "connection", dataset: { state: "signed-out" } }, "Signed out: log in again")
    : h("span", { class: "pill offline", id: "connection", dataset: { state: "offline" } }, `No answer from the server (${link.failures} ${link.failures === 1 ? "try" : "tries"}) · retry in ${wait} s`);
  replace(document.getElementById("status-pills"), pill);
  const l = st.load;
  replace(linkEl,
    h("header", {}, h("h2", {}, "Connection and load"),
      link.state === "offline" ? h("button", { class: "btn small", id: "retry-now", onclick: () => { clearTimeout(link.timer); refresh(); } }, "Retry now") : null),
    link.state === "live" ? h("div", { id: "as-of" }, `Every figure below is as of ${asOf} (server time), refreshed every ${FIRST_WAIT / 1000} s.`)
      : h("div", { class: "alert-line", id: "stale-banner" }, `Not updated since ${asOf} (server time): the figures below may be out of date. ${link.error}`),
    l ? h("div", { class: "row", id: "load" },
      h("span", { class: "pill", dataset: { figure: "in-flight" } }, `${l.in_flight} in flight`),
      h("span", { class: "pill", dataset: { figure: "admitted" } }, `${l.admitted} admitted`),
      h("span", { class: `pill ${l.refused ? "alert" : ""}`, id: "refused", dataset: { figure: "refused" } }, `${l.refused} refused for load`),
      h("span", { class: "pill" }, `${l.ms_per_answer} ms per answer`),
      h("span", { class: "pill" }, `waiting work ${l.waiting_work_ms} ms`),
      h("span", { class: "pill" }, `loop lag ${l.loop_lag_ms} ms`),
      h("span", { class: "pill", dataset: { figure: "cpu" } }, l.cpu == null ? "not kept to one CPU" : `on CPU ${l.cpu}`))
      : h("div", { class: "muted", id: "load" }, "Load: not known (no answer from /api/floor/load)."));
}
setInterval(() => { if (link.state === "offline") drawLink(); }, 1000);

// Integrity faults: a table whose log failed verification is locked until cleared here.
function drawFaults() {
  const faults = st.pit.faults || [];
  replace(faultsEl, faults.length ? h("section", { class: "card alerts", id: "faults-card" },
    h("header", {}, h("h2", {}, "Integrity faults"), h("span", { class: "muted" }, "locked: nothing is played until cleared")),
    h("table", { class: "data" }, h("tbody", {}, faults.map((f) => h("tr", { dataset: { fault: f.table } },
      h("td", {}, h("b", {}, f.table)), h("td", {}, h("span", { class: "tag red" }, f.what)), h("td", {}, f.detail),
      h("td", {}, fmtTime(f.at)),
      h("td", {}, f.table.includes(":") || f.table === "checkpoints" ? null
        : h("button", { class: "btn small", dataset: { clear: f.table }, onclick: () => clearFault(f.table) }, "Clear"))))))) : []);
}

async function clearFault(table) {
  const reason = prompt(`Clear the integrity fault on ${table}: why is its log sound again?`);
  if (!reason) return;
  const r = await attempt(() => post(`${tablePath(table)}/fault/clear`, { reason }));
  if (r) refresh();
}

function hoursLeft(ms) {
  if (ms <= 0) return "expired";
  const m = Math.floor(ms / 60000);
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, "0")}m`;
}

function drawFloor() {
  replace(floorEl, st.pit.tables.map((t) => {
    const maxH = t.dice_max_hours || 24;
    const { has_puck: puck, has_shaker: shaker } = t.variant;
    const last = t.last_roll;
    return h("section", {
      class: `card table-card ${st.selected === t.table ? "selected" : ""}`, dataset: { table: t.table },
      onclick: () => select(t.table),
    },
    h("header", {}, h("div", {}, h("div", { class: "name" }, t.name), h("div", { class: "muted", style: "font-size:.8rem" }, `${t.table} · ${t.pack} · ${t.mode}`)),
      h("div", { class: "row", style: "gap:4px" },
        // a blocked table is not "betting": its one status says it is blocked
        t.blocked ? h("span", { class: "pill alert", dataset: { status: "blocked" } }, "play blocked")
          : h("span", { class: `pill phase-${t.phase}`, dataset: { status: t.phase } }, t.phase),
        !puck ? null : t.point ? h("span", { class: "pill on" }, `ON ${t.point}`) : h("span", { class: "pill off" }, "OFF"))),
    h("dl", { class: "kv" },
      h("dt", {}, shaker ? "Shaker" : "Shooter"), h("dd", {}, (shaker ? t.shaker_holder : t.shooter) || "—"),
      h("dt", {}, "Players"), h("dd", {}, `${t.players} · ${money(t.on_layout)} on the layout`),
      h("dt", {}, "House"), h("dd", { class: "num" }, money(t.house)),
      h("dt", {}, "Last roll"), h("dd", {}, last ? h("span", { class: "row", style: "gap:3px" }, ...faces(last.roll).map((n) => dieIcon(n, 16)), ` ${last.total ?? "?"}${last.valid ? "" : " (no roll)"}`) : "—"),
      h("dt", {}, "Money"), h("dd", {}, t.conserved ? h("span", { class: "tag green" }, "conserved") : h("span", { class: "tag red" }, "NOT conserved"))),
    h("div", { class: "dice-timers", title: `dice are replaced within ${maxH} hours of reaching the table` },
      Object.keys(t.dice).length ? Object.entries(t.dice).map(([serial, since]) => {
        const left = Date.parse(since) + maxH * 3600_000 - serverNow();
        return h("span", { class: `dice-timer ${left <= 0 ? "expired" : left < 3600_000 ? "low" : ""}`, dataset: { serial }, title: `arrived ${since}` }, `${serial} · ${hoursLeft(left)}`);
      }) : h("span", { class: "muted" }, t.mode === "electronic" ? "RNG: no physical dice" : "no dice at the table")),
    t.bets_close_at && !t.blocked && link.state === "live" ? h("div", { class: "muted" }, `bets close at ${fmtTime(t.bets_close_at)}`) : null,
    (t.alerts.some((a) => t.blocked || a.name !== "dice-expired") || t.fairness.length || t.blocked) ? h("div", { class: "alerts" },
      t.blocked ? h("div", { class: "alert-line" }, "Play is blocked") : null,
      // a blocking alert (dice past their hours) stands until play resumes: then it is history
      t.alerts.filter((a) => t.blocked || a.name !== "dice-expired").map((a) => h("div", { class: "alert-line", dataset: { alert: a.name } }, `${a.name}: ${a.message}`)),
      t.fairness.map((a) => h("div", { class: "alert-line" }, `Fairness: die ${a.serial} shows face ${a.face} too often (${a.rolls} rolls)`))) : null,
    h("div", { class: "row" },
      h("button", { class: "btn small", onclick: (e) => { e.stopPropagation(); select(t.table); } }, "Audit & recall"),
      h("a", { class: "btn small", href: `/dealer?table=${encodeURIComponent(t.table)}`, onclick: (e) => e.stopPropagation() }, "Console"),
      h("a", { class: "btn small", href: tablePath(t.table, "/rules-submission"), target: "_blank", dataset: { submission: t.table }, onclick: (e) => e.stopPropagation() }, "Rules submission")),
    diceActions(t),
    h("div", { class: "muted as-of", style: "font-size:.75rem" }, `as of ${fmtTime(st.pit.now)} (server time)`));
  }));
  drawCustody();
}

/** What the pit does about a table's dice: replace them (issue inspected spares to the table
 * from the dice room; the crew brings them in), or open the dice room at that table. */
function diceActions(t) {
  if (t.mode === "electronic") return null;
  const maxH = t.dice_max_hours || 24;
  const due = Object.values(t.dice).some((since) => Date.parse(since) + maxH * 3600_000 - serverNow() < 3600_000)
    || t.alerts.some((a) => a.name === "dice-expired")
    || ((st.pit.custody || {}).alerts || []).some((a) => (a.dice || []).some((serial) => serial in t.dice));
  const stop = (e) => e.stopPropagation();
  // dice past their hours (the table's clock, on the server's time): the pit may take them off
  const expired = Object.entries(t.dice).filter(([, since]) => Date.parse(since) + maxH * 3600_000 <= serverNow()).map(([serial]) => serial);
  return h("div", { class: "row dice-actions", onclick: stop },
    due ? h("button", { class: "btn small primary", dataset: { replace: t.table }, onclick: () => openReplace(t) }, "Replace dice") : null,
    expired.length ? removeExpired(t, expired) : null,
    h("a", { class: "btn small", href: `/dice-room?table=${encodeURIComponent(t.table)}`, dataset: { diceRoom: t.table } }, "Dice room at this table"),
    st.replacing && st.replacing.table === t.table ? st.replacing.el : null);
}

/** "Remove expired dice": the table's own remove-dice command for the dice past their hours,
 * lit only when the table would take it from this account now (asked, not sent, on each
 * move of the table); refused, it stays dark and says which rule and who may. */
function removeExpired(t, serials) {
  const key = `${t.table}|${serials.join(",")}|${t.seq}`;
  const check = (st.removeChecks ||= {})[t.table];
  if (!check || check.key !== key) {
    st.removeChecks[t.table] = { key, answer: null };
    get(tablePath(t.table, `/dice/check?action=remove&serials=${encodeURIComponent(serials.join(","))}`))
      .then((answer) => answer, (e) => ({ ok: false, message: e.message || String(e), rule: e.rule || "", citation: e.citation || "" }))
      .then((answer) => {
        if (st.removeChecks[t.table].key !== key) return;
        st.removeChecks[t.table].answer = answer;
        st.drawn = null;
        drawFloor();
      });
  }
  const answer = st.removeChecks[t.table].answer;
  const why = answer && !answer.ok ? `${answer.message} — ${answer.rule}${answer.citation ? `, ${answer.citation}` : ""}` : "";
  return h("span", { class: "row", style: "gap:4px" },
    h("button", { class: "btn small danger", dataset: { remove: t.table }, disabled: !(answer && answer.ok), title: why || `take ${serials.join(", ")} off ${t.table}`,
      onclick: async () => {
        const r = await attempt(() => post(tablePath(t.table, "/dice/remove"), { serials, reason: "expired" }));
        if (r) { st.removeChecks[t.table] = null; refresh(); }
      } }, `Remove expired dice (${serials.join(", ")})`),
    why ? h("span", { class: "muted", style: "font-size:.75rem", dataset: { removeRefused: t.table } }, `Not lit: ${why}`) : null);
}

async function openReplace(t) {
  const room = await attempt(() => get("/api/dice-room"));
  if (!room) return;
  const reports = await Promise.all(room.sites.map((s) => attempt(() => get(`/api/dice-room/${encodeURIComponent(s.site)}/report`))));
  const i = reports.findIndex((r) => r && r.dice.some((d) => d.table === t.table));
  if (i < 0) { showRefusal({ message: `no custody record of dice at ${t.table}` }); return; }
  const site = room.sites[i].site;
  const spares = reports[i].dice.filter((d) => d.state === "inspected").map((d) => d.serial);
  const picks = h("div", { class: "row" }, spares.length ? spares.map((serial) => h("label", { class: "check" }, h("input", { type: "checkbox", value: serial }), serial))
    : h("span", { class: "muted" }, "no inspected spare dice in the pit: inspect some in the dice room first"));
  const receiver = h("input", { type: "text", list: "pit-roster", size: 8, "aria-label": "received at the table by", placeholder: "account" });
  const issue = h("button", { class: "btn small primary", id: "issue-spares", disabled: true, onclick: async () => {
    const dice = [...picks.querySelectorAll("input:checked")].map((x) => x.value);
    const r = await attempt(() => post(`/api/dice-room/${encodeURIComponent(site)}/issue-table`, { dice, table: t.table, received_by: receiver.value.trim(), shaker: !!t.variant.has_shaker }));
    if (r) {
      replace(form, h("div", { class: "ok", id: "replace-done" }, `Issued ${dice.join(", ")} to ${t.table}: the crew brings them in and takes the old ones out.`));
    }
  } }, "Issue to the table");
  const ready = () => { issue.disabled = !picks.querySelector("input:checked") || !receiver.value.trim(); };
  picks.addEventListener("change", ready);
  receiver.addEventListener("input", ready);
  const form = h("div", { class: "card replace-form", id: "replace-form" },
    h("datalist", { id: "pit-roster" }, room.roster.map((p) => h("option", { value: p.name }, `${p.role}`))),
    h("div", {}, `Replace the dice at ${t.table}: pick inspected spares (${site})`), picks,
    h("label", { class: "row" }, "Received at the table by", receiver), h("div", { class: "row" }, issue,
      h("button", { class: "btn small", onclick: () => { st.replacing = null; st.drawn = null; drawFloor(); } }, "Close")));
  st.replacing = { table: t.table, el: form };
  drawFloor();
}

// Custody's open alerts (dice past their limit, the inventory due, fairness) and dice that
// left a table and wait for the dice room to record their removal.
function drawCustody() {
  const c = st.pit.custody || { alerts: [], awaiting_removal: [] };
  replace(custodyEl,
    c.alerts.length ? c.alerts.map((a) => h("div", { class: "alert-line", dataset: { custodyAlert: a.type } }, `${a.site}: ${a.message}`)) : h("div", { class: "muted" }, "no open custody alerts"),
    c.awaiting_removal.length ? h("div", { class: "alert-line", id: "awaiting-removal" }, `Dice off their table, to be removed in the dice room: ${c.awaiting_removal.map((w) => `${w.serial} (${w.table})`).join(", ")}`) : null);
}

async function select(tableId) {
  st.selected = tableId;
  drawFloor();
  const [audit, recall, events] = await Promise.all([
    attempt(() => get(tablePath(tableId, "/audit"))),
    attempt(() => get(tablePath(tableId, "/recall?rounds=10"))),
    attempt(async () => {
      const t = st.pit.tables.find((x) => x.table === tableId);
      return get(tablePath(tableId, `/events?after=${Math.max(0, (t ? t.seq : 0) - 60)}`));
    }),
  ]);
  const auditCard = card("audit", `Audit · ${tableId}`,
    h("button", { class: "btn small", onclick: () => select(tableId) }, "Verify again"));
  if (audit) {
    auditCard.append(...[
      h("div", { class: "row" }, audit.ok ? h("span", { class: "tag green", id: "audit-ok" }, "hash chain verified") : h("span", { class: "tag red", id: "audit-ok" }, "PROBLEMS FOUND"),
        h("span", {}, `${audit.events} events · ${audit.snapshots} snapshots`)),
      audit.head ? h("div", { class: "mono muted" }, `head #${audit.head.seq} ${audit.head.hash}`) : null,
      audit.problems.length ? h("table", { class: "data" }, h("tbody", {}, audit.problems.map((p) => h("tr", {}, h("td", {}, `#${p.seq}`), h("td", {}, p.what), h("td", {}, p.detail))))) : null,
    ].filter(Boolean));
  }
  if (events) {
    auditCard.append(h("h2", {}, "Log (latest first)"), h("div", { class: "feed", style: "max-height:420px" }, [...events].reverse().map((e) => {
      const d = describe(e, null);
      return h("div", { class: `line ${d.cls ? `ev-${d.cls}` : ""}`, title: e.rule }, h("span", { class: "seq" }, `#${e.seq}`), h("span", {}, `${fmtTime(e.at)} · ${e.actor} (${e.role}) · ${d.text}`));
    })));
  }
  const recallCard = card("pit-recall", `Game recall · ${tableId}`, null);
  if (recall) {
    recallCard.append(h("div", { class: "scroll" }, recall.length ? [...recall].reverse().map((r) => h("div", { class: "recall-round" },
      h("div", { class: "head" }, h("span", {}, r.label, r.complete ? "" : h("span", { class: "tag gold", style: "margin-left:6px" }, "in progress")),
        h("span", { class: "muted" }, r.complete ? `${fmtTime(r.started)} – ${fmtTime(r.ended)}` : `since ${fmtTime(r.started)}`)),
      h("div", { class: "row", style: "gap:4px" }, r.rolls.map((roll) => roll.roll ? [dieIcon(faces(roll.roll)[0], 16), dieIcon(faces(roll.roll)[1], 16), ` ${roll.total}${roll.shooter ? ` shot by ${roll.shooter}` : ""} (recorded by ${roll.actor}) `] : "unreadable "),
        r.no_roll ? h("span", { class: "tag red" }, `no roll: ${r.no_roll.join(", ")}`) : null,
        r.seven_out ? h("span", { class: "tag red" }, "seven out") : null),
      r.wagers.length ? h("div", {}, `Wagers: ${r.wagers.map((w) => `${w.player} ${w.wager} ${money(w.amount)}`).join(", ")}`) : null,
      r.collections.length ? h("div", { style: "color:#ffb3aa" }, `Collected: ${r.collections.map((c) => `${c.player} ${c.wager} ${money(c.amount)}`).join(", ")}`) : null,
      r.payments.length ? h("div", { style: "color:#a5e8bb" }, `Paid: ${r.payments.map((p) => `${p.player} ${p.wager} ${money(p.win)}`).join(", ")}`) : null,
      r.returns.length ? h("div", { style: "color:var(--warn)" }, `Returned: ${r.returns.map((p) => `${p.player} ${p.wager} ${money(p.amount)}`).join(", ")}`) : null,
      h("div", { class: "muted" }, `House ${money(r.house_before ?? 0)} → ${money(r.house_after ?? 0)}`)))
      : h("div", { class: "muted" }, "No rounds yet.")));
  }
  replace(detail, auditCard, recallCard);
}

function drawAccounts() {
  const now = serverNow();
  replace(accountsEl, h("table", { class: "data", id: "accounts-table" },
    h("thead", {}, h("tr", {}, h("th", {}, "Account"), h("th", {}, "Kind"), h("th", {}, "Status"), h("th", {}, ""))),
    h("tbody", {}, st.pit.accounts.map((a) => {
      const locked = a.locked_until && Date.parse(a.locked_until) > now;
      return h("tr", { dataset: { account: a.username } }, h("td", {}, h("b", {}, a.username)), h("td", {}, a.kind),
        h("td", {}, locked ? h("span", { class: "tag red" }, `locked until ${fmtTime(a.locked_until)}`) : h("span", { class: "tag green" }, "active")),
        h("td", {}, locked ? h("button", { class: "btn small", dataset: { unlock: a.username }, onclick: () => unlock(a.username) }, "Unlock") : null));
    }))));
}

async function unlock(username) {
  const r = await attempt(() => post(`/api/accounts/${encodeURIComponent(username)}/unlock`));
  if (r) refresh();
}

await refresh();
window.dicetable = { st, refresh, link, serverNow };
