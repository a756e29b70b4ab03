// The dice room console (security, the shift manager, the pit boss): every custody step from
// receipt to cancellation, checked by the server against the site's custody rules (a refusal
// shows its rule and citation); the report of every die in the building and the pit,
// cancellation-room and inventory logs, printable.

import { Refusal, floorPush, get, post, whoami } from "./api.js";
import { attempt, h, replace, showRefusal, topbar } from "./ui.js";

const account = await whoami();
if (account.kind === "player") location.replace("/play");
topbar(account, "Dice room", [["Pit", "/pit"], ["Tables", "/"]]);
const main = h("main", { class: "page stack" });
document.body.append(main);

const room = await attempt(() => get("/api/dice-room"));
const st = { site: null, report: null, result: [] };
const list = (text) => text.split(/[\s,]+/).map((x) => x.trim()).filter(Boolean);
const MAX_RANGE = 500;
/** Serials typed, scanned (one a line) or as ranges: ``T0001..T0010``, or ``D0001-D0010``
 * where both ends share their letters (``PA1-1`` is one serial: its ends do not). */
export function serialsOf(text) {
  const out = [];
  for (const token of list(text)) {
    const m = token.includes("..") ? /^(.+?)\.\.(.+)$/.exec(token) : /^(.+?)-(.+)$/.exec(token);
    const a = m && /^(.*?)(\d+)$/.exec(m[1]);
    const b = m && /^(.*?)(\d+)$/.exec(m[2]);
    if (a && b && a[1] === b[1] && (token.includes("..") || a[1] !== "") && Number(b[2]) >= Number(a[2]) && Number(b[2]) - Number(a[2]) < MAX_RANGE) {
      const width = a[2].length === b[2].length ? a[2].length : 0;
      for (let n = Number(a[2]); n <= Number(b[2]); n++) out.push(`${a[1]}${String(n).padStart(width, "0")}`);
    } else {
      out.push(token);
    }
  }
  return out;
}
const val = (form, name) => form.elements[name].value.trim();
const checked = (form, name) => form.elements[name].checked;
const TOOLS = ["micrometer", "balancing-caliper", "steel-set-square", "magnet"];
const CHECKS = ["logo", "serial", "flat-faces", "square-edges", "balanced", "no-magnetic-load", "opposite-faces", "finish", "spots"];

