#!/usr/bin/env bash
# The web UI in a real browser: Debian's Chromium driven by playwright-core (web/tests/e2e.mjs)
# against a real `bowline server` (private data dir, domain type qemu, a free loopback port)
# and a real tiny guest on a host-only bridge in 198.51.100.0/24. This script makes the guest
# image, the bridge, the server and the users (with the CLI); the browser part logs in,
# creates a space and watches it reach running, opens VM Display and VM Console, and checks
# that a user without the permissions gets neither, changes a stopped space's address from its
# page; an admin (ada) uses the templates page (line:column errors at their line, save), the
# pools page, the users page, sorts and filters lists and reads the Nodes page's checks.
# Screenshots go to SCREENSHOT_DIR.
# The server and the browser run in a network namespace with only loopback (lib/web.sh).
# With DROP_LIBVIRT_CLIENTS (tests/e2e/drop_libvirt_clients), libvirtd also drops the server's
# connection under an open console viewer, and the guest reboots under it.
# Usage: web_ui_test.sh BOWLINE_BINARY SCREENSHOT_DIR [DROP_LIBVIRT_CLIENTS]
# Prints "N passed, M failed"; exit status 1 when a case failed. Everything it makes is
# removed on exit, also on failure.
set -uo pipefail

log() { echo "web_ui_test: $*"; }
work=""
# shellcheck source=lib/web.sh
. "$(dirname "$0")/lib/web.sh"

# The part inside the network namespace: server, users, template, browser.
inner() {
  local bowline=$1 shots=$2 prefix=$4 resolver=$5 chosen_ip=$6 new_ip=$7 outside_ip=$8 drop=${9:-} status
  work=$3
  trap web_server_stop EXIT
  web_netns_up || ifail "loopback in the test's network namespace"
  # auto: where KVM does not run, the server warns of software emulation and the UI shows it.
  WEB_DOMAIN_TYPE=auto web_server_start "$bowline" "$work" "$work/images" --resolvers "$resolver" ||
    ifail "$WEB_ERROR"
  log "server on $BOWLINE_SERVER"

  local alice_password=alice-$prefix-pw bob_password=bob-$prefix-pw
  "$bowline" user create alice --password "$alice_password" --service-password "svc-$prefix" \
    --permission use-vnc --permission use-web-terminal >/dev/null || ifail "user create alice"
  "$bowline" user create bob --password "$bob_password" >/dev/null || ifail "user create bob"
  "$bowline" user create ada --password "ada-$prefix-pw" --permission admin >/dev/null || ifail "user create ada"
  "$bowline" template create "$work/template.yaml" --name "$prefix" >/dev/null || ifail "template create"

  BASE_URL=$BOWLINE_SERVER TEMPLATE=$prefix SCREENSHOT_DIR=$shots CHOSEN_IP=$chosen_ip \
    NEW_IP=$new_ip OUTSIDE_IP=$outside_ip \
    ALICE_PASSWORD=$alice_password BOB_PASSWORD=$bob_password ADA_PASSWORD=ada-$prefix-pw ADMIN_TOKEN=$BOWLINE_TOKEN \
    DROP_LIBVIRT_CLIENTS=$drop SERVER_PID=$WEB_SERVER_PID web_node e2e.mjs
  status=$?
  return $status
}
if [ "${1:-}" = --inner ]; then
  shift
  inner "$@"
  exit $?
fi

bowline=${1:?usage: web_ui_test.sh BOWLINE_BINARY SCREENSHOT_DIR}
shots=${2:?usage: web_ui_test.sh BOWLINE_BINARY SCREENSHOT_DIR}
drop=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=lib/net.sh
. "$here/lib/net.sh"
# shellcheck source=lib/spaces.sh
. "$here/lib/spaces.sh"

web_begin bwwebf "$shots"
"$root/scripts/build-test-guest" "$work/images/cloud-images/tiny.qcow2" >"$work/guest.log" 2>&1 ||
  { cat "$work/guest.log"; fail "scripts/build-test-guest"; }

# A free /28 of 198.51.100.0/24 (other tests may hold some).
subnet=$(net_free_subnet 28) || fail "no free /28 in 198.51.100.0/24"
net_prefix=${subnet%.*}
base=${subnet##*.}
bridge=bwf-$tag
net_bridge_create "$bridge" "$net_prefix.$((base + 1))/28" || fail "bridge $bridge"
log "bridge $bridge on $subnet/28"

cat >"$work/template.yaml" <<YAML
name: $prefix-\${{ .user.username }}-\${{ .space.name }}
hostname: \${{ toLower .space.name }}
image: tiny
memory: 256M
cpus: 1
network:
  mode: bridged
  bridge: $bridge
  cidr: $subnet/28
  ip_range_start: $net_prefix.$((base + 4))
  ip_range_end: $net_prefix.$((base + 12))
display: true
console: true
YAML

# The chosen address, another free one for set-ip, and one in the subnet outside the range.
web_in_netns "$0" "$bowline" "$shots" "$work" "$prefix" "$net_prefix.$((base + 1))" \
  "$net_prefix.$((base + 10))" "$net_prefix.$((base + 11))" "$net_prefix.$((base + 13))" "$drop"
status=$?
[ $status = 0 ] || tail -n 40 "$work/server.log" | sed 's/^/  server: /'
exit $status
