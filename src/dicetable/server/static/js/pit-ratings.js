// Player ratings in the pit: for each player's session at each table, the exact theo (each
// wager at its own edge, over the rolls it worked) beside the industry formula's (average bet
// x decisions per hour x hours x one edge), so the difference shows.

import { card, h, money, polled, replace } from "./ui.js";

export function ratingsSection() {
  const body = h("div", { id: "ratings" }, h("div", { class: "muted" }, "Loading ratings…"));
  const section = card("ratings-card", "Player ratings",
    "exact theo of every wager beside the industry formula", body);

  function draw(data) {
    const rated = data.ratings.filter((r) => r.rolls > 0);
    const rules = Object.fromEntries(data.rules.map((r) => [r.id, r]));
    const dph = rules["ratings.industry.decisions_per_hour"];
    const edge = rules["ratings.industry.edge"];
    replace(body,
      rated.length ? h("table", { class: "data", id: "ratings-table" },
        h("thead", {}, h("tr", {}, ["Player", "Table", "Session", "Time", "Rolls", "Average bet", "Exact theo", "Industry theo", "Difference", "Result"].map((t) => h("th", {}, t)))),
        h("tbody", {}, rated.map((r) => h("tr", { dataset: { player: r.player, table: r.table, session: String(r.session) } },
          h("td", {}, h("b", {}, r.player)), h("td", {}, r.table),
          h("td", {}, r.ended ? `#${r.session}` : h("span", { class: "tag green" }, `#${r.session} seated`)),
          h("td", { class: "num" }, `${Math.floor(r.seconds / 60)} min`),
          h("td", { class: "num" }, String(r.rolls)),
          h("td", { class: "num" }, money(r.average_bet)),
          h("td", { class: "num theo-exact", title: `exact: ${r.theo_exact} cents\n${Object.entries(r.theo_by_wager).map(([code, cents]) => `${code}: ${money(cents)}`).join("\n")}` }, money(r.theo)),
          h("td", { class: "num theo-industry", title: `exact: ${r.industry_theo_exact} cents` }, money(r.industry_theo)),
          h("td", { class: "num theo-difference" }, money(r.difference)),
          h("td", { class: "num" }, money(r.result))))))
        : h("div", { class: "muted", id: "ratings-empty" }, "No rated play yet: a player is rated once a wager of theirs is in action."),
      h("div", { class: "muted", id: "ratings-rules" },
        `Industry formula: ${dph ? dph.value : "?"} decisions an hour × ${edge ? edge.value : "?"} (${edge ? edge.status : ""}: ${edge ? edge.citation : ""}). Figures rounded ${data.rounding}.`));
  }

  polled(body, "/api/ratings", draw, { every: 3000 });
  return section;
}
