// Templates: the list, and an editor that validates the YAML on the server and shows each
// diagnostic at its line and column.
import { html, useState, useEffect, useRef, go, isAdmin, when, useTitle, useListView } from "/ui/lib.js";
import * as api from "/ui/api.js";

export function TemplatesPage({ user }) {
  useTitle("Templates");
  const [list, setList] = useState(null);
  const [error, setError] = useState("");
  useEffect(() => { api.get("/templates").then(setList, (e) => setError(e.message)); }, []);
  const yesNo = (v) => (v ? "yes" : "no");
  const view = useListView("templates", list, [
    { key: "name", label: "Name" },
    { key: "description", label: "Description" },
    { key: "network", label: "Network" },
    { key: "revision", label: "Revision" },
    { key: "display", label: "Display", value: (t) => yesNo(t.display) },
    { key: "console", label: "Console", value: (t) => yesNo(t.console) },
    { key: "updatedAt", label: "Changed" },
  ]);
  return html`
    <section>
      <div class="bar"><h1>Templates</h1>
        ${isAdmin(user) && html`<a class="button" href="#/templates/new" accesskey="n">New template</a>`}</div>
      ${error && html`<p class="error">${error}</p>`}
      ${list === null ? html`<p class="loading">Loading…</p>` : list.length === 0 ? html`<p>No templates yet.</p>` : html`
        <div class="bar">${view.filterBox} ${view.count}</div>
        <table>
          ${view.head}
          <tbody>${view.rows.map((t) => html`
            <tr data-template=${t.name}><td><a href="#/templates/${encodeURIComponent(t.name)}">${t.name}</a></td>
              <td>${t.description || ""}</td><td>${t.network || ""}</td><td>${t.revision}</td><td>${t.display ? "yes" : "no"}</td><td>${t.console ? "yes" : "no"}</td>
              <td>${when(t.updatedAt)}</td></tr>`)}</tbody>
        </table>`}
    </section>`;
}

// The textarea with a gutter of line numbers; lines with a diagnostic are marked there and
// listed below, each a button that puts the cursor at its line and column.
function Editor({ text, setText, diagnostics, readOnly, areaRef }) {
  const gutter = useRef(null);
  const lines = text.split("\n").length;
  const byLine = new Map();
  for (const d of diagnostics) {
    if (!byLine.has(d.line)) byLine.set(d.line, []);
    byLine.get(d.line).push(d);
  }
  const sync = () => { if (gutter.current) gutter.current.scrollTop = areaRef.current.scrollTop; };
  return html`
    <div class="editor">
      <div class="gutter" ref=${gutter} aria-hidden="true">
        ${Array.from({ length: lines }, (_, i) => {
          const ds = byLine.get(i + 1);
          const sev = ds ? (ds.some((d) => d.severity === "error") ? "error" : "warning") : "";
          return html`<div class=${sev} title=${ds ? ds.map((d) => `${d.line}:${d.column} ${d.message}`).join("\n") : ""}>${i + 1}</div>`;
        })}
      </div>
      <textarea ref=${areaRef} value=${text} spellcheck="false" readOnly=${readOnly}
        aria-label="Template YAML" onInput=${(e) => setText(e.target.value)} onScroll=${sync}
        onKeyDown=${(e) => {
          if (e.key === "Tab" && !e.shiftKey && !readOnly) {  // two spaces; Shift+Tab leaves
            e.preventDefault();
            const a = e.target, s = a.selectionStart;
            setText(a.value.slice(0, s) + "  " + a.value.slice(a.selectionEnd));
            requestAnimationFrame(() => a.setSelectionRange(s + 2, s + 2));
          }
        }}></textarea>
    </div>`;
}

function jumpTo(area, text, line, column) {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === "\n") starts.push(i + 1);
  const at = (starts[Math.max(0, line - 1)] || 0) + Math.max(0, column - 1);
  area.focus();
  area.setSelectionRange(at, at);
}

