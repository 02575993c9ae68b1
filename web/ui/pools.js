// Pools (GET /api/v1/pools): members of a template kept ready; anyone claims one as a space of
// their own, admins make and remove pools. Servers without pools get a note instead.
import { html, useState, useEffect, go, isAdmin, useTitle, useListView } from "/ui/lib.js";
import * as api from "/ui/api.js";

function NewPool({ onDone }) {
  const [templates, setTemplates] = useState([]);
  const [error, setError] = useState("");
  useEffect(() => { api.get("/templates").then(setTemplates, () => {}); }, []);
  const submit = async (e) => {
    e.preventDefault();
    const f = e.target;
    try {
      await api.post("/pools", { name: f.name.value.trim(), template: f.template.value, size: Number(f.size.value) });
      f.reset();
      setError("");
      onDone();
    } catch (err) { setError(err.message); }
  };
  return html`
    <form class="create" onSubmit=${submit} aria-label="New pool">
      <label>Name <input name="name" required /></label>
      <label>Template <select name="template" required>${templates.map((t) => html`<option value=${t.name}>${t.name}</option>`)}</select></label>
      <label>Members kept ready <input name="size" type="number" min="0" value="1" required /></label>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      <div class="buttons"><button type="submit">Create pool</button></div>
    </form>`;
}

export function PoolsPage({ user }) {
  useTitle("Pools");
  const [pools, setPools] = useState(null);
  const [note, setNote] = useState("");
  const [error, setError] = useState("");
  const reload = () => api.get("/pools").then(setPools, (e) => {
    setNote(e.status === 404 ? "This server has no pools." : e.message);
    setPools([]);
  });
  useEffect(() => { reload(); }, []);
  const claim = async (pool) => {
    const name = prompt(`Name of your new space from the pool ${pool.name}:`);
    if (!name) return;
    try {
      const r = await api.post(`/pools/${encodeURIComponent(pool.name)}/claim`, { name });
      go(`spaces/${encodeURIComponent(r.space.id)}`);
    } catch (e) { setError(e.message); }
  };
  const remove = async (pool) => {
    if (!confirm(`Delete the pool ${pool.name} and its unclaimed members?`)) return;
    try { await api.del(`/pools/${encodeURIComponent(pool.name)}`); reload(); } catch (e) { setError(e.message); }
  };
  const view = useListView("pools", pools, [
    { key: "name", label: "Pool" },
    { key: "template", label: "Template" },
    { key: "ready", label: "Ready" },
    { key: "members", label: "Members", value: (p) => (p.members || []).map((m) => `${m.name} ${m.state}`).join(" ") },
    { key: "actions", label: "Actions", sort: false, value: () => "" },
  ]);
  if (pools === null) return html`<p class="loading">Loading…</p>`;
  return html`
    <section>
      <div class="bar"><h1>Pools</h1></div>
      ${note && html`<p>${note}</p>`}
      ${error && html`<p class="error" role="alert">${error}</p>`}
      ${!note && isAdmin(user) && html`<${NewPool} onDone=${reload} />`}
      ${!note && pools.length === 0 && html`<p>No pools yet.</p>`}
      ${pools.length > 0 && html`
        <div class="bar">${view.filterBox} ${view.count}</div>
        <table>
          ${view.head}
          <tbody>${view.rows.map((p) => html`
            <tr data-pool=${p.name} key=${p.name}>
              <td>${p.name}</td><td>${p.template || "—"}</td><td>${p.ready ?? "?"} of ${p.size}</td>
              <td>${(p.members || []).map((m) => html`<span class="member state-${m.state}" title=${m.error || ""}>${m.name} (${m.state}) </span>`)}</td>
              <td class="actions">
                <button onClick=${() => claim(p)} disabled=${!p.ready}>Claim</button>
                ${isAdmin(user) && html`<button class="danger" onClick=${() => remove(p)}>Delete</button>`}
              </td>
            </tr>`)}</tbody>
        </table>`}
    </section>`;
}
