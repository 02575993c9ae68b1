// Users, for admins: the list, a new user, permissions, passwords and quotas; and a user's use
// against their quota, which the spaces page shows for oneself.
import { html, useState, useEffect, when, useTitle, useListView } from "/ui/lib.js";
import * as api from "/ui/api.js";

const PERMISSIONS = ["admin", "use-vnc", "use-web-terminal", "use-ssh", "use-ports"];

function Permissions({ value, onChange, name }) {
  return html`<span class="perms">${PERMISSIONS.map((p) => html`
    <label class="inline"><input type="checkbox" name=${`${name}-${p}`} checked=${value.includes(p)}
      onChange=${(e) => onChange(e.target.checked ? [...value, p] : value.filter((x) => x !== p))} /> ${p}</label>`)}</span>`;
}

// ---- quotas: what a user holds against what they may (GET /users: quota, usage) -----------

const MEASURES = [["spaces", "spaces"], ["cpus", "vCPUs"], ["memory", "memory"], ["disk", "disk"]];
const GIB = 1024 ** 3, MIB = 1024 ** 2;
const isBytes = (key) => key === "memory" || key === "disk";

// The CLI's words: "8 GiB", "1.5 GiB", "512 MiB".
function bytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let value = n, unit = 0;
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit++; }
  return `${Number.isInteger(value) ? value : value.toFixed(1)} ${units[unit]}`;
}
const amount = (key, n) => (isBytes(key) ? bytes(n) : String(n));

// "spaces 2 of 5 · vCPUs 3 · memory 6 GiB of 8 GiB · disk 40 GiB" (no "of": no limit).
export function QuotaUse({ user }) {
  if (!user || !user.quota || !user.usage) return null;
  return html`<span class="quota">${MEASURES.map(([key, label]) => {
    const q = user.quota[key] || {};
    const used = user.usage[key] || 0;
    const limited = q.limit !== null && q.limit !== undefined;
    const where = q.source === "user" ? "set for this user" : "the server's default";
    return html`<span data-quota=${key} class=${limited && used > q.limit ? "error" : ""}
      title=${limited ? `limit: ${where}` : `no limit (${where})`}>${label} ${amount(key, used)}${limited ? ` of ${amount(key, q.limit)}` : ""}</span>`;
  })}</span>`;
}

// A user's own limit as the form shows it ("" for the server's default).
function limitText(key, q) {
  if (!q || q.source !== "user") return "";
  if (q.limit === null || q.limit === undefined) return "unlimited";
  if (!isBytes(key)) return String(q.limit);
  if (q.limit % GIB === 0) return `${q.limit / GIB}G`;
  return q.limit % MIB === 0 ? `${q.limit / MIB}M` : String(q.limit);
}

function QuotaForm({ u, reload, setError }) {
  const submit = async (e) => {
    e.preventDefault();
    const body = {};
    for (const [key] of MEASURES) body[key] = e.target[key].value.trim() || "default";
    try { await api.patch(`/users/${encodeURIComponent(u.username)}/quota`, body); setError(""); reload(); }
    catch (err) { setError(err.message); }
  };
  return html`
    <details class="quota-form"><summary>set</summary>
      <form onSubmit=${submit} aria-label=${`Quota of ${u.username}`}>
        ${MEASURES.map(([key, label]) => html`<label>${label} <input name=${key} size="7"
          value=${limitText(key, u.quota && u.quota[key])} placeholder="default" /></label>`)}
        <button type="submit">Save</button>
      </form></details>`;
}

function NewUser({ onDone }) {
  const [perms, setPerms] = useState([]);
  const [error, setError] = useState("");
  const [token, setToken] = useState("");
  const submit = async (e) => {
    e.preventDefault();
    const f = e.target;
    const body = { username: f.username.value.trim(), permissions: perms };
    if (f.email.value) body.email = f.email.value.trim();
    if (f.password.value) body.password = f.password.value;
    if (f.service.value) body.servicePassword = f.service.value;
    try {
      const r = await api.post("/users", body);
      setToken(r.token || "");
      setError("");
      f.reset();
      setPerms([]);
      onDone();
    } catch (err) { setError(err.message); }
  };
  return html`
    <form class="create" onSubmit=${submit} aria-label="New user">
      <label>Username <input name="username" required /></label>
      <label>Email <input name="email" type="email" /></label>
      <label>Password <input name="password" type="password" autocomplete="new-password" /></label>
      <label>Service password <input name="service" type="password" autocomplete="new-password" /></label>
      <${Permissions} value=${perms} onChange=${setPerms} name="new" />
      ${error && html`<p class="error" role="alert">${error}</p>`}
      ${token && html`<p class="ok">The user's first API token (shown once): <code>${token}</code></p>`}
      <div class="buttons"><button type="submit">Create user</button></div>
    </form>`;
}

function UserRow({ u, reload }) {
  const [error, setError] = useState("");
  const setPermissions = async (permissions) => {
    try { await api.patch(`/users/${encodeURIComponent(u.username)}`, { permissions }); setError(""); reload(); }
    catch (e) { setError(e.message); }
  };
  const setPassword = async () => {
    const password = prompt(`New web password for ${u.username}:`);
    if (!password) return;
    try { await api.patch(`/users/${encodeURIComponent(u.username)}`, { password }); reload(); }
    catch (e) { setError(e.message); }
  };
  return html`
    <tr data-user=${u.username}>
      <td>${u.username}</td><td>${u.email}</td>
      <td><${Permissions} value=${u.permissions} onChange=${setPermissions} name=${u.username} /></td>
      <td>${u.hasPassword ? "yes" : "no"} <button class="link" onClick=${setPassword}>set</button></td>
      <td><${QuotaUse} user=${u} /> <${QuotaForm} u=${u} reload=${reload} setError=${setError} /></td>
      <td>${u.sshKeys.length}</td><td>${when(u.createdAt)}</td>
      <td>${error && html`<span class="error">${error}</span>`}</td>
    </tr>`;
}

export function UsersPage() {
  useTitle("Users");
  const [users, setUsers] = useState(null);
  const [error, setError] = useState("");
  const reload = () => api.get("/users").then(setUsers, (e) => setError(e.message));
  useEffect(() => { reload(); }, []);
  const view = useListView("users", users, [
    { key: "username", label: "User" },
    { key: "email", label: "Email" },
    { key: "permissions", label: "Permissions", value: (u) => (u.permissions || []).join(" ") },
    { key: "hasPassword", label: "Password", value: (u) => (u.hasPassword ? "yes" : "no") },
    { key: "usage", label: "Use / quota", value: (u) => (u.usage ? u.usage.spaces : null) },
    { key: "sshKeys", label: "SSH keys", value: (u) => (u.sshKeys || []).length },
    { key: "createdAt", label: "Created" },
    { key: "error", label: "", sort: false, value: () => "" },
  ]);
  return html`
    <section>
      <div class="bar"><h1>Users</h1></div>
      ${error && html`<p class="error">${error}</p>`}
      <${NewUser} onDone=${reload} />
      ${users && html`
        <div class="bar">${view.filterBox} ${view.count}</div>
        <table>${view.head}
          <tbody>${view.rows.map((u) => html`<${UserRow} key=${u.id} u=${u} reload=${reload} />`)}</tbody></table>`}
    </section>`;
}
