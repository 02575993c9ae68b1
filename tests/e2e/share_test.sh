#!/usr/bin/env bash
# Sharing a space (docs/teams.md) through the real `bowline server` and CLI, on the real
# libvirtd with the tiny test guest (an echo service on port 7000, a serial console):
#   strangers  bob neither lists nor names alice's space; carol cannot share it
#   viewer     bob lists it as box.alice and sees it; stop and a tunnel are refused naming the
#              role; on the console he sees alice's typing, and his own never reaches the guest
#   user       his tunnel carries bytes; he cannot share it on; unsharing closes his open
#              tunnel and console within a second (measured) and takes the space from his list
#   admin      he snapshots and stops it; he may leave the share himself
#   audit      alice's shares and bob's sockets are in the audit log; the events name them
# Networks: an isolated libvirt network on a free /27 of 198.51.100.0/24 (spaces_nat_network).
# Everything made here starts with bwe2e and is removed on exit, also on failure.
# Usage: share_test.sh BOWLINE_BINARY
set -uo pipefail

BOWLINE=${1:?usage: share_test.sh BOWLINE_BINARY}
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
spaces_begin share_test
images=$work/images
spaces_prepare_images "$images" || abort "building the test guest into $images/cloud-images"
spaces_nat_network
server_start "$BOWLINE" "$work/server.log" --data-dir "$work/data" --images-path "$images" \
  --libvirt-uri qemu:///system --domain-type qemu --stop-timeout 20 || abort "bowline server"

# Everyone may use consoles and ports: what a share allows is the question here.
# Each has an SSH key: a share as user puts it into the guest (space.keys).
token() {
  ssh-keygen -q -t ed25519 -N '' -C "$1@bowline-e2e" -f "$work/id_$1" || return 1
  "$BOWLINE" user create "$1" --permission use-web-terminal --permission use-ports \
    --permission use-ssh --ssh-key "$work/id_$1.pub" -o json | jq -r .token
}
alice=$(token alice)
bob=$(token bob)
carol=$(token carol)
[ "${alice:-null}" != null ] && [ "${bob:-null}" != null ] && [ "${carol:-null}" != null ] ||
  abort "user create"
as() {
  local who=$1
  shift
  BOWLINE_TOKEN=$who "$BOWLINE" "$@"
}
ws() { python3 "$here/lib/ws_access.py" "$@"; }

# An echo service on port 7000, which the template lists.
spaces_tiny_template echo "ports: [7000]
cloudInit: |
  #cloud-config
  runcmd:
    - 'busybox nc -ll -p 7000 -e /bin/cat </dev/null >/dev/null 2>&1 & echo \"TEST: echo service on 7000\"'"
BOWLINE_TOKEN=$alice bw space create echo box --wait --timeout 300 || abort "alice's space create"
id=$(as "$alice" space info box -o json | jq -r .id)
check_cmd "the guest started its echo service" wait_for "$images/$prefix-box/console.log" \
  '^TEST: echo service on 7000' 120

# echo_through WHO: a line through WHO's tunnel to port 7000 and back (the lease comes a moment
# after the boot, so the first try may find no address yet).
echo_through() {
  local out=""
  for _ in $(seq 1 20); do
    out=$(printf 'hello-%s\n' "$tag" | timeout 30 env BOWLINE_TOKEN="$1" "$BOWLINE" tunnel box.alice 7000 2>&1)
    [ "$out" = "hello-$tag" ] && break
    sleep 1
  done
  echo "$out"
}

# --- strangers ----------------------------------------------------------------------------------
check_eq "strangers: bob lists none of alice's spaces" 0 "$(as "$bob" space list -o json | jq length)"
check_match "strangers: bob cannot name it" "no space named box.alice" \
  "$(as "$bob" space info box.alice 2>&1)"
check_eq "strangers: ... nor reach it by its id (404, as if it did not exist)" 404 \
  "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $bob" "$BOWLINE_SERVER/api/v1/spaces/$id")"

