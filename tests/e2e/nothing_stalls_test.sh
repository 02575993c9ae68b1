#!/usr/bin/env bash
# End-to-end proof that no client can stall `bowline server` (ctest -L security):
#   slow   nine image downloads from a server that sends half of each image and then nothing,
#          and eight browser terminals whose guest shells stopped reading (stand-in sshds on the
#          spaces' addresses that never read what they get), opened, filled and closed by one
#          user: another user's `bowline whoami` answers well under a second all along, another
#          user's space made from a local image is created meanwhile, and `server stop` takes
#          seconds
#   flood  the server under `prlimit --nofile=512`, 1,500 connections that never finish their
#          header (from 127.0.0.2-9, a new one for each the server sheds): a fresh
#          `bowline whoami` answers promptly 2, 7, 13 and 20 s into the flood
# On libvirt's test driver (test:///default): no guest boots. A host-only bridge in a free /27
# of 198.51.100.0/24 (lib/net.sh) carries the spaces' addresses, which the stand-in sshds take.
# Usage: nothing_stalls_test.sh BOWLINE_BINARY FAKE_SSHD_BINARY
# Prints one ok/FAIL line per check and "N passed, M failed"; exit status 1 when a check failed.
set -uo pipefail

BOWLINE=${1:?usage: nothing_stalls_test.sh BOWLINE_BINARY FAKE_SSHD_BINARY}
FAKE_SSHD=${2:?usage: nothing_stalls_test.sh BOWLINE_BINARY FAKE_SSHD_BINARY}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/net.sh
. "$here/lib/net.sh"
# shellcheck source=lib/check.sh
. "$here/lib/check.sh"
# shellcheck source=lib/server.sh
. "$here/lib/server.sh"
# shellcheck source=lib/spaces.sh
. "$here/lib/spaces.sh"

spaces_begin nothing_stalls_test
helpers=()
trap '_stop_helpers; _keep_logs; _spaces_cleanup' EXIT
_keep_logs() { # E2E_KEEP_LOGS=DIR: the servers' logs are copied there
  [ -n "${E2E_KEEP_LOGS:-}" ] && [ -n "$work" ] && cp "$work"/*.log "$work"/*.out "$E2E_KEEP_LOGS"/ 2>/dev/null
  return 0
}
_stop_helpers() {
  local pid
  for pid in "${helpers[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
  [ -n "$guests_ns" ] && ip netns del "$guests_ns" 2>/dev/null
  return 0
}
guests_ns=""

# Seconds a command takes (3 decimals); its output goes to $work/last.out.
timed() {
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >"$work/last.out" 2>&1
  local rc=$?
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
  return $rc
}
# `bowline whoami` as the other user answers, and within LIMIT seconds.
whoami_within() {
  local what=$1 limit=$2 took
  if took=$(timed env BOWLINE_TOKEN="$other_token" timeout 30 "$BOWLINE" user info -o json) &&
    [ "$(jq -r .username "$work/last.out" 2>/dev/null)" = other ]; then
    if awk -v t="$took" -v l="$limit" 'BEGIN { exit !(t < l) }'; then
      pass "$what: another user's whoami answered in $took s"
    else
      fail "$what: another user's whoami took $took s (limit $limit s)"
    fi
  else
    fail "$what: another user's whoami got no answer ($(head -c 300 "$work/last.out"))"
  fi
}

sub=$(net_free_subnet 27) || abort "no free /27 in 198.51.100.0/24"
pre=${sub%.*}
base=${sub##*.}
bridge=bwe2es$tag
net_bridge_create "$bridge" "$pre.$((base + 1))/27" || abort "bridge $bridge"
mkdir -p "$work/images/cloud-images" "$work/files"
qemu-img create -q -f qcow2 "$work/images/cloud-images/bwe2e-local.qcow2" 16M || abort "qemu-img"

# --- the server (test driver), users, templates ---------------------------------------------
server_start "$BOWLINE" "$work/server.log" --data-dir "$work/data" --images-path "$work/images" \
  --libvirt-uri test:///default --domain-type qemu --resolvers "$pre.$((base + 1))" ||
  abort "bowline server"
admin() { "$BOWLINE" "$@"; }
user_token() {
  sed -n 's/.*token (shown once): *\([^ ]*\).*/\1/p' <<<"$1"
}
out=$(admin user create stall --permission use-web-terminal 2>&1) || abort "user create stall: $out"
stall_token=$(user_token "$out")
out=$(admin user create other 2>&1) || abort "user create other: $out"
other_token=$(user_token "$out")
[ -n "$stall_token" ] && [ -n "$other_token" ] || abort "user create printed no token"
admin user set-quota stall --spaces unlimited --cpus unlimited --memory unlimited >/dev/null ||
  abort "user set-quota stall"

