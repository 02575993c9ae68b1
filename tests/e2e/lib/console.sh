# shellcheck shell=bash
# Waiting on a guest's serial console log and a domain's state (source this file).
#   wait_for FILE REGEX TIMEOUT    until a line of FILE matches the extended REGEX
#   wait_state DOMAIN STATE TIMEOUT
#   expect FILE REGEX WHAT         a console line must match (prints FAIL: WHAT otherwise)
#   show_console FILE              the last 40 non-empty lines, for failure reports
VIRSH=${VIRSH:-virsh -c qemu:///system}

wait_for() {
  local deadline=$(($(date +%s) + $3))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    grep -aqE "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

wait_state() {
  local deadline=$(($(date +%s) + $3))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    [ "$($VIRSH domstate "$1" 2>/dev/null)" = "$2" ] && return 0
    sleep 0.1
  done
  return 1
}

expect() {
  if tr -d '\r' <"$1" | grep -aqE "$2"; then
    return 0
  fi
  echo "FAIL: $3: no console line matches /$2/" >&2
  return 1
}

show_console() {
  echo "console ($1):" >&2
  tr -d '\r' <"$1" 2>/dev/null | grep -av '^\s*$' | tail -n 40 | sed 's/^/    /' >&2
}
