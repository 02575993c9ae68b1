// VM Console: xterm.js over the space's /console WebSocket (binary frames both ways). The
// server shares one console stream between viewers and sends the recent scrollback first.
import { html, useState, useEffect, useRef, useTitle } from "/ui/lib.js";
import * as api from "/ui/api.js";
import { Terminal } from "/ui/vendor/xterm/lib/xterm.mjs";
import { FitAddon } from "/ui/vendor/xterm-fit/lib/addon-fit.mjs";

export function ConsolePage({ id }) {
  const box = useRef(null);
  const [status, setStatus] = useState("connecting");
  const [name, setName] = useState("");
  const [attempt, setAttempt] = useState(0);
  useTitle(name ? `${name} · console` : "VM Console");
  useEffect(() => { api.get(`/spaces/${id}`).then((s) => setName(s.name), () => {}); }, [id]);

  useEffect(() => {
    const term = new Terminal({ convertEol: false, cursorBlink: true, scrollback: 5000,
      fontFamily: "ui-monospace, 'DejaVu Sans Mono', monospace", fontSize: 14 });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(box.current);
    fit.fit();
    const onResize = () => fit.fit();
    addEventListener("resize", onResize);

    const ws = new WebSocket(api.socketUrl(`/spaces/${encodeURIComponent(id)}/console`));
    ws.binaryType = "arraybuffer";
    const encoder = new TextEncoder();
    ws.onopen = () => { setStatus("connected"); term.focus(); };
    ws.onmessage = (e) => {
      term.write(typeof e.data === "string" ? e.data : new Uint8Array(e.data));
    };
    ws.onclose = (e) => setStatus(e.wasClean && e.code === 1000 ? "disconnected" : "closed");
    ws.onerror = () => setStatus("failed");
    const input = term.onData((data) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(encoder.encode(data));
    });
    // The text as the terminal shows it, for tests and for copying without a mouse.
    window.bowlineConsoleText = () => {
      const b = term.buffer.active;
      const lines = [];
      for (let i = 0; i < b.length; i++) lines.push(b.getLine(i).translateToString(true));
      return lines.join("\n");
    };
    return () => {
      input.dispose();
      removeEventListener("resize", onResize);
      ws.close();
      term.dispose();
    };
  }, [id, attempt]);

  return html`
    <div class="viewer console">
      <div class="toolbar" role="toolbar" aria-label="Console">
        <a href="#/spaces/${encodeURIComponent(id)}">${name || "space"}</a>
        <span class="status status-${status}" data-status=${status}>${status}</span>
        ${status !== "connected" && status !== "connecting" &&
          html`<button onClick=${() => { setStatus("connecting"); setAttempt((n) => n + 1); }}>Reconnect</button>`}
      </div>
      <div class="term" ref=${box}></div>
    </div>`;
}
