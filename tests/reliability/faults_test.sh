#!/usr/bin/env bash
# Faults besides a crash of the server, each with the outcome bowline promises (docs/reliability.md),
# through the real `bowline server` on qemu:///system with the tiny test guest:
#   qemu-killed-always   QEMU killed (SIGKILL) under a running runStrategy Always space: the
#                        server sees the crash and starts it again (a new QEMU, event
#                        space.restart "crashed"), the space ends running
#   qemu-killed-manual   the same under runStrategy Manual: the space shows stopped and stays so
#   truncated-overlay    a stopped space's disk.qcow2 cut to 100 bytes (half its header): its
#                        start fails with the
#                        reason (the disk), the other space keeps running untouched
#   corrupted-overlay    its qcow2 header overwritten: the same
#   guard-table-gone     the guest guard's nftables table deleted (what `nft flush ruleset` does
#                        to it, without flushing the shared host's other rules): the server writes
#                        it again with the running space's chains within its check interval
#   libvirtd-away/back   libvirtd killed (SIGKILL): a start fails saying so instead of hanging,
#                        the running guest runs on; libvirtd started again: the server goes on
# Usage: faults_test.sh BOWLINE_BINARY
# Prints one ok/FAIL line per check and "N passed, M failed"; exit status 1 when a check failed.
set -uo pipefail

BOWLINE=${1:?usage: faults_test.sh BOWLINE_BINARY}
here=$(cd "$(dirname "$0")" && pwd)
e2e=$here/../e2e
# shellcheck source=../e2e/lib/net.sh
. "$e2e/lib/net.sh"
# shellcheck source=../e2e/lib/console.sh
. "$e2e/lib/console.sh"
# shellcheck source=../e2e/lib/check.sh
. "$e2e/lib/check.sh"
# shellcheck source=../e2e/lib/server.sh
. "$e2e/lib/server.sh"
# shellcheck source=../e2e/lib/spaces.sh
. "$e2e/lib/spaces.sh"

