# shellcheck shell=bash
# Test networks for bowline's end-to-end tests (source this file; needs root, iproute2, iptables,
# virsh, busybox-static).
#
# Only 198.51.100.0/24 (TEST-NET-2) is used: on the development and CI machines 192.0.2.0/24 is the
# real uplink and 203.0.113.0/24 holds the package mirrors. Every network made here is host-only:
# no NAT, no DNS, no router handed to guests, FORWARD traffic in or out of the bridge dropped,
# IPv6 off on the bridge. Names are the caller's (unique per test), and each teardown is idempotent,
# so `trap net_cleanup EXIT` (or a trap calling it) is always safe.
#
#   net_preflight CIDR                      refuse (status 1, message on stderr) unless CIDR lies in
#                                           198.51.100.0/24, nothing on the host routes to any part of
#                                           it and no package mirror resolves into it
#   net_free_subnet LEN                     a /LEN of 198.51.100.0/24 that passes net_preflight (other
#                                           tests may hold some): prints its network address
#   net_bridge_create BRIDGE HOST_CIDR      Linux bridge with the host address HOST_CIDR
#                                           (e.g. bwt0 198.51.100.1/26), DROP rules, IPv6 off
#   net_bridge_remove BRIDGE
#   net_isolated_create NAME BRIDGE HOST_CIDR RANGE_START RANGE_END [MAC=IP ...]
#                                           transient isolated libvirt network: DHCP only (no DNS, no
#                                           router option, no forward; one lease per MAC), optional
#                                           fixed leases
#   net_isolated_remove NAME
#   net_client_netns NS SUBNET30            a network namespace NS for a client machine, joined to
#                                           the host by a veth pair on the free /30 SUBNET30: the host
#                                           side gets .1 (NET_HOST_IP), the namespace .2 (NET_CLIENT_IP);
#                                           loopback up, no other route, so the client reaches the
#                                           host's .1 and nothing else (no guest network)
#   net_client_netns_remove NS
#   net_ping BRIDGE IP [COUNT]              busybox ping bound to BRIDGE (there is no ping binary)
#   net_cleanup                             undo everything created through this file, newest first
#
# VIRSH (default "virsh -c qemu:///system") is the libvirt client used.

