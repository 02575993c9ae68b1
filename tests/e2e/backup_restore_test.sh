#!/usr/bin/env bash
# Backups and the audit log on the tiny test guest, through the real `bowline server` and CLI on
# the real libvirtd (qemu:///system, domain type qemu):
#   audit    a create, a refused request of another user and an opened console are in
#            `bowline admin audit`, with who, what, which space and the answer; only admins
#            read it
#   backup   `admin backup FILE` of a running server: 0600, a tar whose manifest sha256sum
#            agrees with; refused to a user who is not an admin; a second server on the same
#            data directory, and a restore under a running one, are refused
#   restore  the data directory lost: `admin restore` into a new one brings users, tokens,
#            templates and every space's record back; a space whose domain still runs is
#            running; one whose domain went but whose disk is there shows why and starts again
#            with the same disk; one whose disk went too shows why and refuses to start rather
#            than boot a blank disk; a second restore without --force is refused
# Networks: an isolated libvirt network on a free /27 of 198.51.100.0/24 (spaces_nat_network). Everything
# made here starts with bwe2e and is removed on exit, also on failure.
# Usage: backup_restore_test.sh BOWLINE_BINARY
set -uo pipefail

BOWLINE=${1:?usage: backup_restore_test.sh BOWLINE_BINARY}
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
spaces_begin backup_restore_test
images=$work/images
spaces_prepare_images "$images" || abort "building the test guest into $images/cloud-images"

spaces_nat_network

