#!/usr/bin/env bash
# End-to-end check of the tiny test guest alone (no bowline binary): builds the image with
# scripts/build-test-guest, boots it through libvirt (<domain type='qemu'>, TCG) with NoCloud seeds
# and checks the guest's console markers.
#   case static:  Linux bridge, static IP from network-config v2 (flow list, quoted values),
#                 hostname, users, write_files, runcmd; host pings the guest; ACPI shutdown
#                 (virsh shutdown) within 30 s; restart shows boot count=2 (the overlay persists)
#   case dhcp:    isolated libvirt network (DHCP only, fixed lease), network-config v2 with
#                 "match: name" globs and dhcp4 (as bowline renders "DHCP everywhere"), nested
#                 multipart MIME user-data (cloud-config + the user's own MIME with a shell
#                 script), no default route in the guest; host pings the guest
# Needs root, a running libvirtd (scripts/prepare-host) and the packages listed in
# scripts/build-test-guest, plus genisoimage. Everything it makes has a unique name and is removed
# on exit, also on failure. Network traffic stays on the host-only networks it creates in
# 198.51.100.0/24.
# Prints "N passed, M failed"; exit status 1 when a case failed.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=lib/net.sh
. "$here/lib/net.sh"

VIRSH="virsh -c qemu:///system"
BOOT_TIMEOUT=${BOOT_TIMEOUT:-90} # TCG on 2 busy cores: ~5 s idle, 30+ s while others compile
SHUTDOWN_TIMEOUT=${SHUTDOWN_TIMEOUT:-30}
passed=0
failed=0
tag=$(printf '%04x' $((RANDOM)))$(printf '%02x' $(($$ % 256)))
domains=()
work=""

