// The dice room console (security, the shift manager, the pit boss): every custody step from
// receipt to cancellation, checked by the server against the site's custody rules (a refusal
// shows its rule and citation); the report of every die in the building and the pit,
// cancellation-room and inventory logs, printable.

import { get, post, whoami } from "./api.js";
import { attempt, fmtTime, h, replace, topbar } from "./ui.js";

const account = await whoami();
if (account.kind === "player") location.replace("/play");
topbar(account, "Dice room", [["Pit", "/pit"], ["Tables", "/"]]);
const main = h("main", { class: "page stack" });
document.body.append(main);

const room = await attempt(() => get("/api/dice-room"));
const st = { site: null, report: null, result: [] };
const list = (text) => text.split(/[\s,]+/).map((x) => x.trim()).filter(Boolean);
const val = (form, name) => form.elements[name].value.trim();
const checked = (form, name) => form.elements[name].checked;
const TOOLS = ["micrometer", "balancing-caliper", "steel-set-square", "magnet"];
const CHECKS = ["logo", "serial", "flat-faces", "square-edges", "balanced", "no-magnetic-load", "opposite-faces", "finish", "spots"];

// -- the steps: fields and how each builds its request ----------------------------------------
const text = (name, label, value = "") => ({ name, label, value });
const present = (hint) => text("present", `Also present (accounts) — ${hint}`);
const STEPS = [
  { step: "receive", title: "Receive a shipment", fields: [text("shipment", "Shipment"), text("manufacturer", "Manufacturer"), text("address", "Business address"), text("phone", "Business telephone"),
      text("box", "Box = serials (e.g. B1=D0001-D0010)"), { name: "seal_failed", label: "The box's seal failed (open and inspect it now)", check: true },
      text("findings", "Findings in an opened box: SERIAL=problem; ..."), text("delivery_witness", "Gaming agent present at the delivery (where the rules ask)"), present("security")],
    body: (f) => {
      const [box, serials] = val(f, "box").split("=");
      return { shipment: val(f, "shipment"), manufacturer: val(f, "manufacturer"), address: val(f, "address"), phone: val(f, "phone"),
        boxes: [{ box: (box || "").trim(), serials: list(serials || ""), seal_intact: !checked(f, "seal_failed") }],
        findings: val(f, "findings").split(";").map((x) => x.trim()).filter(Boolean).map((x) => {
          const [serial, problem] = x.split("="); return { serial: serial.trim(), problem: (problem || "").trim(), tampering: /tamper/i.test(problem || "") };
        }), delivery_witness: val(f, "delivery_witness"), present: list(val(f, "present")) };
    } },
  { step: "key-draw", title: "Draw a storage key", fields: [{ name: "key", label: "Key", options: ["security", "table-games"] }], body: (f) => ({ key: val(f, "key") }) },
  { step: "key-return", title: "Return a storage key", fields: [{ name: "key", label: "Key", options: ["security", "table-games"] }], body: (f) => ({ key: val(f, "key") }) },
  { step: "store", title: "Store received dice", fields: [text("dice", "Dice"), text("area", "Storage area", "dice-storage"), present("the other key holder")],
    body: (f) => ({ dice: list(val(f, "dice")), area: val(f, "area"), present: list(val(f, "present")) }) },
  { step: "issue-day", title: "Issue for the gaming day", fields: [text("dice", "Dice"), text("gaming_day", "Gaming day (YYYY-MM-DD, empty: today)"), present("security, the other key holder")],
    body: (f) => ({ dice: list(val(f, "dice")), gaming_day: val(f, "gaming_day") || null, present: list(val(f, "present")) }) },
  { step: "inspect", title: "Inspect before play", fields: [text("dice", "Dice"), text("measurements", "Three sides in inches, each die", "0.7500 0.7500 0.7500"),
      text("failed", "Checks failed: SERIAL=check; ... (" + CHECKS.join(", ") + ")"), { name: "under_surveillance", label: "Under surveillance", check: true, checked: true },
      { name: "tools", label: "Tools used", multi: TOOLS }, present("surveillance")],
    body: (f) => {
      const failed = {};
      val(f, "failed").split(";").map((x) => x.trim()).filter(Boolean).forEach((x) => { const [s, c] = x.split("="); (failed[s.trim()] ||= []).push((c || "").trim()); });
      const sides = list(val(f, "measurements"));
      return { checks: list(val(f, "dice")).map((serial) => ({ serial, measurements: sides, failed: failed[serial] || [] })),
        tools: TOOLS.filter((t) => f.elements[`tools-${t}`].checked), under_surveillance: checked(f, "under_surveillance"), present: list(val(f, "present")) };
    } },
  { step: "issue-table", title: "Issue to a table", fields: [text("dice", "Dice"), { name: "table", label: "Table", tables: true }, text("received_by", "Received at the table by (account)"),
      { name: "shaker", label: "Load a shaker (Props & Hops)", check: true }],
    body: (f) => ({ dice: list(val(f, "dice")), table: val(f, "table"), received_by: val(f, "received_by"), shaker: checked(f, "shaker") }) },
  { step: "remove", title: "Remove dice", fields: [text("dice", "Dice"), { name: "reason", label: "Reason", options: ["routine", "flawed", "defective", "tampered"] },
      text("signs", "Tampering: what suggests it"), text("table_staff", "Tampering: every licensee at the table (accounts)"), text("envelope", "Tampering: envelope number"), text("detail", "Detail"), present("optional")],
    body: (f) => ({ dice: list(val(f, "dice")), reason: val(f, "reason"), signs: val(f, "signs"), table_staff: list(val(f, "table_staff")), envelope: val(f, "envelope"), detail: val(f, "detail"), present: list(val(f, "present")) }) },
  { step: "deliver", title: "Envelope to the enforcement agent", fields: [text("envelope", "Envelope"), text("agent", "Agent")], body: (f) => ({ envelope: val(f, "envelope"), agent: val(f, "agent") }) },
  { step: "transfer", title: "To the cancellation room", fields: [text("dice", "Dice"), text("accepted_by", "Accepted in the room by (account)")], body: (f) => ({ dice: list(val(f, "dice")), accepted_by: val(f, "accepted_by") }) },
  { step: "cancel", title: "Cancel dice", fields: [text("dice", "Dice"), { name: "method", label: "Method", options: ["drill", "shred", "approved"] }, text("hole_in", "Hole (inches)", "0.25"),
      text("approval", "Approved method: the approval"), present("surveillance")],
    body: (f) => ({ dice: list(val(f, "dice")), method: val(f, "method"), hole_in: val(f, "method") === "drill" ? val(f, "hole_in") : null, approval: val(f, "approval"), present: list(val(f, "present")) }) },
  { step: "inventory", title: "Quarterly physical inventory", fields: [{ name: "counted", label: "Every die found (serials)", area: true }, present("security")],
    body: (f) => ({ counted: list(val(f, "counted")), present: list(val(f, "present")) }), extra: (form) => h("button", { type: "button", class: "btn small", dataset: { fill: "inventory" },
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
  if (spec.multi) return h("div", { class: "row" }, spec.multi.map((t) => h("label", { class: "check" }, h("input", { type: "checkbox", name: `tools-${t}`, checked: true }), t)));
  return h("label", {}, spec.label, h("input", { type: "text", name: spec.name, value: spec.value || "" }));
}

function stepCard(spec) {
  const form = h("form", { id: `step-${spec.step}`, dataset: { step: spec.step } }, spec.fields.map(field));
  form.append(h("div", { class: "row" }, h("button", { type: "submit", class: "btn primary" }, spec.title), spec.extra ? spec.extra(form) : null));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const r = await attempt(() => post(`/api/dice-room/${encodeURIComponent(st.site)}/${spec.step}`, spec.body(form)));
    if (r) {
      st.result = r.events;
      drawResult();
      await load();
    }
  });
  return h("section", { class: "card" }, h("header", {}, h("h2", {}, spec.title)), form);
}

// -- the page ---------------------------------------------------------------------------------
const siteSel = h("select", { id: "site", "aria-label": "site", onchange: () => { st.site = siteSel.value; load(); } },
  (room ? room.sites : []).map((s) => h("option", { value: s.site }, `${s.site} (${s.jurisdiction}, ${s.pack})`)));
st.site = room && room.sites.length ? room.sites[0].site : null;
const me = room ? room.me : null;
const resultEl = h("div", { class: "step-result", id: "result" });
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
  h("section", { class: "card no-print" }, h("header", {}, h("h2", {}, "Last step")), resultEl),
  h("div", { class: "steps" }, STEPS.map(stepCard)),
  h("section", { class: "card" }, h("header", {}, h("h2", {}, "Every die in the building")), reportEl),
  h("section", { class: "card" }, h("header", {}, h("h2", {}, "Logs")), logsEl));

