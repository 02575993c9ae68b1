#!/usr/bin/env bash
# Snapshots, clones and suspend on the real Debian 12 guest (scripts/build-debian-guest, Debian's own
# cloud-init and qemu-guest-agent) behind the real `bowline server`:
#   - snapshots: a file written, a snapshot taken while running (filesystems frozen through the
#     agent), the file deleted, a restore refused while running and done with --stop: the file
#     is back; with --memory, a `sleep infinity` started before the snapshot runs again after
#     the restore (--stop from running: powered off, its lease never released), with no boot
#     in between;
#   - clones: a clone of the running space as it is now boots with its own hostname, address,
#     host key and machine-id, has the source's files, and the source keeps running untouched;
#   - a clone for another owner (an admin's --owner): the new owner logs in, the previous
#     owner's key no longer does and their account is locked;
#   - a snapshot deleted is gone from libvirt and from the qcow2; the source deleted, the clone
#     (an overlay on the shared base image, not on the source) still runs;
#   - idle suspend (part 4): the template gets idleSuspend: 20s and the clone, left alone, is
#     suspended by itself (managed save: its QEMU process is gone); `bowline ssh` resumes it, and
#     a `sleep infinity` started before runs on with the uptime continuing; the saved state is
#     smaller than the page cache the guest had filled (dropped through the agent first); a stop of a
#     suspended space discards its saved state.
# Needs root, a running libvirtd (scripts/prepare-host), the packages of scripts/setup. Networks:
# an isolated libvirt network on a free /28 of 198.51.100.0/24; guests never route outside.
# Usage: debian_state_test.sh BOWLINE_BINARY
set -uo pipefail

BOWLINE=${1:?usage: debian_state_test.sh BOWLINE_BINARY}
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
GUEST_TRIES=40 GUEST_PAUSE=5 # a reboot or a clone's first boot under TCG
# Stats every 2 s so that idle suspend reacts in seconds. An idle guest under software
# emulation uses a few percent of its vCPUs (timer ticks emulated), more on a loaded host: the
# threshold here only has to tell "left alone" from "running a command".
debian_server_begin debian_state_test erin --stats-interval 2s --idle-cpu-percent 30

cat >"$work/deb.yaml" <<YAML
name: $prefix-\${{ .space.name }}
hostname: \${{ .space.name }}
image: debian-12
memory: 1G
cpus: 2
network:
  mode: nat
  bridge: $network
YAML
"$BOWLINE" template create "$work/deb.yaml" --name deb >/dev/null || abort "template create"


t=$(date +%s)
as_user space create deb vm1 --wait --timeout "$READY_TIMEOUT" >"$work/create.out" 2>&1 &
wait $! || { cat "$work/create.out"; abort "space create vm1 --wait"; }
log "vm1 ready in $(($(date +%s) - t)) s"
check_cmd "snapshot: the owner logs in over SSH" guest_retry vm1 true
secret="kept by a snapshot $tag"
check_cmd "snapshot: a file is written" guest vm1 "echo '$secret' > ~/kept.txt"

# --- a disk snapshot while running, restored with --stop ----------------------------------------
t0=$(date +%s.%N)
check_cmd "snapshot: space snapshot vm1 s1 (running)" as_user space snapshot vm1 s1
log "figure: snapshot of the running guest in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
list=$(as_user space snapshots vm1 -o json)
check_eq "snapshot: it is listed as taken while running" "s1 true false" \
  "$(jq -r '.[0] | "\(.name) \(.running) \(.memory)"' <<<"$list")"
check_eq "snapshot: the guest agent froze the filesystems (not best effort)" false \
  "$(jq -r '.[0].bestEffort' <<<"$list")"
check_cmd "snapshot: the guest still runs and writes (thawed)" guest vm1 "rm ~/kept.txt && sync && test ! -e ~/kept.txt"
out=$(as_user space restore vm1 s1 2>&1)
check_match "restore: refused while running, naming --stop" "--stop" "$out"
t=$(date +%s)
check_cmd "restore: space restore vm1 s1 --stop" as_user space restore vm1 s1 --stop --timeout 900
check_eq "restore: the space runs again" running "$(as_user space info vm1 -o json | jq -r .state)"
check_cmd "restore: SSH answers after the reboot" guest_retry vm1 true
log "restore with --stop and boot in $(($(date +%s) - t)) s"
check_eq "restore: the deleted file is back" "$secret" "$(guest vm1 cat kept.txt 2>>"$work/ssh.err")"

