// One space's page: its state and actions, how to reach it, what it uses, its snapshots, its
// address, and the menu of its console, display and terminal.
import { html, useState, useEffect, go, hasPermission, when, useTitle } from "/ui/lib.js";
import * as api from "/ui/api.js";
import { SpaceCharts } from "/ui/stats.js";
import { Snapshots } from "/ui/snapshots.js";
import { useSpaces, update } from "/ui/space_store.js";
import { Actions, Progress, State } from "/ui/space_parts.js";
import { Shares, mayAct } from "/ui/shares.js";

// "after 30m idle (idle 4m now)", "off": the CLI's words.
function idleText(idle, state) {
  if (!idle) return "—";
  if (!idle.after) return "off";
  const d = (s) => (s < 60 ? `${s}s` : s % 3600 === 0 ? `${s / 3600}h` :
    s % 60 === 0 ? `${s / 60}m` : `${Math.floor(s / 60)}m${s % 60}s`);
  if (idle.idleFor != null) return `after ${d(idle.after)} idle (idle ${d(idle.idleFor)} now)`;
  return `after ${d(idle.after)} idle${state === "running" ? " (in use now)" : ""}`;
}

// The CLI's words (space info): null readiness means the node does not report it (a
// KubeVirt space has no console log for bowline to read), not that the guest is down.
function readinessText(r) {
  if (!r) return "unknown";
  if (r.failed) return "cloud-init failed";
  if (r.ready || r.finished) return "ready";
  if (r.booted) return "booting (cloud-init running)";
  return "not booted";
}

function openViewer(id, kind) {
  // Its own window: the display resizes it to the guest's resolution.
  const features = kind === "display" ? "popup,width=1040,height=840" : "popup,width=900,height=600";
  // Each terminal a window of its own (a shell each); the display and console are shared.
  if (kind === "terminal") {
    const w = open(`#/spaces/${encodeURIComponent(id)}/terminal`, "_blank", features);
    if (!w) go(`spaces/${encodeURIComponent(id)}/terminal`);
    return;
  }
  const w = open(`#/spaces/${encodeURIComponent(id)}/${kind}`, `bowline-${kind}-${id}`, features);
  if (!w) go(`spaces/${encodeURIComponent(id)}/${kind}`);  // popups blocked: this window
}

// Port 22 is the guest's sshd: reached with the SSH and ssh config lines (and its state is
// the Port 22 line), never with a browser: a template that lists it gets no forward and no
// http:// link for it.
const isSshPort = (p) => Number(p.port) === 22;

