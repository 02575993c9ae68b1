# yq.awk: queries the "PATH<TAB>VALUE" lines written by yaml.awk.
#   awk -v op=get  -v k=PATH -f yq.awk FILE   prints the decoded value of PATH (no newline added);
#                                             exit status 1 when PATH is absent
#   awk -v op=keys -v k=PATH -f yq.awk FILE   prints the direct children of PATH ("" = top), one a line
#   awk -v op=list -v k=PATH -f yq.awk FILE   prints the decoded scalars PATH.0, PATH.1, ... or PATH
#                                             itself when it is a scalar, one a line
#   awk -v op=script -v k=PATH -f yq.awk FILE a shell script from the command list PATH (cloud-init's
#                                             runcmd/bootcmd): a string item is a line as it is, a list
#                                             item is its words, each shell-quoted
#   awk -v op=shell -v ns=NS -f yq.awk FILE  shell assignments to eval, for lookups without a process:
#                                             Y<NS>_<enc(PATH)>='value' for every scalar and
#                                             K<NS>_<enc(PATH)>='child child ...' for every collection
#                                             (PATH "" = top); enc: "_" -> "__", "." -> "_d", "-" -> "_h";
#                                             paths with other characters than [A-Za-z0-9_.-] are left out
function unesc(v,    out, i, c, e) {
  out = ""
  for (i = 1; i <= length(v); i++) {
    c = substr(v, i, 1)
    if (c == "\\") {
      e = substr(v, i + 1, 1); i++
      out = out (e == "n" ? "\n" : e)
    } else out = out c
  }
  return out
}
function shq(v,    out, i, c) {
  out = "'"
  for (i = 1; i <= length(v); i++) {
    c = substr(v, i, 1)
    out = out (c == "'" ? "'\\''" : c)
  }
  return out "'"
}
function enc(p,    out, i, c) {
  if (p ~ /[^A-Za-z0-9_.-]/) return ""
  out = ""
  for (i = 1; i <= length(p); i++) {
    c = substr(p, i, 1)
    out = out (c == "_" ? "__" : c == "." ? "_d" : c == "-" ? "_h" : c)
  }
  return out "#"
}
BEGIN { FS = "\t"; found = 0; pre = k == "" ? "" : k "."; n = 0 }
{
  p = $1
  v = substr($0, length(p) + 2)
  if (op == "get") {
    if (p == k) { printf "%s", unesc(v); found = 1; exit }
    next
  }
  if (op == "list") {
    if (p == k) { print unesc(v); found = 1; next }
    if (index(p, pre) == 1) {
      r = substr(p, length(pre) + 1)
      if (r ~ /^[0-9]+$/) { print unesc(v); found = 1 }
    }
    next
  }
  if (op == "script") {
    if (index(p, pre) != 1) next
    r = substr(p, length(pre) + 1)
    i = index(r, ".") ? substr(r, 1, index(r, ".") - 1) : r
    if (!(i in line)) { order[++n] = i; line[i] = "" }
    if (i == r) line[i] = unesc(v)
    else if (r ~ /^[0-9]+\.[0-9]+$/) line[i] = line[i] (line[i] == "" ? "" : " ") shq(unesc(v))
    found = 1
    next
  }
  if (op == "shell") {
    e = enc(p)
    if (e == "") next
    print "Y" ns "_" substr(e, 1, length(e) - 1) "=" shq(unesc(v))
    # register p under each of its ancestors
    q = p
    while (q != "") {
      j = match(q, /\.[^.]*$/)
      par = j ? substr(q, 1, j - 1) : ""
      c = j ? substr(q, j + 1) : q
      if (!((par SUBSEP c) in kid)) {
        kid[par SUBSEP c] = 1
        if (par in porder) kids[par] = kids[par] " " c
        else { porder[par] = 1; plist[++np] = par; kids[par] = c }
      }
      q = par
    }
    found = 1
    next
  }
  if (op == "keys") {
    if (pre != "" && index(p, pre) != 1) next
    r = substr(p, length(pre) + 1)
    if (r == "") next
    c = index(r, ".") ? substr(r, 1, index(r, ".") - 1) : r
    if (!(c in seen)) { seen[c] = 1; print c; found = 1 }
  }
}
END {
  if (op == "shell") {
    for (j = 1; j <= np; j++) {
      e = plist[j] == "" ? "#" : enc(plist[j])
      if (e != "") print "K" ns "_" substr(e, 1, length(e) - 1) "=" shq(kids[plist[j]])
    }
  }
  if (op == "script" && found) {
    print "#!/bin/sh"
    for (j = 1; j <= n; j++) print line[order[j]]
  }
  exit(found ? 0 : 1)
}
