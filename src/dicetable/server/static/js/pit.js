// The pit console: every table at a glance (phase, point, shooter, dice and their 24-hour
// timers, alerts), the audit (hash-chain verification and the log) and game recall of any table,
// and unlocking a locked account.

import { get, post, tablePath, whoami } from "./api.js";
import { ratingsSection } from "./pit-ratings.js";
import { attempt, describe, dieIcon, faces, fmtTime, h, money, replace, showRefusal, topbar } from "./ui.js";

const account = await whoami();
if (account.kind === "player") location.replace("/play");  // not a player's page
topbar(account, "Pit console", [["Tables", "/"]]);
const main = h("main", { class: "page stack" });
document.body.append(main);

const st = { pit: null, selected: null, drawn: null };
const floorEl = h("div", { class: "floor", id: "floor" });
const detail = h("div", { class: "pit-detail", id: "detail" });
const accountsEl = h("div", { id: "accounts" });
const faultsEl = h("div", { id: "faults" });
const custodyEl = h("div", { id: "pit-custody" });

main.append(
  faultsEl,
  h("section", { class: "stack" }, h("h2", {}, "The floor"), floorEl),
  h("section", { class: "card", id: "custody-card" }, h("header", {}, h("h2", {}, "Dice custody"), h("a", { class: "btn small", href: "/dice-room" }, "Dice room")), custodyEl),
  ratingsSection(),
  detail,
  h("section", { class: "card", id: "accounts-card" }, h("header", {}, h("h2", {}, "Accounts"), h("span", { class: "muted" }, "an account locks after repeated failed logins")), accountsEl));

async function refresh() {
  try {
    st.pit = await get("/api/pit");
  } catch (e) {
    if (!st.pit) showRefusal(e);
    return;
  }
  // Redraw only what changed (and the dice timers once a minute): a redraw under the pointer
  // would swallow a click.
  const key = JSON.stringify(st.pit) + Math.floor(Date.now() / 60000);
  if (key === st.drawn) return;
  st.drawn = key;
  drawFaults();
  drawFloor();
  drawAccounts();
}

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
        h("span", { class: `pill phase-${t.phase}` }, t.phase),
        !puck ? null : t.point ? h("span", { class: "pill on" }, `ON ${t.point}`) : h("span", { class: "pill off" }, "OFF"))),
    h("dl", { class: "kv" },
      h("dt", {}, shaker ? "Shaker" : "Shooter"), h("dd", {}, (shaker ? t.shaker_holder : t.shooter) || "—"),
      h("dt", {}, "Players"), h("dd", {}, `${t.players} · ${money(t.on_layout)} on the layout`),
      h("dt", {}, "House"), h("dd", { class: "num" }, money(t.house)),
      h("dt", {}, "Last roll"), h("dd", {}, last ? h("span", { class: "row", style: "gap:3px" }, ...faces(last.roll).map((n) => dieIcon(n, 16)), ` ${last.total ?? "?"}${last.valid ? "" : " (no roll)"}`) : "—"),
      h("dt", {}, "Money"), h("dd", {}, t.conserved ? h("span", { class: "tag green" }, "conserved") : h("span", { class: "tag red" }, "NOT conserved"))),
    h("div", { class: "dice-timers", title: `dice are replaced within ${maxH} hours of reaching the table` },
      Object.keys(t.dice).length ? Object.entries(t.dice).map(([serial, since]) => {
        const left = Date.parse(since) + maxH * 3600_000 - Date.now();
        return h("span", { class: `dice-timer ${left <= 0 ? "expired" : left < 3600_000 ? "low" : ""}`, dataset: { serial }, title: `arrived ${since}` }, `${serial} · ${hoursLeft(left)}`);
      }) : h("span", { class: "muted" }, t.mode === "electronic" ? "RNG: no physical dice" : "no dice at the table")),
    t.bets_close_at ? h("div", { class: "muted" }, `bets close at ${fmtTime(t.bets_close_at)}`) : null,
    (t.alerts.some((a) => t.blocked || a.name !== "dice-expired") || t.fairness.length || t.blocked) ? h("div", { class: "alerts" },
      t.blocked ? h("div", { class: "alert-line" }, "Play is blocked") : null,
      // a blocking alert (dice past their hours) stands until play resumes: then it is history
      t.alerts.filter((a) => t.blocked || a.name !== "dice-expired").map((a) => h("div", { class: "alert-line", dataset: { alert: a.name } }, `${a.name}: ${a.message}`)),
      t.fairness.map((a) => h("div", { class: "alert-line" }, `Fairness: die ${a.serial} shows face ${a.face} too often (${a.rolls} rolls)`))) : null,
    h("div", { class: "row" },
      h("button", { class: "btn small", onclick: (e) => { e.stopPropagation(); select(t.table); } }, "Audit & recall"),
      h("a", { class: "btn small", href: `/dealer?table=${encodeURIComponent(t.table)}`, onclick: (e) => e.stopPropagation() }, "Console"),
      h("a", { class: "btn small", href: tablePath(t.table, "/rules-submission"), target: "_blank", dataset: { submission: t.table }, onclick: (e) => e.stopPropagation() }, "Rules submission")));
  }));
  drawCustody();
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
  const auditCard = h("section", { class: "card", id: "audit" }, h("header", {}, h("h2", {}, `Audit · ${tableId}`),
    h("button", { class: "btn small", onclick: () => select(tableId) }, "Verify again")));
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
  const recallCard = h("section", { class: "card", id: "pit-recall" }, h("header", {}, h("h2", {}, `Game recall · ${tableId}`)));
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
  const now = Date.now();
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
setInterval(refresh, 3000);
window.dicetable = { st, refresh };
