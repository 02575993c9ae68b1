// Disks (GET /api/v1/disks): the user's disks of their own, which their templates'
// `disks:` attach by name, with the spaces that name each; made from an image or blank, and
// deleted once no space names them. Admins see everyone's.
import { html, useState, useEffect, isAdmin, useTitle } from "/ui/lib.js";
import * as api from "/ui/api.js";

function NewDisk({ onDone }) {
  const [error, setError] = useState("");
  const submit = async (e) => {
    e.preventDefault();
    const f = e.target;
    const body = { name: f.name.value.trim() };
    if (f.image.value.trim()) body.image = f.image.value.trim();
    if (f.size.value.trim()) body.size = f.size.value.trim();
    try {
      await api.post("/disks", body);
      f.reset();
      setError("");
      onDone();
    } catch (err) { setError(err.message); }
  };
  return html`
    <form class="create" onSubmit=${submit} aria-label="New disk">
      <label>Name <input name="name" required pattern="[a-z0-9]([-a-z0-9]*[a-z0-9])?" /></label>
      <label>Image <input name="image" placeholder="debian-12, https://…" /></label>
      <label>Size <input name="size" placeholder="10Gi" /></label>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      <div class="buttons"><button type="submit">Create disk</button></div>
    </form>`;
}

export function DisksPage({ user }) {
  useTitle("Disks");
  const [disks, setDisks] = useState(null);
  const [error, setError] = useState("");
  const query = isAdmin(user) ? "?all=1" : "";
  const reload = () => api.get(`/disks${query}`).then(setDisks, (e) => { setError(e.message); setDisks([]); });
  useEffect(() => { reload(); }, []);
  const remove = async (disk) => {
    if (!confirm(`Delete the disk ${disk.name} of ${disk.owner}? Its data goes with it.`)) return;
    const owner = disk.owner === user.username ? "" : `?owner=${encodeURIComponent(disk.owner)}`;
    try { await api.del(`/disks/${encodeURIComponent(disk.name)}${owner}`); setError(""); reload(); } catch (e) { setError(e.message); }
  };
  if (disks === null) return html`<p class="loading">Loading…</p>`;
  return html`
    <section>
      <div class="bar"><h1>Disks</h1></div>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      <${NewDisk} onDone=${reload} />
      ${disks.length === 0 && html`<p>No disks yet. A template's <code>disks:</code> attaches them by name.</p>`}
      ${disks.length > 0 && html`
        <table>
          <thead><tr><th>Disk</th><th>Owner</th><th>Size</th><th>Made from</th><th>Spaces</th><th>Actions</th></tr></thead>
          <tbody>${disks.map((d) => html`
            <tr data-disk=${d.name} key=${d.owner + "/" + d.name}>
              <td>${d.name}</td><td>${d.owner}</td><td>${d.size}</td><td>${d.source}</td>
              <td>${(d.spaces || []).map((s) => html`<span class="member state-${s.state}">${s.name} (${s.state}) </span>`)}</td>
              <td class="actions"><button class="danger" onClick=${() => remove(d)} disabled=${(d.spaces || []).length > 0}
                title=${(d.spaces || []).length ? "a space names it: delete the space first" : ""}>Delete</button></td>
            </tr>`)}</tbody>
        </table>`}
    </section>`;
}
