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

// The same words for a wrong password, an unknown name and a locked account: the page never
// tells a stranger which accounts exist or are locked.
const NOT_IN = "That username and password did not let you in. After repeated wrong passwords an "
  + "account is locked for its owner's safety; a pit boss can unlock it.";

function loginWords(e) {
  if (e.status === 401 || e.status === 423 || e.status === 403) return ["Could not log you in", NOT_IN];
  if (e.status === 429) return ["Too many attempts", "Too many attempts from here just now. Wait a minute, then try again."];
  if (e.status === 422 || e.status === 400) return ["Could not log you in", "Enter a username and a password."];
  return ["Could not log you in", "The table server did not answer. Try again in a moment."];
}

function refusalBlock(e) {
  const [kind, message] = loginWords(e);
  return h("div", { class: "refusal", style: "position:static;box-shadow:none;margin-top:12px" },
    h("div", { class: "kind" }, kind),
    h("div", { class: "message", id: "login-message" }, message));
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
  // Logged in: the lobby replaces the form (game, limits, players seated and the point).
  form.closest("section").classList.add("hidden");
  lobby.classList.remove("hidden");
  const staff = me.kind === "staff";
  const views = await Promise.all(tables.map((t) => get(`/api/tables/${encodeURIComponent(t.table)}`).catch(() => null)));
  replace(lobby,
    h("header", {}, h("h2", {}, `Logged in as ${me.display}`), h("button", { class: "btn small", onclick: logout }, "Log out")),
    ...tables.filter((t) => t.my_roles.length).map((t) => {
      const v = views[tables.indexOf(t)];
      const seated = v ? Object.keys(v.seats || {}).length : null;
      const point = v && v.variant && v.variant.has_puck ? (t.point ? `point ${t.point}` : "no point (come-out)") : null;
      return h("a", {
        class: "table-link", dataset: { table: t.table },
        href: staff ? `/dealer?table=${encodeURIComponent(t.table)}` : `/play?table=${encodeURIComponent(t.table)}`,
      }, h("span", { class: "lobby-main" }, h("b", {}, t.name),
        h("span", { class: "muted" }, ` · ${t.mode === "electronic" ? "electronic" : "live"}`),
        v && v.placard ? h("span", { class: "lobby-limits" }, v.placard.lines.join(" · ")) : null,
        h("span", { class: "lobby-facts muted" }, [seated !== null ? `${seated} player${seated === 1 ? "" : "s"} seated` : null, point].filter(Boolean).join(" · "))),
      h("span", { class: "muted" }, t.my_roles.join(", ")));
    }),
    staff ? h("a", { class: "table-link", href: "/pit" }, h("b", {}, "Pit console"), h("span", { class: "muted" }, "every table")) : null);
} catch (e) {
  // not logged in: the form is all there is
}
