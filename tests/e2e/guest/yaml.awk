# yaml.awk: flattens the YAML subset used by cloud-init seeds into lines "PATH<TAB>VALUE".
# Runs under busybox awk inside the tiny test guest (and under any POSIX awk on a host).
#
# PATH joins mapping keys and 0-based sequence indexes with ".": "ethernets.nic0.addresses.0".
# VALUE is the scalar with "\" written as "\\" and a newline as "\n" (see ydec.awk).
# A key with a null or empty value gives "PATH<TAB>"; an empty collection ([] or {}) gives nothing.
#
# Understood: block mappings and sequences (indented or not under their key, "- key: v" items),
# flow sequences and mappings on one line or spread over several ([a, b], {to: x, via: y},
# nested), plain, 'single' and "double" quoted scalars (escapes \" \\ \n \t \r \e \/ \xNN \uNNNN),
# block scalars (| |- |+ > >- >+), comments, "---" and "...", anchors and tags are skipped
# (aliases are not resolved), multi-line plain scalars (folded with spaces).
# Lenient where YAML would fail: a plain key may not contain blanks, so `- echo "TEST: hi"` is
# the string item it was meant to be.

BEGIN { d = 0; pend = 0; blk = 0; flw = 0; LP = ""; LV = ""; haveL = 0 }

function ltrim(s) { sub(/^[ \t]+/, "", s); return s }
function rtrim(s) { sub(/[ \t]+$/, "", s); return s }
function trim(s) { return rtrim(ltrim(s)) }
function jp(a, b) { return a == "" ? b : a "." b }

# Escape backslash and newline without gsub (replacement escaping differs between awks).
function esc(v,    out, i, c) {
  out = ""
  for (i = 1; i <= length(v); i++) {
    c = substr(v, i, 1)
    if (c == "\\") out = out "\\\\"
    else if (c == "\n") out = out "\\n"
    else out = out c
  }
  return out
}

# The last scalar is held back so that a more-indented continuation line can be folded into it.
function flush() { if (haveL) print LP "\t" esc(LV); haveL = 0 }
function emit(p, v) { flush(); LP = p; LV = v; haveL = 1 }

function hexval(h,    i, c, v) {
  v = 0
  for (i = 1; i <= length(h); i++) {
    c = index("0123456789abcdef", tolower(substr(h, i, 1)))
    if (c == 0) break
    v = v * 16 + c - 1
  }
  return v
}
function utf8(n) {
  if (n < 128) return sprintf("%c", n)
  if (n < 2048) return sprintf("%c%c", 192 + int(n / 64), 128 + n % 64)
  return sprintf("%c%c%c", 224 + int(n / 4096), 128 + int(n / 64) % 64, 128 + n % 64)
}

# Parses the quoted scalar starting at s[i]; sets QV to its value, returns the index after it.
function qparse(s, i,    q, c, e, n, out) {
  q = substr(s, i, 1); n = length(s); out = ""; i++
  while (i <= n) {
    c = substr(s, i, 1)
    if (q == "'") {
      if (c == "'") {
        if (substr(s, i + 1, 1) == "'") { out = out "'"; i += 2; continue }
        QV = out; return i + 1
      }
      out = out c; i++; continue
    }
    if (c == "\\") {
      e = substr(s, i + 1, 1); i += 2
      if (e == "n") out = out "\n"
      else if (e == "t") out = out "\t"
      else if (e == "r") out = out "\r"
      else if (e == "e") out = out "\033"
      else if (e == "0") out = out ""
      else if (e == "x") { out = out utf8(hexval(substr(s, i, 2))); i += 2 }
      else if (e == "u") { out = out utf8(hexval(substr(s, i, 4))); i += 4 }
      else out = out e
      continue
    }
    if (c == "\"") { QV = out; return i + 1 }
    out = out c; i++
  }
  QV = out; return i
}

