// Users, for admins: the list, a new user, permissions and passwords.
import { html, useState, useEffect, when, useTitle } from "/ui/lib.js";
import * as api from "/ui/api.js";

const PERMISSIONS = ["admin", "use-vnc", "use-web-terminal", "use-ssh", "use-ports"];

function Permissions({ value, onChange, name }) {
  return html`<span class="perms">${PERMISSIONS.map((p) => html`
    <label class="inline"><input type="checkbox" name=${`${name}-${p}`} checked=${value.includes(p)}
      onChange=${(e) => onChange(e.target.checked ? [...value, p] : value.filter((x) => x !== p))} /> ${p}</label>`)}</span>`;
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
  return html`
    <section>
      <div class="bar"><h1>Users</h1></div>
      ${error && html`<p class="error">${error}</p>`}
      <${NewUser} onDone=${reload} />
      ${users && html`
        <table><thead><tr><th>User</th><th>Email</th><th>Permissions</th><th>Password</th><th>SSH keys</th><th>Created</th><th></th></tr></thead>
          <tbody>${users.map((u) => html`<${UserRow} key=${u.id} u=${u} reload=${reload} />`)}</tbody></table>`}
    </section>`;
}
