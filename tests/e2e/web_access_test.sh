#!/usr/bin/env bash
# End-to-end proof of the console and display WebSockets through the real
# `bowline server` on the real libvirtd (domain type qemu) with the tiny test guest and a
# template with `display: true` and `console: true`:
#   - two console viewers see the guest's login prompt, typing by one runs in the guest and both
#     see it, a late joiner first gets the scrollback, then live output;
#   - the console survives a restart of the space (the stream is reopened);
#   - the display WebSocket speaks RFB 3.8 with security None (virDomainOpenGraphicsFD with
#     SKIPAUTH: no TCP port) and sends a full frame whose pixels are not uniform;
#   - a user without use-web-terminal / use-vnc gets 403 before any upgrade, another user 404, a
#     foreign Origin 403; `bowline space console|vnc` are refused the same way.
# Networks: a host-only bridge in a free /28 of 198.51.100.0/24 (lib/net.sh); everything made
# here starts with bwweb and is removed on exit, also on failure.
# Usage: web_access_test.sh BOWLINE_BINARY
# Prints ok/FAIL lines and "N passed, M failed"; exit status 1 when a check failed.
set -uo pipefail

BOWLINE=${1:?usage: web_access_test.sh BOWLINE_BINARY}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=lib/net.sh
. "$here/lib/net.sh"

WAIT=${WAIT:-300}
tag=$(printf '%04x%02x' $((RANDOM)) $(($$ % 256)))
prefix=bwweb$tag
work=""
server_pid=""
passed=0
failed=0

log() { echo "web_access_test: $*"; }
pass() {
  passed=$((passed + 1))
  echo "ok: $*"
}
fail() {
  failed=$((failed + 1))
  echo "FAIL: $*"
}
check_eq() { if [ "$2" = "$3" ]; then pass "$1 ($3)"; else fail "$1: expected '$2', got '$3'"; fi; }
summary() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
cleanup() {
  [ -n "$server_pid" ] && kill -KILL "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  local d
  for d in $($VIRSH -q list --all --name 2>/dev/null | grep "^$prefix-"); do
    $VIRSH -q destroy "$d" >/dev/null 2>&1
    $VIRSH -q undefine "$d" --nvram >/dev/null 2>&1 || $VIRSH -q undefine "$d" >/dev/null 2>&1
  done
  net_cleanup
  [ -z "$work" ] || net_guard_drop "$work/data" # the guest guard's nftables table
  [ -n "$work" ] && rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
abort() {
  fail "$*"
  [ -n "$work" ] && [ -f "$work/server.log" ] && tail -n 30 "$work/server.log" | sed 's/^/    /'
  summary
  exit 1
}

[ "$(id -u)" = 0 ] || abort "needs root"
for tool in virsh qemu-img python3 jq; do command -v $tool >/dev/null || abort "missing $tool"; done
$VIRSH -q list >/dev/null 2>&1 || "$root/scripts/prepare-host" >/dev/null || abort "libvirtd"
mkdir -p /var/lib/libvirt/images
work=$(mktemp -d /var/lib/libvirt/images/bwweb-XXXXXX) # libvirt-qemu must read the images
chmod 0755 "$work"
unset "${!BOWLINE_@}"
export HOME=$work/home
images=$work/images
mkdir -p "$images/cloud-images" && chmod 0755 "$images" "$images/cloud-images"
"$root/scripts/build-test-guest" "$images/cloud-images/bwweb-tiny.qcow2" >/dev/null ||
  abort "scripts/build-test-guest"

subnet=""
for ((n = 0; n < 256; n += 16)); do
  if net_preflight "198.51.100.$n/28" 2>/dev/null; then subnet=198.51.100.$n; break; fi
done
[ -n "$subnet" ] || abort "no free /28 in 198.51.100.0/24"
pre=${subnet%.*}
base=${subnet##*.}
bridge=bwwb$tag
gw=$pre.$((base + 1))
net_bridge_create "$bridge" "$gw/28" || abort "bridge $bridge"

"$BOWLINE" server --listen 127.0.0.1:0 --data-dir "$work/data" --images-path "$images" \
  --libvirt-uri qemu:///system --domain-type qemu --stop-timeout 30 --resolvers "$gw" \
  >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 600); do
  line=$(grep -aoE 'listening on http://127\.0\.0\.1:[0-9]+' "$work/server.log" | tail -n 1)
  [ -n "$line" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
[ -n "$line" ] || abort "bowline server did not come up"
export BOWLINE_SERVER=${line#listening on }
BOWLINE_TOKEN=$(cat "$work/data/admin.token") || abort "admin token"
export BOWLINE_TOKEN
admin=$BOWLINE_TOKEN

template() { # DISPLAY CONSOLE
  cat <<YAML
name: $prefix-\${{ .space.name }}
hostname: \${{ .space.name }}
image: bwweb-tiny
memory: 256M
cpus: 1
network:
  mode: bridged
  bridge: $bridge
  cidr: $subnet/28
  ip_range_start: $pre.$((base + 4))
  ip_range_end: $pre.$((base + 12))
  gateway: $gw
display: $1
console: $2
YAML
}
template true true >"$work/both.yaml"
"$BOWLINE" template create "$work/both.yaml" --name both >/dev/null || abort "template create"

user_token() { # NAME [--permission P]...
  "$BOWLINE" user create "$@" -o json | jq -r '.token'
}
alice=$(user_token alice --permission use-vnc --permission use-web-terminal) || abort "user alice"
bob=$(user_token bob) || abort "user bob"
carol=$(user_token carol --permission use-vnc --permission use-web-terminal) || abort "user carol"
[ -n "$alice" ] && [ "$alice" != null ] || abort "no token for alice"

BOWLINE_TOKEN=$alice "$BOWLINE" space create both a1 --wait --timeout "$WAIT" >"$work/a1.out" 2>&1 ||
  { sed 's/^/    /' "$work/a1.out"; abort "space create (alice)"; }
space=$(BOWLINE_TOKEN=$alice "$BOWLINE" space info a1 -o json | jq -r '.id')
BOWLINE_TOKEN=$bob "$BOWLINE" space create both b1 --wait --timeout "$WAIT" >"$work/b1.out" 2>&1 ||
  { sed 's/^/    /' "$work/b1.out"; abort "space create (bob)"; }
bspace=$(BOWLINE_TOKEN=$bob "$BOWLINE" space info b1 -o json | jq -r '.id')
log "spaces running: alice's $space, bob's $bspace"

ws() { python3 "$here/lib/ws_access.py" "$@"; }
origin=$BOWLINE_SERVER

# --- refusals before any upgrade ---------------------------------------------------------------
check_eq "bob (no use-web-terminal) on his own space's console" 403 \
  "$(ws status "$BOWLINE_SERVER" "$bob" "/api/v1/spaces/$bspace/console")"
check_eq "bob (no use-vnc) on his own space's display" 403 \
  "$(ws status "$BOWLINE_SERVER" "$bob" "/api/v1/spaces/$bspace/vnc")"
check_eq "carol (permissions, not the owner) on alice's console" 404 \
  "$(ws status "$BOWLINE_SERVER" "$carol" "/api/v1/spaces/$space/console")"
check_eq "anonymous on alice's display" 401 \
  "$(ws status "$BOWLINE_SERVER" "" "/api/v1/spaces/$space/vnc")"
check_eq "alice from a foreign Origin" 403 \
  "$(ws status "$BOWLINE_SERVER" "$alice" "/api/v1/spaces/$space/vnc" http://evil.example)"
check_eq "alice with this server's Origin" 101 \
  "$(ws status "$BOWLINE_SERVER" "$alice" "/api/v1/spaces/$space/vnc" "$origin")"
BOWLINE_TOKEN=$bob "$BOWLINE" space console b1 </dev/null >/dev/null 2>"$work/bob-console.err"
check_eq "bowline space console without the permission: exit code" 4 "$?"
BOWLINE_TOKEN=$bob "$BOWLINE" space vnc b1 --port 0 </dev/null >/dev/null 2>"$work/bob-vnc.err"
check_eq "bowline space vnc without the permission: exit code" 4 "$?"

# --- the display ---------------------------------------------------------------------------------
ws vnc "$BOWLINE_SERVER" "$alice" "$space" && pass "display checks" || fail "display checks"
# security: VNC is never on TCP. The domain's VNC server is a UNIX socket libvirt made, and the
# space's QEMU listens on no TCP port at all (the display above went through libvirt).
listen=$($VIRSH domdisplay "$prefix-a1" 2>/dev/null)
case $listen in vnc+unix:///*) pass "security: the domain's own VNC is a UNIX socket ($listen)" ;;
  *) fail "security: the domain's VNC listens on '$listen'" ;; esac
qemu_pid=$(pgrep -f -- "-name guest=$prefix-a1," | head -n 1)
[ -n "$qemu_pid" ] || fail "the QEMU process of $prefix-a1"
check_eq "security: the space's QEMU (pid $qemu_pid) listens on no TCP port" "" \
  "$(ss -Htlnp | grep -E "pid=$qemu_pid,")"
case $(ss -Hxlp | grep -E "pid=$qemu_pid,") in
  *vnc.sock*) pass "security: ... and listens on its VNC UNIX socket" ;;
  *) fail "security: the space's QEMU has no VNC UNIX socket" ;; esac

