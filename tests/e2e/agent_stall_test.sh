#!/usr/bin/env bash
# security: nothing a guest can stall. Four tiny guests run a guest agent of their own that
# answers libvirt's guest-sync and nothing else (so libvirt's wait for a freeze's answer is the
# only bound there is). Their owner snapshots all four at once, through the real server and CLI
# on the real libvirtd; meanwhile another user creates a fifth space. Each snapshot ends within
# the documented bound (the freeze's wait, the thaw's wait, libvirt's guest-sync), best effort
# with the agent named as the reason, and the guest was asked to thaw; the fifth space is created
# and running while the four are still stalled, and space info and the list answer at once.
# Networks: an isolated libvirt network on a free /27 of 198.51.100.0/24 (lib/net.sh).
# Everything made here starts with bwe2e and is removed on exit, also on failure.
# Usage: agent_stall_test.sh BOWLINE_BINARY
set -uo pipefail

BOWLINE=${1:?usage: agent_stall_test.sh BOWLINE_BINARY}
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

WAIT=${WAIT:-300}
# The server's wait for an agent's answer (LibvirtOptions::agent_timeout) plus libvirt's own 5 s
# for guest-sync, once for the freeze and once for the thaw after it; and the snapshot itself
# (memory and disks of a 256 MiB guest under emulation), generously on a loaded host.
AGENT_TIMEOUT=15
BOUND=$((2 * (AGENT_TIMEOUT + 5) + 30))
spaces_begin agent_stall_test
images=$work/images
spaces_prepare_images "$images" || abort "building the test guest into $images/cloud-images"

nsub=$(net_free_subnet 27) || abort "no free /27 in 198.51.100.0/24"
npre=${nsub%.*}
nbase=${nsub##*.}
natbr=bwe2es$tag
natnet=$prefix-stall
net_isolated_create "$natnet" "$natbr" "$npre.$((nbase + 1))/27" "$npre.$((nbase + 10))" \
  "$npre.$((nbase + 20))" || abort "isolated network $natnet"

server_start "$BOWLINE" "$work/server.log" --data-dir "$work/data" --images-path "$images" \
  --libvirt-uri qemu:///system --domain-type qemu || abort "bowline server"

# The stalling agent: on the guest agent's virtio port, answer guest-sync with its id, and
# nothing else (every other command is written on the console and left unanswered).
cat >"$work/stall.yaml" <<YAML
name: $prefix-\${{ .space.name }}
image: $SPACES_IMAGE
memory: 256M
cpus: 1
network:
  mode: nat
  bridge: $natnet
cloudInit: |
  #cloud-config
  runcmd:
    - |
      dev=""
      for p in /sys/class/virtio-ports/*; do
        [ "\$(cat \$p/name 2>/dev/null)" = org.qemu.guest_agent.0 ] && dev=/dev/\${p##*/}
      done
      echo "TEST: stalling agent on \${dev:-nothing}"
      [ -n "\$dev" ] && (
        exec 3<>"\$dev"
        while :; do
          # The port reads as ended while libvirt is not connected: the agent keeps it open.
          read -r line <&3 || { sleep 0.2; continue; }
          case \$line in
            *guest-sync*)
              id=\$(echo "\$line" | sed -n 's/.*"id": *\([0-9]*\).*/\1/p')
              printf '{"return": %s}\n' "\$id" >&3 ;;
            *) echo "TEST: stalling agent ignores \$line" ;;
          esac
        done
      ) </dev/null >/dev/console 2>&1 &
YAML
cat >"$work/plain.yaml" <<YAML
name: $prefix-\${{ .space.name }}
image: $SPACES_IMAGE
memory: 256M
cpus: 1
network:
  mode: nat
  bridge: $natnet
YAML
for t in stall plain; do
  bw template create "$work/$t.yaml" --name "$t" >/dev/null || abort "template create $t"
done
five_token=$("$BOWLINE" user create fifth -o json | jq -r '.token')
[ -n "$five_token" ] && [ "$five_token" != null ] || abort "user create fifth"

