#!/usr/bin/env bash
# End-to-end proof that guests cannot spoof each other or the LAN, through the real
# server and CLI on the real libvirtd with the tiny test guest: a bridged space (fixed address)
# and a NAT space (DHCP lease) each ping the host from their own address (the control: it must
# answer), then add another address of the network to their NIC and ping from that (it must not:
# the filter drops it). The bridged guest also runs a DHCP server, whose answers to the host's
# DHCP client must never arrive. After set-ip the bridged NIC's filter follows the new address.
# MODE guard (server.kvm.guest_filter auto on this host's libvirt): bowline's nftables table
# holds each NIC's device with its address (bridged) or the address its lease gave (NAT), and the
# domains have no filterref. MODE nwfilter (as for a libvirt elsewhere): the domains reference
# bowline-clean-traffic with their address or DHCP learning, bound by libvirt to their ports.
# Networks: a host-only bridge and an isolated libvirt network, each a free /28 of 198.51.100.0/24
# made through lib/net.sh; nothing routes off the host. Everything made here starts with bwe2e
# and is removed on exit, also on failure (the filter stays: it is the host's, shared by spaces).
# Usage: guest_spoofing_test.sh BOWLINE_BINARY guard|nwfilter
set -uo pipefail

BOWLINE=${1:?usage: guest_spoofing_test.sh BOWLINE_BINARY guard|nwfilter}
MODE=${2:?usage: guest_spoofing_test.sh BOWLINE_BINARY guard|nwfilter}
case $MODE in guard | nwfilter) ;; *) echo "MODE is guard or nwfilter" >&2 && exit 2 ;; esac
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
FILTER=bowline-clean-traffic
spaces_begin guest_spoofing_test
command -v ebtables >/dev/null || abort "missing ebtables (scripts/setup installs iptables, which has it)"
command -v nft >/dev/null || abort "missing nft (scripts/setup installs nftables)"
filter_flag=auto
[ "$MODE" = guard ] || filter_flag=nwfilter
images=$work/images
spaces_prepare_images "$images" || abort "building the test guest into $images/cloud-images"

