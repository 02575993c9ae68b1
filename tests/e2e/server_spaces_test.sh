#!/usr/bin/env bash
# End-to-end proof of a space's life through the real `bowline server` and the `bowline` CLI, on
# the real libvirtd (qemu:///system, domain type qemu) with the tiny test guest
# (scripts/build-test-guest) in the server's cloud-image library. What it proves:
#   1   a NAT space boots; `space info` shows the address the isolated libvirt network leased
#   2   a bridged space gets an address from its range, the guest applies it, the host pings it
#   9a  both are created at the same time and both boot
#   3   stop/start keeps the disk: a file a first-boot runcmd wrote is still there, boot count 2
#   4   a template change (memory) applies at the next start; overlay and MAC are kept
#   5   `space set-ip` (refused while running) while stopped; the guest has it after the start
#   7   a missing image and a missing bridge fail with that reason and leave nothing
#   8   a pool of 2 (NAT): a claim returns a running member as the owner's; the pool refills
#   6   delete leaves no domain, no file and no address (a new space takes the address again)
# Networks: a host-only bridge and an isolated libvirt network, each a free /27 of
# 198.51.100.0/24 made through lib/net.sh; nothing routes off the host. Everything made here
# starts with bwe2e and is removed on exit, also on failure.
# Usage: server_spaces_test.sh BOWLINE_BINARY
# Prints one ok/FAIL line per check and "N passed, M failed"; exit status 1 when a check failed.
set -uo pipefail

BOWLINE=${1:?usage: server_spaces_test.sh BOWLINE_BINARY}
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

started=$(date +%s)
WAIT=${WAIT:-300} # longest a --wait may take: TCG boots on 2 busy cores take 7-40 s, more under load
spaces_begin server_spaces_test
images=$work/images
spaces_prepare_images "$images" || abort "building the test guest into $images/cloud-images"

