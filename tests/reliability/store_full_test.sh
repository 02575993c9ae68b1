#!/usr/bin/env bash
# The store's disk full: a real `bowline server` (libvirt's test:///default driver, no guests)
# whose data directory is an 8 MiB tmpfs, filled to the last byte:
#   refused    a create and a user create are answered 507 "the server's store has no room
#              left", the CLI exits 1, nothing of them is in the store, reads still work and the
#              server keeps running
#   recovered  once space is freed, a create succeeds
# Usage: store_full_test.sh BOWLINE_BINARY
# Prints one ok/FAIL line per check and "N passed, M failed"; exit status 1 when a check failed.
set -uo pipefail

BOWLINE=${1:?usage: store_full_test.sh BOWLINE_BINARY}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../e2e/lib/check.sh
. "$here/../e2e/lib/check.sh"
# shellcheck source=../e2e/lib/server.sh
. "$here/../e2e/lib/server.sh"

[ "$(id -u)" = 0 ] || {
  echo "store_full_test: needs root (a tmpfs mount)" >&2
  exit 1
}
work=$(mktemp -d /tmp/bowline-store-full.XXXXXX)
cleanup() {
  server_stop KILL
  umount "$work/data" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
unset "${!BOWLINE_@}"
export HOME=$work/home
mkdir -p "$work/data" "$work/images/cloud-images" "$HOME"
mount -t tmpfs -o size=8m,mode=0700 tmpfs "$work/data" || {
  echo "store_full_test: cannot mount a tmpfs" >&2
  exit 1
}
qemu-img create -q -f qcow2 "$work/images/cloud-images/tiny.qcow2" 16M
server_start "$BOWLINE" "$work/server.log" --data-dir "$work/data" --images-path "$work/images" \
  --libvirt-uri test:///default --domain-type qemu || exit 1
printf 'name: ${{ .space.name }}\nimage: tiny\nnetwork:\n  mode: nat\n  bridge: default\n' >"$work/t.yaml"
"$BOWLINE" template create "$work/t.yaml" --name t >/dev/null || fail "template create"
"$BOWLINE" space create t before --no-start >/dev/null || fail "space create before"

dd if=/dev/zero of="$work/data/fill" bs=64k 2>/dev/null
check_eq "the data directory is full" 0 "$(df --output=avail "$work/data" | tail -n 1 | tr -d ' ')"
# SQLite may still fit a write into its log's free pages: the first refusal is what counts.
refused="" accepted=(before)
for i in 1 2 3 4 5; do
  if out=$("$BOWLINE" space create t "full$i" --no-start 2>&1); then
    accepted+=("full$i")
  else
    refused="$out"
    break
  fi
done
check_match "refused: a create is refused, saying the store is full" \
  "the server's store has no room left \\(the disk of its data directory is full\\): nothing was changed" \
  "$refused"
out=$("$BOWLINE" user create someone 2>&1)
check_eq "refused: a user create too (exit code 1)" 1 "$?"
check_match "refused: ... with the same words" "store has no room left" "$out"
check_eq "refused: reads work, and the store holds exactly what was accepted" \
  "$(printf '%s\n' "${accepted[@]}" | sort | tr '\n' ' ')" \
  "$("$BOWLINE" space list -o json | jq -r '.[].name' | sort | tr '\n' ' ')"
check_cmd "refused: the server keeps running" kill -0 "$SERVER_PID"

rm -f "$work/data/fill"
check_cmd "recovered: with space freed a create succeeds" "$BOWLINE" space create t after --no-start
check_eq "recovered: ... and is listed" 1 "$("$BOWLINE" space list -o json | jq '[.[] | select(.name == "after")] | length')"
summary
