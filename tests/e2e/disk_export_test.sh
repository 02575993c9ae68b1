#!/usr/bin/env bash
# Disks as objects and export/import on the tiny test guest, through the real `bowline server` and CLI on the
# real libvirtd (qemu:///system, domain type qemu):
#   disk   `disk create root --image` (0600 under the images path), a Cozystack-style template
#          with no image boots from disks[0]; `disk delete` of an attached disk is refused
#          naming the space; a second running space on the same disk is refused; deleting the
#          space keeps the disk; a missing disk is refused at create, by name
#   export a stopped space to one tar (four members, SHA-256 manifest that sha256sum agrees
#          with, a standalone qcow2 that qemu-img checks); a corrupted copy is refused by import
#          before anything is made; the good one imports under a new name and boots with the
#          files of the first (the tiny guest's mark on its disk), with a new MAC; importing it
#          with --keep-identity while the original exists is refused
# Networks: an isolated libvirt network on a free /27 of 198.51.100.0/24 (lib/net.sh). Everything
# made here starts with bwe2e and is removed on exit, also on failure.
# Usage: disk_export_test.sh BOWLINE_BINARY
set -uo pipefail

BOWLINE=${1:?usage: disk_export_test.sh BOWLINE_BINARY}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/net.sh
. "$here/lib/net.sh"
# shellcheck source=lib/console.sh
. "$here/lib/console.sh"
# shellcheck source=lib/check.sh
. "$here/lib/check.sh"
# shellcheck source=lib/server.sh
. "$here/lib/server.sh"
# shellcheck source=lib/spaces.sh
. "$here/lib/spaces.sh"

started=$(date +%s)
WAIT=${WAIT:-300}
spaces_begin disk_export_test
images=$work/images
spaces_prepare_images "$images" || abort "building the test guest into $images/cloud-images"

