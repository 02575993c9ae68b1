#!/usr/bin/env bash
# End-to-end proof that `bowline server` keeps its promises under races:
#   9b  on libvirt's test:///default driver, 200 create requests at the same moment through the
#       HTTP API on a bridged range of 91 addresses: exactly 91 spaces (less any of the host's own addresses in the range) with distinct addresses
#       and 109 clear "range exhausted" refusals, never a duplicate; and one name asked for 20
#       times at once gives one space and 19 "name taken" refusals
#   10  the server killed with SIGKILL during a create (right after it accepted the request, and
#       once the space's directory exists) and started again: each space ends consistent (running
#       and booted, or in state error with the reason) and nothing is orphaned (every domain and
#       directory of the test belongs to a space the store knows; one space per name; distinct
#       addresses)
# Part 10 boots the tiny test guest on the real libvirtd (qemu:///system, domain type qemu) on a
# host-only bridge in a free /28 of 198.51.100.0/24 (lib/net.sh). Everything made here starts
# with bwe2e and is removed on exit, also on failure.
# Usage: server_races_test.sh BOWLINE_BINARY
# Prints one ok/FAIL line per check and "N passed, M failed"; exit status 1 when a check failed.
set -uo pipefail

BOWLINE=${1:?usage: server_races_test.sh BOWLINE_BINARY}
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

WAIT=${WAIT:-300} # longest a boot may take: TCG on 2 busy cores
REQUESTS=200
spaces_begin server_races_test