// -- the steps: fields and how each builds its request ----------------------------------------
const text = (name, label, value = "") => ({ name, label, value });
const diceField = (label = "Dice") => ({ name: "dice", label: `${label} (scan, type or a range)`, serials: true });
const present = (hint) => text("present", `Also present (accounts) — ${hint}`);
const STEPS = [
  { step: "receive", title: "Receive a shipment", fields: [text("shipment", "Shipment"), text("manufacturer", "Manufacturer"), text("address", "Business address"), text("phone", "Business telephone"),
      text("box", "Box = serials (e.g. B1=D0001-D0010)"), { name: "seal_failed", label: "The box's seal failed (open and inspect it now)", check: true },
      text("findings", "Findings in an opened box: SERIAL=problem; ..."), text("delivery_witness", "Gaming agent present at the delivery (where the rules ask)"), present("security")],
    body: (f) => {
      const [box, serials] = val(f, "box").split("=");
      return { shipment: val(f, "shipment"), manufacturer: val(f, "manufacturer"), address: val(f, "address"), phone: val(f, "phone"),
        boxes: [{ box: (box || "").trim(), serials: serialsOf(serials || ""), seal_intact: !checked(f, "seal_failed") }],
        findings: val(f, "findings").split(";").map((x) => x.trim()).filter(Boolean).map((x) => {
          const [serial, problem] = x.split("="); return { serial: serial.trim(), problem: (problem || "").trim(), tampering: /tamper/i.test(problem || "") };
        }), delivery_witness: val(f, "delivery_witness"), present: list(val(f, "present")) };
    } },
  { step: "key-draw", title: "Draw a storage key", fields: [{ name: "key", label: "Key", options: ["security", "table-games"] }], body: (f) => ({ key: val(f, "key") }) },
  { step: "key-return", title: "Return a storage key", fields: [{ name: "key", label: "Key", options: ["security", "table-games"] }], body: (f) => ({ key: val(f, "key") }) },
  { step: "store", title: "Store received dice", fields: [diceField(), text("area", "Storage area", "dice-storage"), present("the other key holder")],
    body: (f) => ({ dice: serialsOf(val(f, "dice")), area: val(f, "area"), present: list(val(f, "present")) }) },
  { step: "issue-day", title: "Issue for the gaming day", fields: [diceField(), text("gaming_day", "Gaming day (YYYY-MM-DD, empty: today)"), present("security, the other key holder")],
    body: (f) => ({ dice: serialsOf(val(f, "dice")), gaming_day: val(f, "gaming_day") || null, present: list(val(f, "present")) }) },
  { step: "inspect", title: "Inspect before play", fields: [diceField(), text("measurements", "Three sides in inches, each die", "0.7500 0.7500 0.7500"),
      text("failed", "Checks failed: SERIAL=check; ... (" + CHECKS.join(", ") + ")"), { name: "under_surveillance", label: "Under surveillance", check: true, checked: true },
      { name: "tools", label: "Tools used", multi: TOOLS }, present("surveillance")],
    body: (f) => {
      const failed = {};
      val(f, "failed").split(";").map((x) => x.trim()).filter(Boolean).forEach((x) => { const [s, c] = x.split("="); (failed[s.trim()] ||= []).push((c || "").trim()); });
      const sides = list(val(f, "measurements"));
      return { checks: serialsOf(val(f, "dice")).map((serial) => ({ serial, measurements: sides, failed: failed[serial] || [] })),
        tools: TOOLS.filter((t) => f.elements[`tools-${t}`].checked), under_surveillance: checked(f, "under_surveillance"), present: list(val(f, "present")) };
    } },
  { step: "issue-table", title: "Issue to a table", fields: [diceField(), { name: "table", label: "Table", tables: true }, text("received_by", "Received at the table by (account)"),
      { name: "shaker", label: "Load a shaker (Props & Hops)", check: true }],
    body: (f) => ({ dice: serialsOf(val(f, "dice")), table: val(f, "table"), received_by: val(f, "received_by"), shaker: checked(f, "shaker") }) },
  { step: "remove", title: "Remove dice", fields: [diceField(), { name: "reason", label: "Reason", options: ["routine", "flawed", "defective", "tampered"] },
      text("signs", "Tampering: what suggests it"), text("table_staff", "Tampering: every licensee at the table (accounts)"), text("envelope", "Tampering: envelope number"), text("detail", "Detail"), present("optional")],
    body: (f) => ({ dice: serialsOf(val(f, "dice")), reason: val(f, "reason"), signs: val(f, "signs"), table_staff: list(val(f, "table_staff")), envelope: val(f, "envelope"), detail: val(f, "detail"), present: list(val(f, "present")) }) },
  { step: "deliver", title: "Envelope to the enforcement agent", fields: [text("envelope", "Envelope"), text("agent", "Agent")], body: (f) => ({ envelope: val(f, "envelope"), agent: val(f, "agent") }) },
  { step: "transfer", title: "To the cancellation room", fields: [diceField(), text("accepted_by", "Accepted in the room by (account)")], body: (f) => ({ dice: serialsOf(val(f, "dice")), accepted_by: val(f, "accepted_by") }) },
  { step: "cancel", title: "Cancel dice", fields: [diceField(), { name: "method", label: "Method", options: ["drill", "shred", "approved"] }, text("hole_in", "Hole (inches)", "0.25"),
      text("approval", "Approved method: the approval"), present("surveillance")],
    body: (f) => ({ dice: serialsOf(val(f, "dice")), method: val(f, "method"), hole_in: val(f, "method") === "drill" ? val(f, "hole_in") : null, approval: val(f, "approval"), present: list(val(f, "present")) }) },
  { step: "inventory", title: "Quarterly physical inventory", fields: [{ name: "counted", label: "Every die found (serials)", area: true }, present("security")],
    body: (f) => ({ counted: serialsOf(val(f, "counted")), present: list(val(f, "present")) }), extra: (form) => h("button", { type: "button", class: "btn small", dataset: { fill: "inventory" },
      onclick: () => { form.elements.counted.value = (st.report ? st.report.dice.filter((d) => d.in_building).map((d) => d.serial) : []).join(" "); } }, "Fill from the record") },
  { step: "transport-notice", title: "Transport notice (IN 14-3-10)", fields: [text("notice", "Notice id"), text("supplier", "Supplier: name; address; telephone"), text("method", "Method of transportation"),
      text("carriers", "Carriers: name; address; telephone | ..."), text("recipient", "Recipient: name; address; telephone"), text("responsible", "Responsible: supplier; carrier; recipient"),
      text("quantity", "Quantity"), text("description", "Description"), text("delivery_at", "Expected delivery (ISO time)"), text("notified_at", "Notified the executive director at (ISO time, empty: now)")],
    body: (f) => {
      const party = (t) => { const [name, address, phone] = t.split(";").map((x) => (x || "").trim()); return { name: name || "", address: address || "", phone: phone || "" }; };
      const [rs, rc, rr] = val(f, "responsible").split(";").map((x) => x.trim());
      return { notice: val(f, "notice"), supplier: party(val(f, "supplier")), method: val(f, "method"), carriers: val(f, "carriers").split("|").filter((x) => x.trim()).map(party),
        recipient: party(val(f, "recipient")), responsible_supplier: rs || "", responsible_carrier: rc || "", responsible_recipient: rr || "",
        quantity: Number(val(f, "quantity") || 0), description: val(f, "description"), delivery_at: val(f, "delivery_at"), notified_at: val(f, "notified_at") || null };
    } },
  { step: "receipt-proof", title: "Prove receipt (IN 14-3-10(b))", fields: [text("notice", "Notice id"), text("shipment", "Shipment received"), text("requested_by", "Requested by")],
    body: (f) => ({ notice: val(f, "notice"), shipment: val(f, "shipment"), requested_by: val(f, "requested_by") }) },
];

