// The server's API as the UI uses it: JSON over fetch with the session cookie, the CSRF token
// on every state-changing request, and the event stream.

import * as kinds from "/ui/event-kinds.js";

let csrf = "";  // kept in memory only: a reload asks GET /api/v1/session again

export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.error) || `HTTP ${status}`);
    this.status = status;
    this.body = body || {};
  }
}

export async function call(method, path, body) {
  const headers = { "Accept": "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method !== "GET" && method !== "HEAD" && csrf) headers["X-CSRF-Token"] = csrf;
  const response = await fetch("/api/v1" + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin",
  });
  if (response.status === 204) return null;
  let data = null;
  const text = await response.text();
  if (text) {
    try { data = JSON.parse(text); } catch { data = { error: text.trim() }; }
  }
  if (!response.ok) {
    if (response.status === 401 && path !== "/session") onUnauthorized();
    throw new ApiError(response.status, data);
  }
  return data;
}

export const get = (path) => call("GET", path);
export const post = (path, body = {}) => call("POST", path, body);
export const put = (path, body) => call("PUT", path, body);
export const patch = (path, body) => call("PATCH", path, body);
export const del = (path, body) => call("DELETE", path, body);

let unauthorized = () => {};
function onUnauthorized() { unauthorized(); }
export function setUnauthorizedHandler(fn) { unauthorized = fn; }

// The current session ({user, csrf}) or null when there is none.
export async function currentSession() {
  try {
    const s = await get("/session");
    csrf = s.csrf || "";
    return s;
  } catch (e) {
    if (e.status === 401 || e.status === 404) return null;
    throw e;
  }
}

export async function login(username, password) {
  const s = await post("/session", { username, password });
  csrf = s.csrf || "";
  return s;
}

export async function logout() {
  try { await del("/session"); } finally { csrf = ""; }
}

// The event stream: calls `handler(event)` with {seq, time, kind, spaceId, payload} for every
// event, and `status(connected)` as the connection comes and goes (EventSource reconnects by
// itself, resuming after the last id it saw). Returns a function that closes it.
// Every kind the engine publishes, from the server's own list (src/engine/event_kinds.hpp).
const KINDS = Object.values(kinds);
export function subscribe(handler, status = () => {}) {
  const source = new EventSource("/api/v1/events");
  const deliver = (message) => {
    try { handler(JSON.parse(message.data)); } catch (e) { console.error("event", e); }
  };
  for (const kind of KINDS) source.addEventListener(kind, deliver);
  source.onmessage = deliver;
  source.onopen = () => status(true);
  source.onerror = () => status(false);
  return () => source.close();
}

// ws: or wss: URL of a path on this server (same origin: the cookie goes along).
export function socketUrl(path) {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}/api/v1${path}`;
}
