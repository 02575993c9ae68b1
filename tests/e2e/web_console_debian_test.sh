#!/usr/bin/env bash
# The browser's ways into the real Debian guest (heavy suite, ctest label e2e-debian): the real
# `bowline server` and a Debian 12 space (scripts/build-debian-guest, Debian's own getty on ttyS0
# and sshd) from a template with `console: true`; its owner has use-web-terminal and a service
# password. In Debian's Chromium (web/tests/console_login.mjs) the owner logs in to the UI:
#   - VM Terminal: a shell over SSH that the server opens, with no password typed: `id -un`
#     prints the owner, resizing the window changes `stty size`, two tabs are two shells;
#   - the space page's Connect panel: the ssh line, port 22 open, the pinned fingerprint;
#   - VM Console: getty's `login:`, the username and service password, `hostname; id -un`.
# The browser runs in a network namespace that reaches only the server's address (a veth pair,
# lib/net.sh), so the shell it gets came through the server; the server runs on the host, where
# it reaches the guest.
# Usage: web_console_debian_test.sh BOWLINE_BINARY SCREENSHOT_DIR
# Prints "N passed, M failed"; exit status 1 when a case failed. Everything it makes is
# removed on exit, also on failure.
set -uo pipefail

log() { echo "web_console_debian_test: $*"; }
work=""
READY_TIMEOUT=${READY_TIMEOUT:-900} # TCG on 2 cores: ~1 min idle, 10+ minutes while others compile
# shellcheck source=lib/web.sh
. "$(dirname "$0")/lib/web.sh"

bowline=${1:?usage: web_console_debian_test.sh BOWLINE_BINARY SCREENSHOT_DIR}
shots=${2:?usage: web_console_debian_test.sh BOWLINE_BINARY SCREENSHOT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=lib/net.sh
. "$here/lib/net.sh"
# shellcheck source=lib/spaces.sh
. "$here/lib/spaces.sh"

web_begin bwwcd "$shots"
t=$SECONDS
"$root/scripts/build-debian-guest" "$work/images/cloud-images/debian-12.qcow2" >"$work/build.log" 2>&1 ||
  { cat "$work/build.log"; fail "scripts/build-debian-guest"; }
log "Debian image ready in $((SECONDS - t)) s"

# An isolated libvirt network (DHCP only) on a free /28 of 198.51.100.0/24.
subnet=$(net_free_subnet 28) || fail "no free /28 in 198.51.100.0/24"
base=${subnet##*.}
net3=${subnet%.*}
network=$prefix
net_isolated_create "$network" "bwc$tag" "$net3.$((base + 1))/28" "$net3.$((base + 2))" \
  "$net3.$((base + 14))" || fail "isolated network on $subnet/28"
log "network $network on $subnet/28"

hostname=deb-$tag
cat >"$work/template.yaml" <<YAML
name: $prefix-\${{ .space.name }}
hostname: $hostname
image: debian-12
memory: 1G
cpus: 2
network:
  mode: nat
  bridge: $network
console: true
YAML

# The browser's machine: it reaches the server's address and nothing else.
client_subnet=$(net_free_subnet 30) || fail "no free /30 for the browser's namespace"
client_ns=bwwc$tag
net_client_netns "$client_ns" "$client_subnet" || fail "the browser's namespace on $client_subnet/30"
trap 'web_server_stop; _web_cleanup' EXIT
export HOME=$work/home # the CLI's login file (and the certificate it pins) are the test's own
mkdir -p "$HOME"
WEB_LISTEN=$NET_HOST_IP web_server_start "$bowline" "$work" "$work/images" || fail "$WEB_ERROR"
log "server on $BOWLINE_SERVER (the browser in $client_ns at $NET_CLIENT_IP)"

user=dana
password=$user-$prefix-pw service_password="svc-$prefix!"
out=$("$bowline" user create "$user" --password "$password" --service-password "$service_password" \
  --permission use-web-terminal) || fail "user create $user: $out"
user_token=$(sed -n 's/.*token (shown once): *\([^ ]*\).*/\1/p' <<<"$out")
[ -n "$user_token" ] || fail "user create printed no token: $out"
"$bowline" template create "$work/template.yaml" --name debian-console >/dev/null || fail "template create"

t=$SECONDS
# In the background and waited for: a TERM (ctest's timeout) then runs the cleanup at once.
BOWLINE_TOKEN=$user_token "$bowline" space create debian-console dev --wait --timeout "$READY_TIMEOUT" \
  >"$work/create.out" 2>&1 &
wait $! || { cat "$work/create.out"; BOWLINE_TOKEN=$user_token "$bowline" space info dev; fail "space create --wait"; }
log "space ready (cloud-init done) $((SECONDS - t)) s after the request"
space_id=$(BOWLINE_TOKEN=$user_token "$bowline" space info dev -o json |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])') || fail "space info dev"
address=$(BOWLINE_TOKEN=$user_token "$bowline" space info dev -o json |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["info"]["address"] or "")')
ip netns exec "$client_ns" timeout 5 bash -c "exec 3<>/dev/tcp/$address/22" 2>/dev/null &&
  fail "the browser's namespace reaches the guest ($address) without the server"

ip netns exec "$client_ns" env BASE_URL="$BOWLINE_SERVER" SERVER_SPKI="${SERVER_SPKI:-}" \
  SCREENSHOT_DIR="$shots" SPACE_ID="$space_id" \
  USERNAME="$user" PASSWORD="$password" SERVICE_PASSWORD="$service_password" \
  GUEST_HOSTNAME="$hostname" node "$root/web/tests/console_login.mjs"
