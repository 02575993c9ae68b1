#!/usr/bin/env bash
# Disks as objects and export/import on the real Debian 12 guest (scripts/build-debian-guest, Debian's own
# cloud-init) behind the real `bowline server`, one guest at a time:
#   - `disk create root --image debian-12` for the user, and a Cozystack-style template with no
#     image whose boot disk is disks[0]: `space create --wait` returns once cloud-init finished;
#     the owner logs in over SSH (host key pinned from bowline) and writes a file;
#   - the stopped space is exported (its time against `qemu-img convert` of the same disk is
#     logged); a corrupted copy of the archive is refused before anything is made;
#   - the space and then its disk are deleted (the disk outlives the space), and the archive is
#     imported under a new name on the same server: it boots to ready with its own hostname and
#     host key, and the file is there.
# Needs root, a running libvirtd (scripts/prepare-host), the packages of scripts/setup. Networks:
# an isolated libvirt network on a free /28 of 198.51.100.0/24; guests never route outside.
# Usage: debian_disk_export_test.sh BOWLINE_BINARY
set -uo pipefail

BOWLINE=${1:?usage: debian_disk_export_test.sh BOWLINE_BINARY}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=lib/net.sh
. "$here/lib/net.sh"
# shellcheck source=lib/check.sh
. "$here/lib/check.sh"
# shellcheck source=lib/server.sh
. "$here/lib/server.sh"
# shellcheck source=lib/spaces.sh
. "$here/lib/spaces.sh"
# shellcheck source=lib/debian_server.sh
. "$here/lib/debian_server.sh"

READY_TIMEOUT=${READY_TIMEOUT:-900} # TCG on 2 cores: ~50 s idle, 10+ minutes while others compile
started=$(date +%s)
debian_server_begin debian_disk_export_test dana

cat >"$work/cozy.yaml" <<YAML
name: $prefix-\${{ .space.name }}
hostname: \${{ .space.name }}
memory: 1G
cpus: 2
network:
  mode: nat
  bridge: $network
disks:
  - name: root
YAML
"$BOWLINE" template create "$work/cozy.yaml" --name cozy-deb >/dev/null || abort "template create"

# --- a Cozystack-style space booting from disks[0] ---------------------------------------------
t=$(date +%s)
out=$(as_user space create cozy-deb vm1 2>&1)
check_match "disk: without the disk, the create is refused naming it" "has no disk named root" "$out"
check_cmd "disk: disk create root --image debian-12" as_user disk create root --image debian-12
as_user space create cozy-deb vm1 --wait --timeout "$READY_TIMEOUT" >"$work/create.out" 2>&1 &
wait $! || { cat "$work/create.out"; abort "space create vm1 --wait"; }
log "vm1 ready in $(($(date +%s) - t)) s (booting from disks[0])"
check_eq "disk: the space is ready" true "$(as_user space info vm1 -o json | jq -r '.info.readiness.ready')"
check_cmd "disk: the owner logs in over SSH" guest_retry vm1 true
secret="kept across export $tag"
check_cmd "disk: a file is written" guest vm1 "echo '$secret' > ~/kept.txt && sync"
disk=$(ls "$images"/volumes/*/root.qcow2 2>/dev/null | head -n 1)
check_eq "disk: the domain boots from the disk object" "$disk" "$(dom_disk "$prefix-vm1")"

# --- export ------------------------------------------------------------------------------------
check_cmd "export: space stop vm1 --wait" as_user space stop vm1 --wait --timeout 300
t0=$(date +%s.%N)
check_cmd "export: space export vm1 -o vm1.tar" as_user space export vm1 -o "$work/vm1.tar"
export_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
t0=$(date +%s.%N)
qemu-img convert -U -O qcow2 "$disk" "$work/reference.qcow2"
convert_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
log "figure: export $export_s s ($(stat -c %s "$work/vm1.tar") bytes) against qemu-img convert $convert_s s"
rm -f "$work/reference.qcow2"

cp "$work/vm1.tar" "$work/bad.tar"
size=$(stat -c %s "$work/bad.tar")
printf 'X' | dd of="$work/bad.tar" bs=1 seek=$((size * 2 / 3)) conv=notrunc status=none
out=$(as_user space import "$work/bad.tar" --name vm2 2>&1)
check_match "export: a corrupted archive is refused" 'does not match its SHA-256' "$out"
check_eq "export: ... before anything is made (no space vm2)" "" \
  "$(as_user space list -o json | jq -r '.[] | select(.name == "vm2") | .name')"
check_eq "export: ... (nothing staged)" "" "$(ls -A "$images/volumes/staging" 2>/dev/null)"

# --- the disk outlives its space; the archive comes back under a new name -----------------------
check_cmd "disk: space delete vm1 --wait" as_user space delete vm1 --wait --timeout 300
check_cmd "disk: the disk is kept" test -f "$disk"
check_cmd "disk: disk delete root (no space names it now)" as_user disk delete root
t=$(date +%s)
as_user space import "$work/vm1.tar" --name vm2 --wait --timeout "$READY_TIMEOUT" >"$work/import.out" 2>&1 &
wait $! || { cat "$work/import.out"; abort "space import --name vm2 --wait"; }
log "vm2 imported and ready in $(($(date +%s) - t)) s"
check_eq "export: the imported space is ready" true "$(as_user space info vm2 -o json | jq -r '.info.readiness.ready')"
check_cmd "export: the owner logs in to vm2 (its own host key, pinned)" guest_retry vm2 true
check_eq "export: it has the file" "$secret" "$(guest vm2 cat kept.txt 2>>"$work/ssh.err")"
check_eq "export: its hostname is its own" vm2 "$(guest vm2 hostname 2>>"$work/ssh.err")"
[ -s "$work/ssh.err" ] && sed 's/^/  ssh: /' "$work/ssh.err"

log "total $(($(date +%s) - started)) s"
summary
