#!/usr/bin/env bash
# Two KVM hosts as nodes of one server, on the tiny test guest: this host's libvirtd (`local`)
# and a second host made on this machine (lib/second_host.sh: its own namespaces, libvirtd and
# sshd, reached only over qemu+ssh, its files in its own libvirt storage pool):
#   settings   server.nodes names the host and its pool; GET /api/v1/nodes reports it ready, with
#              what it can and cannot do
#   files      a space made on node2 has its overlay and seed as volumes of node2's pool, the
#              overlay backed by a base image uploaded once through libvirt (a second space
#              reuses it); nothing of it is on this host's libvirt or disk
#   running    it boots under node2's QEMU; its console is read through the server, and its
#              readiness from its console log in the pool
#   tunnel     1 MB through `bowline tunnel` to the NAT guest's echo port on node2, which only
#              node2 reaches: through node2's sshd, its host key pinned (a server given another
#              key for node2 refuses the tunnel)
#   placement  a create that names no node goes where the template's network is; one that no
#              node can run is refused naming each node's reason; the API says node2 has no
#              display, and why
#   power      stop and start on node2; delete removes its domain and its volumes, the base
#              stays
#   away       node2's libvirtd stopped: its spaces say their node is unreachable and keep their
#              state, a create there fails and leaves nothing; started again, all is as before
#   moves      a stopped space moves node2 -> local and another local -> node2: each disk goes
#              with its data (the guest's boot counter on it goes on), pointed at the new node's
#              base; nothing is left on the old node; a running space is refused
#   cordon     a cordoned node2 takes no create (named or placed); drain moves its running space
#              to local (stopped, moved, started) and names the one no other node can take
# Networks: an isolated libvirt network on each host, each on a /27 of 198.51.100.0/24, and the
# second host's veth in 198.51.100.240/29. Everything made here is removed on exit.
# Usage: nodes_test.sh BOWLINE_BINARY
set -uo pipefail

BOWLINE=${1:?usage: nodes_test.sh BOWLINE_BINARY}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/net.sh
. "$here/lib/net.sh"
# shellcheck source=lib/check.sh
. "$here/lib/check.sh"
# shellcheck source=lib/server.sh
. "$here/lib/server.sh"
# shellcheck source=lib/spaces.sh
. "$here/lib/spaces.sh"
# shellcheck source=lib/second_host.sh
. "$here/lib/second_host.sh"

WAIT=${WAIT:-300}
spaces_begin nodes_test
trap 'second_host_down; _spaces_cleanup' EXIT
images=$work/images
spaces_prepare_images "$images" || abort "building the test guest into $images/cloud-images"
# Its state outside /var/lib/libvirt, which its own mounts cover.
second_host_up "$(mktemp -d /tmp/bwe2e-node2-XXXXXX)" || abort "the second host"
n2virsh() { second_host_virsh "$@"; }
n2_no_domain() { ! n2virsh dominfo "$1" >/dev/null 2>&1; }

# The NAT network: on this host (spaces_nat_network), and one of the same name on node2, where
# a second, node2-only network is too.
spaces_nat_network
n2_network() { # NAME BRIDGE THIRD_OCTET_BASE
  n2virsh net-create /dev/stdin >/dev/null <<XML
<network>
  <name>$1</name>
  <bridge name='$2' stp='off' delay='0'/>
  <dns enable='no'/>
  <ip address='198.51.100.$(($3 + 1))' prefix='27'>
    <dhcp><range start='198.51.100.$(($3 + 10))' end='198.51.100.$(($3 + 20))'/></dhcp>
  </ip>
</network>
XML
}
n2_network "$natnet" bwn2a 64 || abort "node2: network $natnet"
n2_network "$prefix-only2" bwn2b 96 || abort "node2: network $prefix-only2"

n2_host_key=$(cut -d' ' -f1,2 "$_SH_DIR/ssh/host_key.pub")
nodes="{name: node2, uri: '$SECOND_HOST_URI', pool: $SECOND_HOST_POOL, labels: {rack: b},
  ssh_host_key: '$n2_host_key'}"
