// Spaces: a live list fed by the event stream (no reloading), creating a space from a
// template, the lifecycle actions with their progress, and a space's page with its menu.
import { html, useState, useEffect, go, hasPermission, isAdmin, when, useTitle, useListView } from "/ui/lib.js";
import * as api from "/ui/api.js";
import * as kinds from "/ui/event-kinds.js";
import { QuotaUse } from "/ui/users.js";
import { SpaceCharts, UseCells } from "/ui/stats.js";
import { Snapshots } from "/ui/snapshots.js";

// ---- the store: every visible space, the running operations, kept current by events ------

const spaces = new Map();      // id -> space
const operations = new Map();  // space id -> {kind, step, progress}
const listeners = new Set();
let connected = false;
let admin = false;

function emit() { for (const l of listeners) l(); }

async function refreshAll() {
  try {
    const list = await api.get(admin ? "/spaces?all=1" : "/spaces");
    spaces.clear();
    for (const s of list) spaces.set(s.id, s);
    emit();
  } catch (e) { console.error("spaces", e); }
}

async function refreshOne(id) {
  try {
    const fresh = await api.get(`/spaces/${id}`);
    spaces.set(id, { ...spaces.get(id), ...fresh, stats: fresh.stats });  // none once stopped
  } catch (e) {
    if (e.status === 404) spaces.delete(id);
  }
  emit();
}

function onEvent(event) {
  const id = event.spaceId;
  if (!id) return;
  const p = event.payload || {};
  switch (event.kind) {
    case kinds.SPACE_DELETED:
      spaces.delete(id);
      operations.delete(id);
      emit();
      return;
    case kinds.SPACE_STATE: {
      const s = spaces.get(id);
      if (s) spaces.set(id, { ...s, state: p.state, error: p.error || "" });
      emit();
      break;
    }
    case kinds.OPERATION_STARTED:
      operations.set(id, { kind: p.kind, step: "starting", progress: 0 });
      emit();
      break;
    case kinds.OPERATION_PROGRESS:
      operations.set(id, { ...operations.get(id), step: p.step, progress: p.progress });
      emit();
      return;
    case kinds.OPERATION_SUCCEEDED:
    case kinds.OPERATION_FAILED:
      operations.delete(id);
      emit();
      break;
  }
  refreshOne(id);  // the rest of the space (desired state, address, error, revision)
}

// The list's CPU and memory figures: the server's latest, fetched again as often as it
// samples (the rest of the list follows the events).
async function refreshStats() {
  try {
    let changed = false;
    for (const s of await api.get(admin ? "/spaces?all=1" : "/spaces")) {
      const had = spaces.get(s.id);
      if (had && JSON.stringify(had.stats) !== JSON.stringify(s.stats)) {
        spaces.set(s.id, { ...had, stats: s.stats });
        changed = true;
      }
    }
    if (changed) emit();
  } catch (e) { console.error("spaces", e); }
}

// Starts listening (once per page); returns the function that stops.
export function startSpaceStore(user) {
  admin = isAdmin(user);
  refreshAll();
  const statsTimer = setInterval(refreshStats, 10000);
  const stop = api.subscribe(onEvent, (up) => {
    const was = connected;
    connected = up;
    if (up && !was) refreshAll();  // whatever happened while we were away
    emit();
  });
  return () => { stop(); clearInterval(statsTimer); connected = false; };
}

export function useSpaces() {
  const [, tick] = useState(0);
  useEffect(() => {
    const l = () => tick((n) => n + 1);
    listeners.add(l);
    return () => listeners.delete(l);
  }, []);
  return { spaces: [...spaces.values()], operations, connected, get: (id) => spaces.get(id) };
}

export function useTemplates() {
  const [templates, setTemplates] = useState(null);
  useEffect(() => { api.get("/templates").then(setTemplates, () => setTemplates([])); }, []);
  return templates;
}

// ---- actions ------------------------------------------------------------------------------

async function act(space, action) {
  if (action === "delete") {
    if (!confirm(`Delete the space ${space.name} and its disk?`)) return;
    const r = await api.del(`/spaces/${space.id}`);
    if (r && r.operation) operations.set(space.id, { kind: "delete", step: "queued", progress: 0 });
  } else {
    const r = await api.post(`/spaces/${space.id}/${action}`);
    if (r && r.operation) operations.set(space.id, { kind: action, step: "queued", progress: 0 });
  }
  emit();
}