# --- viewer --------------------------------------------------------------------------------------
check_cmd "viewer: alice shares box with bob as viewer" as "$alice" space share box bob --role viewer
check_eq "viewer: bob lists it, owned by alice" "box alice" \
  "$(as "$bob" space list -o json | jq -r '.[] | "\(.name) \(.owner)"')"
check_eq "viewer: space info tells him his role" shared-viewer \
  "$(as "$bob" space info box.alice -o json | jq -r .access)"
check_match "viewer: alice's space info names the share" "shared with: +bob \\(viewer\\)" \
  "$(as "$alice" space info box)"
check_match "viewer: his stop is refused, naming the role" \
  "shared with you as viewer; this needs the user role" "$(as "$bob" space stop box.alice 2>&1)"
check_match "viewer: ... and so is a tunnel" "needs the user role" \
  "$(as "$bob" tunnel box.alice 7000 </dev/null 2>&1)"
check_eq "viewer: the space still runs" running "$(as "$alice" space info box -o json | jq -r .state)"
while read -r line; do
  case $line in ok:*) pass "viewer: console: ${line#ok: }" ;; FAIL:*) fail "viewer: console: ${line#FAIL: }" ;; *) echo "    $line" ;; esac
done < <(ws viewer "$BOWLINE_SERVER" "$alice" "$bob" "$id" "$tag" 2>&1)

# --- user ----------------------------------------------------------------------------------------
check_cmd "user: alice makes bob a user of box" as "$alice" space share box bob --role user
check_eq "user: bob's tunnel carries bytes to the guest and back" "hello-$tag" "$(echo_through "$bob")"
check_match "user: bob cannot share it on" "only the space's owner or an admin shares it" \
  "$(as "$bob" space share box.alice carol 2>&1)"
check_match "strangers: carol cannot share it either (she does not see it)" "no space named box.alice" \
  "$(as "$carol" space share box.alice carol 2>&1)"
check_eq "user: alice lists her shares" "bob user" \
  "$(as "$alice" space shares box -o json | jq -r '.[] | "\(.user) \(.role)"')"
check_eq "user: bob lists what is shared with him" "box alice user" \
  "$(as "$bob" space shares -o json | jq -r '.[] | "\(.name) \(.owner) \(.role)"')"

# Bob holds a tunnel (fed from a FIFO he keeps open) and a console open; alice unshares.
mkfifo "$work/feed"
exec 7<>"$work/feed"
BOWLINE_TOKEN=$bob "$BOWLINE" tunnel box.alice 7000 <"$work/feed" >"$work/held.out" 2>"$work/held.err" &
tunnel_pid=$!
printf 'held-%s\n' "$tag" >&7
ws hold "$BOWLINE_SERVER" "$bob" "/api/v1/spaces/$id/console" >"$work/console.out" 2>&1 &
console_pid=$!
check_cmd "user: bob's held tunnel answers" wait_for "$work/held.out" "^held-$tag" 30
check_cmd "user: bob's console is open" wait_for "$work/console.out" '^101' 30
t0=$(date +%s%N)
check_cmd "user: alice ends the share" as "$alice" space unshare box bob
closed_in() { # PID: milliseconds from the unshare until PID ended (10 s at most)
  for _ in $(seq 1 100); do
    kill -0 "$1" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$1" 2>/dev/null && echo never || echo $((($(date +%s%N) - t0) / 1000000))
}
tunnel_ms=$(closed_in "$tunnel_pid")
console_ms=$(closed_in "$console_pid")
log "after the unshare, bob's tunnel closed in $tunnel_ms ms, his console in $console_ms ms"
check_eq "user: the unshare closed bob's tunnel within a second" 1 \
  "$([ "$tunnel_ms" != never ] && [ "$tunnel_ms" -le 1500 ] && echo 1)"