flags=(--images-path "$images" --libvirt-uri qemu:///system --domain-type qemu --stop-timeout 30)
server_start "$BOWLINE" "$work/server-1.log" --data-dir "$work/data" "${flags[@]}" ||
  abort "bowline server"
alice=$("$BOWLINE" user create alice -o json | jq -r .token)
mallory=$("$BOWLINE" user create mallory -o json | jq -r .token)
[ "${alice:-null}" != null ] && [ "${mallory:-null}" != null ] || abort "user create alice, mallory"

spaces_tiny_template tiny
# kept: its domain runs on; moved: its domain goes, its disk stays; lost: both go.
for s in kept moved lost; do
  bw space create tiny "$s" --owner alice --wait --no-ready --timeout "$WAIT" || abort "space create $s"
done
kept_id=$("$BOWLINE" space info kept -o json | jq -r .id)
moved_disk=$(dom_disk "$prefix-moved")

# --- audit ----------------------------------------------------------------------------------
BOWLINE_TOKEN=$mallory "$BOWLINE" space stop "$kept_id" >/dev/null 2>&1
timeout 5 "$BOWLINE" space console kept </dev/null >/dev/null 2>&1
audit=$("$BOWLINE" admin audit --space kept -o json)
check_eq "audit: the create, by the admin, answered 202" "admin 202" \
  "$(jq -r '[.[] | select(.action == "POST /api/v1/spaces")][0] | "\(.user) \(.status)"' <<<"$audit")"
check_eq "audit: mallory's stop of alice's space, refused (404)" "mallory 404" \
  "$(jq -r ".[] | select(.action == \"POST /api/v1/spaces/$kept_id/stop\") | \"\(.user) \(.status)\"" <<<"$audit")"
check_eq "audit: the console socket, opened (101)" 101 \
  "$(jq -r ".[] | select(.action == \"GET /api/v1/spaces/$kept_id/console\") | .status" <<<"$audit" | head -n 1)"
check_eq "audit: every entry names its peer" 127.0.0.1 "$(jq -r '[.[].peer] | unique | join(",")' <<<"$audit")"
BOWLINE_TOKEN=$alice "$BOWLINE" admin audit >/dev/null 2>&1
check_eq "audit: alice may not read it (exit 4)" 4 "$?"

# --- backup ---------------------------------------------------------------------------------
check_cmd "backup: admin backup of the running server" bw admin backup "$work/b.tar"
check_eq "backup: the file is 0600" 600 "$(stat -c %a "$work/b.tar" 2>/dev/null)"
mkdir -p "$work/unpacked"
tar -xf "$work/b.tar" -C "$work/unpacked" 2>/dev/null
check_match "backup: tar reads its members, the store first and the manifest last" \
  "^bowline\.db admin\.token .*settings\.txt manifest\.json$" \
  "$(tar -tf "$work/b.tar" | tr '\n' ' ' | sed 's/ $//')"
check_eq "backup: the manifest's digest of the store is sha256sum's" \
  "$(sha256sum "$work/unpacked/bowline.db" | cut -d' ' -f1)" \
  "$(jq -r '.members[] | select(.name == "bowline.db") | .sha256' "$work/unpacked/manifest.json")"
BOWLINE_TOKEN=$alice "$BOWLINE" admin backup "$work/alice.tar" >/dev/null 2>&1
check_eq "backup: refused to alice (exit 4), no file" "4 no" "$? $([ -e "$work/alice.tar" ] && echo yes || echo no)"
out=$(timeout 20 "$BOWLINE" server --listen 127.0.0.1:0 --data-dir "$work/data" "${flags[@]}" 2>&1)
check_match "backup: a second server on the same data directory is refused" "uses the data directory" "$out"
out=$("$BOWLINE" admin restore "$work/b.tar" --data-dir "$work/data" --force 2>&1)
check_match "restore: refused under a running server" "uses the data directory" "$out"

# --- the data directory lost ------------------------------------------------------------------
server_stop
$VIRSH -q destroy "$prefix-moved" >/dev/null 2>&1
$VIRSH -q undefine "$prefix-moved" >/dev/null 2>&1
$VIRSH -q destroy "$prefix-lost" >/dev/null 2>&1
$VIRSH -q undefine "$prefix-lost" >/dev/null 2>&1
rm -rf "${images:?}/$prefix-lost" "$work/data"
out=$("$BOWLINE" admin restore "$work/b.tar" --data-dir "$work/data2" 2>&1)
check_match "restore: into a new data directory, with what it brought" "3 users, 1 templates, 3 spaces" "$out"
out=$("$BOWLINE" admin restore "$work/b.tar" --data-dir "$work/data2" 2>&1)
check_match "restore: a second one without --force is refused" "has a store already" "$out"

server_start "$BOWLINE" "$work/server-2.log" --data-dir "$work/data2" "${flags[@]}" ||
  abort "bowline server on the restored data directory"
check_cmd "restore: alice's token works" env BOWLINE_TOKEN="$alice" "$BOWLINE" space list
check_eq "restore: every space's record is back" "kept lost moved" \
  "$("$BOWLINE" space list --all -o json | jq -r '[.[].name] | sort | join(" ")')"
check_eq "restore: the space whose domain ran on is running" running \
  "$(space_wait_state kept '^running$' 60)"
check_eq "restore: the space whose domain went shows it" error "$(space_wait_state moved '^error$' 60)"
check_match "restore: ... saying its disk is there" "disk is still there" \
  "$(space_json moved | jq -r .error)"
check_eq "restore: the space whose disk went shows it" error "$(space_wait_state lost '^error$' 60)"
check_match "restore: ... saying the disk is gone" "its disk with it" "$(space_json lost | jq -r .error)"
check_cmd "restore: the moved space starts again" bw space start moved --wait --no-ready --timeout "$WAIT"
check_eq "restore: ... on the disk it had" "$moved_disk" "$(dom_disk "$prefix-moved")"
out=$("$BOWLINE" space start lost --wait --no-ready --timeout "$WAIT" 2>&1)
check_match "restore: the lost space refuses to start on a blank disk" "disk is gone" "$out"
check_cmd "restore: and no blank disk was made" test ! -e "$images/$prefix-lost/disk.qcow2"

log "total $(($(date +%s) - started)) s"
summary
