// Who else may use a space, on its page. The owner (or an admin) shares it with a colleague as
// viewer, user or admin, changes the role or ends the share; a colleague sees how it was
// shared with them and may leave. The server enforces every role: this only shows it.
import { html, useState, useEffect, go } from "/ui/lib.js";
import * as api from "/ui/api.js";

export const ROLES = {
  viewer: "sees its state, console and display",
  user: "also ssh, forwards, terminal, console input, start and stop",
  admin: "also changes, snapshots and deletes it",
};

// How the caller holds a space (GET /spaces/{id}'s access): "owner", "server-admin",
// "shared-viewer", "shared-user", "shared-admin".
export const sharedRole = (access) => (access && access.startsWith("shared-") ? access.slice(7) : "");
// The same, said to the colleague.
const YOU = {
  viewer: "you see its state, console and display, view only: your keys and pointer do not reach it",
  user: "you may use it: ssh, forwards, its terminal and console, start and stop",
  admin: "you may use it, change it, take and restore snapshots, and delete it",
};
const rank = { viewer: 1, user: 2, admin: 3 };
// Whether the caller may do what needs `need` (a role's name): owners and server admins may.
export function mayAct(access, need) {
  const role = sharedRole(access);
  return !role || rank[role] >= rank[need];
}

function ShareForm({ space, onDone, onError }) {
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    const user = e.target.user.value.trim();
    const role = e.target.role.value;
    setBusy(true);
    try {
      await api.put(`/spaces/${space.id}/shares/${encodeURIComponent(user)}`, { role });
      e.target.reset();
      onDone(`${space.name} is shared with ${user} as ${role}`);
    } catch (err) {
      onError(err.message);
    } finally {
      setBusy(false);
    }
  };
  return html`
    <form class="share" onSubmit=${submit} aria-label="Share the space">
      <label>Share with <input name="user" required placeholder="username" autocomplete="off" /></label>
      <label>as <select name="role">
        ${Object.entries(ROLES).map(([r, what]) => html`<option value=${r} selected=${r === "user"} title=${what}>${r}</option>`)}
      </select></label>
      <button type="submit" disabled=${busy}>Share</button>
    </form>`;
}

export function Shares({ space, access, user }) {
  const [list, setList] = useState(null);
  const [error, setError] = useState("");
  const [status, setStatus] = useState("");
  const role = sharedRole(access);
  const reload = () => api.get(`/spaces/${space.id}/shares`).then(setList, (e) => setError(e.message));
  useEffect(() => { if (!role) reload(); }, [space.id, role]);
  const done = (what) => { setError(""); setStatus(what); reload(); };
  const change = (s, to) => api.put(`/spaces/${space.id}/shares/${encodeURIComponent(s.user)}`, { role: to })
    .then(() => done(`${s.user} is now ${to}`), (e) => setError(e.message));
  const end = (s) => {
    if (!confirm(`Stop sharing ${space.name} with ${s.user}? What they have open into it closes.`)) return;
    api.del(`/spaces/${space.id}/shares/${encodeURIComponent(s.user)}`)
      .then(() => done(`${space.name} is no longer shared with ${s.user}`), (e) => setError(e.message));
  };
  const leave = () => {
    if (!confirm(`Leave ${space.name}? Its owner can share it with you again.`)) return;
    api.del(`/spaces/${space.id}/shares/${encodeURIComponent(user.username)}`)
      .then(() => go("spaces"), (e) => setError(e.message));
  };

  if (role)
    return html`
      <section class="shares" aria-label="Sharing">
        <h2>Sharing</h2>
        <p data-role=${role}>${space.owner} shares this space with you as <strong>${role}</strong>: ${YOU[role]}.</p>
        <button onClick=${leave}>Leave</button>
        ${error && html`<p class="error" role="alert">${error}</p>`}
      </section>`;
  return html`
    <section class="shares" aria-label="Sharing">
      <h2>Sharing</h2>
      ${list === null ? html`<p class="loading">Loading…</p>` : list.length === 0 ? html`<p class="empty">Not shared with anyone.</p>` : html`
        <table class="list share-list">
          <thead><tr><th>User</th><th>Role</th><th>Since</th><th></th></tr></thead>
          <tbody>${list.map((s) => html`
            <tr data-share=${s.user}>
              <td>${s.user}</td>
              <td><select aria-label=${`${s.user}'s role`} onChange=${(e) => change(s, e.target.value)}>
                ${Object.keys(ROLES).map((r) => html`<option value=${r} selected=${r === s.role}>${r}</option>`)}
              </select></td>
              <td>${new Date(s.createdAt).toLocaleString()}</td>
              <td><button class="danger" onClick=${() => end(s)}>Stop sharing</button></td>
            </tr>`)}</tbody>
        </table>`}
      <${ShareForm} space=${space} onDone=${done} onError=${(m) => { setStatus(""); setError(m); }} />
      <p class="hint">Viewer ${ROLES.viewer}; user ${ROLES.user}; admin ${ROLES.admin}. They name it ${space.name}.${space.owner} in the CLI; their SSH keys reach a running guest at once through its guest agent, else at its next start.</p>
      ${status && html`<p class="ok" role="status">${status}</p>`}
      ${error && html`<p class="error" role="alert">${error}</p>`}
    </section>`;
}