WAIT=${WAIT:-120}
spaces_begin faults_test
images=$work/images
spaces_prepare_images "$images" || abort "building the test guest into $images/cloud-images"
sub=$(net_free_subnet 28) || abort "no free /28 in 198.51.100.0/24"
pre=${sub%.*}
base=${sub##*.}
bridge=bwe2eb$tag
gw=$pre.$((base + 1))
net_bridge_create "$bridge" "$gw/28" || abort "bridge $bridge"
server_start "$BOWLINE" "$work/server.log" --data-dir "$work/data" --images-path "$images" \
  --libvirt-uri qemu:///system --domain-type qemu --stop-timeout 5 --resolvers "$gw" ||
  abort "bowline server"
template() { # RUN_STRATEGY
  cat <<YAML
name: $prefix-\${{ .space.name }}
image: $SPACES_IMAGE
memory: 128M
cpus: 1
runStrategy: $1
network:
  mode: bridged
  bridge: $bridge
  cidr: $sub/28
  ip_range_start: $pre.$((base + 2))
  ip_range_end: $pre.$((base + 14))
  gateway: $gw
YAML
}
template Always >"$work/always.yaml"
template Manual >"$work/manual.yaml"
for t in always manual; do
  "$BOWLINE" template create "$work/$t.yaml" --name "$t" >/dev/null || abort "template create $t"
done
"$BOWLINE" space create always a1 >/dev/null 2>&1 || abort "space create a1"
"$BOWLINE" space create manual m1 >/dev/null 2>&1 || abort "space create m1"
for s in a1 m1; do
  [ "$(space_wait_state "$s" '^(running|error)$' "$WAIT")" = running ] || abort "$s did not run"
done
qemu_pid() { cat "/run/libvirt/qemu/$prefix-$1.pid" 2>/dev/null; }
# until SPACE runs under a QEMU other than PID
new_qemu() {
  local deadline=$(($(date +%s) + $3)) p
  while [ "$(date +%s)" -lt "$deadline" ]; do
    p=$(qemu_pid "$1")
    [ -n "$p" ] && [ "$p" != "$2" ] && [ "$(space_json "$1" | jq -r .state)" = running ] && return 0
    sleep 0.5
  done
  return 1
}

# --- QEMU killed under running spaces --------------------------------------------------------
a1_pid=$(qemu_pid a1)
m1_pid=$(qemu_pid m1)
kill -9 "$a1_pid" "$m1_pid"
check_cmd "qemu-killed-always: a1 runs again under a new QEMU" new_qemu a1 "$a1_pid" "$WAIT"
check_eq "qemu-killed-manual: m1 shows stopped" stopped "$(space_wait_state m1 '^stopped$' 30)"
sleep 3
check_eq "qemu-killed-manual: m1 stays stopped (its domain shut off)" "stopped shut off" \
  "$(space_json m1 | jq -r .state) $($VIRSH domstate "$prefix-m1" 2>&1)"
events=$(python3 "$e2e/lib/events.py" "$BOWLINE_SERVER" "$BOWLINE_TOKEN")
check_match "qemu-killed-always: the event history says a1 restarted after a crash" \
  'space\.restart .*crashed' "$(grep '^space\.restart' <<<"$events")"

# --- a truncated, then a corrupted overlay -----------------------------------------------------
disk=$images/$prefix-m1/disk.qcow2
[ -f "$disk" ] || abort "m1 has no $disk"
a1_pid=$(qemu_pid a1)
cp "$disk" "$work/m1-disk.qcow2"
truncate -s 100 "$disk"
out=$("$BOWLINE" space start m1 --wait --timeout "$WAIT" 2>&1)
check_eq "truncated-overlay: the start fails (exit code 1)" 1 "$?"
check_match "truncated-overlay: ... saying why (QEMU's words)" 'qcow2 header too short' "$out"
check_no_match "truncated-overlay: m1 is not shown running" '^running$' "$(space_json m1 | jq -r .state)"
check_eq "truncated-overlay: a1 keeps running under the same QEMU" "running $a1_pid" \
  "$(space_json a1 | jq -r .state) $(qemu_pid a1)"
bw space stop m1 --wait --timeout "$WAIT" # in case the start went through
cp "$work/m1-disk.qcow2" "$disk"
printf 'garbage garbage garbage garbage' | dd of="$disk" bs=1 seek=0 conv=notrunc status=none
out=$("$BOWLINE" space start m1 --wait --timeout "$WAIT" 2>&1)
check_eq "corrupted-overlay: the start fails (exit code 1)" 1 "$?"
check_match "corrupted-overlay: ... saying why (QEMU's words)" 'not in qcow2 format' "$out"
check_eq "corrupted-overlay: a1 keeps running under the same QEMU" "running $a1_pid" \
  "$(space_json a1 | jq -r .state) $(qemu_pid a1)"
log "what a start on the corrupted overlay said: $(tail -n 2 <<<"$out" | tr '\n' ' ')"

# --- the guest guard's table gone --------------------------------------------------------------
table=bowline_$(cat "$work/data/guest-guard.tag")
tap=$($VIRSH domiflist "$prefix-a1" | awk 'NR > 2 && $1 != "" { print $1; exit }')
check_cmd "guard-table-gone: a1's chain is in $table before" \
  sh -c "nft list chain bridge $table out_$tap >/dev/null 2>&1"
nft delete table bridge "$table"
guard_back() {
  local deadline=$(($(date +%s) + 60))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    nft list chain bridge "$table" "out_$tap" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  return 1
}
check_cmd "guard-table-gone: the server writes $table again with a1's chains" guard_back

# --- libvirtd killed, then started again -------------------------------------------------------
# QEMU does not belong to libvirtd: guests run on without it. Meanwhile a request that needs it
# fails saying so (never hangs); once it is back the server goes on through a new connection.
cp "$work/m1-disk.qcow2" "$disk"
bw space stop m1 --wait --timeout "$WAIT" || true
a1_pid=$(qemu_pid a1)
# Whatever happens from here, the machine's libvirtd runs again before this test ends: every
# later test needs it (and the clean-up below it too).
trap 'pgrep -x libvirtd >/dev/null || libvirtd -d; _spaces_cleanup' EXIT
kill -9 $(pidof libvirtd)
out=$(timeout 120 "$BOWLINE" space start m1 --wait --timeout 90 2>&1)
check_eq "libvirtd-away: a start fails (exit code 1) rather than wait for ever" 1 "$?"
check_match "libvirtd-away: ... saying libvirt is away" '[Ll]ibvirt|connect' "$out"
log "what the start said while libvirtd was away: $(tail -n 1 <<<"$out")"
libvirtd -d
libvirt_back() {
  local deadline=$(($(date +%s) + 60))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    $VIRSH -q list >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  return 1
}
libvirt_back || abort "libvirtd did not come back"
check_eq "libvirtd-back: a1 ran on under the same QEMU" "running $a1_pid" \
  "$(space_json a1 | jq -r .state) $(qemu_pid a1)"
check_cmd "libvirtd-back: the server goes on: m1 starts" bw space start m1 --wait --timeout "$WAIT"
check_cmd "libvirtd-back: ... and stops" bw space stop m1 --wait --timeout "$WAIT"

for s in a1 m1; do bw space delete "$s" --wait --timeout "$WAIT" || true; done
server_stop TERM
summary
