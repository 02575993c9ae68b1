#!/usr/bin/env bash
# The README's first command as a newcomer runs it, with no BOWLINE_DOMAIN_TYPE: on this host
# (hardware KVM absent or broken) the server must choose software emulation by itself and the
# space must come up. Only what keeps it off the developer's own quickstart is private here: the
# data directory, the images path, the port, HOME (the saved login) and the space's name. Then
# `scripts/quickstart --clean` removes what it made.
# Usage: quickstart_test.sh BUILD_DIR
set -uo pipefail

build=${1:?usage: quickstart_test.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
passed=0
failed=0
log() { echo "quickstart_test: $*"; }
check() {
  local what=$1
  shift
  if "$@"; then
    passed=$((passed + 1))
    log "ok: $what"
  else
    failed=$((failed + 1))
    log "FAIL: $what"
  fi
}

tag=$(printf '%04x' $((RANDOM)))
work=$(mktemp -d "${TMPDIR:-/tmp}/bwqs-$tag.XXXXXX")
mkdir -p /var/lib/libvirt/images
images=$(mktemp -d "/var/lib/libvirt/images/bwqs-$tag.XXXXXX") # QEMU must read it
chmod 0755 "$images"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
space=qs$tag
unset BOWLINE_DOMAIN_TYPE BOWLINE_SERVER BOWLINE_TOKEN BOWLINE_CONFIG
export HOME=$work/home BUILD_DIR=$build QUICKSTART_SPACE=$space
export BOWLINE_DATA_DIR=$work/data BOWLINE_KVM_IMAGES_PATH=$images BOWLINE_LISTEN=127.0.0.1:$port
mkdir -p "$HOME"

cleanup() {
  "$root/scripts/quickstart" --clean >"$work/clean.out" 2>&1 || {
    log "quickstart --clean failed:"
    sed 's/^/  /' "$work/clean.out"
  }
  rm -rf "$work" "$images"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

t=$(date +%s)
"$root/scripts/quickstart" >"$work/quickstart.out" 2>&1
rc=$?
log "scripts/quickstart exited $rc after $(($(date +%s) - t)) s"
check "scripts/quickstart succeeds with no variable set" [ "$rc" = 0 ]
[ "$rc" = 0 ] || sed 's/^/  | /' "$work/quickstart.out"
out=$(cat "$work/quickstart.out")
check "it says which domain type the server chose" grep -qE '^   domain type (kvm|qemu) ' <<<"$out"
chosen=$(sed -n 's/^   domain type \(kvm\|qemu\) .*/\1/p' <<<"$out" | tail -n 1)
log "the server chose domain type $chosen"
bowline=$build/src/bowline
export BOWLINE_SERVER=http://127.0.0.1:$port
BOWLINE_TOKEN=$(cat "$BOWLINE_DATA_DIR/admin.token" 2>/dev/null)
export BOWLINE_TOKEN
state=$("$bowline" space info "$space" -o json 2>/dev/null | jq -r .state)
check "the space runs ($state)" [ "$state" = running ]
domain=$("$bowline" space info "$space" -o json 2>/dev/null | jq -r .domain)
xml_type=$(virsh -c qemu:///system dumpxml "$domain" 2>/dev/null | sed -n "s/^<domain type='\([a-z]*\)'.*/\1/p")
check "its libvirt domain has the chosen type ($xml_type)" [ -n "$chosen" ] && [ "$xml_type" = "$chosen" ]
check "the closing lines say how to reach it" grep -q "== Done. The space \"$space\" runs" <<<"$out"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
