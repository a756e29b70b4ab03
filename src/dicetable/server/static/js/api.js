// The server's REST API and its WebSocket push, for every page.
//
// A refusal comes back as JSON {error, message, rule, citation} with a 4xx status; it is thrown
// as a Refusal so that a page can show the rule and its citation.

export class Refusal extends Error {
  constructor(status, body) {
    super(body && body.message ? body.message : `HTTP ${status}`);
    this.status = status;
    this.error = (body && body.error) || `HTTP ${status}`;
    this.rule = (body && body.rule) || "";
    this.citation = (body && body.citation) || "";
  }
}

function requestKey() {
  if (globalThis.crypto && crypto.randomUUID) return crypto.randomUUID();
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
}

// Every command carries an Idempotency-Key; when the answer is lost (the connection broke),
// it is sent again with the same key, so the server applies it at most once.
export async function api(method, path, body) {
  // The pages redraw from the whole view: ask for it in command replies (RFC 7240; without
  // it a reply holds only the command's events and the caller's balance).
  const init = { method, credentials: "same-origin", headers: { Prefer: "return=representation" } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const command = method !== "GET" && !path.startsWith("/api/log");
  if (command) init.headers["Idempotency-Key"] = requestKey();
  let response;
  for (let tries = command ? 3 : 1; ; tries--) {
    try {
      response = await fetch(path, init);
      break;
    } catch (e) {
      if (tries <= 1) throw new Refusal(0, { error: "Offline", message: "the server cannot be reached", rule: "", citation: "" });
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
  let data = null;
  try { data = await response.json(); } catch (e) { data = null; }
  if (!response.ok) throw new Refusal(response.status, data);
  return data;
}

export const get = (path) => api("GET", path);
export const post = (path, body = {}) => api("POST", path, body);
export const patch = (path, body) => api("PATCH", path, body);
export const del = (path) => api("DELETE", path);

export const tablePath = (tableId, rest = "") => `/api/tables/${encodeURIComponent(tableId)}${rest}`;

/** The logged-in account, or a trip back to the login page. */
export async function whoami() {
  try {
    return await get("/api/me");
  } catch (e) {
    if (e instanceof Refusal && e.status === 401) {
      location.href = "/?next=" + encodeURIComponent(location.pathname + location.search);
      return new Promise(() => {});  // the page is going away
    }
    throw e;
  }
}

export async function logout() {
  try { await post("/api/logout"); } catch (e) { /* already gone */ }
  location.href = "/";
}

/**
 * RFC 7386 JSON Merge Patch: ``target`` with ``patch`` merged in (an object merges member by
 * member, a null member removes that member, anything else replaces the value whole). The
 * target is not changed: the parts the patch leaves alone are shared with the result.
 */
export function applyMergePatch(target, patch) {
  if (patch === null || typeof patch !== "object" || Array.isArray(patch)) return patch;
  const out = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else put(out, key, applyMergePatch(Object.hasOwn(out, key) ? out[key] : undefined, value));
  }
  return out;
}

const isObject = (x) => x !== null && typeof x === "object" && !Array.isArray(x);

// A member named like "__proto__" (a username may be) is a member, not the prototype.
function put(object, key, value) {
  Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
}

/**
 * A push's patch applied to a view: the merge patch, then the members it names in ``nulls``
 * set to null (a merge patch cannot set a member to null; server/merge_patch.py).
 */
export function patchView(view, patch, nulls = []) {
  const out = applyMergePatch(view, patch);
  const copied = new Set();
  for (const path of nulls) {
    let node = out;
    for (let depth = 1; depth < path.length; depth++) {
      const key = path[depth - 1];
      const prefix = JSON.stringify(path.slice(0, depth));
      if (!copied.has(prefix)) { put(node, key, { ...node[key] }); copied.add(prefix); }
      node = node[key];
    }
    put(node, path[path.length - 1], null);
  }
  return out;
}

/**
 * Live updates for one table. ``onMessage(msg, {reconnected})`` gets each push: the hello
 * (with the events missed while away, when this is a reconnection) and each batch of events,
 * with the table's fresh view in ``msg.view``. A push carries only a merge patch of the view
 * (``patch``, ``nulls``), applied here to the view the hello or the previous push left; the
 * rule pack's fixed members (limits, rules, ...) come in the hello and stay. On a dropped
 * connection it reconnects with ``after=<last seq>`` and its hello brings the whole view again.
 */
export function liveTable(tableId, { onMessage, onStatus = () => {} }) {
  let lastSeq = 0;
  let view = null;
  let socket = null;
  let delay = 400;
  let paused = false;
  let stopped = false;
  let timer = null;
  let heard = 0;

  function open() {
    if (stopped || paused) return;
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const url = `${scheme}://${location.host}/ws/tables/${encodeURIComponent(tableId)}?after=${lastSeq}`;
    const reconnecting = lastSeq > 0;
    socket = new WebSocket(url);
    socket.onopen = () => { delay = 400; onStatus("live"); };
    socket.onmessage = (m) => {
      const msg = JSON.parse(m.data);
      if (msg.type === "hello") view = msg.view;
      else if (msg.patch) {  // always after this connection's hello
        view = patchView(view, msg.patch, msg.nulls);
        msg.view = view;
      }
      for (const e of msg.events || []) lastSeq = Math.max(lastSeq, e.seq);
      if (msg.view) lastSeq = Math.max(lastSeq, msg.view.seq);
      globalThis.__dicetableView = view;  // what the browser tests compare with the server's
      onMessage(msg, { reconnected: msg.type === "hello" && reconnecting });
      heard += 1;
    };
    socket.onclose = (ev) => {
      socket = null;
      onStatus("offline");
      if (ev.code === 4401) { location.href = "/"; return; }
      if (stopped || paused) return;
      timer = setTimeout(open, delay);
      delay = Math.min(delay * 2, 8000);
    };
  }

  open();
  return {
    get lastSeq() { return lastSeq; },
    /** Messages handled so far (the browser tests wait for the hello before acting). */
    get heard() { return heard; },
    /** Go away (close the socket, do not come back until ``resume``). */
    pause() { paused = true; clearTimeout(timer); if (socket) socket.close(); },
    resume() { if (!paused) return; paused = false; open(); },
    stop() { stopped = true; clearTimeout(timer); if (socket) socket.close(); },
    get connected() { return socket !== null && socket.readyState === WebSocket.OPEN; },
  };
}

/** A socket on which the server says only that something changed (``server.notice_push``):
 *  ``onChange`` on each message, the first as it opens; reconnects with backoff. Returns a
 *  function telling whether it is open (the page polls only while it is not). */
function noticePush(path, onChange) {
  let open = false;
  let delay = 1000;
  const connect = () => {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const socket = new WebSocket(`${scheme}://${location.host}${path}`);
    socket.onopen = () => { open = true; delay = 1000; };
    socket.onmessage = () => onChange();
    socket.onclose = () => {
      open = false;
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, 30000);
    };
  };
  connect();
  return () => open;
}

/** Push of a table's money changes (seat requests, the caller's wallet). */
export function moneyPush(tableId, onChange) {
  return noticePush(`/ws/tables/${encodeURIComponent(tableId)}/money`, onChange);
}

/** Push of the floor's changes that staff pages show (``kinds``: any of ``bank``,
 *  ``serials``, ``custody``). */
export function floorPush(kinds, onChange) {
  return noticePush(`/ws/floor?kinds=${encodeURIComponent(kinds.join(","))}`, onChange);
}
