// The pit's books: every table's chip bank (expected inventory, the money-conservation
// check), the gaming day's win and hold, and a table's counts, slips, drop and variances.
// Every step is one of the catalogue's verbs (GET /api/bank/verbs): the form is built from
// it, and the next step of each slip is one button. The report prints (Print).

import { floorPush, get, post } from "./api.js";
import { attempt, fmtTime, h, money, replace } from "./ui.js";

const enc = encodeURIComponent;
const st = { overview: null, selected: null, verbs: [], report: null, detail: null, drawn: null, detailDrawn: null, notices: "" };
const section = h("section", { class: "card wide", id: "bank-card" });
const summaryEl = h("div", { id: "bank-summary" });
const noticesEl = h("div", { id: "bank-notices" });
const detailEl = h("div", { id: "bank-detail" });
const formEl = h("div", { id: "bank-form" });
const printEl = h("div", { id: "bank-print" });
replace(section,
  h("header", {}, h("h2", {}, "The pit's books"),
    h("span", { class: "muted" }, "table inventory, fills and credits, the drop, win and hold")),
  noticesEl, summaryEl, detailEl, formEl, printEl);
(document.querySelector("main") || document.body).append(section);
document.head.append(h("style", {}, `
  #bank-card table.data td, #bank-card table.data th { padding: 2px 8px; text-align: left; }
  #bank-card .ok { color: #7fd69b; } #bank-card .bad { color: #ff8f86; font-weight: 650; }
  #bank-card .inferred { font-style: italic; color: #e9c46a; }
  #bank-form label { display: inline-flex; flex-direction: column; margin: 4px 8px 4px 0; font-size: .85rem; }
  @media print { body > *:not(main), main > *:not(#bank-card), #bank-card > *:not(#bank-print) { display: none !important; }
    #bank-print { color: #000; background: #fff; } }`));

const chipsText = (chips) => chips.map(([d, n]) => `${n} × ${money(d)}`).join(", ");

async function refresh() {
  const overview = await attempt(() => get("/api/bank"));
  if (!overview) return;
  st.overview = overview;
  if (!st.verbs.length) st.verbs = (await attempt(() => get("/api/bank/verbs"))) || [];
  const key = JSON.stringify(overview);
  if (key !== st.drawn) { st.drawn = key; drawSummary(); }
  const notices = await attempt(() => get("/api/bank/notices"));
  if (notices && JSON.stringify(notices) !== st.notices) { st.notices = JSON.stringify(notices); drawNotices(notices); }
  if (st.selected) await select(st.selected, false);
}

// The notices this account must receive (a count's discrepancy, a hold outside its band):
// each acknowledged here, and the others who read it listed.
function drawNotices(notices) {
  const unread = notices.filter((n) => !n.read).length;
  replace(noticesEl, notices.length ? h("div", { class: "stack" },
    h("h3", {}, `Notices for you (${unread} unread)`),
    h("ul", { id: "bank-notice-list" }, notices.map((n) => h("li", { class: n.read ? "muted" : "bad", dataset: { notice: n.notice, table: n.table } },
      `${n.table}: ${n.text}`, n.how === "regulator-copy" ? " — the regulator's copy, for you to file" : "",
      n.read_by.length ? ` (read by ${n.read_by.join(", ")})` : "",
      n.read ? null : h("button", { class: "btn small", dataset: { ack: n.notice }, onclick: async () => {
        const done = await attempt(() => post(`/api/bank/${enc(n.table)}/acknowledge`, { fields: { notice: n.notice } }));
        if (done) await refresh();
      } }, "Acknowledge"))))) : null);
}

