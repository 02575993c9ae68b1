# shellcheck shell=bash
# A private `bowline server` for the end-to-end tests, and the CLI pointed at it (source this
# file; needs jq).
#   server_start BOWLINE LOG FLAG...   starts `bowline server FLAG...` on a free loopback port
#                                      (--listen 127.0.0.1:0), waits until it listens, sets
#                                      SERVER_PID and exports BOWLINE_SERVER and BOWLINE_TOKEN
#                                      (the admin token of data_dir/admin.token). Pass
#                                      --data-dir; the log (stdout and stderr) goes to LOG
#   server_stop [SIGNAL]               sends SIGNAL (default TERM) and waits for the process
#   server_drop_guard                  removes the nftables table of the last started server's
#                                      guest guard (it outlives the server on purpose: guests
#                                      keep their rules across a server restart)
#   space_json SPACE                   `bowline space info SPACE -o json`
#   space_wait_state SPACE REGEX SECS  until the space's state matches REGEX; prints the state
# BOWLINE (the binary) must be set before calling the space_* helpers.
SERVER_PID=""
SERVER_DATA=""

server_start() {
  local bin=$1 log=$2 data="" deadline line arg prev=""
  shift 2
  for arg in "$@"; do
    [ "$prev" = --data-dir ] && data=$arg
    prev=$arg
  done
  [ -n "$data" ] || {
    echo "server_start: pass --data-dir" >&2
    return 1
  }
  "$bin" server --listen 127.0.0.1:0 "$@" >"$log" 2>&1 &
  SERVER_PID=$!
  SERVER_DATA=$data
  deadline=$(($(date +%s) + 60))
  while :; do
    line=$(grep -aoE 'listening on http://127\.0\.0\.1:[0-9]+' "$log" | tail -n 1)
    [ -n "$line" ] && break
    if ! kill -0 "$SERVER_PID" 2>/dev/null || [ "$(date +%s)" -ge "$deadline" ]; then
      echo "server_start: the server did not come up; its log:" >&2
      sed 's/^/    /' "$log" >&2
      return 1
    fi
    sleep 0.1
  done
  export BOWLINE_SERVER=${line#listening on }
  BOWLINE_TOKEN=$(cat "$data/admin.token") || return 1
  export BOWLINE_TOKEN
}

server_stop() {
  [ -n "$SERVER_PID" ] || return 0
  kill "-${1:-TERM}" "$SERVER_PID" 2>/dev/null
  wait "$SERVER_PID" 2>/dev/null
  SERVER_PID=""
  return 0
}

server_drop_guard() {
  [ -z "$SERVER_DATA" ] || net_guard_drop "$SERVER_DATA"
}

space_json() {
  "$BOWLINE" space info "$1" -o json 2>/dev/null
}

space_wait_state() {
  local deadline=$(($(date +%s) + $3)) state=""
  while [ "$(date +%s)" -lt "$deadline" ]; do
    state=$(space_json "$1" | jq -r '.state // empty')
    if [[ $state =~ $2 ]]; then
      echo "$state"
      return 0
    fi
    sleep 0.5
  done
  echo "$state"
  return 1
}
