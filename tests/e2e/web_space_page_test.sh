#!/usr/bin/env bash
# The spaces list and a space's page in a real browser (web/tests/space_page.mjs: Debian's
# Chromium through playwright-core) against a real `bowline server` on libvirt's test driver:
# no guest boots, so it needs no KVM, image or bridge. The server samples once an hour (no
# samples yet); alice's running NAT space lists ports 22 and 8080. The browser checks that the
# list shows the address the space's page shows, that port 22 gets the ssh command and no
# http:// link, that charts without samples say so instead of drawing a time axis of years, and
# that alice's share of the space with bob shows him what his role allows.
# The server and the browser run in a network namespace with only loopback (lib/web.sh).
# Usage: web_space_page_test.sh BOWLINE_BINARY SCREENSHOT_DIR
# Prints "N passed, M failed"; exit status 1 when a case failed. Everything it makes is
# removed on exit, also on failure.
set -uo pipefail

log() { echo "web_space_page_test: $*"; }
work=""
# shellcheck source=lib/web.sh
. "$(dirname "$0")/lib/web.sh"

# The part inside the network namespace: server, user, template, space, browser.
inner() {
  local bowline=$1 shots=$2 token id
  work=$3
  trap web_server_stop EXIT
  web_netns_up || ifail "loopback in the test's network namespace"
  WEB_LIBVIRT_URI=test:///default web_server_start "$bowline" "$work" "$work/images" \
    --stats-interval 1h || ifail "$WEB_ERROR"
  log "server on $BOWLINE_SERVER"
  local password=alice-$$-pw
  token=$("$bowline" user create alice --password "$password" 2>&1 |
    sed -n 's/.*token (shown once): *\([^ ]*\).*/\1/p')
  [ -n "$token" ] || ifail "user create alice"
  "$bowline" user create bob --password "bob-$$-pw" >/dev/null 2>&1 || ifail "user create bob"
  "$bowline" template create "$work/template.yaml" --name page >/dev/null || ifail "template create"
  BOWLINE_TOKEN=$token "$bowline" space create page box --wait --no-ready >/dev/null 2>&1 ||
    ifail "space create"
  id=$(BOWLINE_TOKEN=$token "$bowline" space info box -o json | jq -r .id)
  [ -n "$id" ] && [ "$id" != null ] || ifail "space info"
  BASE_URL=$BOWLINE_SERVER SCREENSHOT_DIR=$shots ALICE_PASSWORD=$password SPACE_ID=$id BOB_PASSWORD=bob-$$-pw \
    SPACE_NAME=box web_node space_page.mjs
}
if [ "${1:-}" = --inner ]; then
  shift
  inner "$@"
  exit $?
fi

bowline=${1:?usage: web_space_page_test.sh BOWLINE_BINARY SCREENSHOT_DIR}
shots=${2:?usage: web_space_page_test.sh BOWLINE_BINARY SCREENSHOT_DIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
fail() {
  log "FAIL: $*"
  echo "0 passed, 1 failed"
  exit 1
}
[ "$(id -u)" = 0 ] || fail "needs root (a network namespace of its own)"
web_preflight "$root" || fail "$WEB_ERROR"
command -v jq >/dev/null || fail "no jq (scripts/setup installs it)"
command -v qemu-img >/dev/null || fail "no qemu-img (scripts/setup installs it)"
work=$(mktemp -d /tmp/bowline-web-space-page.XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
mkdir -p "$shots" "$work/images/cloud-images"
qemu-img create -q -f qcow2 "$work/images/cloud-images/tiny.qcow2" 16M || fail "qemu-img create"
cat >"$work/template.yaml" <<'YAML'
name: page-${{ .user.username }}-${{ .space.name }}
image: tiny
memory: 64M
network:
  mode: nat
  bridge: default
ports: [22, 8080]
YAML
web_in_netns "$0" "$bowline" "$shots" "$work"
