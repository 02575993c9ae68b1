// The web UI's shell: the session, the navigation and the page for the current hash route.
import { html, render, useState, useEffect, useRef, useRoute, isAdmin, go } from "/ui/lib.js";
import * as api from "/ui/api.js";
import { SpacesPage } from "/ui/spaces.js";
import { SpaceDetail } from "/ui/space_detail.js";
import { startSpaceStore } from "/ui/space_store.js";
import { TemplatesPage, TemplateEditor } from "/ui/templates.js";
import { UsersPage } from "/ui/users.js";
import { PoolsPage } from "/ui/pools.js";
import { NodesPage } from "/ui/nodes.js";
import { DisksPage } from "/ui/disks.js";
import { DisplayPage } from "/ui/display.js";
import { ConsolePage } from "/ui/console.js";
import { TerminalPage } from "/ui/terminal.js";

// Single sign-on's button when the server has a provider; its failure comes back as ?sso_error=.
function useSso() {
  const [sso, setSso] = useState(null);
  useEffect(() => { api.get("/sso").then(setSso, () => setSso(null)); }, []);
  return sso;
}

function Login({ onLogin }) {
  const [error, setError] = useState(new URLSearchParams(location.search).get("sso_error") || "");
  const [busy, setBusy] = useState(false);
  const first = useRef(null);
  const sso = useSso();
  useEffect(() => { first.current && first.current.focus(); }, []);
  // After the login, on to where the browser was going (a preview's authorize step, kept in ?preview=).
  const next = new URLSearchParams(location.search).get("preview") || "/";
  const submit = async (e) => {
    e.preventDefault();
    const form = e.target;
    setBusy(true);
    setError("");
    try {
      onLogin(await api.login(form.username.value, form.password.value));
    } catch (err) {
      setError(err.message);
      form.password.select();
    } finally {
      setBusy(false);
    }
  };
  return html`
    <main class="login">
      <h1>bowline</h1>
      <form onSubmit=${submit} aria-label="Log in">
        <label>Username <input name="username" autocomplete="username" required ref=${first} /></label>
        <label>Password <input name="password" type="password" autocomplete="current-password" required /></label>
        ${error && html`<p class="error" role="alert">${error}</p>`}
        <button type="submit" disabled=${busy}>Log in</button>
      </form>
      ${sso && sso.enabled && html`
        <p class="sso"><a class="button" data-sso href=${"/api/v1/sso/login?next=" + encodeURIComponent(next)}>Log in with single sign-on</a></p>`}
    </main>`;
}

function Nav({ user, page, onLogout }) {
  const link = (path, label, key) => html`
    <a href="#/${path}" class=${page === path ? "current" : ""} aria-current=${page === path ? "page" : null}
       accesskey=${key}>${label}</a>`;
  return html`
    <header class="top">
      <span class="brand">bowline</span>
      <nav>
        ${link("spaces", "Spaces", "s")}
        ${link("templates", "Templates", "t")}
        ${link("pools", "Pools", "p")}
        ${link("disks", "Disks", "d")}
        ${isAdmin(user) && link("users", "Users", "u")}
        ${isAdmin(user) && link("nodes", "Nodes", "o")}
      </nav>
      <span class="who">${user.username}
        <button class="link" onClick=${onLogout}>Log out</button></span>
    </header>`;
}

// What a node warns about (software emulation chosen by domain type auto), above every page.
function NodeWarnings() {
  const [warnings, setWarnings] = useState([]);
  useEffect(() => {
    api.get("/nodes").then((nodes) => setWarnings(
      (nodes || []).flatMap((n) => (n.warnings || []).map((w) => ({ node: n.name, text: w })))),
      () => {});
  }, []);
  if (!warnings.length) return null;
  return html`<div class="notices">${warnings.map((w) => html`
    <p class="notice" role="status" data-node=${w.node}>Node ${w.node}: ${w.text}</p>`)}</div>`;
}

function Shell({ session, setSession }) {
  const parts = useRoute();
  const user = session.user;
  useEffect(() => startSpaceStore(user), []);
  const logout = async () => { await api.logout().catch(() => {}); setSession(null); go(""); };
  const [page = "spaces", id, sub] = parts;

  // The viewers take the whole window (they are opened as their own windows).
  if (page === "spaces" && id && sub === "display") return html`<${DisplayPage} id=${id} user=${user} />`;
  if (page === "spaces" && id && sub === "console") return html`<${ConsolePage} id=${id} user=${user} />`;
  if (page === "spaces" && id && sub === "terminal") return html`<${TerminalPage} id=${id} user=${user} />`;

  let body;
  if (page === "spaces" && id) body = html`<${SpaceDetail} id=${id} user=${user} />`;
  else if (page === "templates" && id) body = html`<${TemplateEditor} name=${id} user=${user} />`;
  else if (page === "templates") body = html`<${TemplatesPage} user=${user} />`;
  else if (page === "pools") body = html`<${PoolsPage} user=${user} />`;
  else if (page === "disks") body = html`<${DisksPage} user=${user} />`;
  else if (page === "users") body = html`<${UsersPage} user=${user} />`;
  else if (page === "nodes" && isAdmin(user)) body = html`<${NodesPage} user=${user} />`;
  else body = html`<${SpacesPage} user=${user} />`;
  return html`
    <${Nav} user=${user} page=${page} onLogout=${logout} />
    <${NodeWarnings} />
    <main id="main">${body}</main>`;
}

// A preview host sent the browser here to learn who it is (its cookie stays off a redirect from
// another site): once logged in, on to the server's authorize step, and nowhere else.
function continuePreview(session) {
  const next = new URLSearchParams(location.search).get("preview");
  if (session && next && next.startsWith("/api/v1/preview/authorize?")) {
    location.replace(next);
    return true;
  }
  return false;
}

function App() {
  const [session, setSession] = useState(undefined);  // undefined: asking; null: logged out
  const enter = (s) => { if (!continuePreview(s)) setSession(s); };
  useEffect(() => {
    api.setUnauthorizedHandler(() => setSession(null));
    api.currentSession().then(enter, () => setSession(null));
  }, []);
  if (session === undefined) return html`<p class="loading">Loading…</p>`;
  if (!session) return html`<${Login} onLogin=${enter} />`;
  return html`<${Shell} session=${session} setSession=${setSession} />`;
}

render(html`<${App} />`, document.getElementById("app"));