// How to reach the space: what `space info` says, with why VM Terminal may not open.
function Connect({ space, info, user, terminal }) {
  const c = info.connect;
  if (!c) return null;
  const portText = { open: "open (sshd answers)",
    "no banner": "open (no SSH banner: something accepts the connection, but it is not an sshd, or not yet)",
    closed: "closed (nothing listens: sshd not up yet?)",
    "no route": "no answer", "no address": "no address yet (still booting)", "not running": "the space is not running",
    unavailable: "not reachable through this node" }[c.sshPort] || c.sshPort || "—";
  let terminalWhy = "";
  if (!hasPermission(user, "use-web-terminal")) terminalWhy = "needs the permission use-web-terminal";
  else if (space.state !== "running") terminalWhy = `the space is ${space.state}`;
  else if (c.terminal && !c.terminal.available) terminalWhy = c.terminal.why;
  else if (c.sshPort && c.sshPort !== "open") terminalWhy = `port 22 is ${portText}`;
  return html`
    <h2>Connect</h2>
    <dl class="facts connect">
      <dt>SSH</dt><dd><code data-connect="ssh">${c.ssh}</code></dd>
      <dt>ssh config</dt><dd><code data-connect="ssh-host">ssh ${c.sshHost}</code> after <code>bowline ssh-config --write</code> (also scp, rsync, git, VS Code Remote-SSH)</dd>
      <dt>Port 22</dt><dd data-connect="ssh-port" data-state=${c.sshPort}>${portText}</dd>
      <dt>Host key</dt><dd><code data-connect="fingerprint">${c.hostKeyFingerprint || "none pinned (made by an older bowline)"}</code></dd>
      ${(c.ports || []).filter((p) => !isSshPort(p)).map((p) => html`
        <dt>Port ${p.port}${p.name ? ` (${p.name})` : ""}</dt>
        <dd data-port=${p.port}><code data-connect="forward">${p.forward}</code>, then <a href="http://127.0.0.1:${p.port}/" target="_blank" rel="noopener">http://127.0.0.1:${p.port}/</a>${p.preview && html`<br />
          Preview (${p.preview === "team" ? "every logged-in user" : "you and those it is shared with"}): ${p.previewUrl
            ? html`<a data-preview=${p.port} href=${p.previewUrl} target="_blank" rel="noopener">${p.previewUrl}</a>`
            : html`<span data-preview-note=${p.port}>${p.previewNote}</span>`}`}</dd>`)}
    </dl>
    <p class="hint">VM Terminal is a shell over SSH as ${space.owner || "the owner"}, with no password${terminalWhy ? html` — <strong data-why="terminal">unavailable: ${terminalWhy}</strong>` : ""}.
      VM Console is the serial console, for when SSH is down: log in with your service password.</p>`;
}

// A stopped bridged space's address (PUT /spaces/{id}/ip): the guest takes it at its next
// start. The server's refusal (taken, outside the range, the gateway) is shown by the field.
function SetIp({ space }) {
  const [error, setError] = useState("");
  const [done, setDone] = useState("");
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    const ip = e.target.ip.value.trim();
    setBusy(true);
    setError("");
    setDone("");
    try {
      const r = await api.put(`/spaces/${space.id}/ip`, { ip });
      update(space.id, { ...r, address: r.ip });
      setDone(`The address is now ${r.ip}; the guest takes it at its next start.`);
      e.target.reset();
    } catch (err) {
      setError(err.message);
    } finally {
      setBusy(false);
    }
  };
  return html`
    <form class="set-ip" onSubmit=${submit} aria-label="Change the IP address">
      <label>New IP address <input name="ip" required placeholder=${space.ip || "198.51.100.20"}
        aria-invalid=${error ? "true" : null} aria-describedby=${error ? "set-ip-error" : null} /></label>
      <button type="submit" disabled=${busy}>Change the address</button>
      ${error && html`<span class="error" id="set-ip-error" role="alert">${error}</span>`}
      ${done && html`<span class="ok" role="status">${done}</span>`}
    </form>`;
}

export function SpaceDetail({ id, user }) {
  const { get, operations: ops } = useSpaces();
  const listed = get(id);
  const [detail, setDetail] = useState(null);
  const [missing, setMissing] = useState(false);
  const [templates, setTemplates] = useState([]);
  const [error, setError] = useState("");
  useTitle(listed ? listed.name : "Space");
  useEffect(() => { api.get("/templates").then(setTemplates, () => {}); }, []);
  // The full record (with info) again whenever the list's copy changes.
  useEffect(() => {
    api.get(`/spaces/${id}`).then(setDetail, (e) => { if (e.status === 404) setMissing(true); });
  }, [id, listed && listed.updatedAt, listed && listed.state]);
  if (missing) return html`<p>No such space. <a href="#/spaces">Back to the spaces</a></p>`;
  const space = { ...(detail || {}), ...(listed || {}) };
  if (!space.id) return html`<p class="loading">Loading…</p>`;
  const tmpl = templates.find((t) => t.name === space.template) || {};
  const display = tmpl.display && hasPermission(user, "use-vnc");
  const console_ = tmpl.console && hasPermission(user, "use-web-terminal");
  // Opening the terminal resumes a suspended space (the server waits for it).
  // Shared with the caller: what the role allows (the server refuses the rest anyway).
  const access = detail && detail.access;
  const terminal = hasPermission(user, "use-web-terminal") && mayAct(access, "user") &&
    (space.state === "running" || space.state === "suspended");
  const info = (detail && detail.info) || {};
  const readiness = info.readiness || {};
  return html`
    <section class="space">
      <div class="bar">
        <h1>${space.name}</h1>
        <${State} space=${space} />
      </div>
      <nav class="menu" aria-label="Space menu">
        <${Actions} space=${space} onError=${setError} may=${(need) => mayAct(access, need)} />
        ${display && html`<button class="open-viewer" data-menu="display" onClick=${() => openViewer(space.id, "display")}>VM Display</button>`}
        ${terminal && html`<button class="open-viewer" data-menu="terminal" title="a shell over SSH, no password" onClick=${() => openViewer(space.id, "terminal")}>VM Terminal</button>`}
        ${console_ && html`<button class="open-viewer" data-menu="console" title="the serial console" onClick=${() => openViewer(space.id, "console")}>VM Console</button>`}
      </nav>
      <${Progress} op=${ops.get(space.id)} />
      ${error && html`<p class="error" role="alert">${error}</p>`}
      ${space.error && html`<p class="error">${space.error}</p>`}
      ${info.suspended && html`<p class="suspended" role="status">Suspended: ${info.suspended.reason}, at ${new Date(info.suspended.at).toLocaleString()}. Resume, or open its console, display or terminal, and it continues where it was.</p>`}
      <dl class="facts">
        <dt>Idle suspend</dt><dd class="idle">${idleText(info.idleSuspend, space.state)}</dd>
        <dt>IP</dt><dd class="ip">${space.address || space.ip || info.address || "—"}</dd>
        <dt>Node</dt><dd>${space.node || "—"}</dd>
        <dt>Template</dt><dd><a href="#/templates/${space.template}">${space.template}</a> (revision ${space.appliedRevision || "—"} of ${space.templateRevision})${space.redefinePending ? " · the new revision applies at the next start" : ""}</dd>
        ${(info.pendingChanges || []).length > 0 && html`
          <dt>Pending</dt><dd class="pending">${info.pendingChanges.map((c) => html`
            <span data-part=${c.part} title=${c.what}>${c.part} (${c.applies})</span>`)}</dd>`}
        <dt>Owner</dt><dd>${space.owner}</dd>
        <dt>Domain</dt><dd>${space.domain}</dd>
        <dt>Readiness</dt><dd class="readiness">${detail ? readinessText(info.readiness) : "…"}${readiness.detail ? ` · ${readiness.detail}` : ""}</dd>
        <dt>Created</dt><dd>${when(space.createdAt)}</dd>
      </dl>
      ${space.state === "stopped" && tmpl.network === "bridged" && mayAct(access, "admin") && html`<${SetIp} space=${space} />`}
      <${SpaceCharts} id=${space.id} />
      <${Snapshots} space=${space} changes=${mayAct(access, "admin")} />
      ${detail && html`<${Shares} space=${space} access=${access} user=${user} />`}
      <${Connect} space=${space} info=${info} user=${user} />
      ${info.consoleTail && info.consoleTail.length > 0 && html`
        <h2>Console (last lines)</h2>
        <pre class="tail">${info.consoleTail.join("\n")}</pre>`}
    </section>`;
}