NET_ALLOWED_NET=198.51.100.0
NET_ALLOWED_PREFIX=24
NET_GUARD_METRIC=4242
VIRSH=${VIRSH:-virsh -c qemu:///system}
_NET_UNDO=()

_net_log() { echo "net.sh: $*" >&2; }

net_free_subnet() {
  local len=$1 step n
  step=$((1 << (32 - len)))
  for ((n = 0; n < 256; n += step)); do
    if net_preflight "198.51.100.$n/$len" 2>/dev/null; then
      echo "198.51.100.$n"
      return 0
    fi
  done
  return 1
}

# dotted quad -> integer
_net_ip2int() {
  local IFS=.
  # shellcheck disable=SC2086
  set -- $1
  echo $((($1 << 24) + ($2 << 16) + ($3 << 8) + $4))
}
# CIDR (a.b.c.d/n) -> "first last" as integers
_net_range() {
  local ip=${1%/*} len=${1#*/} start mask
  [ "$len" != "$1" ] || len=32
  mask=$(((0xffffffff << (32 - len)) & 0xffffffff))
  start=$(($(_net_ip2int "$ip") & mask))
  echo "$start $((start + (~mask & 0xffffffff)))"
}
# is CIDR $1 inside CIDR $2?
_net_inside() {
  local a b
  read -r -a a <<<"$(_net_range "$1")"
  read -r -a b <<<"$(_net_range "$2")"
  [ "${a[0]}" -ge "${b[0]}" ] && [ "${a[1]}" -le "${b[1]}" ]
}
# do CIDRs $1 and $2 overlap?
_net_overlap() {
  local a b
  read -r -a a <<<"$(_net_range "$1")"
  read -r -a b <<<"$(_net_range "$2")"
  [ "${a[0]}" -le "${b[1]}" ] && [ "${b[0]}" -le "${a[1]}" ]
}
_net_valid_cidr() {
  [[ $1 =~ ^([0-9]{1,3}\.){3}[0-9]{1,3}/([0-9]|[12][0-9]|3[0-2])$ ]]
}
_net_cidr_network() { # a.b.c.d/n -> network/n
  local r i
  read -r -a r <<<"$(_net_range "$1")"
  i=${r[0]}
  echo "$((i >> 24 & 255)).$((i >> 16 & 255)).$((i >> 8 & 255)).$((i & 255))/${1#*/}"
}

net_preflight() {
  local cidr=$1 dst host addr
  if ! _net_valid_cidr "$cidr"; then
    _net_log "refusing: '$cidr' is not an IPv4 CIDR"
    return 1
  fi
  if ! _net_inside "$cidr" "$NET_ALLOWED_NET/$NET_ALLOWED_PREFIX"; then
    _net_log "refusing: $cidr is outside $NET_ALLOWED_NET/$NET_ALLOWED_PREFIX (the only range free on these machines)"
    return 1
  fi
  # any route (any table, any type) for an address of the subnet, except the default route
  while read -r dst _; do
    case $dst in default | "") continue ;; esac
    [[ $dst == */* ]] || dst=$dst/32
    _net_valid_cidr "$dst" || continue
    if _net_overlap "$dst" "$cidr"; then
      _net_log "refusing: the host already has a route for $dst, which overlaps $cidr: $(ip -4 route show table all | grep -F "${dst%/32}" | head -n 1)"
      return 1
    fi
  done < <(ip -4 route show table all | sed -E 's/^(unreachable|blackhole|prohibit|throw|local|broadcast|multicast|anycast) //')
  # package mirrors (and the npm registry) must not resolve into it
  for host in $(grep -rhoE '^[^#]*https?://[^/ ]+' /etc/apt/sources.list /etc/apt/sources.list.d 2>/dev/null |
    sed -E 's|.*https?://||; s|.*@||; s|:.*||' | sort -u) registry.npmjs.org; do
    for addr in $(getent ahostsv4 "$host" 2>/dev/null | awk '{ print $1 }' | sort -u); do
      if _net_inside "$addr/32" "$cidr"; then
        _net_log "refusing: $host resolves to $addr inside $cidr"
        return 1
      fi
    done
  done
  return 0
}

_net_fw() { # -I|-D BRIDGE: DROP forwarding into or out of the bridge; traffic inside it is fine
  local op=$1 br=$2 tag="bowline-test:$2"
  if [ "$op" = -I ]; then
    iptables -C FORWARD -i "$br" ! -o "$br" -m comment --comment "$tag" -j DROP 2>/dev/null ||
      iptables -I FORWARD 1 -i "$br" ! -o "$br" -m comment --comment "$tag" -j DROP
    iptables -C FORWARD -o "$br" ! -i "$br" -m comment --comment "$tag" -j DROP 2>/dev/null ||
      iptables -I FORWARD 1 -o "$br" ! -i "$br" -m comment --comment "$tag" -j DROP
  else
    while iptables -D FORWARD -i "$br" ! -o "$br" -m comment --comment "$tag" -j DROP 2>/dev/null; do :; done
    while iptables -D FORWARD -o "$br" ! -i "$br" -m comment --comment "$tag" -j DROP 2>/dev/null; do :; done
  fi
}

net_bridge_create() {
  local br=$1 hostcidr=$2 subnet
  if [ ${#br} -gt 15 ] || [ -z "$br" ]; then
    _net_log "bridge name '$br' must have 1 to 15 characters"
    return 1
  fi
  subnet=$(_net_cidr_network "$hostcidr")
  net_preflight "$subnet" || return 1
  if ip link show "$br" >/dev/null 2>&1; then
    _net_log "refusing: $br exists already"
    return 1
  fi
  _NET_UNDO+=("net_bridge_remove $br $subnet")
  ip link add "$br" type bridge stp_state 0 forward_delay 0 || return 1
  sysctl -qw "net.ipv6.conf.$br.disable_ipv6=1"
  _net_fw -I "$br" || return 1
  ip addr add "$hostcidr" dev "$br" || return 1
  ip link set "$br" up || return 1
  # if the bridge goes away while a guest address is still used, nothing falls to the default route
  ip route add unreachable "$subnet" metric "$NET_GUARD_METRIC" 2>/dev/null || true
}

net_bridge_remove() {
  local br=$1 subnet=${2:-}
  ip link del "$br" 2>/dev/null || true
  _net_fw -D "$br"
  if [ -n "$subnet" ]; then
    ip route del unreachable "$subnet" metric "$NET_GUARD_METRIC" 2>/dev/null || true
  fi
  return 0
}

net_isolated_create() {
  local name=$1 br=$2 hostcidr=$3 start=$4 end=$5 subnet xml hosts="" pair mac ip
  shift 5
  if [ ${#br} -gt 15 ] || [ -z "$br" ] || [ -z "$name" ]; then
    _net_log "usage: net_isolated_create NAME BRIDGE(<=15 chars) HOST_CIDR RANGE_START RANGE_END [MAC=IP ...]"
    return 1
  fi
  subnet=$(_net_cidr_network "$hostcidr")
  net_preflight "$subnet" || return 1
  for ip in "$start" "$end"; do
    if ! _net_inside "$ip/32" "$subnet"; then
      _net_log "refusing: DHCP range address $ip is outside $subnet"
      return 1
    fi
  done
  for pair in "$@"; do
    mac=${pair%%=*}
    ip=${pair#*=}
    _net_inside "$ip/32" "$subnet" || {
      _net_log "refusing: $ip is outside $subnet"
      return 1
    }
    hosts+="      <host mac='$mac' ip='$ip'/>"$'\n'
  done
  xml=$(mktemp)
  # dhcp-ignore-clid: one lease per MAC, whatever client ids a guest sends (bowline node check
  # asks it of NAT spaces' networks).
  cat >"$xml" <<EOF
<network xmlns:dnsmasq='http://libvirt.org/schemas/network/dnsmasq/1.0'>
  <name>$name</name>
  <bridge name='$br' stp='off' delay='0'/>
  <dns enable='no'/>
  <ip address='${hostcidr%/*}' prefix='${hostcidr#*/}'>
    <dhcp>
      <range start='$start' end='$end'/>
$hosts    </dhcp>
  </ip>
  <dnsmasq:options>
    <dnsmasq:option value='dhcp-ignore-clid'/>
  </dnsmasq:options>
</network>
EOF
  _NET_UNDO+=("net_isolated_remove $name $br")
  if ! $VIRSH -q net-create "$xml" >/dev/null; then
    rm -f "$xml"
    return 1
  fi
  rm -f "$xml"
  # libvirt already rejects forwarding for an isolated network; belt and braces
  _net_fw -I "$br"
  sysctl -qw "net.ipv6.conf.$br.disable_ipv6=1" 2>/dev/null || true
}

net_isolated_remove() {
  local name=$1 br=${2:-}
  $VIRSH -q net-destroy "$name" >/dev/null 2>&1 || true
  $VIRSH -q net-undefine "$name" >/dev/null 2>&1 || true
  [ -z "$br" ] || _net_fw -D "$br"
  return 0
}

net_client_netns() {
  local ns=$1 subnet=$2 base host_if client_if
  net_preflight "$subnet/30" || return 1
  base=${subnet##*.}
  NET_HOST_IP=${subnet%.*}.$((base + 1))
  NET_CLIENT_IP=${subnet%.*}.$((base + 2))
  host_if=${ns:0:12}h client_if=${ns:0:12}c
  _NET_UNDO+=("net_client_netns_remove $ns $host_if")
  ip netns add "$ns" || return 1
  ip link add "$host_if" type veth peer name "$client_if" || return 1
  ip link set "$client_if" netns "$ns" || return 1
  sysctl -qw "net.ipv6.conf.$host_if.disable_ipv6=1" 2>/dev/null || true
  ip addr add "$NET_HOST_IP/30" dev "$host_if" && ip link set "$host_if" up || return 1
  ip netns exec "$ns" ip addr add "$NET_CLIENT_IP/30" dev "$client_if" &&
    ip netns exec "$ns" ip link set "$client_if" up && ip netns exec "$ns" ip link set lo up || return 1
  # the host forwards nothing from the client's side: it reaches the host's own address only
  iptables -C FORWARD -i "$host_if" -j DROP 2>/dev/null || iptables -I FORWARD 1 -i "$host_if" -j DROP
}

net_client_netns_remove() {
  local ns=$1 host_if=${2:-${1:0:12}h}
  ip netns del "$ns" 2>/dev/null || true
  ip link del "$host_if" 2>/dev/null || true
  while iptables -D FORWARD -i "$host_if" -j DROP 2>/dev/null; do :; done
  return 0
}

net_ping() {
  busybox ping -q -c "${3:-3}" -W 1 -I "$1" "$2" >/dev/null 2>&1
}

# net_guard_drop DATA_DIR: removes the nftables table of the guest guard of the bowline server
# whose data directory that is (it outlives the server on purpose: guests keep their rules
# across a server restart; a test's table goes with the test).
net_guard_drop() {
  local table
  [ -f "$1/guest-guard.nft" ] || return 0
  table=$(sed -n 's/^table bridge \(bowline_[0-9a-f]\{3\}\)$/\1/p' "$1/guest-guard.nft" | head -n 1)
  [ -z "$table" ] || nft delete table bridge "$table" 2>/dev/null || true
}

net_cleanup() {
  local i
  for ((i = ${#_NET_UNDO[@]} - 1; i >= 0; i--)); do
    # shellcheck disable=SC2086 # an undo entry is a command line
    ${_NET_UNDO[i]} || true
  done
  _NET_UNDO=()
}
