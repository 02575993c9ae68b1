// Shared by the pages: preact + htm from the vendored standalone bundle, the hash router and
// small helpers.
export {
  html, render, useState, useEffect, useRef, useCallback, useMemo,
} from "/ui/vendor/htm/preact/standalone.module.js";
import { useState, useEffect } from "/ui/vendor/htm/preact/standalone.module.js";

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