log() { echo "tiny_guest_boot_test: $*"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

cleanup() {
  local d
  for d in "${domains[@]}"; do
    $VIRSH -q destroy "$d" >/dev/null 2>&1 || true
    $VIRSH -q undefine "$d" >/dev/null 2>&1 || true
  done
  net_cleanup
  [ -n "$work" ] && rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ "$(id -u)" != 0 ]; then
  echo "tiny_guest_boot_test: needs root (libvirt system connection, bridges, iptables)" >&2
  echo "0 passed, 1 failed"
  exit 1
fi
for tool in virsh genisoimage qemu-img iptables busybox; do
  if ! command -v "$tool" >/dev/null; then
    echo "tiny_guest_boot_test: missing $tool" >&2
    echo "0 passed, 1 failed"
    exit 1
  fi
done
if ! $VIRSH -q list >/dev/null 2>&1; then
  "$root/scripts/prepare-host" >/dev/null
fi

# qemu runs as libvirt-qemu: keep everything in a world-searchable directory
mkdir -p /var/lib/libvirt/images
work=$(mktemp -d /var/lib/libvirt/images/bowline-e2e-tiny.XXXXXX)
chmod 0755 "$work"

# A free /26 of 198.51.100.0/24 (another test may hold one): prints the network address.
pick_subnet() {
  local n
  for n in 0 64 128 192; do
    if net_preflight "198.51.100.$n/26" 2>/dev/null; then
      echo "198.51.100.$n"
      return 0
    fi
  done
  net_preflight 198.51.100.0/26 # for its message
  return 1
}

# wait_for FILE REGEX TIMEOUT: until a line of FILE matches the extended REGEX
wait_for() {
  local deadline
  deadline=$(($(date +%s) + $3))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    grep -aqE "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}
wait_state() { # DOMAIN STATE TIMEOUT
  local deadline
  deadline=$(($(date +%s) + $3))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    [ "$($VIRSH domstate "$1" 2>/dev/null)" = "$2" ] && return 0
    sleep 0.1
  done
  return 1
}
# expect FILE REGEX WHAT: a console line matching REGEX must be there
expect() {
  if tr -d '\r' <"$1" | grep -aqE "$2"; then
    return 0
  fi
  log "FAIL: $3: no console line matches /$2/"
  return 1
}
show_console() {
  log "console ($1):"
  tr -d '\r' <"$1" | grep -av '^\s*$' | tail -n 40 | sed 's/^/    /'
}

make_seed() { # DIR ISO: the seed's files are in DIR
  genisoimage -quiet -output "$2" -volid cidata -joliet -rock "$1"
}

define_domain() { # NAME DISK SEED CONSOLE_LOG INTERFACE_XML
  cat >"$work/$1.xml" <<EOF
<domain type='qemu'>
  <name>$1</name>
  <memory unit='MiB'>256</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type><boot dev='hd'/></os>
  <features><acpi/></features>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>restart</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <disk type='file' device='disk'>
      <driver name='qemu' type='qcow2'/>
      <source file='$2'/>
      <target dev='vda' bus='virtio'/>
    </disk>
    <disk type='file' device='cdrom'>
      <driver name='qemu' type='raw'/>
      <source file='$3'/>
      <target dev='hdc' bus='ide'/>
      <readonly/>
    </disk>
    $5
    <serial type='pty'>
      <log file='$4' append='off'/>
      <target port='0'/>
    </serial>
    <console type='pty'><target type='serial' port='0'/></console>
  </devices>
</domain>
EOF
  domains+=("$1")
  $VIRSH -q define "$work/$1.xml" >/dev/null
}

# --- the image -------------------------------------------------------------------------------
t=$(now)
if ! "$root/scripts/build-test-guest" "$work/tiny.qcow2"; then
  log "FAIL: scripts/build-test-guest"
  echo "0 passed, 1 failed"
  exit 1
fi
t_build=$(since "$t")
log "image built in ${t_build} s"

# --- case static: bridge + static address, shutdown, restart --------------------------------
case_static() {
  local name=bowline-e2e-tiny-$tag-s br=bwts-$tag net ip mac seed=$work/seed-static disk con t
  net=$(pick_subnet) || return 1
  ip=${net%.*}.$((${net##*.} + 10))
  mac=52:54:00:b0:${tag:0:2}:${tag:2:2}
  net_bridge_create "$br" "${net%.*}.$((${net##*.} + 1))/26" || return 1

  mkdir -p "$seed"
  cat >"$seed/meta-data" <<EOF
instance-id: "iid-e2e-$tag"
local-hostname: tiny-from-meta
EOF
  # written the way yaml-cpp emits it: quoted strings, nested block sequences, flow sequences
  cat >"$seed/user-data" <<EOF
#cloud-config
hostname: "tiny-e2e"
users:
  - name: "tester"
    shell: /bin/sh
    ssh_authorized_keys:
      - "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE2eTestKeyOne tester@ci"
      - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE2eTestKeyTwo tester@laptop
write_files:
  - path: "/etc/e2e-marker"
    permissions: "0644"
    content: |
      written by write_files
      second line
runcmd:
  - "echo \"TEST: runcmd hello from \$(hostname) uid=\$(id -u)\""
  - [sh, -c, 'echo "TEST: runcmd list \$(head -n 1 /etc/e2e-marker | tr " " _)"']
EOF
  cat >"$seed/network-config" <<EOF
version: 2
ethernets:
  nic0:
    match:
      macaddress: "$mac"
    set-name: "eth0"
    addresses: [$ip/26]
    nameservers:
      addresses: ["${net%.*}.$((${net##*.} + 1))"]
EOF
  make_seed "$seed" "$work/seed-static.iso" || return 1
  disk=$work/$name.qcow2
  con=$work/$name.console.log
  qemu-img create -q -f qcow2 -b "$work/tiny.qcow2" -F qcow2 "$disk" || return 1

  t=$(now)
  define_domain "$name" "$disk" "$work/seed-static.iso" "$con" \
    "<interface type='bridge'><source bridge='$br'/><mac address='$mac'/><model type='virtio'/></interface>" ||
    return 1
  $VIRSH -q start "$name" >/dev/null || return 1
  if ! wait_for "$con" '^TEST: READY' "$BOOT_TIMEOUT"; then
    log "FAIL: static: no 'TEST: READY' within $BOOT_TIMEOUT s"
    show_console "$con"
    return 1
  fi
  log "static: define -> READY in $(since "$t") s"
  wait_for "$con" 'tiny-e2e login:' 10 || true
  local ok=0
  expect "$con" "^TEST: seed found on /dev/sr0" "seed" || ok=1
  expect "$con" "^TEST: instance-id=iid-e2e-$tag hostname=tiny-from-meta" "meta-data" || ok=1
  expect "$con" "^TEST: hostname=tiny-e2e$" "hostname" || ok=1
  expect "$con" "^TEST: net eth0 mac=$mac addr=$ip/26$" "static address" || ok=1
  expect "$con" "^TEST: dns ${net%.*}.$((${net##*.} + 1))$" "nameservers" || ok=1
  expect "$con" "^TEST: user tester keys=2$" "users" || ok=1
  expect "$con" "^TEST: file /etc/e2e-marker bytes=35$" "write_files" || ok=1
  expect "$con" "^TEST: runcmd hello from tiny-e2e uid=0$" "runcmd string item" || ok=1
  expect "$con" "^TEST: runcmd list written_by_write_files$" "runcmd list item" || ok=1
  expect "$con" "^TEST: boot count=1$" "boot count" || ok=1
  expect "$con" "^Cloud-init v\. test-tiny finished at .+\. Datasource DataSourceNoCloud \[seed=/dev/sr0\]\.$" \
    "final message" || ok=1
  expect "$con" "tiny-e2e login:" "login prompt" || ok=1
  if ! net_ping "$br" "$ip" 3; then
    log "FAIL: static: $ip does not answer ping on $br"
    ok=1
  fi
  [ $ok = 0 ] || {
    show_console "$con"
    return 1
  }

  t=$(now)
  $VIRSH -q shutdown "$name" >/dev/null || return 1
  if ! wait_state "$name" "shut off" "$SHUTDOWN_TIMEOUT"; then
    log "FAIL: static: still '$($VIRSH domstate "$name")' $SHUTDOWN_TIMEOUT s after virsh shutdown"
    show_console "$con"
    return 1
  fi
  log "static: virsh shutdown -> shut off in $(since "$t") s"

  t=$(now)
  $VIRSH -q start "$name" >/dev/null || return 1
  if ! wait_for "$con" '^TEST: READY' "$BOOT_TIMEOUT"; then
    log "FAIL: static: no 'TEST: READY' within $BOOT_TIMEOUT s after the restart"
    show_console "$con"
    return 1
  fi
  log "static: restart -> READY in $(since "$t") s"
  if ! expect "$con" "^TEST: boot count=2$" "boot count after restart (persistence)"; then
    show_console "$con"
    return 1
  fi
  $VIRSH -q destroy "$name" >/dev/null 2>&1
  return 0
}

# --- case dhcp: isolated libvirt network, match-name globs, multipart user-data ---------------
case_dhcp() {
  local name=bowline-e2e-tiny-$tag-d netname=bowline-e2e-$tag br=bwtd-$tag net host ip mac
  local seed=$work/seed-dhcp con disk t boundary=bowline-e2e-boundary-$tag script_b64
  net=$(pick_subnet) || return 1
  host=${net%.*}.$((${net##*.} + 1))
  ip=${net%.*}.$((${net##*.} + 20))
  mac=52:54:00:b1:${tag:0:2}:${tag:2:2}
  net_isolated_create "$netname" "$br" "$host/26" "${net%.*}.$((${net##*.} + 30))" \
    "${net%.*}.$((${net##*.} + 60))" "$mac=$ip" || return 1

  mkdir -p "$seed"
  # shellcheck disable=SC2016 # expanded in the guest
  script_b64=$(printf '#!/bin/sh\necho "TEST: script part ran as $(id -un) on $(hostname)"\n' | base64 -w 0)
  printf 'instance-id: iid-e2e-dhcp-%s\nlocal-hostname: "tiny-dhcp"\n' "$tag" >"$seed/meta-data"
  # as bowline renders it when the user's own user-data is MIME: our cloud-config part, then the
  # user's message verbatim as a nested multipart part
  cat >"$seed/user-data" <<EOF
Content-Type: multipart/mixed; boundary="$boundary"
MIME-Version: 1.0

--$boundary
Content-Type: text/cloud-config; charset="utf-8"
MIME-Version: 1.0
Content-Transfer-Encoding: 7bit

#cloud-config
users: [default, {name: ops, ssh_authorized_keys: ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOpsKey ops@ci"]}]
runcmd:
- 'echo "TEST: default routes=\$(ip route | grep -c ^default)"'

--$boundary
Content-Type: multipart/mixed; boundary="user-$boundary"
MIME-Version: 1.0

--user-$boundary
Content-Type: text/x-shellscript; charset="us-ascii"
MIME-Version: 1.0
Content-Transfer-Encoding: base64
Content-Disposition: attachment; filename="10-part.sh"

$script_b64
--user-$boundary--

--$boundary--
EOF
  cat >"$seed/network-config" <<EOF
network:
  version: 2
  ethernets:
    all-en:
      match:
        name: "en*"
      dhcp4: true
    all-eth:
      match: {name: "eth*"}
      dhcp4: yes
EOF
  make_seed "$seed" "$work/seed-dhcp.iso" || return 1
  disk=$work/$name.qcow2
  con=$work/$name.console.log
  qemu-img create -q -f qcow2 -b "$work/tiny.qcow2" -F qcow2 "$disk" || return 1

  t=$(now)
  define_domain "$name" "$disk" "$work/seed-dhcp.iso" "$con" \
    "<interface type='network'><source network='$netname'/><mac address='$mac'/><model type='virtio'/></interface>" ||
    return 1
  $VIRSH -q start "$name" >/dev/null || return 1
  if ! wait_for "$con" '^TEST: READY' "$BOOT_TIMEOUT"; then
    log "FAIL: dhcp: no 'TEST: READY' within $BOOT_TIMEOUT s"
    show_console "$con"
    return 1
  fi
  log "dhcp: define -> READY in $(since "$t") s"
  local ok=0
  expect "$con" "^TEST: user-data type=multipart parts=2$" "multipart user-data" || ok=1
  expect "$con" "^TEST: hostname=tiny-dhcp$" "hostname from meta-data" || ok=1
  expect "$con" "^TEST: net eth0 mac=$mac addr=$ip/26$" "DHCP address" || ok=1
  expect "$con" "^TEST: user ops keys=1$" "users (flow style)" || ok=1
  expect "$con" "^TEST: script part ran as root on tiny-dhcp$" "shell script part" || ok=1
  expect "$con" "^TEST: default routes=0$" "no default route" || ok=1
  if grep -aq '^TEST: user default' "$con"; then
    log "FAIL: dhcp: 'default' must not be reported as a user"
    ok=1
  fi
  if ! net_ping "$br" "$ip" 3; then
    log "FAIL: dhcp: $ip does not answer ping on $br"
    ok=1
  fi
  [ $ok = 0 ] || {
    show_console "$con"
    return 1
  }
  $VIRSH -q destroy "$name" >/dev/null 2>&1
  return 0
}

for c in static dhcp; do
  if "case_$c"; then
    log "ok: $c"
    passed=$((passed + 1))
  else
    log "FAILED: $c"
    failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
