// Spaces: the live list and the form that creates a space from a template.
import { html, useState, useEffect, go, isAdmin, useTitle, useListView } from "/ui/lib.js";
import * as api from "/ui/api.js";
import { QuotaUse } from "/ui/users.js";
import { UseCells } from "/ui/stats.js";
import { useSpaces, useTemplates, update, queued } from "/ui/space_store.js";
import { Actions, Progress, State, addressOf } from "/ui/space_parts.js";

function CreateForm({ user, onDone }) {
  const templates = useTemplates();
  const [ipMode, setIpMode] = useState("auto");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    const f = e.target;
    const body = { template: f.template.value, name: f.name.value.trim(), start: f.start.checked };
    if (ipMode === "chosen") body.ip = f.ip.value.trim();
    if (isAdmin(user) && f.owner.value.trim()) body.owner = f.owner.value.trim();
    setBusy(true);
    setError("");
    try {
      const r = await api.post("/spaces", body);
      if (r.space) update(r.space.id, r.space);
      if (r.operation) queued(r.space.id, "create");
      onDone();
    } catch (err) {
      setError(err.message);
    } finally {
      setBusy(false);
    }
  };
  if (templates === null) return html`<p>Loading templates…</p>`;
  if (!templates.length) return html`<p>There are no templates yet${isAdmin(user) ? html` — <a href="#/templates/new">write one</a>` : ""}.</p>`;
  return html`
    <form class="create" onSubmit=${submit} aria-label="New space">
      <label>Template
        <select name="template" required>
          ${templates.map((t) => html`<option value=${t.name}>${t.name}</option>`)}
        </select></label>
      <label>Name <input name="name" required autofocus /></label>
      <fieldset>
        <legend>IP address (bridged templates)</legend>
        <label><input type="radio" name="ipmode" checked=${ipMode === "auto"} onChange=${() => setIpMode("auto")} /> picked automatically</label>
        <label><input type="radio" name="ipmode" checked=${ipMode === "chosen"} onChange=${() => setIpMode("chosen")} /> chosen:</label>
        <input name="ip" placeholder="198.51.100.20" disabled=${ipMode !== "chosen"} required=${ipMode === "chosen"} aria-label="IP address" />
      </fieldset>
      ${isAdmin(user) && html`<label>Owner <input name="owner" placeholder=${user.username} /></label>`}
      <label class="inline"><input type="checkbox" name="start" checked /> start it</label>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      <div class="buttons">
        <button type="submit" disabled=${busy}>Create</button>
        <button type="button" onClick=${onDone}>Cancel</button>
      </div>
    </form>`;
}

export function SpacesPage({ user }) {
  useTitle("Spaces");
  const { spaces: list, operations: ops, connected } = useSpaces();
  const [creating, setCreating] = useState(false);
  const [error, setError] = useState("");
  const [me, setMe] = useState(null);  // one's own quota and use, again as spaces come and go
  useEffect(() => { api.get("/whoami").then(setMe, () => {}); }, [list.length]);
  // Others' spaces are listed to admins and to those they are shared with: name the owner.
  const owners = isAdmin(user) || list.some((s) => s.owner && s.owner !== user.username);
  const view = useListView("spaces", list, [
    { key: "name", label: "Name" },
    { key: "state", label: "State" },
    { key: "cpu", label: "CPU", value: (s) => (s.stats ? s.stats.cpuPercent : null) },
    { key: "memory", label: "Memory", value: (s) => (s.stats ? s.stats.memoryUsedBytes ?? s.stats.memoryAvailableBytes : null) },
    { key: "address", label: "IP", value: addressOf },
    { key: "node", label: "Node" },
    { key: "template", label: "Template" },
    ...(owners ? [{ key: "owner", label: "Owner" }] : []),
    { key: "error", label: "Progress / error", sort: false },
    { key: "actions", label: "Actions", sort: false, value: () => "" },
  ]);
  return html`
    <section>
      <div class="bar">
        <h1>Spaces</h1>
        <span class=${connected ? "live on" : "live off"} title="the event stream">${connected ? "live" : "reconnecting…"}</span>
        ${!creating && html`<button onClick=${() => setCreating(true)} accesskey="n">New space</button>`}
        ${me && html`<span class="yours" aria-label="Your use and quota">yours: <${QuotaUse} user=${me} /></span>`}
      </div>
      ${creating && html`<${CreateForm} user=${user} onDone=${() => setCreating(false)} />`}
      ${error && html`<p class="error" role="alert">${error} <button class="link" onClick=${() => setError("")}>dismiss</button></p>`}
      ${list.length === 0 ? html`<p>No spaces yet.</p>` : html`
      <div class="bar">${view.filterBox} ${view.count}</div>
      <table class="spaces">
        ${view.head}
        <tbody>
          ${view.rows.map((s) => html`
            <tr data-space=${s.name} key=${s.id}>
              <td><a href="#/spaces/${s.id}">${s.name}</a></td>
              <td><${State} space=${s} /></td>
              <${UseCells} space=${s} />
              <td class="ip">${addressOf(s)}</td>
              <td>${s.node || ""}</td>
              <td>${s.template}</td>
              ${owners && html`<td class="owner">${s.owner || ""}</td>`}
              <td>${ops.get(s.id) ? html`<${Progress} op=${ops.get(s.id)} />` : s.error && html`<span class="error">${s.error}</span>`}</td>
              <td><${Actions} space=${s} onError=${setError} /></td>
            </tr>`)}
        </tbody>
      </table>`}
    </section>`;
}