server_start "$BOWLINE" "$work/server.log" --data-dir "$work/data" --images-path "$images" \
  --libvirt-uri qemu:///system --domain-type qemu --stop-timeout 20 --reconcile-interval 2 \
  --nodes "$nodes" ||
  abort "bowline server with node2"

# --- settings ------------------------------------------------------------------------------
check_match "settings: the server names node2 and its pool's directory" \
  "libvirt node node2 at qemu\+ssh://.* pool $SECOND_HOST_POOL at /var/lib/libvirt/images" \
  "$(cat "$work/server.log")"
report=$(curl -fsS -H "Authorization: Bearer $BOWLINE_TOKEN" "$BOWLINE_SERVER/api/v1/nodes")
check_eq "settings: GET /api/v1/nodes lists local and node2" "local node2" \
  "$(jq -r '[.[].name] | join(" ")' <<<"$report")"
check_eq "settings: node2 is ready, its label kept" "ready b" \
  "$(jq -r '.[] | select(.name == "node2") | "\(.state) \(.labels.rack)"' <<<"$report")"
check_match "settings: bowline node list shows node2 ready" "node2[[:space:]]+libvirt[[:space:]]+ready" \
  "$("$BOWLINE" node list)"

# --- files and running -----------------------------------------------------------------------
# An echo service on port 7000 (busybox nc -e cat) for the tunnel through node2's sshd.
spaces_tiny_template tiny "ports: [7000]
cloudInit: |
  #cloud-config
  runcmd:
    - 'busybox nc -ll -p 7000 -e /bin/cat </dev/null >/dev/null 2>&1 &'"
check_cmd "running: space create --node node2 --wait (ready, read from the pool's console log)" \
  bw space create tiny two --node node2 --wait --timeout "$WAIT"
check_eq "running: space info says node2, running" "node2 running" \
  "$("$BOWLINE" space info two -o json | jq -r '"\(.node) \(.state)"')"
check_eq "running: node2's libvirt runs the domain" running \
  "$(n2virsh domstate "$prefix-two" 2>/dev/null | head -n 1)"
check_cmd "files: this host's libvirt has no such domain" no_domain "$prefix-two"
check_cmd "files: nothing of it is under this host's images path" \
  test ! -e "$images/$prefix-two"
vols=$(n2virsh vol-list "$SECOND_HOST_POOL" | awk '{print $1}' | sort | tr '\n' ' ')
check_match "files: the overlay and the seed are volumes of node2's pool" \
  "$prefix-two\.disk\.qcow2 .*$prefix-two\.seed\.iso" "$vols"
base=$(grep -oE 'bowline-base-[0-9a-f]+\.qcow2 ' <<<"$vols" | tr -d ' ')
check_match "files: the base image is uploaded, with its done marker" "$base\.done" "$vols"
check_eq "files: the overlay's backing file is that base, on node2" \
  "/var/lib/libvirt/images/$base" \
  "$(second_host_exec qemu-img info -U --output=json "/var/lib/libvirt/images/$prefix-two.disk.qcow2" |
    jq -r '."backing-filename"')"
check_eq "files: the base's bytes are the server's cached image's" \
  "$(sha256sum "$images/cloud-images/$SPACES_IMAGE.qcow2" | cut -d' ' -f1)" \
  "$(second_host_exec sha256sum "/var/lib/libvirt/images/$base" | cut -d' ' -f1)"
check_cmd "running: and a space on local beside it" bw space create tiny one --node local --wait \
  --no-ready --timeout "$WAIT"
# A line typed makes the guest's getty ask for a login again (script: the CLI wants a terminal).
console_of() {
  (sleep 1 && printf '\r' && sleep 3) |
    timeout 6 script -qfec "'$BOWLINE' space console '$1'" /dev/null 2>"$work/console.err" |
    tr -d '\r' | head -c 4000
}
check_eq "running: space one is on local, run by this host's libvirt" "local running" \
  "$("$BOWLINE" space info one -o json | jq -r .node) $($VIRSH domstate "$prefix-one" 2>/dev/null | head -n 1)"
console=$(console_of two)
check_match "running: the console through the server carries the guest's login prompt" \
  "two login:" "$console"
