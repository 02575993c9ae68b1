#!/usr/bin/env bash
# End-to-end proof of `external: true` (PortList) on libvirt, through the real server and CLI,
# with the tiny test guest on an isolated libvirt network (no route off the host, none handed to
# the guest): a port the guest listens on is published on a port of the host, reached from a
# client in a network namespace of its own (a veth pair: it sees only the host's address on that
# link), and the forward is gone once the space stops, back after a start on the same host port,
# and gone with the space. A port the template does not list is never published.
# Everything made here starts with bwe2e or bwx and is removed on exit, also on failure.
# Usage: external_ports_test.sh BOWLINE_BINARY
set -uo pipefail

BOWLINE=${1:?usage: external_ports_test.sh BOWLINE_BINARY}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/net.sh
. "$here/lib/net.sh"
# shellcheck source=lib/check.sh
. "$here/lib/check.sh"
# shellcheck source=lib/server.sh
. "$here/lib/server.sh"
# shellcheck source=lib/spaces.sh
. "$here/lib/spaces.sh"

WAIT=${WAIT:-300}
spaces_begin external_ports_test
command -v nft >/dev/null || abort "missing nft (scripts/setup installs nftables)"
images=$work/images
spaces_prepare_images "$images" || abort "building the test guest into $images/cloud-images"

