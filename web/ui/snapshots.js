// A space's snapshots and clones on its page: take one (with the running state if asked),
// restore, delete, and clone the space as it is or at a snapshot. Each is an operation: the
// section follows it to its end and shows the server's words when it fails.
import { html, useState, useEffect, go, when } from "/ui/lib.js";
import * as api from "/ui/api.js";

function size(bytes) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = bytes || 0, i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${v.toFixed(i ? 1 : 0)} ${units[i]}`;
}

// Polls the operation until it ends; throws its error when it failed.
async function finished(accepted) {
  const id = accepted && accepted.operation && accepted.operation.id;
  if (!id) return accepted;
  for (;;) {
    const op = await api.get(`/operations/${id}`);
    if (op.state === "succeeded") return accepted;
    if (op.state === "failed" || op.state === "interrupted" || op.state === "superseded")
      throw new Error(op.error || `the operation ${op.state}`);
    await new Promise((r) => setTimeout(r, 700));
  }
}

// changes: whether the caller may take, restore, delete and clone (owner, admin role).
export function Snapshots({ space, changes = true }) {
  const [list, setList] = useState(null);
  const [error, setError] = useState("");
  const [status, setStatus] = useState("");
  const [busy, setBusy] = useState(false);
  const reload = () => api.get(`/spaces/${space.id}/snapshots`).then(setList, (e) => setError(e.message));
  useEffect(() => { reload(); }, [space.id, space.state]);
  const settled = space.state === "running" || space.state === "stopped";

  const run = async (what, call) => {
    setBusy(true);
    setError("");
    setStatus(`${what}…`);
    try {
      const r = await finished(await call());
      setStatus(`${what}: done`);
      return r;
    } catch (e) {
      setStatus("");
      setError(`${what}: ${e.message}`);
    } finally {
      setBusy(false);
      reload();
    }
  };
  const take = (e) => {
    e.preventDefault();
    const name = e.target.name.value.trim();
    const memory = e.target.memory.checked;
    run(`snapshot ${name}`, () => api.post(`/spaces/${space.id}/snapshots`, { name, memory }))
      .then(() => e.target.reset());
  };
  const restore = (s) => {
    const running = space.state === "running";
    const ask = running
      ? `Stop ${space.name} and restore it to ${s.name}? What it wrote since is lost.`
      : `Restore ${space.name} to ${s.name}? What it wrote since is lost.`;
    if (!confirm(ask)) return;
    run(`restore ${s.name}`, () => api.post(`/spaces/${space.id}/snapshots/${encodeURIComponent(s.name)}/restore`, { stop: running }));
  };
  const remove = (s) => {
    if (!confirm(`Delete the snapshot ${s.name}?`)) return;
    run(`delete ${s.name}`, () => api.del(`/spaces/${space.id}/snapshots/${encodeURIComponent(s.name)}`));
  };
  const clone = async (e) => {
    e.preventDefault();
    const body = { name: e.target.clone.value.trim(), full: e.target.full.checked };
    if (e.target.at.value) body.snapshot = e.target.at.value;
    const r = await run(`clone ${body.name}`, () => api.post(`/spaces/${space.id}/clone`, body));
    if (r && r.space && r.space.id) go(`spaces/${r.space.id}`);
  };

  return html`
    <section class="snapshots" aria-label="Snapshots">
      <h2>Snapshots</h2>
      ${list === null ? html`<p class="loading">Loading…</p>` : list.length === 0 ? html`<p class="empty">No snapshots yet.</p>` : html`
        <table class="list snapshot-list">
          <thead><tr><th>Name</th><th>Taken</th><th>While</th><th>Memory</th><th>Size</th><th></th></tr></thead>
          <tbody>${list.map((s) => html`
            <tr data-snapshot=${s.name}>
              <td>${s.name}${s.bestEffort ? html` <span class="note" title="the guest agent did not answer: its filesystems were not frozen">best effort</span>` : ""}</td>
              <td>${when(s.createdAt)}</td>
              <td>${s.running ? "running" : "stopped"}</td>
              <td>${s.memory ? "yes" : "no"}</td>
              <td>${size(s.sizeBytes)}</td>
              <td>${changes && html`
                <button onClick=${() => restore(s)} disabled=${busy || !settled}>Restore</button>
                <button class="danger" onClick=${() => remove(s)} disabled=${busy}>Delete</button>`}
              </td>
            </tr>`)}</tbody>
        </table>`}
      ${changes && html`<form class="take-snapshot" onSubmit=${take} aria-label="Take a snapshot">
        <label>Name <input name="name" required pattern="[a-z0-9]([a-z0-9-]*[a-z0-9])?" placeholder="before-upgrade" /></label>
        <label><input type="checkbox" name="memory" disabled=${space.state !== "running"} /> with memory</label>
        <button type="submit" disabled=${busy || !settled}>Take a snapshot</button>
      </form>
      <form class="clone" onSubmit=${clone} aria-label="Clone the space">
        <label>Clone as <input name="clone" required pattern="[a-z0-9]([a-z0-9-]*[a-z0-9])?" placeholder=${space.name + "-2"} /></label>
        <label>from <select name="at">
          <option value="">now</option>
          ${(list || []).map((s) => html`<option value=${s.name}>${s.name}</option>`)}
        </select></label>
        <label><input type="checkbox" name="full" /> full copy</label>
        <button type="submit" disabled=${busy || !settled}>Clone</button>
      </form>`}
      ${status && html`<p class="ok" role="status">${status}</p>`}
      ${error && html`<p class="error" role="alert">${error}</p>`}
    </section>`;
}