bsub=$(net_free_subnet 27) || abort "no free /27 in 198.51.100.0/24"
bpre=${bsub%.*}
bbase=${bsub##*.}
bridge=bwe2eb$tag
gw=$bpre.$((bbase + 1))
net_bridge_create "$bridge" "$gw/27" || abort "bridge $bridge"
nsub=$(net_free_subnet 27) || abort "no second free /27 in 198.51.100.0/24"
npre=${nsub%.*}
nbase=${nsub##*.}
natbr=bwe2en$tag
natnet=$prefix-nat
net_isolated_create "$natnet" "$natbr" "$npre.$((nbase + 1))/27" "$npre.$((nbase + 10))" \
  "$npre.$((nbase + 20))" || abort "isolated network $natnet"
log "bridge $bridge on $bsub/27, network $natnet on $nsub/27"

server_start "$BOWLINE" "$work/server.log" --data-dir "$work/data" --images-path "$images" \
  --libvirt-uri qemu:///system --domain-type qemu --stop-timeout 60 --resolvers "$gw" ||
  abort "bowline server"

# The first boot writes a file on the disk (a runcmd runs at every boot of the tiny guest, so it
# writes only when the file is missing); later boots print what they find.
mark_cmd="if [ -f /boot/bwe2e-mark ]; then echo \"TEST: mark kept \$(cat /boot/bwe2e-mark)\"; else echo first-boot-$tag >/boot/bwe2e-mark; sync; echo \"TEST: mark new \$(cat /boot/bwe2e-mark)\"; fi"
bridged_template() { # MEMORY
  cat <<YAML
name: $prefix-\${{ .space.name }}
hostname: \${{ .space.name }}
image: $SPACES_IMAGE
memory: $1
cpus: 1
network:
  mode: bridged
  bridge: $bridge
  cidr: $bsub/27
  ip_range_start: $bpre.$((bbase + 10))
  ip_range_end: $bpre.$((bbase + 20))
  gateway: $gw
cloudInit: |
  #cloud-config
  runcmd:
    - '$mark_cmd'
console: true
YAML
}
bridged_template 256M >"$work/bridged.yaml"
bridged_template 320M >"$work/bridged-v2.yaml"
cat >"$work/nat.yaml" <<YAML
name: $prefix-\${{ .space.name }}
hostname: \${{ .space.name }}
image: $SPACES_IMAGE
memory: 256M
cpus: 1
network:
  mode: nat
  bridge: $natnet
console: true
YAML
sed "s/^image: .*/image: bwe2e-missing-$tag/" "$work/bridged.yaml" >"$work/noimage.yaml"
sed "s/^  bridge: .*/  bridge: bwe2ex$tag/" "$work/bridged.yaml" >"$work/nobridge.yaml"
for t in bridged nat noimage nobridge; do
  "$BOWLINE" template create "$work/$t.yaml" --name "$t" >/dev/null || abort "template create $t"
done

# --- 1, 2 and 9 (first half): a NAT and a bridged space created at the same time ---------------
t0=$(date +%s)
"$BOWLINE" space create nat n1 --wait --timeout "$WAIT" >"$work/n1.out" 2>"$work/n1.err" &
p1=$!
"$BOWLINE" space create bridged b1 --wait --timeout "$WAIT" >"$work/b1.out" 2>"$work/b1.err" &
p2=$!
wait "$p1"
rc1=$?
wait "$p2"
rc2=$?
log "both parallel creates returned after $(($(date +%s) - t0)) s"
check_eq "9: NAT space created in parallel, ready: exit code" 0 "$rc1"
check_eq "9: bridged space created in parallel, ready: exit code" 0 "$rc2"
[ "$rc1" = 0 ] || sed 's/^/    /' "$work/n1.err"
[ "$rc2" = 0 ] || sed 's/^/    /' "$work/b1.err"
n1_console=$images/$prefix-n1/console.log
b1_console=$images/$prefix-b1/console.log
check_cmd "9: NAT guest booted (console TEST: READY)" wait_for "$n1_console" '^TEST: READY' 60
check_cmd "9: bridged guest booted (console TEST: READY)" wait_for "$b1_console" '^TEST: READY' 60
check_eq "9: NAT space state" running "$(space_json n1 | jq -r .state)"
check_eq "9: bridged space state" running "$(space_json b1 | jq -r .state)"

# 1: the address in `space info` (table) is the lease, and the guest has it.
n1_ip=$(space_info_ip n1 30)
n1_last=${n1_ip##*.}
if [[ $n1_ip == "$npre".* ]] && [ "$n1_last" -ge $((nbase + 10)) ] && [ "$n1_last" -le $((nbase + 20)) ]; then
  pass "1: space info shows $n1_ip, in the DHCP range $npre.$((nbase + 10))-$((nbase + 20))"
else
  fail "1: '$n1_ip' is not in the DHCP range $npre.$((nbase + 10))-$((nbase + 20))"
fi
check_cmd "1: the guest's console shows the leased address $n1_ip" \
  expect "$n1_console" "^TEST: net eth0 mac=$(dom_mac "$prefix-n1") addr=$(spaces_re "$n1_ip")/27$" "leased address"
check_cmd "1: the host pings the NAT guest at $n1_ip" net_ping "$natbr" "$n1_ip" 3

# 2: the bridged address comes from the template's range; the guest applied it.
b1_ip=$(space_json b1 | jq -r '.ip // empty')
b1_last=${b1_ip##*.}
if [[ $b1_ip == "$bpre".* ]] && [ "$b1_last" -ge $((bbase + 10)) ] && [ "$b1_last" -le $((bbase + 20)) ]; then
  pass "2: allocated $b1_ip from the range $bpre.$((bbase + 10))-$((bbase + 20))"
else
  fail "2: allocated '$b1_ip', not in the range $bpre.$((bbase + 10))-$((bbase + 20))"
fi
b1_mac=$(dom_mac "$prefix-b1")
check_cmd "2: the guest's console shows $b1_ip/27 on eth0 ($b1_mac)" \
  expect "$b1_console" "^TEST: net eth0 mac=$b1_mac addr=$(spaces_re "$b1_ip")/27$" "static address"
check_cmd "2: the host pings the bridged guest at $b1_ip" net_ping "$bridge" "$b1_ip" 3
check_eq "2: space info shows the address" "$b1_ip" "$(space_info_ip b1 5)"
check_cmd "3: the first boot wrote the file on the disk" \
  expect "$b1_console" "^TEST: mark new first-boot-$tag$" "first boot mark"
check_cmd "3: first boot of the disk (boot count=1)" expect "$b1_console" '^TEST: boot count=1$' "boot count"
b1_disk=$images/$prefix-b1/disk.qcow2
b1_inode=$(stat -c %i "$b1_disk" 2>/dev/null)

# security: a space's files are not another local account's. QEMU's user must get through the
# directory, so anyone may (the control); nobody may list it or read a file in it.
b1_dir=$images/$prefix-b1
check_cmd "security: a local account gets through to the space's directory (control)" \
  runuser -u nobody -- test -x "$b1_dir"
check_not_cmd "security: a local account cannot list the space's directory" \
  runuser -u nobody -- ls "$b1_dir"
for f in disk.qcow2 seed.iso console.log; do
  check_eq "security: $f is 0600" 600 "$(stat -c %a "$b1_dir/$f" 2>&1)"
  check_not_cmd "security: a local account cannot read $f" runuser -u nobody -- head -c 1 "$b1_dir/$f"
done

# --- 3: stop/start keeps the disk --------------------------------------------------------------
t=$(date +%s)
check_cmd "3: space stop --wait" bw space stop b1 --wait --timeout "$WAIT"
check_eq "3: state after stop" stopped "$(space_json b1 | jq -r .state)"
check_eq "3: the domain is shut off, still defined" "shut off" "$($VIRSH domstate "$prefix-b1" 2>&1)"
check_eq "3: the overlay is still there (same inode)" "$b1_inode" "$(stat -c %i "$b1_disk" 2>&1)"
check_cmd "3: space start --wait" bw space start b1 --wait --timeout "$WAIT"
wait_for "$b1_console" '^TEST: READY' 60
check_cmd "3: the file written at the first boot is still on the disk" \
  expect "$b1_console" "^TEST: mark kept first-boot-$tag$" "mark kept"
check_cmd "3: second boot of the same disk (boot count=2)" expect "$b1_console" '^TEST: boot count=2$' "boot count"

log "stop/start cycle took $(($(date +%s) - t)) s"

# --- 4 and 5: template change and a new address, both while stopped ----------------------------
t=$(date +%s)
"$BOWLINE" template update "$work/bridged-v2.yaml" --name bridged >/dev/null
check_eq "4: template updated: redefine pending" true "$(space_json b1 | jq -r '.info.redefinePending // .redefinePending')"
check_eq "4: the running domain keeps its memory until the next start (KiB)" 262144 "$(dom_memory "$prefix-b1")"
b1_new=$bpre.$((bbase + 20))
[ "$b1_new" != "$b1_ip" ] || b1_new=$bpre.$((bbase + 19))
out=$("$BOWLINE" space set-ip b1 "$b1_new" 2>&1)
rc=$?
check_eq "5: set-ip while running is refused: exit code" 1 "$rc"
check_match "5: set-ip while running: the reason" "stop the space first" "$out"
check_cmd "4: space stop --wait" bw space stop b1 --wait --timeout "$WAIT"
out=$("$BOWLINE" space set-ip b1 "$b1_new" 2>&1)
check_eq "5: set-ip $b1_new while stopped: exit code" 0 "$?"
check_eq "5: the space holds the new address" "$b1_new" "$(space_json b1 | jq -r .ip)"
check_cmd "4: space start --wait" bw space start b1 --wait --timeout "$WAIT"
wait_for "$b1_console" '^TEST: READY' 60
check_eq "4: the domain has the new memory (KiB)" 327680 "$(dom_memory "$prefix-b1")"
check_eq "4: the domain kept its MAC" "$b1_mac" "$(dom_mac "$prefix-b1")"
check_eq "4: the overlay is the same file (inode)" "$b1_inode" "$(stat -c %i "$b1_disk" 2>&1)"
check_eq "4: the domain's disk is the overlay" "$b1_disk" "$(dom_disk "$prefix-b1")"
check_cmd "4: the disk's content survived the redefine" \
  expect "$b1_console" "^TEST: mark kept first-boot-$tag$" "mark kept"
check_cmd "4: third boot of the same disk (boot count=3)" expect "$b1_console" '^TEST: boot count=3$' "boot count"
check_eq "4: no redefine pending after the start" false "$(space_json b1 | jq -r '.info.redefinePending // .redefinePending')"
check_eq "4: applied template revision" 2 "$(space_json b1 | jq -r .appliedRevision)"
check_cmd "5: the guest's console shows $b1_new/27" \
  expect "$b1_console" "^TEST: net eth0 mac=$b1_mac addr=$(spaces_re "$b1_new")/27$" "new address"
check_cmd "5: the host pings the guest at $b1_new" net_ping "$bridge" "$b1_new" 3
check_not_cmd "5: nothing answers at the old address $b1_ip" net_ping "$bridge" "$b1_ip" 2
check_eq "5: space info shows the new address" "$b1_new" "$(space_info_ip b1 5)"

log "template change and set-ip cycle took $(($(date +%s) - t)) s"

# --- 7: a missing image and a missing bridge ---------------------------------------------------
# The bridge is checked before anything is made: refused, no space. The image is resolved by the
# create operation: it fails, and the space stays in state error with the reason (docs/api.md:
# failures stay on the space), with nothing made and its address released.
out=$("$BOWLINE" space create noimage x1 --wait --timeout "$WAIT" 2>&1)
check_eq "7: create with a missing image: exit code" 1 "$?"
check_match "7: create with a missing image: the message names the image" "bwe2e-missing-$tag" "$out"
x1=$(space_json x1)
check_eq "7: missing image: the space is in state error" error "$(jq -r .state <<<"$x1")"
check_match "7: missing image: the space's error names the image" "bwe2e-missing-$tag" "$(jq -r .error <<<"$x1")"
check_eq "7: missing image: no address held" null "$(jq -r .ip <<<"$x1")"
check_cmd "7: missing image: no domain" no_domain "$prefix-x1"
check_not_cmd "7: missing image: no directory" test -e "$images/$prefix-x1"
check_cmd "7: the failed space can be deleted" bw space delete x1 --wait --timeout "$WAIT"
out=$("$BOWLINE" space create nobridge x2 --wait --timeout "$WAIT" 2>&1)
check_eq "7: create with a missing bridge: exit code" 1 "$?"
check_match "7: create with a missing bridge: the message names the bridge" "bridge bwe2ex$tag does not exist" "$out"
check_eq "7: missing bridge: no space" "" "$("$BOWLINE" space list -o json | jq -r '.[] | select(.name == "x2") | .id')"
check_cmd "7: missing bridge: no domain" no_domain "$prefix-x2"
check_not_cmd "7: missing bridge: no directory" test -e "$images/$prefix-x2"
check_eq "7: after both failures only the two spaces are listed" "b1 n1" \
  "$("$BOWLINE" space list -o json | jq -r '[.[].name] | sort | join(" ")')"

# --- 8: pools ----------------------------------------------------------------------------------
# A pool of 2 on the NAT template: both members boot unowned; a claim hands one to the admin
# (the tiny guest has no QEMU guest agent, so the member restarts into the owner's seed: the
# console then shows the owner's user and the space's host name) and the pool makes a new one.
pool_json() { "$BOWLINE" pool info p1 -o json 2>/dev/null; }
pool_ready() { # COUNT SECS: until the pool has COUNT running members
  local deadline=$(($(date +%s) + $2))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    [ "$(pool_json | jq -r '.ready')" = "$1" ] && return 0
    sleep 1
  done
  return 1
}
check_cmd "8: pool create p1 --template nat --size 2" bw pool create p1 --template nat --size 2
out=$("$BOWLINE" pool create pb --template bridged --size 1 2>&1)
check_eq "8: a pool of a bridged template is refused: exit code" 1 "$?"
check_match "8: ... with the reason" "bridged.*(address|NAT|nat)" "$out"
check_cmd "8: both members are running" pool_ready 2 "$WAIT"
members_before=$(pool_json | jq -r '[.members[].id] | sort | join(" ")')
t0=$(date +%s)
out=$("$BOWLINE" pool claim p1 --name c1 --wait --timeout "$WAIT" -o json 2>"$work/c1.err")
check_eq "8: pool claim --wait: exit code" 0 "$?"
log "claim to ready took $(($(date +%s) - t0)) s"
c1_id=$(jq -r '.id' <<<"$out")
check_match "8: the claimed space is one of the pool's members" "(^| )$c1_id( |$)" "$members_before"
check_eq "8: the claimed space is running" running "$(jq -r '.state' <<<"$out")"
check_eq "8: the claimed space is the admin's" admin "$(jq -r '.owner' <<<"$out")"
c1_domain=$(jq -r '.domain' <<<"$out")
c1_console=$images/$c1_domain/console.log
check_cmd "8: the member rebooted into the owner's seed (console: user admin)" \
  wait_for "$c1_console" '^TEST: user admin ' 60
check_cmd "8: ... with the claimed space's host name" wait_for "$c1_console" '^TEST: hostname=c1[[:space:]]*$' 10
check_eq "8: the claimed space is listed as c1" c1 \
  "$("$BOWLINE" space list -o json | jq -r --arg id "$c1_id" '.[] | select(.id == $id) | .name')"
check_cmd "8: the pool refills to 2 running members" pool_ready 2 "$WAIT"
check_no_match "8: the claimed space left the pool" "$c1_id" "$(pool_json | jq -r '[.members[].id] | join(" ")')"
check_cmd "8: pool delete" bw pool delete p1
deadline=$(($(date +%s) + 120))
# (the claimed space keeps the domain it was made with, $c1_domain)
unclaimed_domains() { $VIRSH list --all --name | grep "^$prefix-p1-" | grep -vx "$c1_domain"; }
while [ -n "$(unclaimed_domains)" ] && [ "$(date +%s)" -lt "$deadline" ]; do
  sleep 1
done
check_eq "8: the pool's unclaimed members are gone from libvirt" "" "$(unclaimed_domains)"
check_not_cmd "8: the claimed space's domain stays" no_domain "$c1_domain"
check_eq "8: the claimed space stays" running "$("$BOWLINE" space info c1 -o json | jq -r '.state')"
check_cmd "8: delete the claimed space" bw space delete c1 --wait --timeout "$WAIT"

# --- 6: delete leaves nothing ------------------------------------------------------------------
check_cmd "6: space delete --wait" bw space delete b1 --wait --timeout "$WAIT"
check_cmd "6: no domain $prefix-b1" no_domain "$prefix-b1"
check_not_cmd "6: no directory $images/$prefix-b1" test -e "$images/$prefix-b1"
check_eq "6: the space is gone from the list" "" "$("$BOWLINE" space list -o json | jq -r '.[] | select(.name == "b1") | .id')"
out=$("$BOWLINE" space create bridged b2 --ip "$b1_new" --no-start -o json 2>&1)
check_eq "6: a new space takes the released address $b1_new" "$b1_new" "$(jq -r '.space.ip' <<<"$out" 2>&1)"
check_cmd "6: delete the never-started space" bw space delete b2 --wait --timeout "$WAIT"
check_cmd "6: space delete --wait (NAT)" bw space delete n1 --wait --timeout "$WAIT"
check_cmd "6: no domain $prefix-n1" no_domain "$prefix-n1"
check_eq "6: no space left" 0 "$("$BOWLINE" space list --all -o json | jq length)"
check_eq "6: no domain of this test left in libvirt" "" "$($VIRSH list --all --name | grep "^$prefix-")"
check_eq "6: the images path holds only the image libraries" "base cloud-images" \
  "$(find "$images" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort | tr '\n' ' ' | sed 's/ $//')"

server_stop TERM
log "the whole test took $(($(date +%s) - started)) s"
summary
