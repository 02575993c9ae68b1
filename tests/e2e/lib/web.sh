# shellcheck shell=bash disable=SC2034  # WEB_ERROR is read by the sourcing script
# Shared parts of the browser tests (web_ui_test.sh, web_console_debian_test.sh): Debian's
# Chromium driven by playwright-core (web/tests/*.mjs) against a real `bowline server`.
#
# The server and the browser run in a network namespace of their own with only loopback: the
# browser cannot reach anything outside, and other tests' bridges coming and going do not make
# Chromium abort its requests (ERR_NETWORK_CHANGED). The server still sees the host's bridges
# (sysfs) and reaches libvirtd over its socket; the guests live in the host's namespace.
#
#   web_preflight ROOT              status 1 and the reason in WEB_ERROR unless the browser,
#                                   node and web/node_modules are there (scripts/setup makes them)
#   web_in_netns SCRIPT ARGS...     runs `bash SCRIPT --inner ARGS...` in a new network
#                                   namespace; the script's --inner part calls web_netns_up first
#   web_netns_up                    loopback up inside that namespace
#   web_server_start BOWLINE WORK IMAGES [SERVER ARGS...]
#                                   `bowline server` on a free port of $WEB_LISTEN (default
#                                   127.0.0.1; data in WORK/data,
#                                   log in WORK/server.log, domain type $WEB_DOMAIN_TYPE or qemu,
#                                   libvirt $WEB_LIBVIRT_URI or qemu:///system); exports
#                                   BOWLINE_SERVER and BOWLINE_TOKEN (admin) and sets
#                                   WEB_SERVER_PID; status 1 and the reason in WEB_ERROR on failure
#                                   (not in $(...): the server must be this shell's child)
#   web_server_stop                 TERM to the server, waits for it
#   web_node SCRIPT.mjs             node on the test script, from the repository's web/
#   ifail MESSAGE                   the inner part's failure: the server log's tail, "0 passed,
#                                   1 failed", exit 1
#   web_begin STEM SHOTS            the common start of a browser test (the outer part): $tag
#                                   and $prefix (STEM + tag: domain and network names), fail,
#                                   a clean-up on exit (domains, networks, work dir), the
#                                   preflight, SHOTS made, and $work under libvirt's images
#                                   (readable by libvirt-qemu) with images/cloud-images in it.
#                                   Needs lib/net.sh and lib/spaces.sh sourced too.

WEB_SERVER_PID=""
WEB_ERROR=""
_web_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)

ifail() {
  log "FAIL: $*"
  [ -f "$work/server.log" ] && tail -n 30 "$work/server.log" | sed 's/^/  server: /'
  echo "0 passed, 1 failed"
  exit 1
}

web_preflight() {
  local root=$1
  [ -x /usr/bin/chromium ] || { WEB_ERROR="no /usr/bin/chromium (scripts/setup installs it)"; return 1; }
  command -v node >/dev/null || { WEB_ERROR="no node (scripts/setup installs nodejs)"; return 1; }
  [ -d "$root/web/node_modules/playwright-core" ] ||
    { WEB_ERROR="no web/node_modules (scripts/setup runs npm ci in web/)"; return 1; }
}

web_in_netns() {
  local script=$1
  shift
  unshare --net -- bash "$script" --inner "$@"
}

web_netns_up() {
  ip link set lo up
}

web_server_start() {
  local bowline=$1 work=$2 images=$3 port="" url=""
  shift 3
  local listen=${WEB_LISTEN:-127.0.0.1}
  "$bowline" server --listen "$listen:0" --data-dir "$work/data" --images-path "$images" \
    --domain-type "${WEB_DOMAIN_TYPE:-qemu}" --libvirt-uri "${WEB_LIBVIRT_URI:-qemu:///system}" "$@" \
    >"$work/server.log" 2>&1 &
  WEB_SERVER_PID=$!
  for _ in $(seq 1 120); do
    url=$(grep -aoE "listening on https?://${listen//./\\.}:[0-9]+" "$work/server.log" | head -n 1 | cut -d' ' -f3)
    port=${url##*:}
    [ -n "$port" ] && break
    kill -0 "$WEB_SERVER_PID" 2>/dev/null || { WEB_ERROR="the server exited"; return 1; }
    sleep 0.5
  done
  [ -n "$port" ] || { WEB_ERROR="the server did not start listening"; return 1; }
  export BOWLINE_SERVER=$url
  BOWLINE_TOKEN=$(cat "$work/data/admin.token") || { WEB_ERROR="no admin.token"; return 1; }
  export BOWLINE_TOKEN
  # Off loopback the server makes a self-signed certificate: the CLI pins it (in $HOME's login
  # file) and the browser trusts that one key (SERVER_SPKI).
  if [ "${url%%://*}" = https ]; then
    WEB_FINGERPRINT=$(grep -aoE 'fingerprint SHA256:[A-Za-z0-9+/]+' "$work/server.log" | head -n 1 | cut -d' ' -f2)
    "$bowline" login --server "$url" --token "$BOWLINE_TOKEN" --accept-fingerprint "$WEB_FINGERPRINT" \
      >/dev/null || { WEB_ERROR="bowline login --accept-fingerprint $WEB_FINGERPRINT"; return 1; }
    SERVER_SPKI=$(openssl x509 -in "$work/data/tls-cert.pem" -pubkey -noout |
      openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64)
    export SERVER_SPKI WEB_FINGERPRINT
  fi
}

web_server_stop() {
  [ -n "$WEB_SERVER_PID" ] || return 0
  kill -TERM "$WEB_SERVER_PID" 2>/dev/null && wait "$WEB_SERVER_PID" 2>/dev/null
  WEB_SERVER_PID=""
}

web_node() {
  local root
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
  node "$root/web/tests/$1"
}

web_begin() {
  tag=$(printf '%04x%02x' $((RANDOM)) $(($$ % 256)))
  prefix=$1$tag
  work=""
  # Defined here, not when this file is sourced: the inner part has its own.
  fail() {
    log "FAIL: $*"
    [ -n "$work" ] && [ -f "$work/server.log" ] && tail -n 30 "$work/server.log" | sed 's/^/  server: /'
    echo "0 passed, 1 failed"
    exit 1
  }
  trap _web_cleanup EXIT
  trap 'exit 130' INT TERM
  [ "$(id -u)" = 0 ] || fail "needs root (libvirt's system connection, bridges, networks)"
  web_preflight "$_web_root" || fail "$WEB_ERROR"
  $VIRSH -q list >/dev/null 2>&1 || "$_web_root/scripts/prepare-host" >/dev/null
  mkdir -p /var/lib/libvirt/images "$2"
  work=$(mktemp -d "/var/lib/libvirt/images/$prefix.XXXXXX")
  chmod 0755 "$work"
  mkdir -p "$work/images/cloud-images"
}

_web_cleanup() {
  spaces_remove_domains "$prefix"
  [ -z "$work" ] || net_guard_drop "$work/data"
  net_cleanup
  [ -n "$work" ] && rm -rf "$work"
}
