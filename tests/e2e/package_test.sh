#!/usr/bin/env bash
# The Debian package on this machine: builds it (cmake --build BUILD --target package), checks
# what it holds and depends on, installs it with dpkg -i, checks the installed unit with
# systemd-analyze verify, starts the packaged binary exactly as the unit's ExecStart says (its
# data and images under a private directory, a free loopback port, libvirt's test driver:
# BOWLINE_* variables, which beat the config file, so the installed config is read untouched),
# asks the API, the web UI's index and every vendored file the UI names, runs the installed
# bash completion against it with a saved login, and removes the package with dpkg -r: the
# binary goes, the data directory stays.
# Usage: package_test.sh BUILD_DIR
# Prints "N passed, M failed"; exit status 1 when a check failed. Runs as root (dpkg). Purges
# the package, and removes the directories its postinst made when they were not there before,
# on exit, also on failure.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=lib/check.sh
. "$here/lib/check.sh"
build=${1:?usage: package_test.sh BUILD_DIR}
log() { echo "package_test: $*"; }
stop() { # a check that leaves nothing more to check
  fail "$*"
  summary
  exit 1
}

[ "$(id -u)" -eq 0 ] || stop "dpkg -i needs root"
# One run at a time on this machine (other worktrees' runs too): dpkg and /usr/bin are shared.
exec 9>/tmp/bowline-package-test.lock
flock -w 900 9 || stop "another package test holds /tmp/bowline-package-test.lock"
if dpkg-query -W -f='${Status}' bowline 2>/dev/null | grep -qE 'installed|config-files'; then
  # Not ours to remove: an operator's install, or a run that could not clean up.
  stop "the bowline package is installed already; remove it first (dpkg --purge bowline)"
fi

data_dir=/var/lib/bowline
images_dir=/var/lib/libvirt/images/bowline
had_data_dir=0 had_images_dir=0
[ -e "$data_dir" ] && had_data_dir=1
[ -e "$images_dir" ] && had_images_dir=1
work=$(mktemp -d /tmp/bowline-package.XXXXXX)
server_pid=""
installed=0
systemd_ran=0
[ -d /run/systemd/system ] && systemd_ran=1
cleanup() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null
    wait "$server_pid" 2>/dev/null
  fi
  [ "$installed" = 1 ] && dpkg --purge bowline >/dev/null 2>&1
  # The server's guest guard table outlives it by design; this run's goes with the run.
  guard=$(sed -n 's/^table bridge \(bowline_[0-9a-f]\{3\}\)$/\1/p' "$work/data/guest-guard.nft" 2>/dev/null | head -n 1)
  [ -z "$guard" ] || nft delete table bridge "$guard" 2>/dev/null
  # Only what this run made. Where systemd is PID 1, postinst started the real service, which
  # wrote its database into the new data directory; otherwise the server used $work and both
  # directories are empty (rmdir, which removes nothing else).
  if [ "$had_data_dir" = 0 ] && [ -d "$data_dir" ]; then
    if [ "$systemd_ran" = 1 ]; then rm -rf "$data_dir"; else rmdir "$data_dir"; fi
  fi
  if [ "$had_images_dir" = 0 ] && [ -d "$images_dir" ]; then
    rmdir "$images_dir"/cloud-images "$images_dir"/base 2>/dev/null
    rmdir "$images_dir"
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# --- build ---------------------------------------------------------------------------------
log "building the package"
rm -f "$build"/bowline_*.deb
if ! cmake --build "$build" --target package -j 2 >"$work/package.log" 2>&1; then
  tail -n 30 "$work/package.log"
  stop "cmake --build $build --target package"
fi
debs=("$build"/bowline_*.deb)
deb=${debs[0]}
[ -f "$deb" ] || stop "no bowline_*.deb in $build"
pass "package built: $(basename "$deb") ($(du -h "$deb" | cut -f1))"

contents=$(dpkg-deb -c "$deb" | awk '{print $NF}')
for f in ./usr/bin/bowline ./lib/systemd/system/bowline.service \
  ./lib/systemd/system/bowline-guard.service ./etc/bowline/config.yaml \
  ./usr/share/bash-completion/completions/bowline ./usr/share/bowline/web/ui/index.html \
  ./usr/share/bowline/web/node_modules/htm/preact/standalone.module.js; do
  check_eq "the package holds $f" "$f" "$(grep -Fx -- "$f" <<<"$contents")"
