#!/usr/bin/env bash
# The images file system full (ENOSPC), through the real `bowline server` on qemu:///system with
# the tiny test guest, its images path a 64 MiB tmpfs filled to the last byte:
#   enospc-create    a create fails with a reason that says the disk is full; no domain, no
#                    directory, no half-made file of it is left
#   enospc-snapshot  a snapshot of the running space fails with the reason; no snapshot is
#                    recorded (API and libvirt agree) and the space keeps running
#   enospc-import    an import fails with the reason; no space, nothing staged
#   export           writes on the client's side, not on the images path: it still works
#   recovered        once space is freed, a create succeeds
# Usage: images_full_test.sh BOWLINE_BINARY
# Prints one ok/FAIL line per check and "N passed, M failed"; exit status 1 when a check failed.
set -uo pipefail

BOWLINE=${1:?usage: images_full_test.sh BOWLINE_BINARY}
here=$(cd "$(dirname "$0")" && pwd)
e2e=$here/../e2e
# shellcheck source=../e2e/lib/net.sh
. "$e2e/lib/net.sh"
# shellcheck source=../e2e/lib/check.sh
. "$e2e/lib/check.sh"
# shellcheck source=../e2e/lib/server.sh
. "$e2e/lib/server.sh"
# shellcheck source=../e2e/lib/spaces.sh
. "$e2e/lib/spaces.sh"

WAIT=${WAIT:-120}
spaces_begin images_full_test
small=""
_full_cleanup() {
  server_stop KILL
  spaces_remove_domains "$prefix-"
  [ -n "$small" ] && umount "$small" 2>/dev/null
  _spaces_cleanup
}
trap _full_cleanup EXIT
small=$work/images
mkdir -p "$small" && mount -t tmpfs -o size=64M,mode=0755 bwe2e-full "$small" || abort "tmpfs on $small"
spaces_prepare_images "$small" || abort "building the test guest into $small/cloud-images"
sub=$(net_free_subnet 28) || abort "no free /28 in 198.51.100.0/24"
pre=${sub%.*}
base=${sub##*.}
bridge=bwe2eb$tag
gw=$pre.$((base + 1))
net_bridge_create "$bridge" "$gw/28" || abort "bridge $bridge"
server_start "$BOWLINE" "$work/server.log" --data-dir "$work/data" --images-path "$small" \
  --libvirt-uri qemu:///system --domain-type qemu --stop-timeout 5 --resolvers "$gw" ||
  abort "bowline server"
cat >"$work/t.yaml" <<YAML
name: $prefix-\${{ .space.name }}
image: $SPACES_IMAGE
memory: 128M
cpus: 1
network:
  mode: bridged
  bridge: $bridge
  cidr: $sub/28
  ip_range_start: $pre.$((base + 2))
  ip_range_end: $pre.$((base + 14))
  gateway: $gw
YAML
"$BOWLINE" template create "$work/t.yaml" --name t >/dev/null || abort "template create"
bw space create t s1 --wait --no-ready --timeout "$WAIT" || abort "space create s1"
bw space stop s1 --wait --timeout "$WAIT" || abort "space stop s1"
bw space export s1 -o "$work/s1.tar" || abort "space export s1 (before the disk is full)"
bw space start s1 --wait --no-ready --timeout "$WAIT" || abort "space start s1"

# Full to the last byte: dd stops at ENOSPC.
dd if=/dev/zero of="$small/fill" bs=1M status=none 2>/dev/null
check_eq "the images path is full" 0 "$(df --output=avail -B1 "$small" | tail -n 1 | tr -d ' ')"
half_made() { find "$small" \( -name '*.part' -o -name '*.tmp' \) -printf '%P\n'; ls -A "$small/volumes/staging" 2>/dev/null; }

out=$("$BOWLINE" space create t s2 --wait --no-ready --timeout "$WAIT" 2>&1)
check_eq "enospc-create: exit code 1" 1 "$?"
check_match "enospc-create: the reason says the disk is full" 'o space left|ENOSPC' "$out"
state=$(space_json s2 | jq -r '.state // "none"')
check_match "enospc-create: s2 is in error (with the reason) or gone" '^(error|none)$' "$state"
check_cmd "enospc-create: no domain of s2" no_domain "$prefix-s2"
check_not_cmd "enospc-create: no directory of s2" test -e "$small/$prefix-s2"
check_eq "enospc-create: no half-made file" "" "$(half_made)"

out=$("$BOWLINE" space snapshot s1 snap1 --timeout "$WAIT" 2>&1)
check_eq "enospc-snapshot: exit code 1" 1 "$?"
check_match "enospc-snapshot: the reason says the disk is full" 'o space left|ENOSPC' "$out"
check_eq "enospc-snapshot: no snapshot in the API" 0 "$("$BOWLINE" space snapshots s1 -o json | jq length)"
check_eq "enospc-snapshot: no snapshot in libvirt" "" "$($VIRSH snapshot-list --name "$prefix-s1" | tr -d '\n')"
check_eq "enospc-snapshot: s1 keeps running" "running running" \
  "$(space_json s1 | jq -r .state) $($VIRSH domstate "$prefix-s1")"

out=$("$BOWLINE" space import "$work/s1.tar" --name i1 2>&1)
check_eq "enospc-import: exit code 1" 1 "$?"
check_match "enospc-import: the reason says the disk is full" 'o space left|ENOSPC' "$out"
check_eq "enospc-import: no space i1" 0 \
  "$("$BOWLINE" space list -o json | jq '[.[] | select(.name == "i1")] | length')"
check_eq "enospc-import: nothing staged or half-made" "" "$(half_made)"

rm -f "$small/fill"
check_cmd "recovered: with space freed a create succeeds" bw space create t s3 --wait --no-ready --timeout "$WAIT"
for s in s1 s2 s3; do "$BOWLINE" space delete "$s" --wait --timeout "$WAIT" >/dev/null 2>&1; done
server_stop TERM
summary
