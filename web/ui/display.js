// VM Display: noVNC over the space's /vnc WebSocket. The viewer follows the guest's
// resolution (the window is resized to it, up to the screen), the toolbar shows it, and the
// 1:1 / Fit choice is remembered by this browser.
import { html, useState, useEffect, useRef, useTitle } from "/ui/lib.js";
import * as api from "/ui/api.js";
import RFB from "/ui/vendor/novnc/core/rfb.js";

const SCALE_KEY = "bowline.display.scale";  // "native" or "fit"

// noVNC has no event for a change of the framebuffer's size; its resize handler (pinned
// version, see package.json) is where the guest's new resolution arrives.
class Viewer extends RFB {
  _resize(width, height) {
    super._resize(width, height);
    this.dispatchEvent(new CustomEvent("bowline-resize", { detail: { width, height } }));
  }
}

// Fits the window around a framebuffer of w × h plus the toolbar, within the screen.
function fitWindow(w, h, toolbar) {
  if (!window.opener) return;  // only windows we opened may be resized
  const chromeW = Math.max(0, window.outerWidth - window.innerWidth);
  const chromeH = Math.max(0, window.outerHeight - window.innerHeight);
  const width = Math.min(w + chromeW, screen.availWidth);
  const height = Math.min(h + toolbar + chromeH, screen.availHeight);
  try { window.resizeTo(width, height); } catch { /* not allowed: the canvas still scales */ }
}

export function DisplayPage({ id }) {
  const screenRef = useRef(null);
  const barRef = useRef(null);
  const rfbRef = useRef(null);
  const [status, setStatus] = useState("connecting");
  const [detail, setDetail] = useState("");
  const [size, setSize] = useState(null);
  const [scale, setScale] = useState(localStorage.getItem(SCALE_KEY) === "fit" ? "fit" : "native");
  const [name, setName] = useState("");
  useTitle(name ? `${name} · display` : "VM Display");

  useEffect(() => { api.get(`/spaces/${id}`).then((s) => setName(s.name), () => {}); }, [id]);

  useEffect(() => {
    let rfb;
    try {
      rfb = new Viewer(screenRef.current, api.socketUrl(`/spaces/${encodeURIComponent(id)}/vnc`), { shared: true });
    } catch (e) {
      setStatus("failed");
      setDetail(e.message);
      return undefined;
    }
    rfbRef.current = rfb;
    rfb.scaleViewport = scale === "fit";
    rfb.resizeSession = false;
    rfb.background = "#222";
    rfb.focusOnClick = true;
    rfb.addEventListener("connect", () => { setStatus("connected"); rfb.focus(); });
    rfb.addEventListener("disconnect", (e) => {
      setStatus(e.detail.clean ? "disconnected" : "failed");
      setDetail(e.detail.clean ? "" : "the connection was refused or lost (is the space running, and may you use its display?)");
    });
    rfb.addEventListener("credentialsrequired", () => {
      setStatus("failed");
      setDetail("the display asked for a password");
      rfb.disconnect();
    });
    rfb.addEventListener("desktopname", (e) => setName((n) => n || e.detail.name));
    rfb.addEventListener("bowline-resize", (e) => {
      const { width, height } = e.detail;
      setSize({ width, height });
      fitWindow(width, height, barRef.current ? barRef.current.offsetHeight : 40);
    });
    return () => { rfbRef.current = null; rfb.disconnect(); };
  }, [id]);

  useEffect(() => {
    if (rfbRef.current) rfbRef.current.scaleViewport = scale === "fit";
  }, [scale]);

  // Stored in the click itself: an effect runs after the next paint, and a reload right after
  // the click (e2e.web_ui saw it) lost the choice.
  const toggle = () => {
    const next = scale === "fit" ? "native" : "fit";
    localStorage.setItem(SCALE_KEY, next);
    setScale(next);
  };
  return html`
    <div class="viewer display">
      <div class="toolbar" ref=${barRef} role="toolbar" aria-label="Display">
        <a href="#/spaces/${encodeURIComponent(id)}">${name || "space"}</a>
        <span class="status status-${status}" data-status=${status}>${status}</span>
        <span class="resolution" data-resolution=${size ? `${size.width}x${size.height}` : ""}>${size ? `${size.width} × ${size.height}` : "—"}</span>
        <button class="scale" data-scale=${scale} onClick=${toggle} title="native pixels or scaled to the window"
          aria-pressed=${scale === "fit"}>${scale === "fit" ? "Fit" : "1:1"}</button>
        <button onClick=${() => rfbRef.current && rfbRef.current.sendCtrlAltDel()} disabled=${status !== "connected"}>Ctrl+Alt+Del</button>
        ${detail && html`<span class="error" role="alert">${detail}</span>`}
      </div>
      <div class=${`screen scale-${scale}`} ref=${screenRef}></div>
    </div>`;
}
