# shellcheck shell=bash
# Helpers for the end-to-end tests that run spaces through `bowline server` (source this file
# after net.sh and server.sh).
#   spaces_preflight                 root, the tools, a reachable libvirtd (status 1 otherwise)
#   spaces_prepare_images IMAGES     builds the tiny test guest into IMAGES/cloud-images as
#                                    $SPACES_IMAGE.qcow2 (templates say "image: $SPACES_IMAGE")
#   spaces_re TEXT                   TEXT with its dots escaped for a regex
#   space_info_ip SPACE SECS         the "ip:" row of `bowline space info SPACE` (the table the
#                                    user reads), once it is not "-", waiting up to SECS
#   dom_mac | dom_memory | dom_disk DOMAIN   first NIC's MAC, memory (KiB), first disk's file
#   spaces_remove_domains PREFIX     destroys and undefines every domain whose name starts so
#   spaces_nat_network               an isolated libvirt network on a free /27 of 198.51.100.0/24
#                                    for NAT spaces; sets $natnet (aborts when it cannot)
#   spaces_tiny_template NAME [YAML] uploads template NAME: the tiny guest, 128M, 1 CPU, NAT on
#                                    $natnet, console on, domains named $prefix-<space>, and
#                                    YAML's fields (ports, cloudInit) after those
#   spaces_begin NAME                the common start of a test: $tag and $prefix (domain names),
#                                    log and abort, a clean-up on exit (server, domains,
#                                    networks, work dir), the preflight, and $work under
#                                    libvirt's images with HOME in it and no BOWLINE_* settings
SPACES_IMAGE=bwe2e-tiny
_spaces_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)

spaces_preflight() {
  local tool
  if [ "$(id -u)" != 0 ]; then
    echo "needs root (libvirt system connection, bridges, iptables)" >&2
    return 1
  fi
  for tool in virsh qemu-img iptables busybox jq python3; do
    command -v "$tool" >/dev/null || {
      echo "missing $tool (scripts/setup installs it)" >&2
      return 1
    }
  done
  $VIRSH -q list >/dev/null 2>&1 || "$_spaces_root/scripts/prepare-host" >/dev/null || return 1
}

spaces_prepare_images() {
  mkdir -p "$1/cloud-images" && chmod 0755 "$1" "$1/cloud-images" &&
    "$_spaces_root/scripts/build-test-guest" "$1/cloud-images/$SPACES_IMAGE.qcow2" >/dev/null
}

spaces_re() {
  printf '%s' "${1//./\\.}"
}

space_info_ip() {
  local deadline=$(($(date +%s) + $2)) ip=""
  while :; do
    ip=$("$BOWLINE" space info "$1" 2>/dev/null | awk '$1 == "ip:" { print $2 }')
    if [ -n "$ip" ] && [ "$ip" != - ]; then
      echo "$ip"
      return 0
    fi
    [ "$(date +%s)" -lt "$deadline" ] || break
    sleep 1
  done
  echo "$ip"
  return 1
}

dom_mac() {
  $VIRSH dumpxml "$1" 2>/dev/null | grep -oE "<mac address='[^']+'" | head -n 1 | cut -d"'" -f2
}
dom_memory() {
  $VIRSH dumpxml "$1" 2>/dev/null | sed -n "s:.*<memory unit='KiB'>\([0-9]*\)</memory>.*:\1:p"
}
dom_disk() {
  $VIRSH dumpxml "$1" 2>/dev/null | grep -oE "<source file='[^']+\.qcow2'" | head -n 1 | cut -d"'" -f2
}

spaces_remove_domains() {
  local d
  for d in $($VIRSH list --all --name 2>/dev/null | grep "^$1"); do
    $VIRSH -q destroy "$d" >/dev/null 2>&1 || true
    # Snapshots and a managed save would make a plain undefine refuse and leave the domain.
    $VIRSH -q undefine --nvram --snapshots-metadata --managed-save "$d" >/dev/null 2>&1 ||
      $VIRSH -q undefine --snapshots-metadata --managed-save "$d" >/dev/null 2>&1 ||
      $VIRSH -q undefine "$d" >/dev/null 2>&1 || true
  done
}

spaces_nat_network() {
  local nsub npre nbase
  nsub=$(net_free_subnet 27) || abort "no free /27 in 198.51.100.0/24"
  npre=${nsub%.*}
  nbase=${nsub##*.}
  natnet=$prefix-nat
  net_isolated_create "$natnet" "bwe2en$tag" "$npre.$((nbase + 1))/27" "$npre.$((nbase + 10))" \
    "$npre.$((nbase + 20))" || abort "isolated network $natnet"
}

spaces_tiny_template() { # NAME [YAML]: the tiny guest on the NAT network, YAML's fields added
  cat >"$work/$1.yaml" <<YAML
name: $prefix-\${{ .space.name }}
hostname: \${{ .space.name }}
image: $SPACES_IMAGE
memory: 128M
cpus: 1
network:
  mode: nat
  bridge: $natnet
console: true
${2:-}
YAML
  bw template create "$work/$1.yaml" --name "$1" >/dev/null || abort "template create $1"
}

# no_domain DOMAIN: libvirt does not know DOMAIN.
no_domain() {
  ! $VIRSH -q dominfo "$1" >/dev/null 2>&1
}

# bw ARG...: the CLI without its progress lines; they are shown only when it fails.
bw() {
  local out rc
  out=$("$BOWLINE" "$@" 2>&1)
  rc=$?
  [ "$rc" = 0 ] || printf '%s\n' "$out" | tail -n 15 | sed 's/^/    /' >&2
  return "$rc"
}

spaces_begin() {
  _spaces_test=$1
  # Defined here, not when this file is sourced: other tests have their own.
  log() { echo "$_spaces_test: $*"; }
  abort() { # a step that the rest depends on failed
    fail "$*"
    summary
    exit 1
  }
  tag=$(printf '%04x%02x' $((RANDOM)) $(($$ % 256)))
  prefix=bwe2e-$tag # domains: $prefix-<space>
  work=""
  trap _spaces_cleanup EXIT
  trap 'exit 130' INT TERM
  spaces_preflight || abort "preflight"
  work=$(mktemp -d /var/lib/libvirt/images/bwe2e-XXXXXX) # libvirt-qemu must read the images
  chmod 0755 "$work"
  # The CLI talks only to this test's server: no login file, no settings from the environment.
  unset "${!BOWLINE_@}"
  export HOME=$work/home
}
_spaces_cleanup() {
  server_stop KILL
  spaces_remove_domains "$prefix-"
  server_drop_guard
  net_cleanup
  if [ -n "$work" ]; then rm -rf "$work"; fi
}