// One slip as its printable document, printed on its own (the report comes back after).
async function printSlip(table, kind, number) {
  const doc = await attempt(() => get(`/api/bank/${enc(table)}/slip/${enc(kind)}/${number}`));
  if (!doc) return;
  replace(printEl, h("div", { id: "bank-slip", dataset: { slip: doc.number } },
    h("h3", {}, `${doc.title} — ${doc.number}`), h("div", {}, `Status: ${doc.status}`),
    h("table", { class: "data" }, h("tbody", {}, doc.fields.map(([k, v]) => h("tr", {}, h("th", {}, k), h("td", {}, v))))),
    h("table", { class: "data" }, h("thead", {}, h("tr", {}, ["Denomination", "Chips", "Value"].map((x) => h("th", {}, x)))),
      h("tbody", {}, doc.chips.map(([, n, d, v]) => h("tr", {}, h("td", {}, d), h("td", {}, String(n)), h("td", {}, v)))),
      h("tfoot", {}, h("tr", {}, h("th", {}, "Total"), h("td", {}), h("th", {}, doc.total_text)))),
    h("table", { class: "data" }, h("tbody", {}, doc.signatures.map(([line, who]) => h("tr", {}, h("th", {}, line), h("td", {}, who || "________________________"))))),
    h("div", { class: "muted" }, doc.citation)));
  window.print();
  drawPrint();
}

function drawSummary() {
  const o = st.overview;
  replace(summaryEl,
    h("div", { class: "muted" }, `Gaming day ${o.day || "today"}; you: ${o.me.name} (${o.me.roles.join(", ") || "no role"})`),
    h("table", { class: "data", id: "bank-tables" },
      h("thead", {}, h("tr", {}, ["Table", "Status", "Expected inventory", "Money conserved", "Variances", "Drop", "Win", "Hold", ""].map((x) => h("th", {}, x)))),
      h("tbody", {}, o.tables.map((t) => h("tr", { dataset: { bank: t.table } },
        h("td", {}, h("b", {}, t.table)),
        h("td", {}, t.electronic ? "electronic" : t.status),
        h("td", { class: "expected" }, t.expected_text || "–"),
        h("td", { class: t.conservation.holds ? "ok conserved" : "bad conserved", title: t.conservation.text },
          t.conservation.holds ? "✓ conserved" : "✗ NOT conserved"),
        h("td", {}, String(t.discrepancies)),
        h("td", {}, money(t.drop)), h("td", { class: "win" }, money(t.win)), h("td", { class: "hold" }, t.hold),
        h("td", {}, h("button", { class: "btn small", dataset: { open: t.table }, onclick: () => select(t.table) }, "Books"))))),
      h("tfoot", {}, h("tr", {}, h("th", {}, "All tables"), h("td", {}), h("td", {}), h("td", {}), h("td", {}),
        h("td", {}, money(o.drop)), h("td", { id: "bank-total-win" }, money(o.win)), h("td", {}, o.hold), h("td", {})))),
    o.without_bank.length ? h("div", { class: "muted" }, "Without a bank yet: ", o.without_bank.join(", "),
      " (opening one of them opens its bank)") : null,
    h("div", { class: "muted", id: "bank-register" }, "Who supervises which open tables (465a.35(c)): ",
      Object.entries(o.register || {}).map(([p, ts]) => `${p}: ${ts.join(", ")}`).join("; ") || "nobody"),
    ...Object.entries(o.serials || {}).filter(([, v]) => v.length).map(([kind, v]) =>
      h("div", { class: "bad" }, `${kind} slip serials across the floor: `, v.join("; "))));
}

// A redraw under the pointer would swallow a click: only what changed is drawn again, and
// the step form only when another table is chosen.
async function select(table, chosen = true) {
  st.selected = table;
  const [detail, report] = await Promise.all([
    attempt(() => get(`/api/bank/${enc(table)}`)), attempt(() => get(`/api/bank/${enc(table)}/report`))]);
  if (!detail) return;
  const key = JSON.stringify([detail, report]);
  if (!chosen && key === st.detailDrawn) return;
  st.detailDrawn = key;
  st.detail = detail;
  st.report = report;
  drawDetail();
  if (chosen) drawForm();
  drawPrint();
}

function nextStep(r) {
  const slip = { serial: r.serial };
  if (r.status === "requested") return ["sign", { request: r.request }, "Sign (floorperson+)"];
  if (r.status === "signed") return ["issue", { request: r.request }, "Issue slip (chip bank)"];
  if (r.status === "issued") return ["carry", slip, "Carry (security)"];
  if (r.status === "carried") return ["receive", { ...slip, chips: r.chips.map(([d, n]) => `${d}x${n}`).join(","), officer: r.officer }, "Receive (count)"];
  return null;
}

