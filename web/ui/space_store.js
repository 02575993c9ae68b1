// The spaces the page knows: every visible space and its running operation, kept current by
// the event stream (no reloading); the list and a space's page read it through useSpaces.
import { useState, useEffect, isAdmin } from "/ui/lib.js";
import * as api from "/ui/api.js";
import * as kinds from "/ui/event-kinds.js";

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

// What a request's answer says of a space, merged into what the store has (a create, a new
// address), for the list to show before the events arrive.
export function update(id, fields) {
  spaces.set(id, { ...spaces.get(id), ...fields });
  emit();
}

// An operation the server accepted, shown as queued until its events arrive.
export function queued(id, kind) {
  operations.set(id, { kind, step: "queued", progress: 0 });
  emit();
}