# The guest's network: isolated (DHCP only).
nsub=$(net_free_subnet 28) || abort "no free /28 in 198.51.100.0/24"
npre=${nsub%.*}
nbase=${nsub##*.}
natbr=bwxn$tag
natnet=$prefix-nat
net_isolated_create "$natnet" "$natbr" "$npre.$((nbase + 1))/28" "$npre.$((nbase + 2))" \
  "$npre.$((nbase + 14))" || abort "isolated network $natnet"

# The client: a network namespace joined to the host by a veth pair in its own /29. The host has
# two addresses there: host_ip, set aside for guests' ports (server.external_address), and
# ui_ip, standing for the address the web UI is reached by, where no guest port may answer.
csub=$(net_free_subnet 29) || abort "no free /29 for the client"
cpre=${csub%.*}
cbase=${csub##*.}
host_ip=$cpre.$((cbase + 1))
client_ip=$cpre.$((cbase + 2))
ui_ip=$cpre.$((cbase + 3))
ns=bwx-ns-$tag
veth=bwxh$tag
# The host must forward IPv4 (bowline does not turn it on by itself; libvirt's NAT networks do).
# The isolated network's guest has no route out and libvirt rejects its forwarding, the
# namespace has no default route: turning it on here lets nothing else through.
forwarding_before=$(cat /proc/sys/net/ipv4/ip_forward)
_x_cleanup() {
  sysctl -qw net.ipv4.ip_forward="$forwarding_before"
  ip netns del "$ns" 2>/dev/null
  ip link del "$veth" 2>/dev/null
  _spaces_cleanup
}
trap _x_cleanup EXIT
sysctl -qw net.ipv4.ip_forward=1 || abort "net.ipv4.ip_forward=1"
ip netns add "$ns" || abort "netns $ns"
ip link add "$veth" type veth peer name bwxc$tag || abort "veth"
ip link set "bwxc$tag" netns "$ns" || abort "veth into $ns"
ip addr add "$host_ip/29" dev "$veth" && ip addr add "$ui_ip/29" dev "$veth" &&
  ip link set "$veth" up || abort "host side of the veth"
ip netns exec "$ns" ip addr add "$client_ip/29" dev "bwxc$tag" &&
  ip netns exec "$ns" ip link set "bwxc$tag" up && ip netns exec "$ns" ip link set lo up ||
  abort "client side of the veth"
log "guests on $nsub/28 ($natbr); client $client_ip in $ns reaches the host at $host_ip"

# A port range of its own, away from anyone else's server on this host.
first=$((40000 + (RANDOM % 200) * 100))
# security: the web UI's address is never the guests' (its cookies go to every port of it).
out=$(timeout 30 "$BOWLINE" server --listen "$ui_ip:0" --external-address "$ui_ip" \
  --data-dir "$work/refused" --images-path "$images" --libvirt-uri test:///default 2>&1)
check_eq "security: a server whose external address is the UI's refuses to start: exit code" 2 "$?"
check_match "security: ... saying why" \
  "server.external_address \\(--external-address\\) is the web UI's address \\(server.listen\\): guests' ports there would receive its session cookies" \
  "$out"
server_start "$BOWLINE" "$work/server.log" --data-dir "$work/data" --images-path "$images" \
  --libvirt-uri qemu:///system --domain-type qemu --stop-timeout 30 \
  --external-ports "$first-$((first + 99))" --external-address "$host_ip" || abort "bowline server"

# The guest answers on 7000 (published) and 7001 (not listed).
cat >"$work/web.yaml" <<YAML
name: $prefix-\${{ .space.name }}
image: $SPACES_IMAGE
memory: 256M
cpus: 1
network:
  mode: nat
  bridge: $natnet
external: true
externalPorts: [7000]
cloudInit: |
  #cloud-config
  runcmd:
    - '(while true; do echo "hello from \$(hostname) on 7000" | nc -l -p 7000; done) >/dev/null 2>&1 &'
    - '(while true; do echo "hello on 7001" | nc -l -p 7001; done) >/dev/null 2>&1 &'
YAML
bw template create "$work/web.yaml" --name web >/dev/null || abort "template create"
bw space create web box --wait --timeout "$WAIT" || abort "space create --wait"

# from the namespace: what HOST_PORT on the host answers (empty when nothing does)
reach() { ip netns exec "$ns" busybox nc -w 3 "$host_ip" "$1" </dev/null 2>/dev/null; }
reach_ui() { ip netns exec "$ns" busybox nc -w 3 "$ui_ip" "$1" </dev/null 2>/dev/null; }
await_reach() { # PORT: up to 60 s (the forward follows the guest's DHCP lease)
  local i out
  for i in $(seq 60); do
    out=$(reach "$1")
    [ -n "$out" ] && { echo "$out"; return 0; }
    sleep 1
  done
  return 1
}

info=$("$BOWLINE" space info box)
external=$(awk -F': +' '$1 == "external" { print $2 }' <<<"$info")
check_eq "space info shows the published port and its address" \
  "tcp $first -> 7000 (forwarded on $host_ip)" "$external"
host_port=$("$BOWLINE" space info box -o json | jq -r '.info.externalPorts[0].hostPort')
check_eq "the first port of the range is the space's" "$first" "$host_port"
answer=$(await_reach "$host_port")
check_match "a client in another namespace reaches the guest's port 7000 through the host" \
  "^hello from .* on 7000$" "$answer"
if [ -z "$answer" ]; then # what the host had, for the log
  log "nft: $(nft list table ip bowline 2>&1 | tr '\n' ' ')"
  log "FORWARD: $(iptables -S FORWARD | head -n 6 | tr '\n' ' ')"
  log "guest: $("$BOWLINE" space info box | awk -F': +' '$1 == "ip" { print $2 }'), console: $(tail -n 8 "$images/$prefix-box/console.log" | tr '\n' ' ')"
  [ -n "${EXTERNAL_PORTS_PAUSE:-}" ] && sleep "$EXTERNAL_PORTS_PAUSE"
fi
check_cmd "the forward is in bowline's nftables table" \
  bash -c "nft list table ip bowline | grep -q 'dport $host_port .*dnat to .*:7000'"
check_not_cmd "the unlisted port 7001 has no forward" \
  bash -c "nft list table ip bowline | grep -q ':7001'"
check_eq "and no other port of the range answers" "" "$(reach $((host_port + 1)))"
check_eq "security: the port does not answer on the host's other address ($ui_ip, the UI's)" "" \
  "$(reach_ui "$host_port")"

# security: the forward stays. A firewall reload (here: bowline's table alone deleted, so other
# tests' rules stay) is undone within seconds, and recorded.
nft delete table ip bowline || fail "nft delete table ip bowline"
back=""
for i in $(seq 1 75); do
  nft list table ip bowline 2>/dev/null | grep -q "dport $host_port " &&
    { back=$(awk -v i="$i" 'BEGIN { print i * 0.2 }'); break; }
  sleep 0.2
done
check_match "security: the deleted forward is back within 15 s (after ${back:-never} s)" '^[0-9.]+$' "$back"
check_match "security: ... and reaches the guest again" "on 7000$" "$(await_reach "$host_port")"
check_match "security: ... and the server recorded it (firewall.restored)" \
  '^firewall.restored .*"table": "ip bowline"' \
  "$(python3 "$here/lib/events.py" "$BOWLINE_SERVER" "$BOWLINE_TOKEN" | grep '^firewall.restored' | head -n 1)"

bw space stop box --wait --timeout "$WAIT" || fail "space stop --wait"
check_eq "after a stop nothing answers on $host_port" "" "$(reach "$host_port")"
check_not_cmd "after a stop the forward is gone" \
  bash -c "nft list table ip bowline 2>/dev/null | grep -q 'dport $host_port '"

bw space start box --wait --timeout "$WAIT" || fail "space start --wait"
check_eq "after a start the space keeps its host port" "$host_port" \
  "$("$BOWLINE" space info box -o json | jq -r '.info.externalPorts[0].hostPort')"
check_match "after a start the guest answers again" "on 7000$" "$(await_reach "$host_port")"

bw space delete box --wait --timeout "$WAIT" || fail "space delete --wait"
check_eq "after a delete nothing answers" "" "$(reach "$host_port")"
check_not_cmd "after a delete the forward is gone" \
  bash -c "nft list table ip bowline 2>/dev/null | grep -q 'dport $host_port '"
summary