check_eq "user: ... and his console" 1 "$([ "$console_ms" != never ] && [ "$console_ms" -le 1500 ] && echo 1)"
check_match "user: ... the server closed it (the console says so)" closed "$(cat "$work/console.out")"
exec 7>&-
kill "$tunnel_pid" "$console_pid" 2>/dev/null
check_eq "user: box left bob's list" 0 "$(as "$bob" space list -o json | jq length)"
check_match "user: his tunnel is refused again" "no space" "$(as "$bob" tunnel box.alice 7000 </dev/null 2>&1)"

# --- admin ---------------------------------------------------------------------------------------
check_cmd "admin: alice makes bob an admin of box" as "$alice" space share box bob --role admin
check_cmd "admin: bob snapshots it" as "$bob" space snapshot box.alice first
check_eq "admin: the snapshot is alice's space's" first \
  "$(as "$alice" space snapshots box -o json | jq -r '.[].name')"
check_cmd "admin: bob stops it" as "$bob" space stop box.alice --wait
check_eq "admin: ... it stopped" stopped "$(as "$alice" space info box -o json | jq -r .state)"
check_cmd "admin: bob leaves the share himself" as "$bob" space unshare box.alice bob
check_eq "admin: ... and alice's space is shared with nobody" 0 \
  "$(as "$alice" space shares box -o json | jq length)"

# --- audit and events ----------------------------------------------------------------------------
audit=$("$BOWLINE" admin audit --space "$id" -o json)
a() { jq -r "$1" <<<"$audit"; }
check_eq "audit: alice's three shares" "alice 200
alice 200
alice 200" "$(a ".[] | select(.action == \"PUT /api/v1/spaces/$id/shares/bob\") | \"\(.user) \(.status)\"")"
check_eq "audit: the unshares, alice's and bob's" "alice bob" \
  "$(a "[.[] | select(.action == \"DELETE /api/v1/spaces/$id/shares/bob\") | .user] | join(\" \")")"
check_match "audit: bob's refused stop (403)" "bob 403" \
  "$(a ".[] | select(.action == \"POST /api/v1/spaces/$id/stop\") | \"\(.user) \(.status)\"")"
check_match "audit: bob's tunnel opened (101)" "bob 101" \
  "$(a ".[] | select(.action == \"GET /api/v1/spaces/$id/tunnel/7000\") | \"\(.user) \(.status)\"")"
# events_of WHO: the share events in WHO's replay of the event stream (it never ends by itself).
events_of() {
  curl -sN --max-time 3 -H "Authorization: Bearer $1" "$BOWLINE_SERVER/api/v1/events?since=0" |
    sed -n 's/^data: //p' |
    jq -rs '[.[] | select(.kind == "space.shared" or .kind == "space.unshared") |
      "\(.kind) \(.payload.user) \(.payload.role // "")" | rtrimstr(" ")] | join(",")'
}
shares_seen="space.shared bob viewer,space.shared bob user,space.unshared bob,space.shared bob admin,space.unshared bob"
check_eq "events: alice's stream names each share and its end" "$shares_seen" "$(events_of "$alice")"
# Bob no longer holds a share of box: of its events, he is shown only the ends of his shares.
check_eq "events: bob's replay, now that box is not his to see, shows only his shares' ends" \
  "space.unshared bob,space.unshared bob" "$(events_of "$bob")"
check_eq "events: carol's names none" "" "$(events_of "$carol")"
# The tiny guest has no guest agent: the keys wait for its next start, and the owner is told.
keys=$(curl -sN --max-time 3 -H "Authorization: Bearer $alice" "$BOWLINE_SERVER/api/v1/events?since=0" |
  sed -n 's/^data: //p' | jq -rs '[.[] | select(.kind == "space.keys")][0].payload // {}')
check_eq "events: a share as user tells the owner whether bob's key reached the running guest" \
  false "$(jq -r .now <<<"$keys")"
check_match "events: ... and why not (no guest agent in the tiny guest)" "agent" "$(jq -r .error <<<"$keys")"

log "total $(($(date +%s) - started)) s"
summary
