#!/usr/bin/env bash
# The tunnel through the real server to a real guest's TCP port, fast (ctest -R tunnel): the
# tiny test guest runs an echo service (busybox nc -e cat) on port 7000, which its template
# lists in `ports:`. `bowline tunnel SPACE 7000` carries 10 MB of random bytes to it from
# standard input and its echo back to standard output: byte-exact, and the half-close goes both
# ways (the end of our input ends the guest's cat, whose end ends the tunnel and the command).
# A port the template does not list is refused, naming the rule. Networks: an isolated libvirt
# network on a free /27 of 198.51.100.0/24 (lib/net.sh). Everything made here starts with
# bwe2e and is removed on exit, also on failure.
# Usage: tunnel_tiny_guest_test.sh BOWLINE_BINARY
# Prints one ok/FAIL line per check and "N passed, M failed"; exit status 1 when a check failed.
set -uo pipefail

BOWLINE=${1:?usage: tunnel_tiny_guest_test.sh BOWLINE_BINARY}
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
spaces_begin tunnel_tiny_guest_test
images=$work/images
spaces_prepare_images "$images" || abort "building the test guest into $images/cloud-images"

nsub=$(net_free_subnet 27) || abort "no free /27 in 198.51.100.0/24"
npre=${nsub%.*}
nbase=${nsub##*.}
natbr=bwe2et$tag
natnet=$prefix-tun
net_isolated_create "$natnet" "$natbr" "$npre.$((nbase + 1))/27" "$npre.$((nbase + 10))" \
  "$npre.$((nbase + 20))" || abort "isolated network $natnet"

server_start "$BOWLINE" "$work/server.log" --data-dir "$work/data" --images-path "$images" \
  --libvirt-uri qemu:///system --domain-type qemu || abort "bowline server"

cat >"$work/echo.yaml" <<YAML
name: $prefix-\${{ .space.name }}
image: $SPACES_IMAGE
memory: 256M
cpus: 1
network:
  mode: nat
  bridge: $natnet
ports: [7000]
cloudInit: |
  #cloud-config
  runcmd:
    - 'busybox nc -ll -p 7000 -e /bin/cat </dev/null >/dev/null 2>&1 & echo "TEST: echo service on 7000"'
console: true
YAML
"$BOWLINE" template create "$work/echo.yaml" --name echo >/dev/null || abort "template create"
"$BOWLINE" space create echo e1 --wait --timeout "$WAIT" >"$work/e1.out" 2>&1 ||
  { sed 's/^/    /' "$work/e1.out"; abort "space create e1 --wait"; }
console=$images/$prefix-e1/console.log
check_cmd "the guest started its echo service" wait_for "$console" '^TEST: echo service on 7000' 60

head -c 10000000 /dev/urandom >"$work/in.bin"
# The guest's address comes with its DHCP lease, a moment after the boot.
for _ in $(seq 1 30); do
  timeout 120 "$BOWLINE" tunnel e1 7000 <"$work/in.bin" >"$work/out.bin" 2>"$work/tunnel.err" && break
  sleep 1
done
check_eq "tunnel: 10 MB through the tunnel and back, byte-exact" \
  "$(sha256sum <"$work/in.bin" | cut -d' ' -f1)" "$(sha256sum <"$work/out.bin" | cut -d' ' -f1)"
[ -s "$work/tunnel.err" ] && sed 's/^/    tunnel: /' "$work/tunnel.err"
# Our end of input ended the guest's cat, whose end ended the command: no timeout was needed.
started=$(date +%s)
printf 'half-close\n' | timeout 30 "$BOWLINE" tunnel e1 7000 >"$work/small.out" 2>>"$work/tunnel.err"
rc=$?
check_eq "tunnel: the command ends by itself once both directions have ended (exit code)" 0 "$rc"
check_eq "tunnel: ... and the guest's answer came back whole" "half-close" "$(cat "$work/small.out")"

# space list shows the NAT space's address: the network's DHCP lease, from one pass over the
# node's leases (no guest agent in this guest).
lease=$(virsh -c qemu:///system net-dhcp-leases "$natnet" | awk '/ipv4/ {sub("/.*", "", $5); print $5; exit}')
check_cmd "the NAT network has leased the guest an address" test -n "$lease"
check_eq "space list: the NAT space's address is its DHCP lease" "$lease" \
  "$("$BOWLINE" space list -o json | jq -r '.[] | select(.name == "e1") | .address')"
check_cmd "tunnel: ... within seconds" test $(($(date +%s) - started)) -lt 20
out=$("$BOWLINE" tunnel e1 7001 </dev/null 2>&1)
check_match "tunnel: port 7001 (not in ports:) is refused, naming the rule" \
  "port 7001 is not one the space's template lists in ports: \\(7000\\)" "$out"
check_cmd "space delete --wait" "$BOWLINE" space delete e1 --wait --timeout "$WAIT"
summary