pids=()
for i in 1 2 3 4; do
  "$BOWLINE" space create stall "s$i" --wait --timeout "$WAIT" >"$work/s$i.out" 2>&1 &
  pids+=($!)
done
for i in 1 2 3 4; do
  wait "${pids[$((i - 1))]}" || { sed 's/^/    /' "$work/s$i.out"; abort "space create s$i"; }
done
for i in 1 2 3 4; do
  console=$images/$prefix-s$i/console.log
  wait_for "$console" '^TEST: stalling agent on /dev/vport' 120 ||
    { show_console "$console"; abort "s$i runs the stalling agent"; }
done
pass "four spaces run an agent that answers only guest-sync"

# --- four snapshots at once, and a fifth user's create ------------------------------------------
now() { date +%s.%N; }
for i in 1 2 3 4; do
  (
    t0=$(now)
    "$BOWLINE" space snapshot "s$i" stalled --timeout "$WAIT" >"$work/snap$i.out" 2>&1
    echo "$? $t0 $(now)" >"$work/snap$i.done"
  ) &
done
# Until libvirt has asked every guest to freeze: the four stall from here on.
for i in 1 2 3 4; do
  wait_for "$images/$prefix-s$i/console.log" 'stalling agent ignores .*guest-fsfreeze-freeze' 60 ||
    fail "s$i's agent was asked to freeze"
done
stalled=$(now)
BOWLINE_TOKEN=$five_token "$BOWLINE" space create plain five >"$work/five.out" 2>&1 ||
  { sed 's/^/    /' "$work/five.out"; fail "the fifth user's space create was accepted"; }
state=$(BOWLINE_TOKEN=$five_token space_wait_state five '^(running|error)$' 120)
running_at=$(now)
still=0
for i in 1 2 3 4; do [ -e "$work/snap$i.done" ] || still=$((still + 1)); done
check_eq "the fifth user's space runs" running "$state"
check_eq "  ... while all four snapshots are still stalled ($(awk -v a="$stalled" -v b="$running_at" 'BEGIN { printf "%.1f", b - a }') s after the freezes were asked)" 4 "$still"
# Nothing a user reads waits on a guest.
t0=$(now)
"$BOWLINE" space info s1 >/dev/null 2>&1 && "$BOWLINE" space list >/dev/null 2>&1
took=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
check_cmd "space info and space list answer within 3 s while the agents stall (${took} s)" \
  awk -v t="$took" 'BEGIN { exit !(t < 3) }'

for i in 1 2 3 4; do
  for _ in $(seq 1 $((BOUND + 60))); do [ -e "$work/snap$i.done" ] && break; sleep 1; done
  read -r rc t0 t1 <"$work/snap$i.done" 2>/dev/null || rc=none
  took=$(awk -v a="${t0:-0}" -v b="${t1:-0}" 'BEGIN { printf "%.1f", b - a }')
  log "s$i: snapshot ended after $took s (exit $rc)"
  check_eq "s$i: the snapshot succeeded" 0 "$rc"
  [ "$rc" = 0 ] || sed 's/^/    /' "$work/snap$i.out"
  check_cmd "s$i: ... within the bound of $BOUND s ($took s)" awk -v t="$took" -v b="$BOUND" 'BEGIN { exit !(t <= b) }'
  check_eq "s$i: ... best effort (the filesystems were not frozen)" true \
    "$("$BOWLINE" space snapshots "s$i" -o json | jq -r '.[0].bestEffort')"
  check_cmd "s$i: the guest was asked to thaw after the freeze timed out" \
    expect "$images/$prefix-s$i/console.log" 'stalling agent ignores .*guest-fsfreeze-thaw' "thaw"
done
reasons=$(python3 "$here/lib/events.py" "$BOWLINE_SERVER" "$BOWLINE_TOKEN" | grep '^snapshot.created ')
log "why: $(head -n 1 <<<"$reasons")"
check_eq "every snapshot's event says why it is best effort (the guest agent)" 4 \
  "$(grep -c '"bestEffortReason": "the guest.s filesystems could not be frozen: .*[Aa]gent' <<<"$reasons")"
summary