function drawDetail() {
  const d = st.detail;
  const c = d.conservation;
  replace(detailEl, h("div", { class: "stack", dataset: { table: d.table } },
    h("h3", {}, `${d.table} — ${d.status}${d.electronic ? " (electronic: win from its own log)" : ""}`),
    h("div", {}, `Gaming day ${d.gaming_day}, shift ${d.shift}. Expected inventory `, h("b", { id: "bank-expected" }, d.expected_text || "–"),
      d.last_count ? ` (last count: slip ${d.last_count.slip}, ${d.last_count.purpose}, ${money(d.last_count.total)}, by ${d.last_count.counter}, observed by ${d.last_count.observer})` : ""),
    h("div", { class: c.holds ? "ok" : "bad", id: "bank-conservation" }, (c.holds ? "Money conserved: " : "Money NOT conserved: ") + c.text),
    d.staffing ? h("div", { class: "bad", id: "bank-staffing" }, "Staffing: ", d.staffing) : null,
    d.closed_table_slip_due ? h("div", { class: "bad" }, "A closed table still needs its Table Inventory Slip today (465a.36(c)).") : null,
    ...Object.entries(d.serials).filter(([, v]) => v.length).map(([kind, v]) =>
      h("div", { class: "bad" }, `${kind} slip serials (the casino's series): `, v.join("; "))),
    h("h4", {}, "Fills and credits"),
    h("table", { class: "data", id: "bank-requests" }, h("tbody", {}, d.requests.map((r) => {
      const step = nextStep(r);
      return h("tr", { dataset: { request: r.request, status: r.status } },
        h("td", {}, `#${r.request}${r.serial ? ` slip ${r.serial}` : ""}`), h("td", {}, r.kind), h("td", {}, money(r.value)),
        h("td", {}, chipsText(r.chips)), h("td", { class: "status" }, r.status),
        h("td", {}, `by ${r.prepared_by}${r.signed_by ? `, signed ${r.signed_by}` : ""}${r.officer ? `, carried by ${r.officer}` : ""}${r.signatures.length ? `, slip signed by ${r.signatures.map((s) => s[0]).join(", ")}` : ""}`),
        h("td", {}, step ? h("button", { class: "btn small", dataset: { step: step[0] }, onclick: () => run(step[0], step[1]) }, step[2]) : null,
          r.serial ? h("button", { class: "btn small", dataset: { print: `${r.kind}-${r.serial}` }, onclick: () => printSlip(d.table, r.kind, r.serial) }, "Print slip") : null,
          r.kind === "credit" && r.serial && r.status !== "completed" && r.status !== "voided"
            ? h("button", { class: "btn small", dataset: { step: "sign-slip" }, onclick: () => run("sign-slip", { serial: r.serial }) }, "Sign credit slip") : null,
          r.status !== "completed" && r.status !== "voided"
            ? h("button", { class: "btn small danger", onclick: () => { const reason = prompt("Void: why?"); if (reason) run("void", { request: r.request, reason }); } }, "Void") : null));
    }))),
    h("h4", {}, "Variances"),
    d.discrepancies.length ? h("ul", { id: "bank-variances" }, d.discrepancies.map((x) => h("li", {},
      `Slip ${x.slip}: counted ${money(x.counted)}, expected ${money(x.expected)}, variance ${money(x.variance)}; told ${x.notified.join(", ")}`,
      x.written_report ? "; written report" : "", x.regulator_copy ? "; copy to the regulator" : "",
      h("ul", {}, x.suspects.map((s) => h("li", { class: "muted" }, s)))))) : h("div", { class: "muted" }, "none"),
    h("h4", {}, "Movements since the last count (the bank's own; the table's log adds its settlements)"),
    h("div", { class: "muted" }, d.since_count.join("; ") || "none")));
}

