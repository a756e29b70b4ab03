// A table's rules and payouts as a player reads them: the wagers in the layout's order, what
// each pays, its minimum and maximum, any commission, the exact house edge, and the rules
// (with their citations) for those who want them. Everything comes from the server's sheet.

import { get, tablePath, whoami } from "./api.js";
import { h, showRefusal, topbar } from "./ui.js";

const account = await whoami();
const tableId = new URLSearchParams(location.search).get("table") || Object.keys(account.tables || {})[0];
topbar(account, "Rules and payouts", [["Back to the table", `/play?table=${encodeURIComponent(tableId || "")}`], ["Tables", "/"]]);
const main = h("main", { class: "page rules-sheet", id: "rules-sheet" });
document.body.append(main);

try {
  const sheet = await get(tablePath(tableId, "/rules-sheet"));
  document.title = `${sheet.name}: rules and payouts — dicetable`;
  main.append(
    h("h1", {}, `${sheet.name}: rules and payouts`),
    sheet.odds.length ? h("section", { class: "card", id: "odds-words" }, h("h2", {}, "Odds behind the line"),
      sheet.odds.map((line) => h("p", {}, line))) : null,
    h("p", { class: "muted" }, sheet.edge_note),
    h("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-label": "Every wager and its payout" },
      h("table", { class: "data rules-table", id: "paytable" },
        h("caption", { class: "muted" }, "Every wager, in the order of the layout"),
        h("thead", {}, h("tr", {}, ["Wager", "Pays", "Minimum", "Maximum", "Commission", "House edge"].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, sheet.wagers.map((w) => h("tr", { dataset: { code: w.code } },
          h("th", { scope: "row" }, w.name),
          h("td", { class: "pays" }, w.pays, w.note ? h("div", { class: "muted small" }, w.note) : null),
          h("td", { class: "num" }, w.minimum),
          h("td", { class: "num" }, w.maximum),
          h("td", {}, w.commission || "—"),
          h("td", { class: "num edge", title: w.house_edge ? `exactly ${w.house_edge}` : "" }, w.house_edge_text)))))),
    h("details", { class: "card", id: "citations" },
      h("summary", {}, h("h2", { style: "display:inline" }, "Where each price comes from")),
      h("table", { class: "data" },
        h("thead", {}, h("tr", {}, ["Wager", "Rule", "Kind of rule", "Citation"].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, sheet.wagers.flatMap((w) => w.sources.map((src) => h("tr", { dataset: { rule: src.rule, status: src.status } },
          h("td", {}, w.name), h("td", {}, src.rule), h("td", {}, src.status_text), h("td", { class: "citation" }, src.citation))))))));
} catch (e) {
  showRefusal(e);
}

// The house rules the player's own money follows here (buy-in, cash-out, requests, the press
// unit), each with its citation and whether it is regulation text or the house's stand-in.
const STATUS_WORDS = { regulation: "regulation", "other-jurisdiction": "another regulator's rule", "industry-default": "house rule (industry practice)" };
const moneyValue = (r) => (typeof r.value === "number" && r.id.startsWith("wallet.") ? `$${(r.value / 100).toLocaleString("en-US", { minimumFractionDigits: 2 })}` : String(r.value));
try {
  const money = await get(tablePath(tableId, "/money"));
  main.append(h("details", { class: "card", id: "money-rules" },
    h("summary", {}, h("h2", { style: "display:inline" }, "Your money at this table")),
    h("p", { class: "muted" }, money.self_service ? "This electronic table moves money between your wallet and the table when you say so." : "At this live table the dealer sells you chips for cash; you take chips to the cage to redeem them."),
    h("table", { class: "data" },
      h("thead", {}, h("tr", {}, ["Rule", "Value", "What it says", "Kind of rule", "Citation"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, money.rules.map((r) => h("tr", { dataset: { rule: r.id, status: r.status } },
        h("td", {}, r.id), h("td", {}, moneyValue(r)), h("td", {}, r.says), h("td", {}, STATUS_WORDS[r.status] || r.status), h("td", { class: "citation" }, r.citation)))))));
} catch (e) {
  showRefusal(e);
}
