// Shared by the pages: preact + htm from the vendored standalone bundle, the hash router and
// small helpers.
export {
  html, render, useState, useEffect, useRef, useCallback, useMemo,
} from "/ui/vendor/htm/preact/standalone.module.js";
// The re-export above binds nothing here: what this file uses itself is imported too.
import { html, useState, useEffect } from "/ui/vendor/htm/preact/standalone.module.js";

// "#/spaces/abc/display" -> ["spaces", "abc", "display"]
export function routeParts() {
  return location.hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
}

export function useRoute() {
  const [parts, setParts] = useState(routeParts());
  useEffect(() => {
    const on = () => setParts(routeParts());
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return parts;
}

export function go(path) { location.hash = "#/" + path; }

export function hasPermission(user, permission) {
  const p = (user && user.permissions) || [];
  return p.includes("admin") || p.includes(permission);
}

export function isAdmin(user) { return ((user && user.permissions) || []).includes("admin"); }

export function when(ms) {
  if (!ms) return "";
  return new Date(ms).toLocaleString();
}

// Sets document.title while a page is shown.
export function useTitle(title) {
  useEffect(() => { document.title = title ? `${title} · bowline` : "bowline"; }, [title]);
}

// ---- sorting and filtering a list ------------------------------------------------------------

// Numbers as numbers; text in the reader's order with digit runs as numbers (so 198.51.100.9
// comes before 198.51.100.10, box2 before box10); empty values last.
export function compareValues(a, b) {
  const empty = (v) => v === null || v === undefined || v === "";
  if (empty(a) || empty(b)) return empty(a) - empty(b);
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a).localeCompare(String(b), undefined, { numeric: true, sensitivity: "base" });
}

// Rows whose columns, together, contain every word of `text` (any case).
export function filterRows(rows, columns, text) {
  const words = String(text || "").toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return rows;
  return rows.filter((row) => {
    const all = columns.map((c) => String(columnValue(c, row) ?? "")).join(" ").toLowerCase();
    return words.every((w) => all.includes(w));
  });
}

export function sortRows(rows, columns, sort) {
  const column = columns.find((c) => c.key === sort.key);
  if (!column) return rows;
  return [...rows].sort((a, b) => {
    const order = compareValues(columnValue(column, a), columnValue(column, b));
    const blank = (r) => { const v = columnValue(column, r); return v === null || v === undefined || v === ""; };
    // Empty values stay last whichever way the list is sorted.
    return blank(a) || blank(b) ? order : sort.dir * order;
  });
}

function columnValue(column, row) { return column.value ? column.value(row) : row[column.key]; }

// A list page's sorting and filtering: `columns` are [{key, label, value?(row), sort?: false}]
// (value: what the column sorts and filters by, default row[key]; sort: false for a column of
// buttons). Returns the rows to show, the table's <thead> (a header is a button: a click sorts
// by it, a second the other way) and the filter's text box. `name` labels the box ("spaces").
export function useListView(name, rows, columns, initialKey) {
  const [sort, setSort] = useState({ key: initialKey || columns[0].key, dir: 1 });
  const [filter, setFilter] = useState("");
  const shown = sortRows(filterRows(rows || [], columns, filter), columns, sort);
  const by = (key) => setSort((s) => ({ key, dir: s.key === key ? -s.dir : 1 }));
  const ariaSort = (key) => (sort.key !== key ? "none" : sort.dir > 0 ? "ascending" : "descending");
  const head = html`<thead><tr>${columns.map((c) => c.sort === false ? html`<th>${c.label}</th>` : html`
    <th aria-sort=${ariaSort(c.key)} data-sort=${c.key}>
      <button type="button" class="sort" onClick=${() => by(c.key)}>${c.label}<span class="arrow" aria-hidden="true">${
        sort.key === c.key ? (sort.dir > 0 ? " ▲" : " ▼") : ""}</span></button></th>`)}</tr></thead>`;
  const filterBox = html`<input type="search" class="filter" placeholder="Filter ${name}" aria-label=${`Filter ${name}`}
    value=${filter} onInput=${(e) => setFilter(e.target.value)} />`;
  const count = filter && rows ? html`<span class="count" role="status">${shown.length} of ${rows.length}</span>` : null;
  return { rows: shown, head, filterBox, count, filter };
}