check_match "running: space info shows the console's last lines (read from node2's pool)" \
  "bowline-ready|cloud-init|login" "$("$BOWLINE" space info two 2>&1)"
# This machine has no route into node2's NAT network: the bytes go through node2's sshd.
head -c 1000000 /dev/urandom >"$work/in.bin"
for _ in $(seq 1 20); do
  timeout 60 "$BOWLINE" tunnel two 7000 <"$work/in.bin" >"$work/out.bin" 2>"$work/tunnel.err" && break
  sleep 1
done
check_eq "tunnel: 1 MB to the NAT guest on node2 and back, through node2's sshd, byte-exact" \
  "$(sha256sum <"$work/in.bin")" "$(sha256sum <"$work/out.bin")"
check_cmd "files: a second space on node2" bw space create tiny three --node node2 --wait --no-ready \
  --timeout "$WAIT"
check_eq "files: the second space reuses the one base" 1 \
  "$(n2virsh vol-list "$SECOND_HOST_POOL" | grep -c 'bowline-base-.*\.qcow2 ')"

# --- placement -------------------------------------------------------------------------------
both=$natnet
natnet=$prefix-only2 # the template's network: node2's alone
spaces_tiny_template only2
natnet=$both
check_cmd "placement: a create naming no node (placed at once, started or not)" bw space create only2 four \
  --no-start
check_eq "placement: it went to node2, the one node with its network" node2 \
  "$("$BOWLINE" space info four -o json | jq -r .node)"
cat >"$work/nowhere.yaml" <<YAML
name: $prefix-\${{ .space.name }}
image: $SPACES_IMAGE
memory: 128M
network: {mode: nat, bridge: $prefix-nowhere}
YAML
bw template create "$work/nowhere.yaml" --name nowhere >/dev/null || abort "template nowhere"
out=$("$BOWLINE" space create nowhere five 2>&1)
check_match "placement: no node can: refused, each node's reason named" \
  "no node can run template nowhere.*local: libvirt network $prefix-nowhere does not exist.*node2: libvirt network $prefix-nowhere does not exist" \
  "$(tr '\n' ' ' <<<"$out")"
no_space() { ! "$BOWLINE" space info "$1" >/dev/null 2>&1; }
check_cmd "placement: and nothing is made" no_space five
caps=$(jq -r '.[] | select(.name == "node2") | .capabilities[] | "\(.name) \(.supported) \(.reason)"' <<<"$report")
check_match "placement: GET /api/v1/nodes says node2 has no display, and why" \
  "^vnc false libvirt hands a display's socket over its local socket only" "$(grep '^vnc ' <<<"$caps")"
check_match "placement: and that it has tunnels and moves" "tunnel true .*move true" \
  "$(grep -E '^(tunnel|move) ' <<<"$caps" | tr '\n' ' ')"

# --- power -----------------------------------------------------------------------------------
check_cmd "power: space stop two" bw space stop two --wait --timeout "$WAIT"
check_match "power: node2's domain is shut off" "shut off" "$(n2virsh domstate "$prefix-two" 2>&1)"
check_cmd "power: space start two" bw space start two --wait --no-ready --timeout "$WAIT"
check_eq "power: running again on node2" running "$(n2virsh domstate "$prefix-two" 2>/dev/null | head -n 1)"
check_cmd "power: space delete two" bw space delete two --wait --timeout "$WAIT"
check_cmd "power: its domain is gone from node2" n2_no_domain "$prefix-two"
vols=$(n2virsh vol-list "$SECOND_HOST_POOL" | awk '{print $1}' | tr '\n' ' ')
check_no_match "power: none of its volumes is left in the pool" "$prefix-two\." "$vols"
check_match "power: the base stays for the others" "$base" "$vols"

# --- a node whose host key is not the pinned one ------------------------------------------------
server_stop
wrong="{name: node2, uri: '$SECOND_HOST_URI', pool: $SECOND_HOST_POOL,
  ssh_host_key: '$(cut -d' ' -f1,2 "$_SH_DIR/ssh/client_key.pub")'}"