# --- with --memory: the running state comes back -----------------------------------------------
pid=$(guest vm1 'nohup sleep infinity </dev/null >/dev/null 2>&1 & echo $!' 2>>"$work/ssh.err")
check_match "memory: a sleep infinity runs" '^[0-9]+$' "$pid"
up_before=$(guest vm1 "cut -d' ' -f1 /proc/uptime" 2>>"$work/ssh.err")
t0=$(date +%s.%N)
check_cmd "memory: space snapshot vm1 s2 --memory" as_user space snapshot vm1 s2 --memory
log "figure: snapshot with 1 GiB of memory in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
check_cmd "memory: the sleep is killed" guest vm1 "kill $pid"
t0=$(date +%s.%N)
check_cmd "memory: space restore vm1 s2 --stop (running)" as_user space restore vm1 s2 --stop
log "figure: restore of the memory snapshot in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
check_eq "memory: the space is running at once" running "$(as_user space info vm1 -o json | jq -r .state)"
check_cmd "memory: the sleep started before the snapshot runs again" guest_retry vm1 "kill -0 $pid"
up_after=$(guest vm1 "cut -d' ' -f1 /proc/uptime" 2>>"$work/ssh.err")
check_cmd "memory: no boot in between (uptime $up_before -> $up_after)" \
  awk -v a="$up_before" -v b="$up_after" 'BEGIN { exit !(b + 0 >= a + 0) }'

# --- a clone of the running space, as it is now -----------------------------------------------
vm1_ip=$(address_of vm1)
vm1_machine=$(guest vm1 cat /etc/machine-id 2>>"$work/ssh.err")
t=$(date +%s)
as_user space clone vm1 vm2 --timeout "$READY_TIMEOUT" >"$work/clone.out" 2>&1 ||
  { cat "$work/clone.out"; abort "space clone vm1 vm2"; }
log "vm2 cloned and started in $(($(date +%s) - t)) s"
check_eq "clone: the source kept running" running "$(as_user space info vm1 -o json | jq -r .state)"
check_cmd "clone: the owner logs in to vm2 (its own host key, pinned)" guest_retry vm2 true
check_eq "clone: its hostname is its own" vm2 "$(guest vm2 hostname 2>>"$work/ssh.err")"
vm2_ip=$(address_of vm2)
check_cmd "clone: its address is its own ($vm2_ip, vm1 $vm1_ip)" test -n "$vm2_ip" -a "$vm2_ip" != "$vm1_ip"
check_eq "clone: it has the source's file" "$secret" "$(guest vm2 cat kept.txt 2>>"$work/ssh.err")"
vm2_machine=$(guest vm2 cat /etc/machine-id 2>>"$work/ssh.err")
check_cmd "clone: its machine-id is its own" test -n "$vm2_machine" -a "$vm2_machine" != "$vm1_machine"
keys1=$(as_user space info vm1 -o json | jq -r '.info.connect.hostKeyFingerprint')
keys2=$(as_user space info vm2 -o json | jq -r '.info.connect.hostKeyFingerprint')
check_cmd "clone: its SSH host key is its own" test "$keys1" != "$keys2"
check_cmd "clone: the source is untouched (SSH, its file)" guest vm1 "test -f ~/kept.txt"
check_eq "clone: no short-lived snapshot is left on the source" "s1 s2" \
  "$(as_user space snapshots vm1 -o json | jq -r '[.[].name] | join(" ")')"

# --- a clone for another owner (an admin's): the new owner's account, the old one's keys gone ----
ssh-keygen -q -t ed25519 -N '' -C "frank@bowline-e2e" -f "$work/id_frank" || abort "ssh-keygen"
out=$("$BOWLINE" user create frank --permission use-ssh) || abort "user create frank: $out"
frank_token=$(sed -n 's/.*token (shown once): *\([^ ]*\).*/\1/p' <<<"$out")
as_frank() { BOWLINE_TOKEN=$frank_token "$BOWLINE" "$@"; }
as_frank user add-key frank "$work/id_frank.pub" >/dev/null || abort "user add-key frank"
vm1_id=$(as_user space info vm1 -o json | jq -r .id)
t=$(date +%s)
"$BOWLINE" space clone "$vm1_id" vm3 --owner frank --timeout "$READY_TIMEOUT" >"$work/clone3.out" 2>&1 ||
  { cat "$work/clone3.out"; abort "space clone vm1 vm3 --owner frank"; }