function field(spec) {
  if (spec.check) return h("label", { class: "check" }, h("input", { type: "checkbox", name: spec.name, checked: !!spec.checked }), spec.label);
  if (spec.options) return h("label", {}, spec.label, h("select", { name: spec.name }, spec.options.map((o) => h("option", { value: o }, o))));
  if (spec.tables) return h("label", {}, spec.label, h("input", { type: "text", name: spec.name, list: "tables-list" }));
  if (spec.area) return h("label", {}, spec.label, h("textarea", { name: spec.name }));
  if (spec.serials) return h("label", {}, spec.label, h("textarea", { name: spec.name, rows: 1, placeholder: "PA1-S1 PA1-S2 or T0001..T0010" }));
  if (spec.multi) return h("div", { class: "row" }, spec.multi.map((t) => h("label", { class: "check" }, h("input", { type: "checkbox", name: `tools-${t}`, checked: true }), t)));
  return h("label", {}, spec.label, h("input", { type: "text", name: spec.name, value: spec.value || "" }));
}

// -- who signs, who must be present (the site's custody pack) ------------------------------------
const CANONICAL = new Map((room ? room.steps : []).flatMap((x) => [[x.name, x.name], ...x.aliases.map((a) => [a, x.name])]));
const words = (role) => role.replace(/-/g, " ");
const roleOf = (name) => { const p = room && room.roster.find((x) => x.name === name); return p ? p.role : null; };
const guideOf = (step) => { const site = room && room.sites.find((x) => x.site === st.site); return site ? site.guide[CANONICAL.get(step) || step] : null; };

/** The groups no one named covers: one distinct person from each group must take part. */
function missingGroups(groups, people) {
  const roles = people.map(roleOf);
  let best = groups;
  const assign = (i, used, left) => {
    if (left.length < best.length) best = left;
    if (i === groups.length) return;
    let placed = false;
    roles.forEach((r, k) => {
      if (!used.has(k) && groups[i].includes(r)) { placed = true; assign(i + 1, new Set([...used, k]), left.filter((g) => g !== groups[i])); }
    });
    if (!placed) assign(i + 1, used, left);
  };
  assign(0, new Set(), groups);
  return best;
}