nsub=$(net_free_subnet 27) || abort "no free /27 in 198.51.100.0/24"
npre=${nsub%.*}
nbase=${nsub##*.}
natnet=$prefix-nat
net_isolated_create "$natnet" "bwe2ek$tag" "$npre.$((nbase + 1))/27" "$npre.$((nbase + 10))" \
  "$npre.$((nbase + 20))" || abort "isolated network $natnet"

server_start "$BOWLINE" "$work/server.log" --data-dir "$work/data" --images-path "$images" \
  --libvirt-uri qemu:///system --domain-type qemu --stop-timeout 60 ||
  abort "bowline server"
out=$(bw user create bob) || abort "user create bob"

# The mark is written on the boot disk at the first boot and only reported after that.
mark_cmd="if [ -f /boot/bwe2e-mark ]; then echo \"TEST: mark kept \$(cat /boot/bwe2e-mark)\"; else echo first-boot-$tag >/boot/bwe2e-mark; sync; echo \"TEST: mark new \$(cat /boot/bwe2e-mark)\"; fi"
cat >"$work/cozy.yaml" <<YAML
name: $prefix-\${{ .space.name }}
hostname: \${{ .space.name }}
memory: 256M
cpus: 1
network:
  mode: nat
  bridge: $natnet
disks:
  - name: root
cloudInit: |
  #cloud-config
  runcmd:
    - '$mark_cmd'
console: true
YAML
bw template create "$work/cozy.yaml" --name cozy >/dev/null || abort "template create cozy"

# --- disks ----------------------------------------------------------------------------------
t=$(date +%s)
out=$("$BOWLINE" space create cozy c0 2>&1)
check_match "disk: a missing disk is refused at create, by name" 'disks\[0\]: admin has no disk named root' "$out"
check_cmd "disk: disk create root --image $SPACES_IMAGE" bw disk create root --image "$SPACES_IMAGE"
check_eq "disk: disk info names no host file" null "$("$BOWLINE" disk info root -o json | jq -r '.path // "null"')"
file=$(ls "$images"/volumes/*/root.qcow2 2>/dev/null | head -n 1)
check_eq "disk: its file is 0600" 600 "$(stat -c %a "$file" 2>/dev/null)"
check_match "disk: under the images path" "^$images/volumes/" "$file"
check_cmd "disk: the Cozystack-style space boots from disks[0] (space create --wait)" \
  bw space create cozy c1 --wait --timeout "$WAIT"
c1_console=$images/$prefix-c1/console.log
check_cmd "disk: the guest booted (console TEST: READY)" wait_for "$c1_console" '^TEST: READY' 60
check_cmd "disk: first boot wrote the mark" wait_for "$c1_console" "TEST: mark new first-boot-$tag" 30
check_eq "disk: the domain's first disk is the disk object" "$file" "$(dom_disk "$prefix-c1")"
out=$("$BOWLINE" disk delete root 2>&1)
check_match "disk: delete of an attached disk is refused, naming the space" 'attached to the running space c1' "$out"
out=$("$BOWLINE" space create cozy c2 2>&1)
check_match "disk: a second running space on the same disk is refused" 'in use by the running space c1' "$out"
check_match "disk: disk list names the space" 'c1\(running\)' "$("$BOWLINE" disk list)"
log "disks: $(($(date +%s) - t)) s"

# --- export -----------------------------------------------------------------------------------
t=$(date +%s)
out=$("$BOWLINE" space export c1 -o "$work/c1.tar" 2>&1)
check_match "export: a running space is refused" 'export reads a stopped space' "$out"
check_cmd "export: space stop c1 --wait" bw space stop c1 --wait --timeout "$WAIT"
check_cmd "export: space export c1 -o c1.tar" bw space export c1 -o "$work/c1.tar"
check_eq "export: the archive is 0600" 600 "$(stat -c %a "$work/c1.tar" 2>/dev/null)"
check_eq "export: four members" "space.json template.yaml disk.qcow2 manifest.json" \
  "$(tar tf "$work/c1.tar" | tr '\n' ' ' | sed 's/ $//')"
mkdir -p "$work/x" && tar xf "$work/c1.tar" -C "$work/x"
check_eq "export: the manifest's SHA-256 of disk.qcow2 is sha256sum's" \
  "$(sha256sum "$work/x/disk.qcow2" | cut -d' ' -f1)" \
  "$(jq -r '.members[] | select(.name == "disk.qcow2") | .sha256' "$work/x/manifest.json")"
check_cmd "export: the disk is a standalone qcow2 that qemu-img checks" qemu-img check -q "$work/x/disk.qcow2"
check_eq "export: no backing file" null "$(qemu-img info --output=json "$work/x/disk.qcow2" | jq -r '.["backing-filename"] // "null"')"
check_cmd "export: the guest's data is the same as the space's disk" qemu-img compare -q "$file" "$work/x/disk.qcow2"
rm -rf "$work/x"
log "export: $(($(date +%s) - t)) s"

# --- import -----------------------------------------------------------------------------------
t=$(date +%s)
cp "$work/c1.tar" "$work/bad.tar"
size=$(stat -c %s "$work/bad.tar")
printf 'X' | dd of="$work/bad.tar" bs=1 seek=$((size / 2)) conv=notrunc status=none
out=$("$BOWLINE" space import "$work/bad.tar" --name c3 --owner bob 2>&1)
check_match "import: a corrupted archive is refused" 'does not match its SHA-256' "$out"
check_eq "import: ... and nothing is made (no space)" "" "$("$BOWLINE" space list --all -o json | jq -r '.[] | select(.name == "c3") | .name')"
check_eq "import: ... (no disk for bob)" 0 "$("$BOWLINE" disk list --owner bob -o json | jq length)"
check_eq "import: ... (nothing staged)" "" "$(ls -A "$images/volumes/staging" 2>/dev/null)"
# security: an import past the owner's disk quota is cut off from the archive's header, with
# the reason, and leaves nothing staged.
bw user set-quota bob --disk 1M >/dev/null || abort "user set-quota bob"
out=$("$BOWLINE" space import "$work/c1.tar" --name c3 --owner bob 2>&1)
check_match "security: import past bob's disk quota is cut off, saying why" \
  "disk.qcow2 holds .*, more than the 1 MiB this import may take" "$out"
check_eq "security: ... and nothing is staged" "" "$(ls -A "$images/volumes/staging" 2>/dev/null)"
check_eq "security: ... nor made (no disk for bob)" 0 "$("$BOWLINE" disk list --owner bob -o json | jq length)"
bw user set-quota bob --disk unlimited >/dev/null || abort "user set-quota bob"
out=$("$BOWLINE" space import "$work/c1.tar" --name c3 --owner admin 2>&1)
check_match "import: for an owner who has the disk's name already, refused by name" 'already has a disk named root' "$out"
out=$("$BOWLINE" space import "$work/c1.tar" --name c3 --owner bob --keep-identity 2>&1)
check_match "import: --keep-identity while the original exists is refused" 'in use by the space c1' "$out"
check_cmd "import: space import c1.tar --name c3 --owner bob --wait" \
  bw space import "$work/c1.tar" --name c3 --owner bob --wait --timeout "$WAIT"
c3_console=$images/$prefix-c3/console.log
check_cmd "import: the imported guest booted" wait_for "$c3_console" '^TEST: READY' 60
check_cmd "import: it boots with the first space's files (mark kept)" \
  wait_for "$c3_console" "TEST: mark kept first-boot-$tag" 30
check_match "import: bob has the disk root now" 'root' "$("$BOWLINE" disk list --owner bob)"
if [ "$(dom_mac "$prefix-c3")" != "$(dom_mac "$prefix-c1")" ]; then
  pass "import: a new identity (its own MAC)"
else
  fail "import: the MAC is the original's"
fi
log "import: $(($(date +%s) - t)) s"

# --- deleting the space keeps its named disk --------------------------------------------------
check_cmd "disk: space delete c1 --wait" bw space delete c1 --wait --timeout "$WAIT"
check_cmd "disk: its disk is kept" test -f "$file"
check_cmd "disk: and can be deleted now" bw disk delete root
check_cmd "disk: the file is gone" test ! -e "$file"

log "total $(($(date +%s) - started)) s"
summary