log "vm3 (frank's) cloned and started in $(($(date +%s) - t)) s"
vm3_ip=$(as_frank space info vm3 -o json | jq -r '.info.address // empty')
as_frank known-hosts vm3.bowline >"$work/known_vm3" 2>/dev/null
# USER KEY COMMAND...: over SSH to vm3 with its pinned host key
vm3_ssh() {
  local who=$1 key=$2
  shift 2
  ssh -i "$key" -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=yes \
    -o UserKnownHostsFile="$work/known_vm3" -o HostKeyAlias=vm3.bowline -o LogLevel=ERROR \
    -o ConnectTimeout=20 -o BindInterface="$bridge" "$who@$vm3_ip" "$@"
}
ok_frank=1
for i in $(seq 1 40); do vm3_ssh frank "$work/id_frank" true 2>>"$work/ssh.err" && { ok_frank=0; break; }; sleep 5; done
check_eq "owner clone: frank logs in to his clone" 0 "$ok_frank"
check_eq "owner clone: it has the source's files under the old home" "$secret" \
  "$(vm3_ssh frank "$work/id_frank" sudo cat /home/$user/kept.txt 2>>"$work/ssh.err")"
check_not_cmd "owner clone: the previous owner's key no longer logs in" vm3_ssh "$user" "$work/id_ed25519" true
check_match "owner clone: the previous owner's account is locked" "^$user L" \
  "$(vm3_ssh frank "$work/id_frank" sudo passwd -S "$user" 2>>"$work/ssh.err")"

# --- snapshot delete, and the source's delete leaves the clone -----------------------------------
check_cmd "snapshot-delete: space snapshot-delete vm1 s1" as_user space snapshot-delete vm1 s1
check_eq "snapshot-delete: only s2 is listed" s2 "$(as_user space snapshots vm1 -o json | jq -r '[.[].name] | join(" ")')"
disk1=$(dom_disk "$prefix-vm1")
check_no_match "snapshot-delete: the qcow2 holds no s1" ' s1 ' "$(qemu-img snapshot -U -l "$disk1")"
check_cmd "delete: space delete vm1 --wait (with its snapshot)" as_user space delete vm1 --wait --timeout 300
check_cmd "delete: vm1's domain is gone" no_domain "$prefix-vm1"
check_cmd "delete: the clone still answers" guest vm2 true

# --- idle suspend: left alone, the clone is suspended by itself; bowline ssh resumes it ---------
check_cmd "suspend: frank's clone is deleted (one guest left)" "$BOWLINE" space delete "$(as_frank space info vm3 -o json | jq -r .id)" --wait --timeout 300
pid=$(guest vm2 'nohup sleep infinity </dev/null >/dev/null 2>&1 & echo $!' 2>>"$work/ssh.err")
check_match "suspend: a sleep infinity runs in vm2" '^[0-9]+$' "$pid"
up_before=$(guest vm2 "cut -d' ' -f1 /proc/uptime" 2>>"$work/ssh.err")
# 400 MiB of random data through the guest's page cache: what a suspend would save with it,
# unless it drops the cache first (server.idle.trim_guest_cache, free page reporting).
cached_kib=$(guest vm2 "head -c 400M /dev/urandom > /var/tmp/fill && sync && awk '/^Cached:/ { print \$2 }' /proc/meminfo" 2>>"$work/ssh.err")
check_match "suspend: the guest's page cache holds the 400 MiB ($cached_kib KiB)" '^[0-9]{6,}$' "$cached_kib"
sed 's/^image: debian-12$/image: debian-12\nidleSuspend: 20s/' "$work/deb.yaml" >"$work/deb-idle.yaml"
"$BOWLINE" template update "$work/deb-idle.yaml" --name deb >/dev/null || abort "template update (idleSuspend)"
check_eq "suspend: space info says after how long" "20" "$(as_user space info vm2 -o json | jq -r .info.idleSuspend.after)"
t=$(date +%s)
state=""
for i in $(seq 1 90); do
  state=$(as_user space info vm2 -o json | jq -r .state)
  [ "$state" = suspended ] && break
  sleep 2