sub=$(net_free_subnet 28) || abort "no free /28 in 198.51.100.0/24"
pre=${sub%.*}
base=${sub##*.}
bridge=bwe2eb$tag
gw=$pre.$((base + 1))
net_bridge_create "$bridge" "$gw/28" || abort "bridge $bridge"

# --- 9 (second half): 200 creates at once for 91 addresses, on test:///default -----------------
# The test driver runs no guest, so the template's /24 is only the allocator's arithmetic: no
# packet uses it. The engine still checks that the bridge exists on the host (sysfs): ours does.
race=$work/race
mkdir -p "$race/images/cloud-images"
qemu-img create -q -f qcow2 "$race/images/cloud-images/$SPACES_IMAGE.qcow2" 16M ||
  abort "qemu-img create"
server_start "$BOWLINE" "$race/server.log" --data-dir "$race/data" --images-path "$race/images" \
  --libvirt-uri test:///default --domain-type qemu --resolvers "$gw" || abort "bowline server (test:///default)"
cat >"$race/range91.yaml" <<YAML
name: $prefix-\${{ .space.name }}
image: $SPACES_IMAGE
memory: 64M
network:
  mode: bridged
  bridge: $bridge
  cidr: 198.51.100.0/24
  ip_range_start: 198.51.100.10
  ip_range_end: 198.51.100.100
  gateway: 198.51.100.1
YAML
"$BOWLINE" template create "$race/range91.yaml" >/dev/null || abort "template create range91"
# No space gets one of the host's own addresses: the bridges that tests running beside this one
# make in 198.51.100.0/24 take addresses out of the range. Those present before and after the
# race are taken out of what is expected (they rarely change during it: then either count holds).
host_in_range() {
  ip -4 -o addr show | awk '{ split($4, a, "/"); print a[1] }' |
    awk -F. '$1 == 198 && $2 == 51 && $3 == 100 && $4 >= 10 && $4 <= 100' | sort -u
}
hosts_before=$(host_in_range)
t0=$(date +%s.%N)
python3 "$here/lib/create_many.py" "$BOWLINE_SERVER" "$BOWLINE_TOKEN" range91 "$REQUESTS" r \
  >"$race/answers.jsonl" || abort "create_many.py"
log "$REQUESTS concurrent creates answered in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s"
answers=$(jq -s . "$race/answers.jsonl")
hosts_after=$(host_in_range)
n_before=$(grep -c . <<<"$hosts_before")
n_after=$(grep -c . <<<"$hosts_after")
free=$((91 - n_before))
got=$(jq '[.[] | select(.status == 202)] | length' <<<"$answers")
# (the host's addresses changed during the race: the count after it holds as well)
[ "$got" != "$free" ] && [ "$got" = $((91 - n_after)) ] && free=$got
log "9: $n_before of the range's addresses are the host's own: $(echo $hosts_before)"
check_eq "9: answers" "$REQUESTS" "$(jq length <<<"$answers")"
check_eq "9: accepted (202): the range less the host's own addresses" "$free" "$got"
check_eq "9: refused with 409" $((REQUESTS - free)) "$(jq '[.[] | select(.status == 409)] | length' <<<"$answers")"
check_eq "9: no space has one of the host's own addresses" "" \
  "$(comm -12 <(jq -r '.[] | select(.status == 202) | .ip' <<<"$answers" | sort -u) \
    <(printf '%s\n%s\n' "$hosts_before" "$hosts_after" | sort -u))"
check_eq "9: every 409 says the range is exhausted" $((REQUESTS - free)) \
  "$(jq '[.[] | select(.status == 409 and (.error // "" | test("address range 198\\.51\\.100\\.10-198\\.51\\.100\\.100 is exhausted")))] | length' <<<"$answers")"
check_eq "9: other answers" "" "$(jq -r '.[] | select(.status != 202 and .status != 409) | "\(.status) \(.error)"' <<<"$answers" | sort | uniq -c)"
check_eq "9: distinct addresses among the accepted" "$free" \
  "$(jq '[.[] | select(.status == 202) | .ip] | unique | length' <<<"$answers")"
check_eq "9: every accepted address lies in 198.51.100.10-100" "$free" \
  "$(jq '[.[] | select(.status == 202) | .ip | select(. != null) | split(".") | map(tonumber) | select(.[0:3] == [198,51,100] and .[3] >= 10 and .[3] <= 100)] | length' <<<"$answers")"
# The background creates finish on the test driver; then the store must agree.
deadline=$(($(date +%s) + 120))
while [ "$(date +%s)" -lt "$deadline" ]; do
  busy=$("$BOWLINE" space list -o json | jq '[.[] | select(.state == "pending" or .state == "creating")] | length')
  [ "$busy" = 0 ] && break
  sleep 0.5
done
spaces=$("$BOWLINE" space list -o json)
check_eq "9: spaces in the store" "$free" "$(jq length <<<"$spaces")"
check_eq "9: all of them running" "$free" "$(jq '[.[] | select(.state == "running")] | length' <<<"$spaces")"
check_eq "9: distinct addresses in the store" "$free" "$(jq '[.[].ip] | unique | length' <<<"$spaces")"
if [ "$(jq -c '[.[] | select(.status == 202) | [.name, .ip]] | sort' <<<"$answers")" = \
  "$(jq -c '[.[] | [.name, .ip]] | sort' <<<"$spaces")" ]; then
  pass "9: the store holds the names and addresses the API answered"
else
  fail "9: the store's names and addresses differ from the API's answers"
fi
# The same name asked for 20 times at once (another range of the same network): one space.
sed -e 's/198\.51\.100\.10$/198.51.100.200/' -e 's/198\.51\.100\.100$/198.51.100.204/' \
  "$race/range91.yaml" >"$race/range5.yaml"
"$BOWLINE" template create "$race/range5.yaml" >/dev/null || abort "template create range5"
python3 "$here/lib/create_many.py" "$BOWLINE_SERVER" "$BOWLINE_TOKEN" range5 20 same same \
  >"$race/same.jsonl" || abort "create_many.py (same name)"
same=$(jq -s . "$race/same.jsonl")
check_eq "9: one name asked for 20 times at once: accepted" "202 198.51.100.200" \
  "$(jq -r '.[] | select(.status == 202) | "\(.status) \(.ip)"' <<<"$same")"
# (a request that loses the race may meet the winner's name or its domain name first: both say so)
check_eq "9: one name asked for 20 times at once: refused as taken (409)" 19 \
  "$(jq '[.[] | select(.status == 409 and (.error // "" | test("space named|domain name")))] | length' <<<"$same")"
out=$("$BOWLINE" space create range91 one-more 2>&1)
check_eq "9: the CLI on an exhausted range: exit code" 1 "$?"
check_match "9: the CLI on an exhausted range: the message" "198\.51\.100\.10-198\.51\.100\.100 is exhausted" "$out"
server_stop TERM

# --- 10: SIGKILL during a create, then a restart ------------------------------------------------
t10=$(date +%s)
images=$work/images
spaces_prepare_images "$images" || abort "building the test guest into $images/cloud-images"
server_flags=(--data-dir "$work/data" --images-path "$images" --libvirt-uri qemu:///system
  --domain-type qemu --stop-timeout 60 --resolvers "$gw")
server_start "$BOWLINE" "$work/server-1.log" "${server_flags[@]}" || abort "bowline server"
cat >"$work/bridged.yaml" <<YAML
name: $prefix-\${{ .space.name }}
hostname: \${{ .space.name }}
image: $SPACES_IMAGE
memory: 256M
cpus: 1
network:
  mode: bridged
  bridge: $bridge
  cidr: $sub/28
  ip_range_start: $pre.$((base + 2))
  ip_range_end: $pre.$((base + 14))
  gateway: $gw
console: true
YAML
"$BOWLINE" template create "$work/bridged.yaml" >/dev/null || abort "template create bridged"

# k1: killed the moment the server has accepted the create.
out=$("$BOWLINE" space create bridged k1 -o json 2>&1)
server_stop KILL
check_match "10: k1 accepted before the kill (its operation)" '^[0-9]+$' "$(jq -r .operation.id <<<"$out" 2>&1)"
server_start "$BOWLINE" "$work/server-2.log" "${server_flags[@]}" || abort "bowline server, 2nd start"
# k2: killed once the create has made the space's directory (the disk and domain come next).
"$BOWLINE" space create bridged k2 >/dev/null 2>&1
wait_for_dir() {
  local deadline=$(($(date +%s) + $2))
  until [ -d "$1" ]; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    sleep 0.01
  done
}
check_cmd "10: k2's directory appeared" wait_for_dir "$images/$prefix-k2" 60
k2_domain=$($VIRSH -q domstate "$prefix-k2" 2>/dev/null) || k2_domain="not defined"
log "k2 at the kill: domain $k2_domain; files: $(find "$images/$prefix-k2" -mindepth 1 -printf '%f ')"
server_stop KILL
server_start "$BOWLINE" "$work/server-3.log" "${server_flags[@]}" || abort "bowline server, 3rd start"

for k in k1 k2; do
  state=$(space_wait_state "$k" '^(running|error)$' "$WAIT")
  info=$(space_json "$k")
  case $state in
    running)
      pass "10: $k finished its create after the restart (running)"
      check_cmd "10: $k's guest booted (console TEST: READY)" \
        wait_for "$images/$prefix-$k/console.log" '^TEST: READY' "$WAIT"
      check_eq "10: $k's domain is running" running "$($VIRSH domstate "$prefix-$k" 2>&1)"
      ip=$(jq -r '.ip // empty' <<<"$info")
      check_cmd "10: the host pings $k at '$ip'" net_ping "$bridge" "$ip" 3
      ;;
    error)
      check_match "10: $k is in state error with its reason" '.+' "$(jq -r '.error // empty' <<<"$info")"
      check_cmd "10: $k in error has no domain" no_domain "$prefix-$k"
      check_not_cmd "10: $k in error has no directory" test -e "$images/$prefix-$k"
      ;;
    *)
      fail "10: $k did not settle after the restart (state '$state'): $(jq -c '{state, error}' <<<"$info")"
      ;;
  esac