/** Why this step would be refused for who is here, before anything is sent (else null). */
function earlyRefusal(step, form) {
  const g = guideOf(step);
  if (!g || !me) return null;
  const cite = { rule: g.rule, citation: g.citation };
  if (g.sign.length && !g.sign.includes(me.role)) {
    return { ...cite, message: `a ${words(me.role)} may not sign this step: ${g.sign.map(words).join(", ")} may` };
  }
  const present = form.elements.present ? list(form.elements.present.value) : [];
  const unknown = present.filter((p) => !roleOf(p));
  if (unknown.length) return { rule: "custody.person", citation: "", message: `not on the site's staff list: ${unknown.join(", ")}` };
  const missing = missingGroups(g.groups, [me.name, ...present]);
  if (missing.length) {
    return { ...cite, message: `someone must be present: ${missing.map((x) => `a ${x.map(words).join(" or ")}`).join(", and ")} (name them under "Also present")` };
  }
  return null;
}

function guideLine(step) {
  const g = guideOf(step);
  if (!g) return null;
  const mine = me && g.sign.includes(me.role);
  const keys = Object.entries(g.keys).map(([k, r]) => `${k} key: ${r.map(words).join(", ")}`).join("; ");
  return h("div", { class: "guide", dataset: { guide: step }, title: `${g.rule}${g.citation ? ` — ${g.citation}` : ""}${keys ? `\n${keys}` : ""}` },
    h("div", { class: "who-signs" }, h("b", {}, "Signs: "), g.sign.length ? g.sign.map(words).join(", ") : "any member of staff",
      g.groups.length ? h("span", { class: "who-present" }, h("b", {}, " · Present: "), g.groups.map((x) => `one ${x.map(words).join(" or ")}`).join(" and ")) : null,
      g.surveillance ? h("span", {}, " · under surveillance") : null),
    h("div", { class: mine ? "ok you-may" : "alert you-may-not" }, mine ? `You (${words(me.role)}) may sign (${g.rule}).` : `You (${words(me ? me.role : "?")}) may not sign: ask ${g.sign.map(words).join(" or ")} (${g.rule}).`));
}

function stepCard(spec) {
  const form = h("form", { id: `step-${spec.step}`, dataset: { step: spec.step } }, spec.fields.map(field));
  form.append(h("div", { class: "row" }, h("button", { type: "submit", class: "btn primary" }, spec.title), spec.extra ? spec.extra(form) : null));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const early = earlyRefusal(spec.step, form);
    if (early) {
      showRefusal(new Refusal(0, { error: "Not sent", ...early }));
      return;
    }
    // the ledger decides the step first without taking it: refused, nothing is sent
    const path = `/api/dice-room/${encodeURIComponent(st.site)}/${spec.step}`;
    const body = spec.body(form);
    const check = await attempt(() => post(`${path}/check`, body));
    if (!check) return;
    if (!check.ok) {
      showRefusal(new Refusal(0, { error: "Not sent", message: check.message, rule: check.rule, citation: check.citation }));
      return;
    }
    const r = await attempt(() => post(path, body));
    if (r) {
      st.result = r.events;
      drawResult();
      await load();
    }
  });
  const guide = h("div", { class: "guide-slot" });
  guides.set(spec.step, guide);
  return h("section", { class: "card", dataset: { stepCard: spec.step } }, h("header", {}, h("h2", {}, spec.title)), guide, form);
}
const guides = new Map();
function drawGuides() {
  for (const [step, slot] of guides) replace(slot, guideLine(step));
}

// -- the page ---------------------------------------------------------------------------------
const siteSel = h("select", { id: "site", "aria-label": "site", onchange: () => { st.site = siteSel.value; st.seen = null; drawGuides(); load(); } },
  (room ? room.sites : []).map((s) => h("option", { value: s.site }, `${s.site} (${s.jurisdiction}, ${s.pack})`)));
const askedTable = new URLSearchParams(location.search).get("table");

/** The site this page opens at: the one of the table asked for (``?table=``), else of the
 * tables this account works (most of them), else of most of the floor's tables. */
