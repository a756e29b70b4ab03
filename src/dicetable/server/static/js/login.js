// The login page: log in, then go to the player's table or the staff member's console.
// A refusal (wrong password, an account locked after repeated failures) is shown with its rule.

import { Refusal, get, logout, post } from "./api.js";
import { h, replace } from "./ui.js";

const form = document.getElementById("login-form");
const errorBox = document.getElementById("login-error");
const lobby = document.getElementById("lobby");

/** Where an account goes after logging in. */
export function landing(account) {
  const next = new URLSearchParams(location.search).get("next");
  if (next && next.startsWith("/") && !next.startsWith("//")) return next;
  const tables = Object.entries(account.tables || {});
  if (account.kind === "player") return tables.length ? `/play?table=${encodeURIComponent(tables[0][0])}` : "/";
  if (tables.some(([, roles]) => roles.includes("pit-boss") || roles.includes("floorperson") || roles.includes("shift-manager"))
      && !tables.some(([, roles]) => roles.some((r) => ["dealer", "stickperson", "boxperson"].includes(r)))) return "/pit";
  // staff at no table (security, surveillance, a shift manager) work in the dice room
  return tables.length ? `/dealer?table=${encodeURIComponent(tables[0][0])}` : "/dice-room";
}

function refusalBlock(e) {
  return h("div", { class: "refusal", style: "position:static;box-shadow:none;margin-top:12px" },
    h("div", { class: "kind" }, e.error),
    h("div", { class: "message", id: "login-message" }, e.message),
    h("dl", {}, h("dt", {}, "Rule"), h("dd", { class: "rule" }, e.rule || "—"),
      h("dt", {}, "Citation"), h("dd", { class: "citation" }, e.citation || "—")));
}

form.addEventListener("submit", async (ev) => {
  ev.preventDefault();
  errorBox.replaceChildren();
  const username = document.getElementById("username").value.trim();
  const password = document.getElementById("password").value;
  try {
    const r = await post("/api/login", { username, password });
    location.href = landing(r.account);
  } catch (e) {
    errorBox.append(refusalBlock(e instanceof Refusal ? e : new Refusal(0, { error: "Error", message: String(e) })));
    document.getElementById("password").select();
  }
});

// Already logged in: offer the tables.
try {
  const me = await get("/api/me");
  const tables = await get("/api/tables");
  lobby.classList.remove("hidden");
  const staff = me.kind === "staff";
  replace(lobby,
    h("header", {}, h("h2", {}, `Logged in as ${me.display}`), h("button", { class: "btn small", onclick: logout }, "Log out")),
    ...tables.filter((t) => t.my_roles.length).map((t) => h("a", {
      class: "table-link", href: staff ? `/dealer?table=${encodeURIComponent(t.table)}` : `/play?table=${encodeURIComponent(t.table)}`,
    }, h("span", {}, h("b", {}, t.name), h("span", { class: "muted" }, ` · ${t.table} · ${t.mode}`)),
    h("span", { class: "muted" }, t.my_roles.join(", ")))),
    staff ? h("a", { class: "table-link", href: "/pit" }, h("b", {}, "Pit console"), h("span", { class: "muted" }, "every table")) : null);
} catch (e) {
  // not logged in: the form is all there is
}