done

# Nothing orphaned: libvirt's domains and the images path match the store, one space per name.
spaces=$("$BOWLINE" space list -o json)
known=$(jq -r '[.[].domain] | sort | join(" ")' <<<"$spaces")
check_eq "10: one space per name" "k1 k2" "$(jq -r '[.[].name] | sort | join(" ")' <<<"$spaces")"
check_eq "10: the test's domains in libvirt are the store's" "$known" \
  "$($VIRSH list --all --name | grep "^$prefix-" | sort | tr '\n' ' ' | sed 's/ $//')"
check_eq "10: the space directories are the store's" "$known" \
  "$(find "$images" -mindepth 1 -maxdepth 1 -type d ! -name base ! -name cloud-images ! -name volumes -printf '%f\n' | sort | tr '\n' ' ' | sed 's/ $//')"
check_eq "10: distinct addresses" "$(jq '[.[] | select(.ip != null)] | length' <<<"$spaces")" \
  "$(jq '[.[] | select(.ip != null) | .ip] | unique | length' <<<"$spaces")"
events=$(python3 "$here/lib/events.py" "$BOWLINE_SERVER" "$BOWLINE_TOKEN")
check_eq "10: the event history holds both creates" 2 "$(grep -c '^space\.created ' <<<"$events")"
# Other tests' servers may share this libvirtd: only this test's names count.
check_eq "10: the reconciler reported no orphan of this test" "" \
  "$(grep '^reconcile\.orphan' <<<"$events" | grep -F -e "\"$prefix-" -e "\"$images/")"

for k in k1 k2; do
  check_cmd "10: delete $k" bw space delete "$k" --wait --timeout "$WAIT"
done
check_eq "10: nothing of the test left in libvirt" "" "$($VIRSH list --all --name | grep "^$prefix-")"
server_stop TERM
log "part 10 took $(($(date +%s) - t10)) s"
summary