async function mySite() {
  if (!room || !room.sites.length) return null;
  const siteOf = (jurisdiction) => (room.sites.find((x) => x.jurisdiction.toLowerCase() === String(jurisdiction).toLowerCase()) || {}).site;
  if (askedTable && room.tables[askedTable]) return siteOf(room.tables[askedTable]) || room.sites[0].site;
  const tables = (await attempt(() => get("/api/tables"))) || [];
  const count = (pick) => {
    const n = new Map();
    for (const t of tables.filter(pick)) { const site = siteOf(room.tables[t.table]); if (site) n.set(site, (n.get(site) || 0) + 1); }
    return [...n.entries()].sort((a, b) => b[1] - a[1])[0];
  };
  const best = count((t) => t.my_roles.length) || count(() => true);
  return best ? best[0] : room.sites[0].site;
}
st.site = await mySite();
if (st.site) siteSel.value = st.site;
const zone = () => { const site = room && room.sites.find((x) => x.site === st.site); return site ? site.zone : undefined; };
/** A date and time in the site's own time zone, with the zone: "Dec 2, 2026, 9:58 AM EST". */
const when = (iso) => iso ? new Intl.DateTimeFormat("en-US", { timeZone: zone(), year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", timeZoneName: "short" }).format(new Date(iso)) : "";
const HEADERS = {
  date: "Date", dice_removed: "Dice removed", game_removed_from: "Removed from (game)", pit_manager: "Pit manager",
  pit_manager_licence: "Pit manager's licence", signed_by: "Signed by", entry: "Entry", dice: "Dice", person: "Person",
  licence: "Licence", method: "Method", uncancelled_dice_held: "Dice held, not yet cancelled", quantity: "Quantity",
  shipment: "Shipment", manufacturer: "Manufacturer", address: "Business address", phone: "Telephone",
  counted: "Counted", on_record: "On record", missing: "Missing", unexpected: "Not on record",
};
/** A server's line of words with its ISO times put in the site's zone, as every date here. */
const human = (text) => String(text).replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})?/g, (m) => when(m));
const header = (c) => HEADERS[c] || (c.charAt(0).toUpperCase() + c.slice(1)).replace(/_/g, " ");
const ISO = /^\d{4}-\d{2}-\d{2}T/;
const cell = (v) => Array.isArray(v) ? v.join(", ") : v == null ? "" : ISO.test(String(v)) ? when(v) : String(v);
const me = room ? room.me : null;
const resultEl = h("div", { class: "step-result", id: "result" });
const lastEl = h("div", { class: "step-result", id: "last-step" });
const alertsEl = h("div", { id: "custody-alerts" });
const reportEl = h("div", { id: "report" });
const logsEl = h("div", { id: "logs" });
const tablesList = h("datalist", { id: "tables-list" });

main.append(
  tablesList,
  h("section", { class: "card no-print" }, h("header", {}, h("h2", {}, "Site"), h("span", { class: "muted", id: "me" }, me ? `${me.name} · ${me.role} · licence ${me.licence}` : "")),
    h("div", { class: "row" }, siteSel, h("button", { class: "btn small", id: "print", onclick: () => window.print() }, "Print the report and logs")),
    h("div", { class: "muted" }, "Each step is checked against the site's custody rules; the people present are named by their accounts.")),
  h("section", { class: "card" }, h("header", {}, h("h2", {}, "Open custody alerts")), alertsEl),
  h("section", { class: "card no-print" }, h("header", {}, h("h2", {}, "Last step at this site")), lastEl,
    h("div", { class: "muted" }, "Your own last step:"), resultEl),
  h("div", { class: "steps" }, STEPS.map(stepCard)),
  h("section", { class: "card" }, h("header", {}, h("h2", {}, "Every die in the building")), reportEl),
  h("section", { class: "card" }, h("header", {}, h("h2", {}, "Logs")), logsEl));

function drawResult() {
  replace(resultEl, st.result.map((e) => h("div", { class: e.alert ? "alert" : "ok", dataset: { event: e.type } }, `#${e.seq} ${human(e.summary)}`, h("div", { class: "muted" }, e.rule))));
}

/** The site's last step, whoever took it (updated for every open page). */
function drawLast(last) {
  replace(lastEl, last ? h("div", { class: last.alert ? "alert" : "ok", dataset: { lastEvent: last.type } },
    `#${last.seq} ${when(last.at)} · ${last.actor}: ${human(last.summary)}`) : h("span", { class: "muted" }, "nothing yet"));
}

