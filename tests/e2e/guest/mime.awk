# mime.awk: splits multipart MIME user-data (as cloud-init's "Content-Type: multipart/mixed").
#   awk -v dir=DIR -f mime.awk user-data
#   awk -v dir=DIR -v boundary=B -f mime.awk body     (the body of a nested multipart part)
# Writes each part's body (still transfer-encoded) to DIR/part-NNN and prints one line per part:
#   part-NNN<TAB>content-type (lower case, no parameters)<TAB>transfer-encoding<TAB>filename<TAB>boundary
# (boundary: of a multipart part; an empty filename or boundary is "-", as the shell's read would
# merge empty tab-separated fields). Exit status 2 when the input is not multipart.
function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
function hreset() { nh = 0 }
function hline(l) {
  if (l ~ /^[ \t]/ && nh > 0) hv[nh] = hv[nh] " " trim(l)
  else { nh++; hv[nh] = l }
}
function hget(name,    i, l) {
  for (i = 1; i <= nh; i++) {
    l = hv[i]
    if (tolower(substr(l, 1, length(name) + 1)) == tolower(name) ":") return trim(substr(l, length(name) + 2))
  }
  return ""
}
function param(h, name,    i, v) {
  i = index(tolower(h), tolower(name) "=")
  if (i == 0) return ""
  v = substr(h, i + length(name) + 1)
  if (substr(v, 1, 1) == "\"") { v = substr(v, 2); return substr(v, 1, index(v, "\"") - 1) }
  sub(/[; \t].*/, "", v)
  return v
}
function mtype(h) { sub(/;.*/, "", h); return tolower(trim(h)) }
function close_part() { if (out != "") { close(out); out = "" } }
BEGIN { np = 0; out = ""; hreset(); b = boundary; state = b == "" ? "top" : "pre" }
{
  sub(/\r$/, "")
  if (state == "top") {
    if ($0 != "") { hline($0); next }
    ct = hget("Content-Type")
    if (mtype(ct) !~ /^multipart\//) exit 2
    b = param(ct, "boundary")
    if (b == "") exit 2
    state = "pre"; next
  }
  if ($0 == "--" b "--") { close_part(); state = "end"; next }
  if ($0 == "--" b) { close_part(); state = "hdr"; hreset(); next }
  if (state == "hdr") {
    if ($0 != "") { hline($0); next }
    np++
    name = sprintf("part-%03d", np)
    out = dir "/" name
    printf "" > out
    pct = hget("Content-Type")
    t = mtype(pct); if (t == "") t = "text/plain"
    enc = tolower(hget("Content-Transfer-Encoding")); if (enc == "") enc = "7bit"
    fn = param(hget("Content-Disposition"), "filename")
    pb = t ~ /^multipart\// ? param(pct, "boundary") : ""
    print name "\t" t "\t" enc "\t" (fn == "" ? "-" : fn) "\t" (pb == "" ? "-" : pb)
    state = "body"; next
  }
  if (state == "body") print $0 > out
}
END { close_part(); if (state == "top" || np == 0) exit 2 }