function Actions({ space, onError }) {
  const run = (action) => act(space, action).catch((e) => onError(`${action} ${space.name}: ${e.message}`));
  const busy = ["pending", "creating", "deleting", "suspending"].includes(space.state);
  const running = space.state === "running" || space.state === "starting";
  const suspended = space.state === "suspended";
  return html`
    <span class="actions">
      <button onClick=${() => run("start")} disabled=${busy || running}>${suspended ? "Resume" : "Start"}</button>
      <button onClick=${() => run("stop")} disabled=${busy || !(running || suspended)}>Stop</button>
      <button onClick=${() => run("restart")} disabled=${busy || !running}>Restart</button>
      <button onClick=${() => run("suspend")} disabled=${busy || space.state !== "running"}
        title="Save its memory to disk and let its machine go; Resume, its console or a tunnel continues it">Suspend</button>
      <button class="danger" onClick=${() => run("delete")} disabled=${space.state === "deleting"}>Delete</button>
    </span>`;
}

function Progress({ op }) {
  if (!op) return null;
  return html`
    <span class="progress" role="status">
      <progress max="100" value=${op.progress || 0}></progress>
      <span>${op.kind} · ${op.step || ""} ${op.progress != null ? `${op.progress}%` : ""}</span>
    </span>`;
}

// The list's address (bowline's IP, or a running NAT space's DHCP lease), else the IP.
const addressOf = (s) => s.address || s.ip || "";

function State({ space }) {
  // A suspended space wants to run, and does once anything uses it: not "moving".
  const moving = space.desiredState && space.desiredState !== space.state && space.state !== "suspended";
  return html`<span class="state state-${space.state}" data-state=${space.state}>${space.state}${
    moving ? html` <small>→ ${space.desiredState}</small>` : ""}</span>`;
}

// ---- the list and the create form -----------------------------------------------------------

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
      if (r.space) { spaces.set(r.space.id, r.space); }
      if (r.operation) operations.set(r.space.id, { kind: "create", step: "queued", progress: 0 });
      emit();
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
  const view = useListView("spaces", list, [
    { key: "name", label: "Name" },
    { key: "state", label: "State" },
    { key: "cpu", label: "CPU", value: (s) => (s.stats ? s.stats.cpuPercent : null) },
    { key: "memory", label: "Memory", value: (s) => (s.stats ? s.stats.memoryUsedBytes ?? s.stats.memoryAvailableBytes : null) },
    { key: "address", label: "IP", value: addressOf },
    { key: "node", label: "Node" },
    { key: "template", label: "Template" },
    ...(isAdmin(user) ? [{ key: "owner", label: "Owner" }] : []),
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
              ${isAdmin(user) && html`<td>${s.owner || ""}</td>`}
              <td>${ops.get(s.id) ? html`<${Progress} op=${ops.get(s.id)} />` : s.error && html`<span class="error">${s.error}</span>`}</td>
              <td><${Actions} space=${s} onError=${setError} /></td>
            </tr>`)}
        </tbody>
      </table>`}
    </section>`;
}

// ---- one space ------------------------------------------------------------------------------

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
        <dd data-port=${p.port}><code data-connect="forward">${p.forward}</code>, then <a href="http://127.0.0.1:${p.port}/" target="_blank" rel="noopener">http://127.0.0.1:${p.port}/</a></dd>`)}
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
      spaces.set(space.id, { ...spaces.get(space.id), ...r, address: r.ip });
      emit();
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
  const terminal = hasPermission(user, "use-web-terminal") &&
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
        <${Actions} space=${space} onError=${setError} />
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
      ${space.state === "stopped" && tmpl.network === "bridged" && html`<${SetIp} space=${space} />`}
      <${SpaceCharts} id=${space.id} />
      <${Snapshots} space=${space} />
      <${Connect} space=${space} info=${info} user=${user} />
      ${info.consoleTail && info.consoleTail.length > 0 && html`
        <h2>Console (last lines)</h2>
        <pre class="tail">${info.consoleTail.join("\n")}</pre>`}
    </section>`;
}