export function TemplateEditor({ name, user }) {
  const isNew = name === "new";
  useTitle(isNew ? "New template" : name);
  const admin = isAdmin(user);
  const area = useRef(null);
  const [tmpl, setTmpl] = useState(null);
  const [newName, setNewName] = useState("");
  const [text, setText] = useState("");
  const [diagnostics, setDiagnostics] = useState([]);
  const [message, setMessage] = useState({ kind: "", text: "" });
  useEffect(() => {
    if (isNew) { setText("name: ${{ .user.username }}-${{ .space.name }}\nimage: debian-12\nmemory: 2G\ncpus: 2\nnetwork:\n  mode: nat\n  bridge: default\ndisplay: true\nconsole: true\n"); return; }
    api.get(`/templates/${encodeURIComponent(name)}`).then((t) => { setTmpl(t); setText(t.yaml || ""); },
      (e) => setMessage({ kind: "error", text: e.message }));
  }, [name]);

  const validate = async () => {
    try {
      const r = await api.post("/templates/validate", { yaml: text });
      setDiagnostics(r.diagnostics || []);
      setMessage(r.valid ? { kind: "ok", text: r.diagnostics.length ? "Valid, with warnings." : "Valid." }
                         : { kind: "error", text: "Not valid: see the marked lines." });
    } catch (e) { setMessage({ kind: "error", text: e.message }); }
  };
  const save = async () => {
    try {
      const r = isNew ? await api.post("/templates", { name: newName.trim(), yaml: text })
                      : await api.put(`/templates/${encodeURIComponent(name)}`, { yaml: text });
      setDiagnostics(r.diagnostics || []);
      setTmpl(r);
      setMessage({ kind: "ok", text: `Saved: revision ${r.revision}.` });
      if (isNew) go(`templates/${encodeURIComponent(r.name)}`);
    } catch (e) {
      setDiagnostics(e.body.diagnostics || []);
      setMessage({ kind: "error", text: e.message });
    }
  };
  const remove = async () => {
    if (!confirm(`Delete the template ${name}?`)) return;
    try { await api.del(`/templates/${encodeURIComponent(name)}`); go("templates"); }
    catch (e) { setMessage({ kind: "error", text: e.message }); }
  };
  const onKey = (e) => {  // Ctrl+S saves, Ctrl+Enter validates
    if ((e.ctrlKey || e.metaKey) && e.key === "s" && admin) { e.preventDefault(); save(); }
    if ((e.ctrlKey || e.metaKey) && e.key === "Enter") { e.preventDefault(); validate(); }
  };
  // Not an admin nor its author: what the template offers, not its YAML (it may hold secrets).
  if (tmpl && !tmpl.readable) return html`
    <section class="template summary">
      <div class="bar"><h1>${name}</h1><span>revision ${tmpl.revision}</span></div>
      ${tmpl.description && html`<p class="description">${tmpl.description}</p>`}
      <dl class="facts">
        <dt>Network</dt><dd>${tmpl.network}</dd>
        <dt>VM Display</dt><dd>${tmpl.display ? "yes" : "no"}</dd>
        <dt>VM Console</dt><dd>${tmpl.console ? "yes" : "no"}</dd>
        <dt>Ports</dt><dd>${(tmpl.ports || []).map((p) => p.name ? `${p.port} (${p.name})` : `${p.port}`).join(", ") || "—"}</dd>
      </dl>
      <p class="hint">The template's YAML is for admins and its author: environment values and cloudInit may hold secrets.</p>
    </section>`;
  return html`
    <section class="template" onKeyDown=${onKey}>
      <div class="bar"><h1>${isNew ? "New template" : name}</h1>
        ${tmpl && html`<span>revision ${tmpl.revision}</span>`}</div>
      ${isNew && html`<label>Name <input value=${newName} onInput=${(e) => setNewName(e.target.value)} required /></label>`}
      <${Editor} text=${text} setText=${setText} diagnostics=${diagnostics} readOnly=${!admin} areaRef=${area} />
      <div class="buttons">
        <button onClick=${validate} title="Ctrl+Enter">Validate</button>
        ${admin && html`<button onClick=${save} title="Ctrl+S">Save</button>`}
        ${admin && !isNew && html`<button class="danger" onClick=${remove}>Delete</button>`}
        ${message.text && html`<span class=${message.kind === "error" ? "error" : "ok"} role="status">${message.text}</span>`}
      </div>
      ${diagnostics.length > 0 && html`
        <ul class="diagnostics">${diagnostics.map((d) => html`
          <li class=${d.severity}><button class="link" onClick=${() => jumpTo(area.current, text, d.line, d.column)}>
            <span class="pos">${d.line}:${d.column}</span></button> ${d.severity}${d.path ? ` at ${d.path}` : ""}: ${d.message}</li>`)}
        </ul>`}
    </section>`;
}
