#!/usr/bin/env bash
# End-to-end proof of `bowline template render`: bowline renders the seed ISO and the domain
# XML of a bridged space; the test makes the overlay, defines and starts the domain in the
# real libvirtd (domain type qemu) on a host-only bridge in 198.51.100.0/24, and checks on the
# serial console that the guest took the rendered hostname, static address, user and runcmd,
# then pings it from the host (through bowline's traffic filter, which the NIC references).
# Everything is removed on exit, also on failure.
# Usage: render_boot_test.sh BOWLINE_BINARY
# Prints "N passed, M failed"; exit status 1 when the case failed.
set -uo pipefail

bowline=${1:?usage: render_boot_test.sh BOWLINE_BINARY}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=lib/net.sh
. "$here/lib/net.sh"
# shellcheck source=lib/console.sh
. "$here/lib/console.sh"

BOOT_TIMEOUT=${BOOT_TIMEOUT:-120}
tag=$(printf '%04x%02x' $((RANDOM)) $(($$ % 256)))
domain=""
work=""

log() { echo "render_boot_test: $*"; }
cleanup() {
  if [ -n "$domain" ]; then
    $VIRSH -q destroy "$domain" >/dev/null 2>&1 || true
    $VIRSH -q undefine "$domain" >/dev/null 2>&1 || true
  fi
  net_cleanup
  [ -n "$work" ] && rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
fail() {
  log "FAIL: $*"
  echo "0 passed, 1 failed"
  exit 1
}

$VIRSH -q list >/dev/null 2>&1 || "$root/scripts/prepare-host" >/dev/null
mkdir -p /var/lib/libvirt/images
work=$(mktemp -d /var/lib/libvirt/images/bowline-e2e-render.XXXXXX) # readable by libvirt-qemu
chmod 0755 "$work"
"$root/scripts/build-test-guest" "$work/tiny.qcow2" >/dev/null || fail "scripts/build-test-guest"

subnet=""
for n in 0 64 128 192; do
  if net_preflight "198.51.100.$n/26" 2>/dev/null; then subnet=198.51.100.$n; break; fi
done
[ -n "$subnet" ] || fail "no free /26 in 198.51.100.0/24"
prefix=${subnet%.*}
base=${subnet##*.}
bridge=bwr-$tag
net_bridge_create "$bridge" "$prefix.$((base + 1))/26" || fail "bridge"
ip=$prefix.$((base + 23))

key="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINtedWGMx11mVnlDFXSYEDMjE2u+BZ972j8XfPu8NgjK alice@laptop"
cat >"$work/template.yaml" <<YAML
name: e2e-\${{ .user.username }}-\${{ .space.name }}-$tag
hostname: \${{ toLower .space.name }}-box
image: $work/tiny.qcow2
memory: 256M
cpus: 1
network:
  mode: bridged
  bridge: $bridge
  cidr: $subnet/26
  ip_range_start: $prefix.$((base + 10))
  ip_range_end: $prefix.$((base + 50))
environment:
  - GREETING=hello world
cloudInit: |
  #cloud-config
  runcmd:
    - echo "TEST: user runcmd ran on \$(hostname)"
    - . /etc/profile.d/bowline-environment.sh && echo "TEST: env GREETING=\$GREETING"
console: true
YAML

vars=(--var user.username=alice --var space.name=Dev --var "space.ip_address=$ip"
      --var user.service_password=s3cret --ssh-key "$key")
common=(--domain-type qemu --images-path "$work" --resolver "$prefix.$((base + 1))")
"$bowline" template validate "$work/template.yaml" || fail "template validate"
xml=$("$bowline" template render "$work/template.yaml" "${vars[@]}" "${common[@]}" -o domain-xml) ||
  fail "render domain-xml"
domain=$(sed -n 's:.*<name>\(.*\)</name>.*:\1:p' <<<"$xml" | head -n 1)
[ "$domain" = "e2e-alice-Dev-$tag" ] || fail "domain name is '$domain'"
space_dir=$work/$domain
mkdir -p "$space_dir"
# Rendering twice gives the same bytes.
[ "$xml" = "$("$bowline" template render "$work/template.yaml" "${vars[@]}" "${common[@]}" -o domain-xml)" ] ||
  fail "two renders differ"
"$bowline" template render "$work/template.yaml" "${vars[@]}" "${common[@]}" -o user-data \
  --seed-iso "$space_dir/seed.iso" >"$work/user-data" || fail "render seed"
qemu-img create -q -f qcow2 -F qcow2 -b "$work/tiny.qcow2" "$space_dir/disk.qcow2" || fail "overlay"
printf '%s\n' "$xml" >"$work/domain.xml"
# The NIC references bowline's traffic filter, which a server defines; here the test does, when
# the host has none yet.
if ! $VIRSH -q nwfilter-dumpxml bowline-clean-traffic >/dev/null 2>&1; then
  "$bowline" template render "$work/template.yaml" "${vars[@]}" -o nwfilter >"$work/nwfilter.xml" ||
    fail "render nwfilter"
  $VIRSH -q nwfilter-define "$work/nwfilter.xml" >/dev/null || fail "virsh nwfilter-define"
fi
$VIRSH -q define "$work/domain.xml" >/dev/null || fail "virsh define"
$VIRSH -q start "$domain" >/dev/null || fail "virsh start"

console=$space_dir/console.log
t0=$(date +%s)
if ! wait_for "$console" '^TEST: READY' "$BOOT_TIMEOUT"; then
  show_console "$console"
  fail "guest not ready after ${BOOT_TIMEOUT}s"
fi
log "guest ready $(($(date +%s) - t0)) s after start"
ok=1
expect "$console" '^TEST: seed found on ' "seed" || ok=0
expect "$console" '^TEST: hostname=dev-box$' "hostname" || ok=0
expect "$console" "^TEST: net [a-z0-9]+ mac=[0-9a-f:]+ addr=$ip/26$" "static address" || ok=0
expect "$console" '^TEST: user alice keys=1$' "owner user with key" || ok=0
expect "$console" '^TEST: user runcmd ran on dev-box$' "the template's own runcmd" || ok=0
# written by the seed's every-boot program (bootcmd), not write_files
expect "$console" '^TEST: env GREETING=hello world$' "environment file" || ok=0
net_ping "$bridge" "$ip" 3 >/dev/null || { log "FAIL: host cannot ping $ip"; ok=0; }
[ "$ok" = 1 ] || { show_console "$console"; fail "console checks"; }
log "hostname, address $ip, user, runcmd and ping all as rendered"
echo "1 passed, 0 failed"