# Bridge: host .1, spaces .2-.6, the spoofed address .9, the rogue DHCP server's pool .10-.13.
bsub=$(net_free_subnet 28) || abort "no free /28 in 198.51.100.0/24"
bpre=${bsub%.*} bbase=${bsub##*.}
bridge=bwe2eb$tag
bhost=$bpre.$((bbase + 1))
net_bridge_create "$bridge" "$bhost/28" || abort "bridge $bridge"
# Isolated network: host .1, DHCP .2-.6, the spoofed address .9.
nsub=$(net_free_subnet 28) || abort "no second free /28 in 198.51.100.0/24"
npre=${nsub%.*} nbase=${nsub##*.}
natbr=bwe2en$tag
natnet=$prefix-nat
nhost=$npre.$((nbase + 1))
net_isolated_create "$natnet" "$natbr" "$nhost/28" "$npre.$((nbase + 2))" "$npre.$((nbase + 6))" ||
  abort "isolated network $natnet"
log "bridge $bridge on $bsub/28, network $natnet on $nsub/28"

server_start "$BOWLINE" "$work/server.log" --data-dir "$work/data" --images-path "$images" \
  --libvirt-uri qemu:///system --domain-type qemu --stop-timeout 30 --resolvers "$bhost" \
  --guest-filter "$filter_flag" ||
  abort "bowline server"

# What each guest runs at every boot. The control retries for a while: a NAT guest's filter lets
# its leased address through only once libvirt has seen the lease.
probe_script() { # HOST SPOOF [DHCP_POOL_START DHCP_POOL_END]
  cat <<EOF
    - |
      own=unreached
      for i in \$(seq 30); do ping -c 1 -W 1 $1 >/dev/null 2>&1 && { own=reached; break; }; done
      echo "TEST: spoof control from the own address: \$own"
      ip addr add $2/28 dev eth0
      spoofed=unreached
      for i in 1 2 3 4 5; do ping -c 1 -W 1 -I $2 $1 >/dev/null 2>&1 && { spoofed=reached; break; }; done
      echo "TEST: spoof from $2: \$spoofed"
      ip addr del $2/28 dev eth0
EOF
  [ $# -eq 4 ] || return 0
  cat <<EOF
      printf 'start $3\nend $4\ninterface eth0\nlease_file /tmp/udhcpd.leases\noption subnet 255.255.255.240\n' >/tmp/udhcpd.conf
      touch /tmp/udhcpd.leases && udhcpd /tmp/udhcpd.conf
      echo "TEST: rogue dhcp server pid=\$(pidof udhcpd)"
EOF
}
cat >"$work/bridged.yaml" <<YAML
name: $prefix-\${{ .space.name }}
image: $SPACES_IMAGE
memory: 256M
cpus: 1
network:
  mode: bridged
  bridge: $bridge
  cidr: $bsub/28
  ip_range_start: $bpre.$((bbase + 2))
  ip_range_end: $bpre.$((bbase + 6))
  gateway: $bhost
cloudInit: |
  #cloud-config
  runcmd:
$(probe_script "$bhost" "$bpre.$((bbase + 9))" "$bpre.$((bbase + 10))" "$bpre.$((bbase + 13))")
YAML
cat >"$work/nat.yaml" <<YAML
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
$(probe_script "$nhost" "$npre.$((nbase + 9))")
YAML
for t in bridged nat; do
  bw template create "$work/$t.yaml" --name "$t" >/dev/null || abort "template create $t"
done

"$BOWLINE" space create bridged b --wait --timeout "$WAIT" >"$work/b.out" 2>&1 &
pb=$!
"$BOWLINE" space create nat n --wait --timeout "$WAIT" >"$work/n.out" 2>&1 &
pn=$!
wait "$pb" || { sed 's/^/    /' "$work/b.out"; abort "space create bridged b"; }
wait "$pn" || { sed 's/^/    /' "$work/n.out"; abort "space create nat n"; }
b_console=$images/$prefix-b/console.log
b_ip=$(space_json b | jq -r '.ip // empty')

# --- what filters them ------------------------------------------------------------------------
filterref() { # DOMAIN: the NICs' filterref elements in libvirt's live XML, on one line
  $VIRSH dumpxml "$1" | sed -n '/<filterref/,/<\/filterref>/p' | tr -s ' \n' ' '
}
port_of() { $VIRSH domiflist "$1" | awk 'NR > 2 && $1 != "" { print $1; exit }'; }
declare -A port
for s in b n; do port[$s]=$(port_of "$prefix-$s"); done
# The packet count of the first rule matching REGEX of what the guest's NIC sends: libvirt's
# ebtables chain libvirt-I-PORT, or the guard's nft chain out_PORT.
rule_count() { # PORT REGEX
  if [ "$MODE" = nwfilter ]; then
    ebtables -t nat -L "libvirt-I-$1" --Lc 2>/dev/null | grep -E -e "$2" | head -n 1 |
      sed -n 's/.*pcnt = \([0-9]*\).*/\1/p'
  else
    nft list chain bridge "$table" "out_$1" 2>/dev/null | grep -E -e "$2" | head -n 1 |
      sed -n 's/.*counter packets \([0-9]*\) .*/\1/p'
  fi
}
guard_set() { # PORT: the addresses the guard lets the NIC send from, one line
  nft list set bridge "$table" "addr_$1" 2>/dev/null | sed -n 's/.*elements = { \(.*\) }.*/\1/p'
}
if [ "$MODE" = nwfilter ]; then
  check_cmd "libvirt has $FILTER as bowline renders it" \
    diff <($VIRSH nwfilter-dumpxml "$FILTER" | grep -v -e '<uuid>' -e '^$') \
    <("$BOWLINE" template render "$work/nat.yaml" --var space.name=x -o nwfilter)
  check_match "the bridged NIC references $FILTER with its address $b_ip" \
    "^ ?<filterref filter='$FILTER'> <parameter name='IP' value='$(spaces_re "$b_ip")'/> </filterref> ?$" \
    "$(filterref "$prefix-b")"
  check_match "the NAT NIC references $FILTER, learning its address from DHCP and believing only its network's server $nhost" \
    "^ ?<filterref filter='$FILTER'> <parameter name='CTRL_IP_LEARNING' value='dhcp'/> <parameter name='DHCPSERVER' value='$(spaces_re "$nhost")'/> </filterref> ?$" \
    "$(filterref "$prefix-n")"
  bindings=$($VIRSH nwfilter-binding-list)
  for s in b n; do
    check_match "libvirt has $FILTER bound to ${prefix}-${s}'s port ${port[$s]}" \
      "(^|[[:space:]])${port[$s]}[[:space:]]+$FILTER" "$bindings"
  done
  check_eq "node check: the nwfilter check passes" ok \
    "$("$BOWLINE" node check --uri qemu:///system --domain-type qemu --guest-filter nwfilter --json |
      jq -r '.checks[] | select(.name == "nwfilter") | .status')"
else
  guard=$(curl -fsS -H "Authorization: Bearer $BOWLINE_TOKEN" "$BOWLINE_SERVER/api/v1/nodes" |
    jq -c '[.. | objects | select(.name? == "guest-guard")][0]')
  table=$(jq -r '.detail' <<<"$guard" | sed -n 's/^table bridge \(bowline_[0-9a-f]\{3\}\) guards.*/\1/p')
  check_match "the server's node check: its guard table guards both NICs" \
    '^ok table bridge bowline_[0-9a-f]{3} guards 2 NICs;' "$(jq -r '.status + " " + .detail' <<<"$guard")"
  for s in b n; do
    check_match "${prefix}-${s}'s NIC has a device name of bowline's (${port[$s]})" '^bw[0-9a-f]{13}$' "${port[$s]}"
    check_eq "${prefix}-${s}'s NIC references no libvirt filter" "" "$(filterref "$prefix-$s")"
    check_match "the guard has ${port[$s]}'s own MAC in its rules" \
      "ether saddr != $($VIRSH domiflist "$prefix-$s" | awk 'NR > 2 && $1 != "" { print $5; exit }') counter" \
      "$(nft list chain bridge "$table" "out_${port[$s]}" 2>&1)"
  done
  check_eq "the bridged NIC may send from its address $b_ip only" "$b_ip" "$(guard_set "${port[b]}")"
  check_eq "libvirt has no network filter bound to either" "" \
    "$($VIRSH nwfilter-binding-list | grep -E "${port[b]}|${port[n]}")"
fi

# --- the guests' own view ---------------------------------------------------------------------
for s in b n; do
  console=$images/$prefix-$s/console.log
  wait_for "$console" '^TEST: spoof from ' 120 || show_console "$console"
  log "$s: $(tr -d '\r' <"$console" | grep -a '^TEST: spoof' | paste -sd ';')"
  check_cmd "$s: the guest reaches the host from its own address (control)" \
    expect "$console" '^TEST: spoof control from the own address: reached$' "control"
  check_cmd "$s: the guest does not reach the host from an address it gave itself" \
    expect "$console" '^TEST: spoof from [0-9.]+: unreached$' "spoofed source"
  # IPv4 from any other address meets the drop of IPv4 (IPv6 and the rest meet the last rule).
  check_match "$s: the filter dropped the spoofed packets (${port[$s]})" \
    '^[1-9][0-9]*$' "$(rule_count "${port[$s]}" '^-p IPv4 -j DROP|IPv4 from another address')"
done
if [ "$MODE" = guard ]; then
  n_ip=$(space_json n | jq -r '.info.address // empty')
  check_match "the NAT guest has an address from its network's DHCP ($n_ip)" "^$(spaces_re "$npre")\." "$n_ip"
  check_eq "the guard learnt the NAT NIC's address from its lease" "$n_ip" "$(guard_set "${port[n]}")"
fi

# --- a DHCP server in a guest answers nobody --------------------------------------------------
# The host asks on the bridge, with a DHCP client whose script only writes down what it got
# (it configures nothing). The rogue server must have run, and its offers never arrive.
if wait_for "$b_console" '^TEST: rogue dhcp server pid=[0-9]+' 30; then
  pass "the bridged guest runs a DHCP server"
else
  fail "the bridged guest runs a DHCP server"
  show_console "$b_console"
fi
# shellcheck disable=SC2016 # the script's own variables, expanded when udhcpc runs it
printf '#!/bin/sh\necho "$1 ip=$ip serverid=$serverid" >>%s\n' "$work/dhcp.log" >"$work/dhcp.sh"
chmod 0755 "$work/dhcp.sh"
busybox udhcpc -i "$bridge" -f -q -n -t 4 -T 1 -A 1 -s "$work/dhcp.sh" >/dev/null 2>&1
check_no_match "the host's DHCP client got no offer from the guest's server" "bound|renew" \
  "$(cat "$work/dhcp.log" 2>/dev/null)"
check_match "the guest's server answered, and the filter dropped its answers" '^[1-9][0-9]*$' \
  "$(rule_count "${port[b]}" "--ip-sport 67 --ip-dport 68 -j DROP|a DHCP server's answer")"

# --- security: the guard stays --------------------------------------------------------------
# What `nft flush ruleset` or a firewall service's reload does to bowline's table (only ours is
# deleted here: other tests' tables on this host stay): the server writes it whole again within
# a poll of 3 s, with each NIC's chains and addresses, and records it.
if [ "$MODE" = guard ]; then
  nft delete table bridge "$table" || fail "nft delete table bridge $table"
  back=""
  for i in $(seq 1 50); do
    nft list chain bridge "$table" "out_${port[n]}" >/dev/null 2>&1 &&
      { back=$(awk -v i="$i" 'BEGIN { print i * 0.2 }'); break; }
    sleep 0.2
  done
  check_match "security: the deleted guard table is back within 10 s (after ${back:-never} s)" \
    '^[0-9.]+$' "$back"
  check_eq "security: ... the bridged NIC may send from $b_ip only" "$b_ip" "$(guard_set "${port[b]}")"
  for _ in $(seq 1 30); do [ "$(guard_set "${port[n]}")" = "$n_ip" ] && break; sleep 0.2; done
  check_eq "security: ... the NAT NIC from its lease $n_ip only" "$n_ip" "$(guard_set "${port[n]}")"
  check_match "security: ... and the server recorded it (firewall.restored)" \
    "^firewall.restored .*\"reason\": \"table bridge $table is gone: written again\".*\"table\": \"bridge $table\"" \
    "$(python3 "$here/lib/events.py" "$BOWLINE_SERVER" "$BOWLINE_TOKEN" | grep '^firewall.restored' | head -n 1)"
fi

# --- set-ip: the filter follows the address at the next start ---------------------------------
b_new=$bpre.$((bbase + 6))
[ "$b_new" != "$b_ip" ] || b_new=$bpre.$((bbase + 5))
bw space stop b --wait --timeout "$WAIT" || fail "space stop b"
bw space set-ip b "$b_new" || fail "space set-ip b $b_new"
bw space start b --wait --timeout "$WAIT" || fail "space start b"
if [ "$MODE" = nwfilter ]; then
  check_match "after set-ip the NIC's filter has the new address $b_new" \
    "<parameter name='IP' value='$(spaces_re "$b_new")'/>" "$(filterref "$prefix-b")"
else
  check_eq "after set-ip the guard lets the NIC send from $b_new only" "$b_new" "$(guard_set "${port[b]}")"
fi
wait_for "$b_console" '^TEST: spoof from ' 120 || show_console "$b_console"
check_cmd "after set-ip the guest reaches the host from the new address" \
  expect "$b_console" '^TEST: spoof control from the own address: reached$' "control after set-ip"
check_cmd "after set-ip the spoofed address is still dropped" \
  expect "$b_console" '^TEST: spoof from [0-9.]+: unreached$' "spoofed source after set-ip"
# --- delete: the guard forgets the NIC ---------------------------------------------------------
if [ "$MODE" = guard ]; then
  bw space delete n --wait --timeout "$WAIT" >/dev/null || fail "space delete n"
  check_cmd "after delete the guard has no chain for ${port[n]}" \
    bash -c "! nft list chain bridge $table out_${port[n]} >/dev/null 2>&1"
  check_eq "its registry names it no more" "" \
    "$(jq -r --arg d "$prefix-n" '.domains[$d] // empty' "$work/data/guest-guard.json")"
fi
summary