done
check_no_match "no test-only npm package (playwright-core) in it" "playwright" "$contents"
depends=$(dpkg-deb -f "$deb" Depends)
# dpkg-shlibdeps worked: the runtime libraries' packages, not a hand-made list.
check_match "Depends names libvirt's package (dpkg-shlibdeps)" "libvirt0" "$depends"
check_match "Depends names libcurl's package" "libcurl4" "$depends"
check_match "Depends names qemu-utils (qemu-img)" "qemu-utils" "$depends"
check_eq "config.yaml is a conffile" "/etc/bowline/config.yaml" \
  "$(dpkg-deb -I "$deb" conffiles 2>/dev/null | tr -d '[:space:]')"

# --- install -------------------------------------------------------------------------------
if ! dpkg -i "$deb" >"$work/dpkg-i.log" 2>&1; then
  installed=1 # half-installed still needs the purge
  cat "$work/dpkg-i.log"
  stop "dpkg -i $(basename "$deb")"
fi
installed=1
pass "dpkg -i"
check_match "/usr/bin/bowline runs" "^bowline [0-9]" "$(/usr/bin/bowline --version 2>&1)"
if [ "$had_data_dir" = 0 ]; then
  check_eq "postinst made the data directory, root's, 0700" "700 root" "$(stat -c '%a %U' "$data_dir" 2>&1)"
else
  check_cmd "the data directory (there before: its mode is the operator's)" test -d "$data_dir"
fi
if [ "$had_images_dir" = 0 ]; then
  check_eq "the images directory: passable, not listable (0711)" "711" "$(stat -c '%a' "$images_dir" 2>&1)"
fi

unit=/lib/systemd/system/bowline.service
[ -f "$unit" ] || stop "$unit was not installed"
if [ "$systemd_ran" = 1 ]; then
  # systemd is PID 1 here: postinst enabled and started the unit. Check, then stop it, so that
  # the run below is the only server of this package.
  check_cmd "postinst started bowline.service" systemctl is-active --quiet bowline.service
  systemctl stop bowline.service
else
  log "systemd is not PID 1 here: nothing started the unit (postinst checks /run/systemd/system)"
fi
# systemd-analyze verify loads the unit as systemd would (it needs no running systemd); it
# prints a line for every unknown key or bad value, which it only warns about, hence the output
# check as well as the status.
guard_unit=/lib/systemd/system/bowline-guard.service
if command -v systemd-analyze >/dev/null; then
  for u in "$unit" "$guard_unit"; do
    verify=$(systemd-analyze verify "$u" 2>&1)
    status=$?
    if grep -qiE 'failed to (initialize|set up|setup) manager|not supported|cannot determine' <<<"$verify"; then
      log "systemd-analyze cannot run here: $verify; checking the unit's syntax by hand instead"
      check_match "$(basename "$u") has its sections" "\[Unit\].*\[Service\].*\[Install\]" "$(tr '\n' ' ' <"$u")"
    else
      check_eq "systemd-analyze verify $(basename "$u"): status 0" 0 "$status"
      check_no_match "systemd-analyze verify: no warning about $(basename "$u")" "$(basename "$u" | sed 's/\./\\./g')" "$verify"
    fi
  done
else
  fail "systemd-analyze is missing (scripts/setup installs the systemd package)"
fi
check_match "the guard's unit loads the server's rules before libvirt starts domains" \
  "^Before=libvirtd\.service.*" "$(grep '^Before=' "$guard_unit")"
check_eq "the guard's unit loads the rules the server writes in its data directory" \
  "ExecStart=/usr/sbin/nft -f $data_dir/guest-guard.nft" "$(grep '^ExecStart=' "$guard_unit")"
unit_text=$(cat "$unit")
for setting in ProtectSystem=strict PrivateTmp=yes NoNewPrivileges=yes Restart=on-failure \
  "ReadWritePaths=$data_dir $images_dir"; do
  check_eq "the unit sets $setting" "$setting" "$(grep -Fx -- "$setting" <<<"$unit_text")"
done
check_match "the unit starts after libvirtd" "libvirtd\.service" "$(grep '^After=' <<<"$unit_text")"

