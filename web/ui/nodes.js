// Nodes, for admins (GET /api/v1/nodes): what each node can run, the warnings it gives, and
// each of its checks with its status and, where it fails, the fix (what `bowline node check`
// prints). "Check again" asks for a fresh report (?refresh=1) instead of the kept one.
import { html, useState, useEffect, when, useTitle, useListView } from "/ui/lib.js";
import * as api from "/ui/api.js";

const STATUS_TEXT = { ok: "ok", warn: "warning", missing: "missing" };

function Checks({ node }) {
  const view = useListView(`checks of ${node.name}`, node.checks || [], [
    { key: "title", label: "Check", value: (c) => c.title || c.name },
    { key: "status", label: "Status" },
    { key: "required", label: "Required", value: (c) => (c.required ? "yes" : "no") },
    { key: "detail", label: "Detail" },
    { key: "fix", label: "Fix" },
  ], "status");
  if (!(node.checks || []).length) return html`<p>This node reports no checks.</p>`;
  return html`
    <div class="bar">${view.filterBox} ${view.count}</div>
    <table class="checks">
      ${view.head}
      <tbody>${view.rows.map((c) => html`
        <tr data-check=${c.name} data-status=${c.status} key=${c.name}>
          <td title=${c.name}>${c.title || c.name}</td>
          <td class=${`status status-${c.status}`}>${STATUS_TEXT[c.status] || c.status}</td>
          <td>${c.required ? "yes" : "no"}</td>
          <td class="detail">${c.detail || ""}</td>
          <td class="fix">${c.status !== "ok" && c.fix ? html`<code>${c.fix}</code>` : ""}</td>
        </tr>`)}</tbody>
    </table>`;
}

function NodeSection({ node }) {
  return html`
    <section class="node" data-node=${node.name} aria-label=${`Node ${node.name}`}>
      <h2>${node.name} <small>(${node.kind || "libvirt"})</small></h2>
      <dl class="facts">
        <dt>Ready</dt><dd data-ready=${String(!!node.ready)}>${node.ready ? "yes" : "no: a required check fails"}</dd>
        <dt>Runs</dt><dd>${(node.runtimes || []).join(", ") || "nothing"}</dd>
        ${node.uri && html`<dt>URI</dt><dd><code>${node.uri}</code></dd>`}
        ${node.server && html`<dt>Server</dt><dd><code>${node.server}</code></dd>`}
        ${node.namespace && html`<dt>Namespace</dt><dd>${node.namespace}</dd>`}
        ${node.domainType && html`<dt>Domain type</dt><dd>${node.domainType}${node.domainTypeSetting ? ` (setting: ${node.domainTypeSetting})` : ""}</dd>`}
        ${node.checkedAt && html`<dt>Checked</dt><dd>${when(node.checkedAt)}</dd>`}
      </dl>
      ${(node.warnings || []).length > 0 && html`
        <ul class="warnings">${node.warnings.map((w) => html`<li class="notice" role="status">${w}</li>`)}</ul>`}
      <${Checks} node=${node} />
    </section>`;
}

export function NodesPage() {
  useTitle("Nodes");
  const [nodes, setNodes] = useState(null);
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const load = async (refresh) => {
    setBusy(true);
    try {
      setNodes(await api.get(refresh ? "/nodes?refresh=1" : "/nodes"));
      setError("");
    } catch (e) {
      setError(e.message);
      setNodes((n) => n || []);
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => { load(false); }, []);
  const view = useListView("nodes", nodes, [
    { key: "name", label: "Node" },
    { key: "kind", label: "Kind" },
    { key: "ready", label: "Ready", value: (n) => (n.ready ? "yes" : "no") },
    { key: "runtimes", label: "Runs", value: (n) => (n.runtimes || []).join(" ") },
    { key: "failing", label: "Failing checks", value: (n) => (n.checks || []).filter((c) => c.status !== "ok").length },
    { key: "warnings", label: "Warnings", value: (n) => (n.warnings || []).length },
  ]);
  return html`
    <section>
      <div class="bar"><h1>Nodes</h1>
        <button onClick=${() => load(true)} disabled=${busy}>${busy ? "Checking…" : "Check again"}</button></div>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      ${nodes === null ? html`<p class="loading">Loading…</p>` : html`
        <div class="bar">${view.filterBox} ${view.count}</div>
        <table class="nodes">
          ${view.head}
          <tbody>${view.rows.map((n) => html`
            <tr data-node-row=${n.name} key=${n.name}>
              <td><a href="#/nodes" onClick=${(e) => { e.preventDefault(); document.querySelector(`section.node[data-node="${CSS.escape(n.name)}"]`)?.scrollIntoView(); }}>${n.name}</a></td>
              <td>${n.kind || "libvirt"}</td><td>${n.ready ? "yes" : "no"}</td>
              <td>${(n.runtimes || []).join(", ") || "—"}</td>
              <td>${(n.checks || []).filter((c) => c.status !== "ok").length}</td>
              <td>${(n.warnings || []).length}</td>
            </tr>`)}</tbody>
        </table>
        ${view.rows.map((n) => html`<${NodeSection} key=${n.name} node=${n} />`)}`}
    </section>`;
}
