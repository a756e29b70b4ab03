// The cage's card in the pit: players' wallets, and the cashier's deposit and withdrawal
// (POST /api/cage/wallets/{account}/deposit|withdraw). Only the cage's role may move a wallet
// (house rule wallet.cage); anyone else is told so, in the server's words.

import { get, post } from "./api.js";
import { attempt, card, h, money, parseMoney, polled, replace, showRefusal } from "./ui.js";

export function cageSection() {
  const body = h("div", { id: "cage" }, h("div", { class: "muted" }, "Loading wallets…"));
  const section = card("cage-card", "Cage · players' wallets",
    "deposits and withdrawals by the cage's cashier", body);
  const form = { player: "", amount: "", reason: "" };
  let shown = null;

  function draw(wallets) {
    if (!form.player && wallets.length) form.player = wallets[0].account;
    const amount = h("input", { type: "text", id: "cage-amount", inputmode: "decimal", placeholder: "$0.00", "aria-label": "Amount", value: form.amount, oninput: (e) => { form.amount = e.target.value; } });
    const reason = h("input", { type: "text", id: "cage-reason", placeholder: "cash, cheque…", "aria-label": "Reason", value: form.reason, oninput: (e) => { form.reason = e.target.value; } });
    const who = h("select", { id: "cage-player", "aria-label": "Player", onchange: (e) => { form.player = e.target.value; } },
      wallets.map((w) => h("option", { value: w.account, selected: w.account === form.player }, `${w.name} (${w.account})`)));
    replace(body,
      h("table", { class: "data", id: "cage-wallets" },
        h("thead", {}, h("tr", {}, ["Player", "Wallet"].map((t) => h("th", {}, t)))),
        h("tbody", {}, wallets.map((w) => h("tr", { dataset: { account: w.account } },
          h("td", {}, h("button", { class: "btn small ghost", onclick: () => show(w.account) }, w.name)),
          h("td", { class: "num", dataset: { cents: String(w.balance) } }, money(w.balance)))))),
      h("div", { class: "row", id: "cage-form" }, who, amount, reason,
        h("button", { class: "btn", id: "cage-deposit", onclick: () => move("deposit") }, "Deposit"),
        h("button", { class: "btn", id: "cage-withdraw", onclick: () => move("withdraw") }, "Withdraw")),
      shown ? h("div", { id: "cage-detail" },
        h("h3", {}, `${shown.account}: ${money(shown.balance)}`),
        h("div", { class: "muted" }, `deposited ${money(shown.deposited)} · withdrawn ${money(shown.withdrawn)} · to tables ${money(shown.to_tables)} · from tables ${money(shown.from_tables)}${shown.in_transit ? ` · in transit ${money(shown.in_transit)}` : ""}`),
        h("ul", {}, shown.moves.slice().reverse().map((m) => h("li", {}, `${m.type} ${money(m.amount)}${m.table ? ` ${m.table}` : ""} by ${m.by}${m.reason ? ` — ${m.reason}` : ""}`))))
        : null);
  }

  async function show(account) {
    const found = await attempt(() => get(`/api/cage/wallets/${encodeURIComponent(account)}`));
    if (found) {
      shown = found;
      form.player = account;
      refresh();
    }
  }

  async function move(verb) {
    const cents = parseMoney(form.amount);
    if (!cents) {
      showRefusal({ message: "Type an amount such as 50 or 12.50.", rule: "money.amount" });
      return;
    }
    const done = await attempt(() => post(`/api/cage/wallets/${encodeURIComponent(form.player)}/${verb}`, { amount: cents, reason: form.reason }));
    if (done) {
      shown = done;
      form.amount = "";
      refresh();
    }
  }

  const refresh = polled(body, "/api/cage/wallets", draw,
    { every: 5000, closedId: "cage-closed", also: () => shown });
  return section;
}