# --- the server as the unit starts it ------------------------------------------------------
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
read -ra argv <<<"$exec_start"
check_eq "ExecStart runs the installed binary" /usr/bin/bowline "${argv[0]:-}"
# Where the installed config puts things (read from the file, not the build's defaults).
effective=$("${argv[@]}" --print-config 2>&1)
check_match "the config file's web root" "/usr/share/bowline/web +file" "$(grep '^server.web_root ' <<<"$effective")"
check_match "the config file's data directory" "$data_dir +file" "$(grep '^server.data_dir ' <<<"$effective")"

mkdir -p "$work/home"
BOWLINE_LISTEN=127.0.0.1:0 BOWLINE_DATA_DIR=$work/data BOWLINE_KVM_IMAGES_PATH=$work/images \
  BOWLINE_LIBVIRT_URI=test:///default BOWLINE_DOMAIN_TYPE=qemu HOME=$work/home \
  "${argv[@]}" >"$work/server.log" 2>&1 &
server_pid=$!
url=""
for _ in $(seq 1 300); do
  url=$(grep -aoE 'listening on http://127\.0\.0\.1:[0-9]+' "$work/server.log" | tail -n 1)
  [ -n "$url" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
url=${url#listening on }
if [ -z "$url" ]; then
  sed 's/^/    /' "$work/server.log"
  stop "the packaged server did not come up"
fi
pass "the packaged server listens on $url"
token=$(cat "$work/data/admin.token" 2>/dev/null)
check_match "the API answers whoami with the first admin" '"admin"' \
  "$(curl -sf -H "Authorization: Bearer $token" "$url/api/v1/whoami")"
check_eq "the API refuses without a token" 401 \
  "$(curl -s -o /dev/null -w '%{http_code}' "$url/api/v1/spaces")"
check_match "the web UI's index from /usr/share/bowline/web" "<html" "$(curl -sf "$url/")"
# Every vendored file the UI names (index.html and its modules) comes from the installed
# node_modules: a package missing from packaging/CMakeLists.txt's list shows up here.
vendored=$(grep -ohE '/ui/vendor/[A-Za-z0-9._/@-]+' /usr/share/bowline/web/ui/* | sort -u)
[ -n "$vendored" ] || fail "no /ui/vendor/ file named by the installed UI"
for path in $vendored; do
  check_eq "GET $path" 200 "$(curl -s -o /dev/null -w '%{http_code}' "$url$path")"
done
check_match "a vendored module is served as JavaScript" "javascript" \
  "$(curl -s -o /dev/null -w '%{content_type}' "$url/ui/vendor/htm/preact/standalone.module.js")"

# --- bash completion, installed, with a saved login ----------------------------------------
# The CLI as a user runs it: only the login file says which server and token.
cli() { HOME=$work/home env -u BOWLINE_SERVER -u BOWLINE_TOKEN /usr/bin/bowline "$@" >>"$work/cli.log" 2>&1; }
check_cmd "bowline login saves the login" cli login --server "$url" --token "$token"
check_cmd "a template to complete" cli template create "$root/examples/nat.yaml" --name pkg-tpl
complete_at() { # WORDS...: the installed script's answer for the last word (env: no token)
  # shellcheck disable=SC2016 # the inner bash expands them
  HOME=$work/home PATH=/usr/bin:/bin env -u BOWLINE_SERVER -u BOWLINE_TOKEN bash -c '
    [ -f /usr/share/bash-completion/bash_completion ] && . /usr/share/bash-completion/bash_completion
    . /usr/share/bash-completion/completions/bowline
    COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
    _bowline; printf "%s\n" "${COMPREPLY[@]}"' complete "$@"
}
check_eq "completes a verb" space "$(complete_at bowline spa)"
check_eq "completes a sub-verb" "$(printf 'start\nstop')" "$(complete_at bowline space st)"
check_eq "completes a template name from the server" pkg-tpl "$(complete_at bowline template get pkg)"
check_eq "completes an option's value" json "$(complete_at bowline space list --output j)"

# --- remove --------------------------------------------------------------------------------
kill "$server_pid" 2>/dev/null
wait "$server_pid" 2>/dev/null
server_pid=""
check_cmd "dpkg -r bowline" dpkg -r bowline
check_not_cmd "the binary is gone" test -e /usr/bin/bowline
check_not_cmd "the unit is gone" test -e "$unit"
check_cmd "the data directory is left" test -d "$data_dir"
check_cmd "the config is left until purge (a conffile)" test -f /etc/bowline/config.yaml

summary
