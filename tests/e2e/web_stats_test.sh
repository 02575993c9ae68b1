#!/usr/bin/env bash
# What a space uses, end to end, on one real tiny guest whose runcmd spins a
# CPU loop: a real `bowline server` sampling every 2 s (--stats-interval), Debian's Chromium
# (web/tests/stats.mjs) showing the space page's charts change from live data, the list's CPU
# and memory columns, /metrics parsed by the Prometheus client's own parser (Debian's
# python3-prometheus-client) with one series per running space, and `bowline space top` and
# `space info`. The server and browser run in a network namespace with only loopback
# (lib/web.sh); the guest sits on a host-only bridge in 198.51.100.0/24.
# Usage: web_stats_test.sh BOWLINE_BINARY SCREENSHOT_DIR
# Prints "N passed, M failed"; exit status 1 when a case failed. Everything it makes is
# removed on exit, also on failure.
set -uo pipefail

log() { echo "web_stats_test: $*"; }
work=""
# shellcheck source=lib/web.sh
. "$(dirname "$0")/lib/web.sh"

# The part inside the network namespace: server, users, the space, the browser.
inner() {
  local bowline=$1 shots=$2 prefix=$4 resolver=$5 space status
  work=$3
  trap web_server_stop EXIT
  web_netns_up || ifail "loopback in the test's network namespace"
  web_server_start "$bowline" "$work" "$work/images" --resolvers "$resolver" --stats-interval 2s ||
    ifail "$WEB_ERROR"
  log "server on $BOWLINE_SERVER"
  local alice_password=alice-$prefix-pw
  "$bowline" user create alice --password "$alice_password" >/dev/null || ifail "user create alice"
  "$bowline" template create "$work/template.yaml" --name "$prefix" >/dev/null || ifail "template create"
  # One guest boot for the whole test; it spins from its runcmd on.
  space=$("$bowline" space create "$prefix" stats --owner alice --wait --timeout "${BOOT_TIMEOUT:-300}" -o json) ||
    ifail "space create (the guest did not come up)"
  log "space $(jq -r .id <<<"$space") running"

  BASE_URL=$BOWLINE_SERVER SCREENSHOT_DIR=$shots ALICE_PASSWORD=$alice_password \
    ADMIN_TOKEN=$BOWLINE_TOKEN SPACE_ID=$(jq -r .id <<<"$space") BOWLINE=$bowline web_node stats.mjs
  status=$?
  return $status
}
if [ "${1:-}" = --inner ]; then
  shift
  inner "$@"
  exit $?
fi

bowline=${1:?usage: web_stats_test.sh BOWLINE_BINARY SCREENSHOT_DIR}
shots=${2:?usage: web_stats_test.sh BOWLINE_BINARY SCREENSHOT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=lib/net.sh
. "$here/lib/net.sh"
# shellcheck source=lib/spaces.sh
. "$here/lib/spaces.sh"

web_begin bwsts "$shots"
/usr/bin/python3 -c "import prometheus_client.parser" 2>/dev/null ||
  fail "no python3-prometheus-client (scripts/setup installs it)"
"$root/scripts/build-test-guest" "$work/images/cloud-images/tiny.qcow2" >"$work/guest.log" 2>&1 ||
  { cat "$work/guest.log"; fail "scripts/build-test-guest"; }

subnet=$(net_free_subnet 28) || fail "no free /28 in 198.51.100.0/24"
net_prefix=${subnet%.*}
base=${subnet##*.}
bridge=bws-$tag
net_bridge_create "$bridge" "$net_prefix.$((base + 1))/28" || fail "bridge $bridge"
log "bridge $bridge on $subnet/28"

# busybox sh runs runcmd's lines; the loop is left running in the background.
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
cloudInit: |
  #cloud-config
  runcmd:
    - 'while :; do :; done &'
YAML

web_in_netns "$0" "$bowline" "$shots" "$work" "$prefix" "$net_prefix.$((base + 1))"
status=$?
[ $status = 0 ] || tail -n 40 "$work/server.log" | sed 's/^/  server: /'
exit $status
