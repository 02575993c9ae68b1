# shellcheck shell=bash
# Counted checks for the shell end-to-end tests (source this file). Each check prints one line,
# "ok: WHAT" or "FAIL: WHAT (what was compared)", and summary ends the run.
#   pass WHAT | fail WHAT          count one check
#   check_eq WHAT EXPECTED ACTUAL  equal strings
#   check_match WHAT REGEX ACTUAL  ACTUAL matches the extended REGEX
#   check_no_match WHAT REGEX ACTUAL
#   check_cmd WHAT CMD [ARG...]    CMD exits 0
#   check_not_cmd WHAT CMD [ARG...]  CMD exits non-zero
#   summary                        prints "N passed, M failed"; status 1 when a check failed
CHECK_PASSED=0
CHECK_FAILED=0

pass() {
  CHECK_PASSED=$((CHECK_PASSED + 1))
  echo "ok: $*"
}
fail() {
  CHECK_FAILED=$((CHECK_FAILED + 1))
  echo "FAIL: $*"
}
# A multi-line value is shown on one line, its lines joined with " | ".
_check_flat() {
  local text=${1%$'\n'}
  printf '%s' "${text//$'\n'/ | }"
}
check_eq() {
  if [ "$2" = "$3" ]; then
    pass "$1 ($(_check_flat "$3"))"
  else
    fail "$1: expected '$(_check_flat "$2")', got '$(_check_flat "$3")'"
  fi
}
check_match() {
  if [[ $3 =~ $2 ]]; then
    pass "$1 ($(_check_flat "$3"))"
  else
    fail "$1: '$(_check_flat "$3")' does not match /$2/"
  fi
}
check_no_match() {
  if [[ $3 =~ $2 ]]; then fail "$1: '$3' matches /$2/"; else pass "$1"; fi
}
check_cmd() {
  local what=$1
  shift
  if "$@"; then pass "$what"; else fail "$what: '$*' failed"; fi
}
check_not_cmd() {
  local what=$1
  shift
  if "$@"; then fail "$what: '$*' succeeded"; else pass "$what"; fi
}
summary() {
  echo "$CHECK_PASSED passed, $CHECK_FAILED failed"
  [ "$CHECK_FAILED" -eq 0 ]
}
