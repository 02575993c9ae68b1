#!/usr/bin/env bash
# End-to-end proof of `bowline node check` on this host's real libvirtd (qemu:///system, domain
# type qemu): ready with a good images path; the permission trap (a 0700 parent the QEMU user
# cannot enter) found with the setfacl fix; a test bridge without a NIC warns and with one passes;
# a transient isolated libvirt network passes and a missing one fails; /dev/kvm for domain type
# kvm; the KVM probe agrees with a real guest's boot under KVM. Everything made here is removed on exit, also on
# failure.
# Usage: node_check_test.sh BOWLINE_BINARY
# Prints "N passed, M failed"; exit status 1 when a case failed.
set -uo pipefail
shopt -s extglob

bowline=${1:?usage: node_check_test.sh BOWLINE_BINARY}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=lib/net.sh
. "$here/lib/net.sh"

tag=$(printf '%03x%02x' $((RANDOM % 4096)) $(($$ % 256)))
bridge=bwnc$tag
port=bwncp$tag # a veth end as the bridge's port (a NIC as far as the bridge knows)
network=bowline-nc-$tag
netbridge=bwnn$tag
work=""
passed=0
failed=0

log() { echo "node_check_test: $*"; }
cleanup() {
  virsh -c qemu:///system destroy "bwnc-oracle-$tag" >/dev/null 2>&1
  rm -rf "/var/lib/libvirt/images/bwnc-oracle-$tag"
  ip link del "$port" 2>/dev/null || true
  net_cleanup
  [ -n "$work" ] && rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

check() { # NAME COMMAND...: a case passes when the command succeeds
  local name=$1
  shift
  if "$@"; then
    passed=$((passed + 1))
    log "ok: $name"
  else
    failed=$((failed + 1))
    log "FAIL: $name"
  fi
}

# node check --json with ARGS into $out (the report) and $code (the exit status)
run() {
  out=$("$bowline" node check --uri qemu:///system --json "$@" 2>"$work/stderr")
  code=$?
}
status_of() { jq -r --arg n "$1" '.checks[] | select(.name == $n) | .status' <<<"$out"; }
field_of() { jq -r --arg n "$1" --arg f "$2" '.checks[] | select(.name == $n) | .[$f]' <<<"$out"; }

if ! virsh -c qemu:///system -q version >/dev/null 2>&1; then
  log "libvirtd is not running at qemu:///system (start it with scripts/prepare-host)"
  echo "0 passed, 1 failed"
  exit 1
fi
work=$(mktemp -d) # 0700: the trap itself
mkdir -p "$work/images"

# 1. A private parent: QEMU (libvirt-qemu) cannot enter it.
case_trap() {
  run --domain-type qemu --images-path "$work/images"
  if [ "$code" = 1 ] && [ "$(status_of images-path)" = missing ] &&
    [[ "$(field_of images-path fix)" == *"setfacl -m u:libvirt-qemu:x $work"* ]] &&
    [ "$(jq -c .runtimes <<<"$out")" = "[]" ]; then
    return 0
  fi
  log "report: $out"
  return 1
}
if getent passwd libvirt-qemu >/dev/null; then
  check "a 0700 parent is the permission trap, with the setfacl fix" case_trap
  if command -v setfacl >/dev/null; then
    setfacl -m u:libvirt-qemu:x "$work"
    run --domain-type qemu --images-path "$work/images"
    check "the setfacl fix makes it pass" test "$(status_of images-path)" = ok
    setfacl -b "$work"
  fi
fi
chmod 0755 "$work"

# 2. Ready: libvirt, qemu-img, QEMU for domain type qemu, a traversable images path.
case_ready() {
  run --domain-type qemu --images-path "$work/images"
  if [ "$code" = 0 ] && [ "$(jq -c .runtimes <<<"$out")" = '["kvm"]' ] &&
    [ "$(status_of libvirt)" = ok ] && [ "$(status_of qemu-img)" = ok ] &&
    [ "$(status_of domain-type)" = ok ] && [ "$(status_of images-path)" = ok ] &&
    [ -z "$(status_of kvm)" ]; then
    return 0
  fi
  log "report: $out"
  return 1
}
check "ready with domain type qemu" case_ready

# 3. A template's bridge: missing, then without a NIC (warn), then with one.
cat >"$work/bridged.yaml" <<EOF
image: tiny
memory: 64Mi
cpus: 1
network:
  mode: bridged
  bridge: $bridge
  cidr: 198.51.100.208/28
networks:
  - name: $network
EOF
case_bridge_missing() {
  run --domain-type qemu --images-path "$work/images" --template "$work/bridged.yaml"
  if [ "$code" = 1 ] && [ "$(status_of "bridge:$bridge")" = missing ] &&
    [ "$(status_of "network:$network")" = missing ]; then
    return 0
  fi
  log "report: $out"
  return 1
}
check "a missing bridge and network fail the node" case_bridge_missing

if net_bridge_create "$bridge" 198.51.100.209/28 &&
  net_isolated_create "$network" "$netbridge" 198.51.100.225/28 198.51.100.226 198.51.100.238; then
  case_no_nic() {
    run --domain-type qemu --images-path "$work/images" --template "$work/bridged.yaml"
    if [ "$code" = 0 ] && [ "$(status_of "bridge:$bridge")" = warn ] &&
      [[ "$(field_of "bridge:$bridge" detail)" == *"no enslaved NIC"* ]] &&
      [ "$(status_of "network:$network")" = ok ]; then
      return 0
    fi
    log "report: $out"
    return 1
  }
  check "a bridge without a NIC warns; an active isolated network passes" case_no_nic
  ip link add "$port" type veth peer name "${port}x" && ip link set "$port" master "$bridge"
  case_nic() {
    run --domain-type qemu --images-path "$work/images" --template "$work/bridged.yaml"
    if [ "$code" = 0 ] && [ "$(status_of "bridge:$bridge")" = ok ] &&
      [[ "$(field_of "bridge:$bridge" detail)" == *"$port"* ]]; then
      return 0
    fi
    log "report: $out"
    return 1
  }
  check "a bridge with a port passes" case_nic
else
  failed=$((failed + 1))
  log "FAIL: could not make the test bridge and network"
fi

# 4. Domain type kvm needs /dev/kvm.
case_kvm() {
  run --domain-type kvm --images-path "$work/images"
  if [ -e /dev/kvm ]; then
    [ -n "$(status_of kvm)" ]
  else
    [ "$code" = 1 ] && [ "$(status_of kvm)" = missing ] &&
      [[ "$(field_of kvm fix)" == *"--domain-type qemu"* ]]
  fi || {
    log "report: $out"
    return 1
  }
}
check "domain type kvm checks /dev/kvm" case_kvm

# 4b. Only booting a guest proves KVM. The oracle: the tiny test guest (SYSLINUX, the Debian
# cloud kernel, a busybox init) as a kvm domain with the CPU and machine spaces get, straight
# through virsh: KVM runs guests when its init prints "TEST: init start" (a second or two under
# KVM). On hosts with a broken nested KVM, QEMU aborts at once ("failed to set MSR"), pauses the
# vCPU ("KVM internal error ... emulation failure", where SYSLINUX's core takes an interrupt),
# or the vCPU runs on without booting; a guest without a disk runs on happily on all of them,
# so it is no oracle. node check's auto must agree with this one.
oracle=bwnc-oracle-$tag
oracle_dir=/var/lib/libvirt/images/$oracle
kvm_boots_a_guest() {
  [ -e /dev/kvm ] || {
    echo "no /dev/kvm" >"$work/oracle.out"
    return 1
  }
  mkdir -p "$oracle_dir" && chmod 0711 "$oracle_dir" &&
    "$root/scripts/build-test-guest" "$oracle_dir/tiny.qcow2" >"$work/oracle.out" 2>&1 &&
    qemu-img create -q -f qcow2 -b "$oracle_dir/tiny.qcow2" -F qcow2 "$oracle_dir/disk.qcow2" ||
    return 1
  cat >"$work/oracle.xml" <<XML
<domain type='kvm'>
  <name>$oracle</name>
  <memory unit='MiB'>256</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='q35'>hvm</type><boot dev='hd'/></os>
  <cpu mode='host-model'/>
  <devices>
    <disk type='file' device='disk'>
      <driver name='qemu' type='qcow2'/><source file='$oracle_dir/disk.qcow2'/>
      <target dev='vda' bus='virtio'/>
    </disk>
    <serial type='file'><source path='$oracle_dir/serial.log'/><target port='0'/></serial>
    <memballoon model='none'/>
  </devices>
</domain>
XML
  virsh -c qemu:///system create "$work/oracle.xml" >>"$work/oracle.out" 2>&1 || return 1
  local i state
  for i in $(seq 1 120); do
    grep -q "TEST: init start" "$oracle_dir/serial.log" 2>/dev/null && return 0
    state=$(virsh -c qemu:///system domstate --reason "$oracle" 2>&1)
    [[ "$state" == running* ]] || {
      echo "the guest is $state" >>"$work/oracle.out"
      return 1
    }
    sleep 1
  done
  echo "no 'TEST: init start' on the serial port in 120 s" >>"$work/oracle.out"
  return 1
}
case_kvm_probe() {
  local expected=qemu
  kvm_boots_a_guest && expected=kvm
  virsh -c qemu:///system destroy "$oracle" >/dev/null 2>&1
  log "the tiny guest as a kvm domain on this host: $([ $expected = kvm ] && echo boots || echo "does not boot: $(tail -c 400 "$work/oracle.out" 2>/dev/null | tr '\n' ' ')")"
  run --domain-type auto --images-path "$work/images"
  local auto_out=$out auto_code=$code
  [ "$auto_code" = 0 ] && [ "$(jq -r .domainType <<<"$auto_out")" = "$expected" ] &&
    [ "$(jq -r .domainTypeSetting <<<"$auto_out")" = auto ] || {
    log "auto report: $auto_out"
    return 1
  }
  if [ "$expected" = qemu ]; then
    # the reason, in QEMU's words (or the missing device), and the warning
    [ "$(out=$auto_out status_of kvm-runs)" = warn ] &&
      jq -e '.warnings[0] | test("software emulation")' <<<"$auto_out" >/dev/null || {
      log "auto report: $auto_out"
      return 1
    }
    if [ -e /dev/kvm ]; then
      # QEMU's words, or how far the probe program got
      [[ "$(out=$auto_out field_of kvm-runs detail)" == *@(qemu-system|KVM internal error|boot stopped)* ]] || {
        log "no QEMU message in: $auto_out"
        return 1
      }
    fi
    run --domain-type kvm --images-path "$work/images"
    [ "$code" = 1 ] && [ "$(status_of kvm-runs)" = missing ] &&
      [[ "$(field_of kvm-runs fix)" == *"software emulation"* ]] || {
      log "kvm report: $out"
      return 1
    }
  else
    [ "$(out=$auto_out status_of kvm-runs)" = ok ] || {
      log "auto report: $auto_out"
      return 1
    }
  fi
}
check "the KVM probe agrees with a real guest booting under KVM" case_kvm_probe

# 5. The table: every check on a line, the fix under a failed one.
case_table() {
  local text
  text=$("$bowline" node check --uri qemu:///system --domain-type qemu --images-path "$work/images" \
    --template "$work/bridged.yaml" 2>&1)
  if [[ $text == *"ok      libvirt reachable at qemu:///system: connected"* ]] &&
    [[ $text == *"ready: runtimes kvm"* ]]; then
    return 0
  fi
  log "output: $text"
  return 1
}
check "table output" case_table

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
