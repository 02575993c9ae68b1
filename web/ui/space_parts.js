// A space's state, its lifecycle buttons and its operation's progress: what the list and a
// space's page both show.
import { html } from "/ui/lib.js";
import * as api from "/ui/api.js";
import { queued } from "/ui/space_store.js";

async function act(space, action) {
  if (action === "delete") {
    if (!confirm(`Delete the space ${space.name} and its disk?`)) return;
    const r = await api.del(`/spaces/${space.id}`);
    if (r && r.operation) queued(space.id, "delete");
  } else {
    const r = await api.post(`/spaces/${space.id}/${action}`);
    if (r && r.operation) queued(space.id, action);
  }
}

// may(role): whether the caller's role allows what needs it (a space shared with them).
export function Actions({ space, onError, may = () => true }) {
  const run = (action) => act(space, action).catch((e) => onError(`${action} ${space.name}: ${e.message}`));
  const busy = ["pending", "creating", "deleting", "suspending"].includes(space.state);
  const running = space.state === "running" || space.state === "starting";
  const suspended = space.state === "suspended";
  const use = may("user"), own = may("admin");
  const why = use ? null : "shared with you as viewer";
  return html`
    <span class="actions">
      <button onClick=${() => run("start")} disabled=${busy || running || !use} title=${why}>${suspended ? "Resume" : "Start"}</button>
      <button onClick=${() => run("stop")} disabled=${busy || !(running || suspended) || !use} title=${why}>Stop</button>
      <button onClick=${() => run("restart")} disabled=${busy || !running || !use} title=${why}>Restart</button>
      <button onClick=${() => run("suspend")} disabled=${busy || space.state !== "running" || !use}
        title="Save its memory to disk and let its machine go; Resume, its console or a tunnel continues it">Suspend</button>
      <button class="danger" onClick=${() => run("delete")} disabled=${space.state === "deleting" || !own}
        title=${own ? null : "needs the admin role on this space"}>Delete</button>
    </span>`;
}

export function Progress({ op }) {
  if (!op) return null;
  return html`
    <span class="progress" role="status">
      <progress max="100" value=${op.progress || 0}></progress>
      <span>${op.kind} · ${op.step || ""} ${op.progress != null ? `${op.progress}%` : ""}</span>
    </span>`;
}

// The list's address (bowline's IP, or a running NAT space's DHCP lease), else the IP.
export const addressOf = (s) => s.address || s.ip || "";

export function State({ space }) {
  // A suspended space wants to run, and does once anything uses it: not "moving".
  const moving = space.desiredState && space.desiredState !== space.state && space.state !== "suspended";
  return html`<span class="state state-${space.state}" data-state=${space.state}>${space.state}${
    moving ? html` <small>→ ${space.desiredState}</small>` : ""}</span>`;
}