network() { # the template's network: our bridge, addresses from FIRST to LAST (host parts)
  printf 'network:\n  mode: bridged\n  bridge: %s\n  cidr: %s/27\n  ip_range_start: %s\n  ip_range_end: %s\n  gateway: %s\n' \
    "$bridge" "$pre.$base" "$pre.$((base + $1))" "$pre.$((base + $2))" "$pre.$((base + 1))"
}
{ echo "name: $prefix-\${{ .space.name }}"; echo "image: bwe2e-local"; echo "memory: 64M"; network 2 9; } \
  >"$work/term.yaml"
{ echo "name: $prefix-\${{ .space.name }}"; echo "image: bwe2e-local"; echo "memory: 64M"; network 10 10; } \
  >"$work/local.yaml"
admin template create "$work/term.yaml" >/dev/null || abort "template create term"
admin template create "$work/local.yaml" >/dev/null || abort "template create local"

# --- nine downloads that stall halfway ------------------------------------------------------------
head -c 4M /dev/urandom >"$work/files/trickle.img"
sum=$(sha256sum "$work/files/trickle.img" | cut -d' ' -f1)
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
  -subj /CN=127.0.0.1 -keyout "$work/files/key.pem" -out "$work/files/cert.pem" 2>/dev/null ||
  abort "openssl"
python3 "$here/../unit/image/https_server.py" "$work/files/cert.pem" "$work/files/key.pem" \
  "$work/files" "$work/files/requests.log" >"$work/files/ports" 2>"$work/files/server.err" &
helpers+=($!)
for _ in $(seq 50); do [ -s "$work/files/ports" ] && break; sleep 0.1; done
http_port=$(cut -d' ' -f2 "$work/files/ports")
[ -n "$http_port" ] || abort "the trickling file server did not start"
for i in $(seq 9); do
  { echo "name: $prefix-\${{ .space.name }}"; echo "image: http://127.0.0.1:$http_port/stall/$i/trickle.img"
    echo "imageChecksum: sha256:$sum"; echo "memory: 64M"; network $((10 + i)) $((10 + i)); } >"$work/dl$i.yaml"
  admin template create "$work/dl$i.yaml" >/dev/null || abort "template create dl$i"
  BOWLINE_TOKEN=$stall_token "$BOWLINE" space create "dl$i" "d$i" >/dev/null 2>&1 ||
    fail "create d$i (downloading)"