function rows(data, cols) {
  return h("table", { class: "data" }, h("thead", {}, h("tr", {}, cols.map((c) => h("th", {}, header(c))))),
    h("tbody", {}, data.map((r) => h("tr", {}, cols.map((c) => h("td", {}, cell(r[c])))))));
}

async function load() {
  if (!st.site) return;
  const site = encodeURIComponent(st.site);
  const [report, pit, cancellation, inventory, tables] = await Promise.all([
    attempt(() => get(`/api/dice-room/${site}/report`)), attempt(() => get(`/api/dice-room/${site}/logs/pit`)),
    attempt(() => get(`/api/dice-room/${site}/logs/cancellation`)), attempt(() => get(`/api/dice-room/${site}/logs/inventory`)),
    attempt(() => get("/api/tables"))]);
  if (tables) replace(tablesList, tables.map((t) => h("option", { value: t.table }, t.name)));
  if (!report) return;
  st.report = report;
  st.seen = report.events;
  drawLast(report.last);
  replace(alertsEl, report.open_alerts.length ? report.open_alerts.map((a) => h("div", { class: "alert-line", dataset: { alert: a.type } }, `${when(a.at)} · ${human(a.message)}`, h("span", { class: "muted" }, ` [${a.rule}]`)))
    : h("div", { class: "muted" }, "none"));
  replace(reportEl,
    h("div", { class: "print-only" }, `Dice custody report: ${report.site} (${report.jurisdiction}, ${report.pack}) as of ${report.as_of}`),
    h("div", { class: "muted" }, `${report.in_building} dice in the building · ` + Object.entries(report.by_state).filter(([, n]) => n).map(([k, n]) => `${k} ${n}`).join(" · ")
      + (Object.keys(report.keys).length ? ` · keys out: ${Object.entries(report.keys).map(([k, p]) => `${k}: ${p}`).join("; ")}` : "")),
    h("table", { class: "data report-table", id: "report-table" },
      h("thead", {}, h("tr", {}, ["Serial", "State", "Where", "Table", "Inspected", "In play until", "History"].map((c) => h("th", {}, c)))),
      h("tbody", {}, report.dice.map((d) => h("tr", { dataset: { serial: d.serial, state: d.state } },
        h("td", {}, h("b", {}, d.serial)), h("td", { class: `state-${d.state}` }, d.state), h("td", {}, d.location), h("td", {}, d.table || ""),
        h("td", {}, when(d.inspected_at)), h("td", { class: "until" }, when(d.expires_at)),
        h("td", { class: "history" }, d.history.map((x) => h("div", { title: x.rule }, `#${x.seq} ${when(x.at)} ${human(x.summary)}`))))))));
  replace(logsEl,
    h("h3", {}, "Pit log (removals and transfers)"), pit ? rows(pit, ["date", "dice_removed", "game_removed_from", "pit_manager", "pit_manager_licence", "signed_by"]) : "",
    h("h3", {}, "Cancellation-room log"), cancellation ? h("div", { id: "cancellation-log" }, rows(cancellation, ["date", "entry", "dice", "person", "licence", "method", "uncancelled_dice_held"])) : "",
    h("h3", {}, "Inventory: receipts"), inventory ? rows(inventory.receipts, ["date", "quantity", "shipment", "manufacturer", "address", "phone"]) : "",
    h("h3", {}, "Inventory: physical counts"), inventory ? rows(inventory.physical_inventories, ["date", "counted", "on_record", "missing", "unexpected"]) : "");
}

drawGuides();
await load();
if (askedTable) for (const input of document.querySelectorAll("input[name='table']")) input.value = askedTable;

// Live for everyone in the room: a step another person takes shows here at once (pushed), or
// within seconds while the push is shut.
async function follow() {
  if (!st.site) return;
  try {
    const head = await get(`/api/dice-room/${encodeURIComponent(st.site)}/head`);
    if (head.events !== st.seen) await load();
  } catch (e) { /* the next look tries again */ }
}
const pushed = floorPush(["custody"], follow);
setInterval(() => { if (!pushed()) follow(); }, 3000);
window.dicetable = { st, load, serialsOf };