server_start "$BOWLINE" "$work/server-2.log" --data-dir "$work/data" --images-path "$images" \
  --libvirt-uri qemu:///system --domain-type qemu --stop-timeout 20 --reconcile-interval 2 \
  --nodes "$wrong" || abort "bowline server with a wrong host key for node2"
out=$(timeout 30 "$BOWLINE" tunnel three 7000 </dev/null 2>&1)
check_match "pinning: a tunnel through a node that offers another host key is refused" \
  "host key that is not the one in its settings" "$out"
server_stop
server_start "$BOWLINE" "$work/server-3.log" --data-dir "$work/data" --images-path "$images" \
  --libvirt-uri qemu:///system --domain-type qemu --stop-timeout 20 --reconcile-interval 2 \
  --nodes "$nodes" || abort "bowline server again"

# --- a node away -----------------------------------------------------------------------------
info_of_three() { "$BOWLINE" space info three 2>&1; }
away_shown() { info_of_three | grep -q 'node:.*node2 (unreachable'; }
back_shown() { ! away_shown && info_of_three | grep -qE '^state: +running'; }
until_true() { # SECS CMD...
  local deadline=$(($(date +%s) + $1))
  shift
  until "$@"; do [ "$(date +%s)" -lt "$deadline" ] || return 1; sleep 0.5; done
}
second_host_libvirtd_stop
check_cmd "away: space info of a space on node2 says its node is unreachable, at the next audit" \
  until_true 30 away_shown
check_match "away: and keeps its state as node2 last said (running)" "state: +running" "$(info_of_three)"
check_match "away: a node.state event says so" '"node":"node2".*"state":"unreachable"' \
  "$(curl -sN --max-time 3 -H "Authorization: Bearer $BOWLINE_TOKEN" \
    "$BOWLINE_SERVER/api/v1/events?since=0" | grep -A1 '^event: node.state' | grep '^data:')"
check_match "away: node list --refresh shows node2 unreachable, with libvirt's words" \
  "node2[[:space:]]+libvirt[[:space:]]+unreachable[[:space:]]+.*(connect|socket)" \
  "$("$BOWLINE" node list --refresh 2>&1)"
out=$("$BOWLINE" space create tiny five --node node2 --wait --no-ready --timeout 60 2>&1)
check_match "away: a create on node2 fails, saying why" "node2|connect|socket" "$out"
check_eq "away: and leaves nothing behind" "" \
  "$("$BOWLINE" space list -o json | jq -r '.[] | select(.name == "five") | .state')"
second_host_libvirtd_start || fail "node2's libvirtd again"
check_match "away: back, node2 is ready again" "node2[[:space:]]+libvirt[[:space:]]+ready" \
  "$("$BOWLINE" node list --refresh 2>&1)"
check_cmd "away: back, the space is running with nothing unreachable, at the next audit" \
  until_true 30 back_shown
check_eq "away: its domain ran on through it" running \
  "$(n2virsh domstate "$prefix-three" 2>/dev/null | head -n 1)"

# --- moves -----------------------------------------------------------------------------------
boots_of() { # SPACE: the guest's boot counter, kept on its disk, from the console's lines
  "$BOWLINE" space info "$1" 2>&1 | grep -oE 'boot count=[0-9]+' | tail -n 1
}
out=$("$BOWLINE" space move three --to local 2>&1)
check_match "move: a running space is refused, saying to stop it" "only a stopped space moves" "$out"
out=$("$BOWLINE" space move three --to node2 2>&1)
check_match "move: to the node it is on, refused" "on node node2 already" "$out"
check_cmd "move: stop three (on node2) and one (on local)" bw space stop three --wait --timeout "$WAIT"
bw space stop one --wait --timeout "$WAIT" || fail "stop one"
check_cmd "move: space move three --to local --wait" bw space move three --to local --wait \
  --timeout "$WAIT"
check_cmd "move: space move one --to node2 --wait" bw space move one --to node2 --wait \
  --timeout "$WAIT"
check_eq "move: each names its new node" "local node2" \
  "$("$BOWLINE" space info three -o json | jq -r .node) $("$BOWLINE" space info one -o json | jq -r .node)"