done
deadline=$(($(date +%s) + 30))
while [ "$(grep -c '"/stall/' "$work/files/requests.log" 2>/dev/null)" -lt 9 ] &&
  [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.2; done
check_eq "slow: nine downloads are under way" 9 \
  "$(grep -o '"path": "/stall/[0-9]*/' "$work/files/requests.log" | sort -u | wc -l)"
whoami_within "slow, nine downloads stalled" 1

# Another user's space made from a local image is not kept waiting behind the downloads.
t0=$(date +%s.%N)
BOWLINE_TOKEN=$other_token "$BOWLINE" space create local o1 >/dev/null 2>&1 || fail "create o1"
state=$(BOWLINE_TOKEN=$other_token space_wait_state o1 '^running$' 20)
check_eq "slow: another user's space runs within 20 s meanwhile" running "$state"
log "another user's create took $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s during the downloads"

# --- eight terminals whose guest shells stopped reading -----------------------------------------
for i in $(seq 8); do
  BOWLINE_TOKEN=$stall_token "$BOWLINE" space create term "t$i" >/dev/null 2>&1 || fail "create t$i"
done
sshd_args=()
ids=()
for i in $(seq 8); do
  state=$(BOWLINE_TOKEN=$stall_token space_wait_state "t$i" '^running$' 60) ||
    fail "t$i runs (state $state)"
  ids+=("$(BOWLINE_TOKEN=$stall_token space_json "t$i" | jq -r .id)")
done
# The stand-in sshds take the spaces' addresses in a namespace of their own on the bridge, as
# guests would: the server never connects to an address of its own host.
ns=bwe2eg$tag
veth=${ns:0:12}
ip netns add "$ns" || abort "ip netns add"
guests_ns=$ns
ip link add "${veth}h" type veth peer name "${veth}c" && ip link set "${veth}h" master "$bridge" &&
  ip link set "${veth}h" up && ip link set "${veth}c" netns "$ns" &&
  ip netns exec "$ns" ip link set lo up && ip netns exec "$ns" ip link set "${veth}c" up ||
  abort "the guests' namespace"
while read -r name ip keyfile; do
  ip netns exec "$ns" ip addr add "$ip/27" dev "${veth}c" || abort "the address $ip of $name"
  sshd_args+=("$ip:22=$keyfile")
done < <(python3 "$here/lib/stalls.py" keys "$work/data/bowline.db" t1 t2 t3 t4 t5 t6 t7 t8)
check_eq "slow: eight guests' addresses" 8 "${#sshd_args[@]}"
ip netns exec "$ns" "$FAKE_SSHD" stall "${sshd_args[@]}" >"$work/sshd.out" 2>&1 &
helpers+=($!)
for _ in $(seq 100); do grep -q ready "$work/sshd.out" && break; sleep 0.1; done
check_eq "slow: the stand-in sshds listen" ready "$(cat "$work/sshd.out")"

mkfifo "$work/terms.in"
python3 "$here/lib/stalls.py" terminals "$BOWLINE_SERVER" "$stall_token" "${ids[@]}" \
  <"$work/terms.in" >"$work/terms.out" 2>&1 &
helpers+=($!)
exec 7>"$work/terms.in" # held open: the helper waits for "close"
for _ in $(seq 600); do grep -q stalled "$work/terms.out" && break; sleep 0.1; done
check_eq "slow: eight terminals open and stalled" "stalled 8" "$(head -n 1 "$work/terms.out")"
whoami_within "slow, eight terminals stalled" 1
echo close >&7
exec 7>&-
for _ in $(seq 300); do grep -q closed "$work/terms.out" && break; sleep 0.1; done
check_eq "slow: the eight terminals' client went away" closed "$(tail -n 1 "$work/terms.out")"
sleep 1
whoami_within "slow, eight stalled terminals closed" 1
whoami_within "slow, again" 1

# --- the stop ---------------------------------------------------------------------------------------
kill "${helpers[0]}" 2>/dev/null # the downloads end with their server
t0=$(date +%s.%N)
kill -TERM "$SERVER_PID"
for _ in $(seq 300); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.05; done
took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
if kill -0 "$SERVER_PID" 2>/dev/null; then
  fail "slow: server stop: still running after $took s"
else
  pass "slow: server stop took $took s"
fi
server_stop KILL
grep -q "bowline server: stopped" "$work/server.log" && pass "slow: the server said it stopped" ||
  fail "slow: the server did not say it stopped"

# --- 1,500 connections that never finish a header, under 512 descriptors -----------------------
cat >"$work/bowline-512" <<SH
#!/bin/sh
exec prlimit --nofile=512:512 "$BOWLINE" "\$@"
SH
chmod +x "$work/bowline-512"
server_start "$work/bowline-512" "$work/server-512.log" --data-dir "$work/data" \
  --images-path "$work/images" --libvirt-uri test:///default --domain-type qemu \
  --resolvers "$pre.$((base + 1))" || abort "bowline server under prlimit"
check_eq "flood: the server runs with 512 descriptors" 512 \
  "$(awk '/Max open files/ { print $4 }' "/proc/$(pgrep -n -f "data-dir $work/data")/limits")"
port=${BOWLINE_SERVER##*:}
python3 "$here/lib/stalls.py" flood 127.0.0.1 "$port" 1500 24 >"$work/flood.out" 2>&1 &
flood_pid=$!
helpers+=("$flood_pid")
start=$(date +%s)
for at in 2 7 13 20; do
  sleep "$(($start + at - $(date +%s)))" 2>/dev/null
  whoami_within "flood, $at s in" 1
done
wait "$flood_pid"
log "flood: $(cat "$work/flood.out")"
check_match "flood: the server shed header-less connections" "closed-by-server [1-9]" "$(cat "$work/flood.out")"
kill -0 "$SERVER_PID" 2>/dev/null && pass "flood: the server still runs" || fail "flood: the server died"
whoami_within "flood over" 1

summary