function drawForm() {
  const choose = h("select", { id: "bank-verb", onchange: () => fields() }, st.verbs.map((v) => h("option", { value: v.verb }, `${v.verb} — ${v.help}`)));
  const box = h("div", { id: "bank-fields" });
  const fields = () => {
    const verb = st.verbs.find((v) => v.verb === choose.value);
    replace(box, verb.fields.filter((f) => !(verb.verb === "open" && f.key === "crew")).map((f) => h("label", {}, `${f.key}${f.required ? " *" : ""}`,
      f.kind === "flag" ? h("input", { type: "checkbox", name: f.key }) : h("input", { name: f.key, placeholder: f.help, size: 24 }))));
  };
  replace(formEl, h("h4", {}, "A step"), choose, box,
    h("button", { class: "btn primary", id: "bank-submit", onclick: () => {
      const body = {};
      for (const input of box.querySelectorAll("input")) {
        if (input.type === "checkbox") { if (input.checked) body[input.name] = true; } else if (input.value.trim()) body[input.name] = input.value.trim();
      }
      run(choose.value, body);
    } }, "Record"));
  if (st.verbs.length) fields();
}

function drawPrint() {
  const r = st.report;
  if (!r) { replace(printEl); return; }
  const w = r.win;
  replace(printEl, h("h3", {}, `Gaming-day report — ${r.table}, ${r.gaming_day}`),
    h("button", { class: "btn small", onclick: () => window.print() }, "Print"),
    r.electronic ? h("div", {}, `Electronic table: win from its own log ${money(r.electronic_win)} (601a.9(e)).`) : null,
    w ? h("table", { class: "data", id: "bank-win" }, h("tbody", {},
      w.terms.map((t) => h("tr", { dataset: { term: t.name } }, h("td", {}, t.sign > 0 ? "+" : "−"), h("td", {}, t.name), h("td", {}, money(t.amount)),
        h("td", { class: t.label.startsWith("INFERRED") ? "inferred" : "muted" }, t.label))),
      h("tr", {}, h("td", {}, "="), h("th", {}, "Table win"), h("th", { id: "bank-win-total" }, money(w.win)), h("td", {}, w.citation)),
      h("tr", {}, h("td", {}), h("td", {}, "Hold"), h("td", { id: "bank-hold" }, w.hold), h("td", { class: "muted" }, "win ÷ drop")),
      Object.entries(w.excluded).map(([k, v]) => h("tr", {}, h("td", {}), h("td", {}, `${k} in the drop box`), h("td", {}, money(v)), h("td", { class: "muted" }, "reported apart: not in this jurisdiction's drop"))))) : null,
    r.problems.concat(r.drop_problems || []).map((p) => h("div", { class: "bad" }, p)),
    h("h4", {}, "Table Inventory Slips"),
    h("table", { class: "data" }, h("tbody", {}, r.counts.map((c) => h("tr", {},
      h("td", {}, `#${c.slip}`), h("td", {}, c.purpose), h("td", {}, c.shift), h("td", {}, money(c.total)),
      h("td", {}, chipsText(c.chips)), h("td", {}, `counted ${c.counter}, signed ${c.observer}`), h("td", {}, c.place), h("td", {}, fmtTime(c.at)),
      h("td", {}, h("button", { class: "btn small", dataset: { print: `inventory-${c.slip}` }, onclick: () => printSlip(r.table, "inventory", c.slip) }, "Print slip")))))),
    h("h4", {}, "Shifts"),
    h("table", { class: "data" }, h("tbody", {}, Object.entries(r.shifts).map(([s, x]) => h("tr", {},
      h("td", {}, s), h("td", {}, `${x.counts} counts`), h("td", {}, `fills ${money(x.fills)}`), h("td", {}, `credits ${money(x.credits)}`))))));
}

async function run(verb, fields) {
  const table = st.selected;
  const done = await attempt(() => post(`/api/bank/${enc(table)}/${enc(verb)}`, { fields }));
  if (done) { await refresh(); await select(table, false); }
}

await refresh();
// Another's step in the books shows at once (pushed); the table's own figures (the players'
// chips in the conservation check) are read again every 5 s.
floorPush(["bank", "serials"], refresh);
setInterval(refresh, 5000);