check_cmd "move: node2 keeps no domain of three" n2_no_domain "$prefix-three"
check_no_match "move: nor any volume of it" "$prefix-three\." \
  "$(n2virsh vol-list "$SECOND_HOST_POOL" | awk '{print $1}' | tr '\n' ' ')"
check_cmd "move: this host keeps no domain of one" no_domain "$prefix-one"
check_cmd "move: nor its directory" test ! -e "$images/$prefix-one"
check_eq "move: three's disk here is backed by this host's copy of the image" \
  "$images/cloud-images/$SPACES_IMAGE.qcow2" \
  "$(qemu-img info -U --output=json "$images/$prefix-three/disk.qcow2" 2>/dev/null | jq -r '."backing-filename"')"
check_eq "move: one's disk on node2 is backed by node2's base" "/var/lib/libvirt/images/$base" \
  "$(second_host_exec qemu-img info -U --output=json "/var/lib/libvirt/images/$prefix-one.disk.qcow2" |
    jq -r '."backing-filename"')"
check_cmd "move: a space that never started moves too (only its row changes)" bw space create tiny \
  seven --node local --no-start
check_cmd "move: space move seven --to node2 --wait" bw space move seven --to node2 --wait \
  --timeout "$WAIT"
check_eq "move: seven is node2's, and nothing of it was made anywhere" "node2 stopped" \
  "$("$BOWLINE" space info seven -o json | jq -r '"\(.node) \(.state)"')"
bw space delete seven --wait --timeout "$WAIT" || fail "delete seven"
check_cmd "move: three starts on local" bw space start three --wait --timeout "$WAIT"
check_cmd "move: one starts on node2" bw space start one --wait --timeout "$WAIT"
check_eq "move: both run where they moved" "running running" \
  "$($VIRSH domstate "$prefix-three" 2>/dev/null | head -n 1) $(n2virsh domstate "$prefix-one" 2>/dev/null | head -n 1)"
check_eq "move: three's guest counts its second boot of the same disk" "boot count=2" "$(boots_of three)"
check_eq "move: and so does one's" "boot count=2" "$(boots_of one)"

# --- cordon and drain --------------------------------------------------------------------------
check_cmd "cordon: node cordon node2 --reason maintenance" bw node cordon node2 --reason maintenance
check_match "cordon: node list shows it, with the reason" \
  "node2[[:space:]]+libvirt[[:space:]]+cordoned[[:space:]]+maintenance" "$("$BOWLINE" node list)"
out=$("$BOWLINE" space create tiny five --node node2 --no-start 2>&1)
check_match "cordon: a create naming node2 is refused" "node node2 is cordoned \(maintenance\)" "$out"
out=$("$BOWLINE" space create only2 six --no-start 2>&1)
check_match "cordon: placement passes it over, saying so" "node2: cordoned \(maintenance\)" \
  "$(tr '\n' ' ' <<<"$out")"
out=$("$BOWLINE" node drain node2 --wait --timeout "$WAIT" 2>&1)
drained=$?
log "drain: $(tr '\n' ' ' <<<"$out" | tail -c 400)"
check_match "drain: one (running on node2) goes to local" "space one -> local" "$out"
check_match "drain: four stays, no other node has its network" \
  "space four stays: .*local: libvirt network $prefix-only2 does not exist" "$out"
check_eq "drain: and the command says not all could go (exit 1)" 1 "$drained"
one_on_local_running() {
  [ "$("$BOWLINE" space info one -o json | jq -r '"\(.node) \(.state)"')" = "local running" ]
}
check_cmd "drain: one runs again, on local" until_true 120 one_on_local_running
check_cmd "drain: node2 keeps no domain of one" n2_no_domain "$prefix-one"
check_cmd "drain: node uncordon node2" bw node uncordon node2
check_match "drain: node2 is ready again" "node2[[:space:]]+libvirt[[:space:]]+ready" \
  "$("$BOWLINE" node list)"
for s in one three four; do bw space delete "$s" --wait --timeout "$WAIT" || fail "delete $s"; done
check_no_match "move: deleted, nothing of them is left in node2's pool" "$prefix-(one|three|four)\." \
  "$(n2virsh vol-list "$SECOND_HOST_POOL" | awk '{print $1}' | tr '\n' ' ')"

summary