# --- the console -----------------------------------------------------------------------------------
ws console "$BOWLINE_SERVER" "$alice" "$space" "$tag" && pass "console checks" || fail "console checks"

# The CLI attached to the console: what it types runs in the guest.
printf 'echo cli-""%s\r' "$tag" | (
  cat
  sleep 15
) | BOWLINE_TOKEN=$alice timeout 60 "$BOWLINE" space console a1 >"$work/cli-console.out" 2>&1
grep -aq "cli-$tag" "$work/cli-console.out" && pass "bowline space console: typing reaches the guest" ||
  { fail "bowline space console: no cli-$tag in its output"; tail -c 400 "$work/cli-console.out" | sed 's/^/    /'; }

# The console survives a restart of the space: a viewer that stays sees the new boot.
python3 - "$BOWLINE_SERVER" "$alice" "$space" "$here/lib" >"$work/restart.out" 2>&1 <<'PY' &
import sys
sys.path.insert(0, sys.argv[4])
from ws_access import Ws
ws = Ws(sys.argv[1], sys.argv[2], f"/api/v1/spaces/{sys.argv[3]}/console")
ws.recv(5)  # the scrollback
seen = ws.until(b"TEST: READY", 400)
print("SEEN-READY" if b"TEST: READY" in seen else "NO-READY " + repr(seen[-300:]))
PY
watcher=$!
sleep 2
BOWLINE_TOKEN=$alice "$BOWLINE" space restart a1 --wait --timeout "$WAIT" >"$work/restart-cli.out" 2>&1 ||
  { fail "space restart --wait"; sed 's/^/    /' "$work/restart-cli.out"; }
wait "$watcher"
grep -q SEEN-READY "$work/restart.out" && pass "a viewer stays attached across a restart and sees the new boot" ||
  { fail "console across a restart"; sed 's/^/    /' "$work/restart.out"; }

summary