function drawResult() {
  replace(resultEl, st.result.map((e) => h("div", { class: e.alert ? "alert" : "ok", dataset: { event: e.type } }, `#${e.seq} ${e.summary}`, h("div", { class: "muted" }, e.rule))));
}

function rows(data, cols) {
  return h("table", { class: "data" }, h("thead", {}, h("tr", {}, cols.map((c) => h("th", {}, c)))),
    h("tbody", {}, data.map((r) => h("tr", {}, cols.map((c) => h("td", {}, Array.isArray(r[c]) ? r[c].join(", ") : r[c] == null ? "" : String(r[c])))))));
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
  replace(alertsEl, report.open_alerts.length ? report.open_alerts.map((a) => h("div", { class: "alert-line", dataset: { alert: a.type } }, `${fmtTime(a.at)} · ${a.message}`, h("span", { class: "muted" }, ` [${a.rule}]`)))
    : h("div", { class: "muted" }, "none"));
  replace(reportEl,
    h("div", { class: "print-only" }, `Dice custody report: ${report.site} (${report.jurisdiction}, ${report.pack}) as of ${report.as_of}`),
    h("div", { class: "muted" }, `${report.in_building} dice in the building · ` + Object.entries(report.by_state).filter(([, n]) => n).map(([k, n]) => `${k} ${n}`).join(" · ")
      + (Object.keys(report.keys).length ? ` · keys out: ${Object.entries(report.keys).map(([k, p]) => `${k}: ${p}`).join("; ")}` : "")),
    h("table", { class: "data report-table", id: "report-table" },
      h("thead", {}, h("tr", {}, ["serial", "state", "location", "table", "inspected", "until", "history"].map((c) => h("th", {}, c)))),
      h("tbody", {}, report.dice.map((d) => h("tr", { dataset: { serial: d.serial, state: d.state } },
        h("td", {}, h("b", {}, d.serial)), h("td", { class: `state-${d.state}` }, d.state), h("td", {}, d.location), h("td", {}, d.table || ""),
        h("td", {}, d.inspected_at ? fmtTime(d.inspected_at) : ""), h("td", {}, d.expires_at ? fmtTime(d.expires_at) : ""),
        h("td", { class: "history" }, d.history.map((x) => h("div", { title: x.rule }, `#${x.seq} ${fmtTime(x.at)} ${x.summary}`))))))));
  replace(logsEl,
    h("h3", {}, "Pit log (removals and transfers)"), pit ? rows(pit, ["date", "dice_removed", "game_removed_from", "pit_manager", "pit_manager_licence", "signed_by"]) : "",
    h("h3", {}, "Cancellation-room log"), cancellation ? h("div", { id: "cancellation-log" }, rows(cancellation, ["date", "entry", "dice", "person", "licence", "method", "uncancelled_dice_held"])) : "",
    h("h3", {}, "Inventory: receipts"), inventory ? rows(inventory.receipts, ["date", "quantity", "shipment", "manufacturer", "address", "phone"]) : "",
    h("h3", {}, "Inventory: physical counts"), inventory ? rows(inventory.physical_inventories, ["date", "counted", "on_record", "missing", "unexpected"]) : "");
}

await load();
window.dicetable = { st, load };