# Removes a trailing comment: "#" after a blank, outside a quoted scalar. A quote opens a quoted
# scalar only at the start of a token (line start, after a blank or one of "[{,").
function strip_comment(s,    i, n, c, q, prev) {
  n = length(s); q = ""; prev = " "
  for (i = 1; i <= n; i++) {
    c = substr(s, i, 1)
    if (q != "") {
      if (q == "\"" && c == "\\") { i++; prev = "x"; continue }
      if (c == q) {
        if (q == "'" && substr(s, i + 1, 1) == "'") { i++; continue }
        q = ""
      }
    } else if ((c == "\"" || c == "'") && (prev ~ /[ \t\[{,]/)) {
      q = c
    } else if (c == "#" && prev ~ /[ \t]/) {
      return rtrim(substr(s, 1, i - 1))
    }
    prev = c
  }
  return s
}

# Bracket depth of a flow collection, ignoring brackets inside quotes.
function fdepth(s,    i, n, c, q, dd, prev) {
  n = length(s); q = ""; dd = 0; prev = " "
  for (i = 1; i <= n; i++) {
    c = substr(s, i, 1)
    if (q != "") {
      if (q == "\"" && c == "\\") { i++; continue }
      if (c == q) q = ""
    } else if ((c == "\"" || c == "'") && prev ~ /[ \t\[{,:]/) q = c
    else if (c == "[" || c == "{") dd++
    else if (c == "]" || c == "}") dd--
    prev = c
  }
  return dd
}

function fws() { while (FP <= FL && substr(FB, FP, 1) ~ /[ \t]/) FP++ }
function plainnull(v) { return (v == "~" || v == "null" || v == "Null" || v == "NULL") ? "" : v }
function fkey(    c, v) {
  c = substr(FB, FP, 1)
  if (c == "\"" || c == "'") { FP = qparse(FB, FP); return QV }
  v = ""
  while (FP <= FL) {
    c = substr(FB, FP, 1)
    if (c == ":" || c == "," || c == "}" || c == "]") break
    v = v c; FP++
  }
  return trim(v)
}
function fval(p,    c, i, k, v) {
  fws(); c = substr(FB, FP, 1)
  if (c == "[") {
    FP++; i = 0
    while (FP <= FL) {
      fws(); c = substr(FB, FP, 1)
      if (c == "]") { FP++; return }
      if (c == ",") { FP++; continue }
      fval(jp(p, i)); i++
    }
    return
  }
  if (c == "{") {
    FP++
    while (FP <= FL) {
      fws(); c = substr(FB, FP, 1)
      if (c == "}") { FP++; return }
      if (c == ",") { FP++; continue }
      k = fkey(); fws()
      if (substr(FB, FP, 1) == ":") { FP++; fval(jp(p, k)) } else emit(jp(p, k), "")
    }
    return
  }
  if (c == "\"" || c == "'") { FP = qparse(FB, FP); emit(p, QV); return }
  v = ""
  while (FP <= FL) {
    c = substr(FB, FP, 1)
    if (c == "," || c == "]" || c == "}") break
    v = v c; FP++
  }
  emit(p, plainnull(trim(v)))
}
function doflow(p, s) { FB = s; FL = length(s); FP = 1; fval(p) }

function isitem(t) { return t == "-" || substr(t, 1, 2) == "- " }
function push(n, p, ty) { d++; ind[d] = n; pth[d] = p; typ[d] = ty; cnt[d] = 0 }

# "key: rest" or "key:"? Sets KEY and REST. A plain key may contain blanks only when blanks_ok
# (not in "- " items, where `- echo "TEST: hi"` is meant as a string).
function keysplit(t, blanks_ok,    c, e, i, j, k) {
  c = substr(t, 1, 1)
  if (c == "\"" || c == "'") {
    e = qparse(t, 1)
    if (substr(t, e, 1) != ":") return 0
    if (e < length(t) && substr(t, e + 1, 1) !~ /[ \t]/) return 0
    KEY = QV; REST = trim(substr(t, e + 1)); return 1
  }
  i = index(t, ":")
  while (i > 0 && i < length(t) && substr(t, i + 1, 1) !~ /[ \t]/) {
    j = index(substr(t, i + 1), ":")
    if (j == 0) return 0
    i += j
  }
  if (i <= 1) return 0
  k = substr(t, 1, i - 1)
  if ((!blanks_ok && k ~ /[ \t]/) || index("[]{},#&*!|>%@`\"'", substr(k, 1, 1)) > 0) return 0
  sub(/[ \t]+$/, "", k)
  KEY = k; REST = trim(substr(t, i + 1)); return 1
}

# The value text v of the node at path p whose owner line has indent n.
function value(p, v, n,    c) {
  while (v ~ /^[&!][^ \t]*([ \t]|$)/) { sub(/^[&!][^ \t]*/, "", v); v = ltrim(v) }
  if (v == "") { pend = 1; pp = p; pn = n; return }
  c = substr(v, 1, 1)
  if ((c == "|" || c == ">") && v ~ /^[|>][-+0-9]*$/) {
    blk = 1; bstyle = c; bchomp = v ~ /-/ ? "-" : (v ~ /\+/ ? "+" : ""); bp = p; bn = n; bi = -1; bcount = 0
    return
  }
  if (c == "[" || c == "{") {
    if (fdepth(v) > 0) { flw = 1; fbuf = v; fpath = p; return }
    doflow(p, v); return
  }
  if (c == "\"" || c == "'") { qparse(v, 1); emit(p, QV); return }
  emit(p, plainnull(v))
}

function block_end(    i, out, last, sep) {
  blk = 0
  last = bcount
  while (last > 0 && blines[last] == "") last--
  out = ""
  if (bstyle == "|") {
    for (i = 1; i <= last; i++) out = out blines[i] (i < last ? "\n" : "")
  } else {
    sep = ""
    for (i = 1; i <= last; i++) {
      if (blines[i] == "") { out = out "\n"; sep = "" }
      else { out = out sep blines[i]; sep = " " }
    }
  }
  if (bchomp == "+") { for (i = last; i <= bcount; i++) out = out "\n"; if (last == bcount && last == 0) out = "" }
  else if (bchomp == "" && last > 0) out = out "\n"
  emit(bp, out)
}

# One line of a block scalar; returns 0 when the line ends the block (it is then parsed normally).
function block_line(raw,    m) {
  if (raw ~ /^[ \t]*$/) { blines[++bcount] = ""; return 1 }
  match(raw, /^ */); m = RLENGTH
  if (m <= bn || (bi >= 0 && m < bi)) { block_end(); return 0 }
  if (bi < 0) bi = m
  blines[++bcount] = substr(raw, bi + 1)
  return 1
}

function handle(n, t,    p, off, rest) {
  if (pend) {
    pend = 0
    if (isitem(t) && n >= pn) push(n, pp, "seq")
    else if (!isitem(t) && n > pn) push(n, pp, "map")
    else emit(pp, "")
  }
  while (d > 0 && (ind[d] > n || (ind[d] == n && typ[d] == "seq" && !isitem(t)))) d--
  if (d == 0) push(n, "", isitem(t) ? "seq" : "map")
  else if (ind[d] < n) {
    # deeper than the current collection without a key: continuation of a plain scalar
    if (haveL) LV = LV " " t
    return
  }
  if (isitem(t)) {
    if (typ[d] != "seq") return
    p = jp(pth[d], cnt[d]); cnt[d]++
    rest = substr(t, 2); off = 1
    while (substr(rest, 1, 1) == " ") { rest = substr(rest, 2); off++ }
    if (rest == "") { pend = 1; pp = p; pn = n; return }
    if (isitem(rest)) { push(n + off, p, "seq"); handle(n + off, rest); return }
    if (keysplit(rest, 0)) { push(n + off, p, "map"); handle(n + off, rest); return }
    value(p, rest, n)
    return
  }
  if (keysplit(t, typ[d] == "map")) { value(jp(pth[d], KEY), REST, n); return }
  value(pth[d], t, n)
}

{
  sub(/\r$/, "")
  raw = $0
  if (blk && block_line(raw)) next
  if (flw) {
    fbuf = fbuf " " trim(strip_comment(raw))
    if (fdepth(fbuf) <= 0) { flw = 0; doflow(fpath, fbuf) }
    next
  }
  if (raw ~ /^[ \t]*(#.*)?$/) next
  if (raw ~ /^(---|\.\.\.)([ \t]|$)/ || raw ~ /^%/) next
  match(raw, /^ */); n = RLENGTH
  t = strip_comment(substr(raw, n + 1))
  t = rtrim(t)
  if (t == "") next
  handle(n, t)
}

END {
  if (blk) block_end()
  if (flw) doflow(fpath, fbuf)
  if (pend) emit(pp, "")
  flush()
}
