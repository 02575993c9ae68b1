// What a space uses, live: small uPlot charts on the space page (CPU, memory, disk, network)
// fed by GET /spaces/{id}/stats (the server samples every server.stats.interval; the page asks
// for the new points as often, every 5 s at most), and the list's CPU and memory cells from
// the "stats" the list itself carries (no request per row).
import { html, useEffect, useRef, useState } from "/ui/lib.js";
import uPlot from "/ui/vendor/uplot/dist/uPlot.esm.js";
import * as api from "/ui/api.js";

export function formatBytes(n) {
  if (n == null) return "—";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
  return u === 0 ? `${Math.round(v)} B` : `${v.toFixed(1)} ${units[u]}`;
}
const rate = (n) => (n == null ? "—" : `${formatBytes(n)}/s`);
const percent = (n) => (n == null ? "—" : `${n.toFixed(1)} %`);

// Each chart: what it shows and how a value reads.
const CHARTS = [
  // QEMU's own threads count too: a busy guest can go a little over 100 %.
  { id: "cpu", title: "CPU", format: percent, floor: 100,
    series: [["cpuPercent", "CPU", "#1f5fbf"]] },
  { id: "memory", title: "Memory", format: formatBytes,
    series: [["memoryUsedBytes", "used", "#1e7a35"], ["memoryAvailableBytes", "available", "#9aa5b1"]] },
  { id: "disk", title: "Disk", format: rate,
    series: [["diskReadBytesPerSecond", "read", "#1f5fbf"], ["diskWriteBytesPerSecond", "write", "#b3261e"]] },
  { id: "network", title: "Network", format: rate,
    series: [["networkReceiveBytesPerSecond", "in", "#1f5fbf"], ["networkTransmitBytesPerSecond", "out", "#8a5a00"]] },
];

// uPlot's columns: time in seconds, then one array per series.
function columns(spec, history) {
  const time = (history.time || []).map((t) => t / 1000);
  return [time, ...spec.series.map(([key]) => history[key] || time.map(() => null))];
}

function lastKnown(values) {
  for (let i = values.length - 1; i >= 0; i--) if (values[i] != null) return values[i];
  return null;
}

// How many of the chart's points have a figure (of any of its series).
function samplesIn(data) {
  let n = 0;
  for (let i = 0; i < data[0].length; i++) if (data.slice(1).some((values) => values[i] != null)) n++;
  return n;
}

function Chart({ spec, history }) {
  const box = useRef(null);
  const plot = useRef(null);
  const data = columns(spec, history);
  const samples = samplesIn(data);
  // A time axis needs two points: uPlot spreads a single one over years.
  const drawable = data[0].length >= 2 && samples > 0;
  useEffect(() => {
    if (!drawable) return undefined;
    const opts = {
      width: 300, height: 120, legend: { show: false }, cursor: { show: false },
      scales: { x: { time: true }, y: { range: (u, lo, hi) => [0, Math.max(hi || 0, spec.floor || 1)] } },
      axes: [{ size: 30 }, { size: 80, values: (u, ticks) => ticks.map((v) => spec.format(v)) }],
      series: [{}, ...spec.series.map(([, label, stroke]) => ({ label, stroke, width: 1.5, points: { show: false } }))],
    };
    const made = new uPlot(opts, data, box.current);
    plot.current = made;
    return () => { made.destroy(); plot.current = null; };
  }, [drawable]);
  useEffect(() => { if (plot.current) plot.current.setData(data); }, [history]);
  const now = spec.series.map(([key, label]) => `${label} ${spec.format(lastKnown(history[key] || []))}`);
  const first = lastKnown(history[spec.series[0][0]] || []);
  return html`
    <figure class="chart" data-chart=${spec.id} data-points=${data[0].length} data-samples=${samples} data-last=${first == null ? "" : String(first)}>
      <figcaption><strong>${spec.title}</strong> <span class="now">${now.join(" · ")}</span></figcaption>
      ${drawable ? html`<div class="plot" ref=${box}></div>`
        : html`<p class="no-samples" data-no-samples>${samples === 0 ? "no samples yet" : "one sample so far: the chart starts with the next"}</p>`}
    </figure>`;
}

// Appends the new points to the ones the page has, keeping as many as the server does.
function merge(have, fresh, keep) {
  if (!have) return fresh;
  const out = {};
  for (const key of Object.keys(fresh)) out[key] = [...(have[key] || []), ...fresh[key]].slice(-keep);
  return out;
}

export function SpaceCharts({ id }) {
  const [stats, setStats] = useState(null);
  const [error, setError] = useState("");
  useEffect(() => {
    let stopped = false;
    let timer = 0;
    let history = null;
    const poll = async () => {
      let every = 5000;
      try {
        const since = history && history.time.length ? history.time[history.time.length - 1] : 0;
        const s = await api.get(`/spaces/${encodeURIComponent(id)}/stats${since ? `?since=${since}` : ""}`);
        const keep = Math.max(1, Math.floor((s.historySeconds || 0) / Math.max(1, s.intervalSeconds || 1)));
        history = merge(history, s.history, keep);
        every = Math.min(5, Math.max(1, s.intervalSeconds || 5)) * 1000;
        if (!stopped) { setStats({ ...s, history }); setError(""); }
      } catch (e) {
        if (!stopped) setError(e.message);
      }
      if (!stopped) timer = setTimeout(poll, every);
    };
    poll();
    return () => { stopped = true; clearTimeout(timer); };
  }, [id]);
  if (error) return html`<p class="error" data-stats="error">Use: ${error}</p>`;
  if (!stats) return null;
  const points = stats.history.time.length;
  return html`
    <section class="use" aria-label="What the space uses">
      <h2>Use</h2>
      ${stats.reason && html`<p class="hint" data-stats="reason">${stats.reason}</p>`}
      ${points > 0 ? html`<div class="charts">${CHARTS.map((spec) => html`<${Chart} key=${spec.id} spec=${spec} history=${stats.history} />`)}</div>`
        : html`<p class="no-samples" data-stats="none">no samples yet</p>`}
    </section>`;
}

// The list's CPU and memory cells from a space's "stats" (running spaces only).
export function UseCells({ space }) {
  const s = space.stats;
  if (!s) return html`<td class="cpu"></td><td class="memory"></td>`;
  const memory = s.memoryUsedBytes != null
    ? `${formatBytes(s.memoryUsedBytes)} / ${formatBytes(s.memoryAvailableBytes)}`
    : formatBytes(s.memoryAvailableBytes);
  return html`
    <td class="cpu" title=${s.vcpus ? `of ${s.vcpus} vCPU${s.vcpus === 1 ? "" : "s"}` : ""}>${percent(s.cpuPercent)}</td>
    <td class="memory" title="used / what the guest has">${memory}</td>`;
}
