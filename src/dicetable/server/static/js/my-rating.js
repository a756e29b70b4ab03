// The player's own rating on the player's page: each of their sessions, the exact theo of
// the wagers they actually made (each at its own edge) beside the industry formula's figure
// (average bet x decisions per hour x hours x one edge, the site pack's values), as the pit
// sees them. GET /api/ratings gives a player their own sessions only.

import { get } from "./api.js";
import { card, h, money, replace } from "./ui.js";

const body = h("div", { id: "my-rating" }, h("div", { class: "muted" }, "Loading your rating…"));
(document.querySelector("main aside") || document.querySelector("main") || document.body).append(
  card("my-rating-card", "Your rating", "what the casino expects you to lose, two ways", body));

async function refresh() {
  let data;
  try { data = await get("/api/ratings"); } catch { return; }
  const rows = data.ratings || [];
  const rule = (id) => (data.rules || []).find((r) => r.id === id);
  const dph = rule("ratings.industry.decisions_per_hour");
  const edge = rule("ratings.industry.edge");
  replace(body, rows.length ? h("table", { class: "data", id: "my-rating-table" },
    h("thead", {}, h("tr", {}, ["Table", "Minutes", "Average bet", "Exact theo", "Formula", "Result"].map((x) => h("th", {}, x)))),
    h("tbody", {}, rows.map((r) => h("tr", { dataset: { session: `${r.table}#${r.session}` } },
      h("td", {}, r.table), h("td", {}, String(Math.floor(r.seconds / 60))), h("td", {}, money(r.average_bet)),
      h("td", { class: "exact-theo", title: `exactly ${r.theo_exact} cents` }, money(r.theo)),
      h("td", { class: "industry-theo" }, money(r.industry_theo)), h("td", {}, money(r.result))))))
    : h("div", { class: "muted" }, "No rated session yet."),
  dph && edge ? h("div", { class: "muted", id: "my-rating-rules" },
    `Formula: average bet × ${dph.value} decisions an hour × hours × ${edge.value} (${dph.status}: ${dph.citation}). `,
    "Exact: each wager at its own edge, per roll it worked or when placed; odds count zero.") : null);
}

await refresh();
setInterval(refresh, 15000);
