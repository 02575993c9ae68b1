// VM Terminal: a shell in the guest as the space's owner, over SSH opened by the server (no
// password: the server logs in with the space's own key). Each tab is a session of its own.
// Frames to the server start with 0 (bytes typed) or 1 (the window's size as JSON).
import { html, useState, useEffect, useRef, useTitle } from "/ui/lib.js";
import * as api from "/ui/api.js";
import { Terminal } from "/ui/vendor/xterm/lib/xterm.mjs";
import { FitAddon } from "/ui/vendor/xterm-fit/lib/addon-fit.mjs";

const INPUT = 0, RESIZE = 1;

function frame(kind, bytes) {
  const out = new Uint8Array(bytes.length + 1);
  out[0] = kind;
  out.set(bytes, 1);
  return out;
}

// Why the terminal cannot open, in the words the space's record gives.
async function whyUnavailable(id) {
  try {
    const s = await api.get(`/spaces/${id}`);
    if (s.state !== "running") return `the space is ${s.state}`;
    const c = (s.info && s.info.connect) || {};
    if (c.terminal && !c.terminal.available) return c.terminal.why;
    if (c.sshPort && c.sshPort !== "open") return `port 22 of the guest: ${c.sshPort} (sshd not up yet?)`;
    return "";
  } catch (e) {
    return e.message;
  }
}

export function TerminalPage({ id }) {
  const box = useRef(null);
  const [status, setStatus] = useState("connecting");
  const [why, setWhy] = useState("");
  const [name, setName] = useState("");
  const [attempt, setAttempt] = useState(0);
  useTitle(name ? `${name} · terminal` : "VM Terminal");
  useEffect(() => { api.get(`/spaces/${id}`).then((s) => setName(s.name), () => {}); }, [id]);

  useEffect(() => {
    const term = new Terminal({ cursorBlink: true, scrollback: 10000,
      fontFamily: "ui-monospace, 'DejaVu Sans Mono', monospace", fontSize: 14 });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(box.current);
    fit.fit();
    const encoder = new TextEncoder();
    const query = `?cols=${term.cols}&rows=${term.rows}`;
    const ws = new WebSocket(api.socketUrl(`/spaces/${encodeURIComponent(id)}/terminal${query}`));
    ws.binaryType = "arraybuffer";
    let opened = false, retry = null;
    const sendSize = () => {
      if (ws.readyState === WebSocket.OPEN)
        ws.send(frame(RESIZE, encoder.encode(JSON.stringify({ cols: term.cols, rows: term.rows }))));
    };
    const onResize = () => fit.fit();
    addEventListener("resize", onResize);
    const resized = term.onResize(sendSize);
    ws.onopen = () => { opened = true; setStatus("connected"); setWhy(""); term.focus(); };
    ws.onmessage = (e) => term.write(typeof e.data === "string" ? e.data : new Uint8Array(e.data));
    ws.onclose = async (e) => {
      // A shell that ended (exit: a normal close) stays ended; a dropped connection is tried
      // again once the space still offers SSH.
      const dropped = opened && e.code !== 1000;
      const reason = opened && !dropped ? "" : await whyUnavailable(id);
      setWhy(reason);
      setStatus(opened ? "disconnected" : "failed");
      if (dropped && !reason) retry = setTimeout(() => setAttempt((n) => n + 1), 2000);
    };
    const input = term.onData((data) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(frame(INPUT, encoder.encode(data)));
    });
    window.bowlineTerminalText = () => {
      const b = term.buffer.active;
      const lines = [];
      for (let i = 0; i < b.length; i++) lines.push(b.getLine(i).translateToString(true));
      return lines.join("\n");
    };
    return () => {
      clearTimeout(retry);
      input.dispose();
      resized.dispose();
      removeEventListener("resize", onResize);
      ws.onclose = null;
      ws.close();
      term.dispose();
    };
  }, [id, attempt]);

  return html`
    <div class="viewer console terminal">
      <div class="toolbar" role="toolbar" aria-label="Terminal">
        <a href="#/spaces/${encodeURIComponent(id)}">${name || "space"}</a>
        <span class="hint">VM Terminal: a shell over SSH as the owner</span>
        <span class="status status-${status}" data-status=${status}>${status}</span>
        ${why && html`<span class="error" role="alert" data-why>${why}</span>`}
        ${status !== "connected" && status !== "connecting" &&
          html`<button onClick=${() => { setStatus("connecting"); setAttempt((n) => n + 1); }}>Reconnect</button>`}
      </div>
      <div class="term" ref=${box}></div>
    </div>`;
}