done
log "figure: vm2 suspended by itself $(($(date +%s) - t)) s after idleSuspend: 20s was set"
check_eq "suspend: vm2 is suspended by itself" suspended "$state"
info=$(as_user space info vm2 -o json)
check_eq "suspend: it says why" "idle for 20s" "$(jq -r .info.suspended.reason <<<"$info")"
check_match "suspend: space info shows it" 'suspended: +idle for 20s' "$(as_user space info vm2)"
check_not_cmd "suspend: the host's QEMU process for vm2 is gone" pgrep -f "guest=$prefix-vm2,"
check_match "suspend: libvirt keeps its managed save" "Managed save: *yes" "$(virsh -c qemu:///system dominfo "$prefix-vm2")"
saved_kib=$(($(stat -c %s "/var/lib/libvirt/qemu/save/$prefix-vm2.save" 2>/dev/null || echo 0) / 1024))
log "figure: the saved state is $((saved_kib / 1024)) MiB; the page cache before was $((cached_kib / 1024)) MiB"
check_cmd "suspend: the saved state ($saved_kib KiB) is smaller than the page cache was: it was dropped first" \
  test "$saved_kib" -gt 0 -a "$saved_kib" -lt "${cached_kib:-0}"
api_get() { curl -s -N --max-time "${2:-10}" -H "Authorization: Bearer $BOWLINE_TOKEN" "$BOWLINE_SERVER$1"; }
check_match "suspend: /metrics counts it" 'bowline_spaces\{state="suspended"\} 1' "$(api_get /metrics)"
t0=$(date +%s.%N)
mkdir -p "$work/home" # bowline ssh keeps its known hosts under HOME
out=$(HOME=$work/home as_user ssh vm2 -- -i "$work/id_ed25519" -o IdentitiesOnly=yes -o BatchMode=yes \
  -o ConnectTimeout=60 "kill -0 $pid && cut -d' ' -f1 /proc/uptime" 2>&1)
resumed=$?
log "figure: bowline ssh to the suspended vm2 answered in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
check_eq "resume: bowline ssh resumed it and the sleep started before runs on" 0 "$resumed"
up_after=$(tail -n 1 <<<"$out")
check_cmd "resume: the uptime continues ($up_before -> $up_after, no boot)" \
  awk -v a="$up_before" -v b="$up_after" 'BEGIN { exit !(b + 0 >= a + 0) }'
check_eq "resume: vm2 is running" running "$(as_user space info vm2 -o json | jq -r .state)"
# The restore's QEMU truncated the console log; the guest did not boot again and is still ready.
check_eq "resume: vm2 is still ready (cloud-init's line kept from before the suspend)" true \
  "$(as_user space info vm2 -o json | jq -r .info.readiness.finished)"
check_match "resume: the event says what woke it" 'tunnel to port 22' \
  "$(api_get '/api/v1/events?since=0' 3 | grep 'space.resumed' | tail -n 1)"
"$BOWLINE" template update "$work/deb.yaml" --name deb >/dev/null || abort "template update (no idleSuspend)"
check_cmd "suspend: space suspend vm2 (asked)" as_user space suspend vm2 --wait
check_match "suspend: asked, it says by whom" "asked by $user" "$(as_user space info vm2 -o json | jq -r .info.suspended.reason)"
check_cmd "stop: a suspended space stops" as_user space stop vm2 --wait --timeout 120
check_eq "stop: vm2 is stopped" stopped "$(as_user space info vm2 -o json | jq -r .state)"
check_match "stop: its saved state is gone (the next start boots)" "Managed save: *no" "$(virsh -c qemu:///system dominfo "$prefix-vm2")"
[ -s "$work/ssh.err" ] && sed 's/^/  ssh: /' "$work/ssh.err" | tail -20

log "total $(($(date +%s) - started)) s"
summary
