#!/usr/bin/env bash
# security: no way across tenants, through the real `bowline server` and CLI on libvirt's test
# driver (no guest is needed: these are the server's own answers and files).
#   1  mallory names alice's disk file (and /etc/shadow, and a file that does not exist) as
#      the image of a disk of his: refused, with one answer that tells nothing of the file; an
#      admin fares no better outside server.kvm.import_paths, and gets a disk from a file under
#      it; no answer about a disk names a host path; a copy is made of one's own disk only
#   5  a disk beyond mallory's disk quota is refused and leaves no file; a user who is not an
#      admin has finite default quotas; a failed download leaves no partial file
#   9  an e-mail address with shell metacharacters is refused; a deleted user's id is never
#      given to the next user
# Usage: tenants_test.sh BOWLINE_BINARY
set -uo pipefail

BOWLINE=${1:?usage: tenants_test.sh BOWLINE_BINARY}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/net.sh
. "$here/lib/net.sh"
# shellcheck source=lib/check.sh
. "$here/lib/check.sh"
# shellcheck source=lib/server.sh
. "$here/lib/server.sh"
# shellcheck source=lib/spaces.sh
. "$here/lib/spaces.sh"

spaces_begin tenants_test
images=$work/images
mkdir -p "$images/cloud-images" "$work/allowed"
qemu-img create -q -f qcow2 "$images/cloud-images/$SPACES_IMAGE.qcow2" 16M || abort "qemu-img create"
qemu-img create -q -f qcow2 "$work/allowed/golden.qcow2" 8M || abort "qemu-img create"
server_start "$BOWLINE" "$work/server.log" --data-dir "$work/data" --images-path "$images" \
  --import-paths "$work/allowed" --libvirt-uri test:///default --domain-type qemu ||
  abort "bowline server (test:///default)"

token_of() { sed -n 's/.*token (shown once): *\([^ ]*\).*/\1/p' <<<"$1"; }
alice=$(token_of "$("$BOWLINE" user create alice 2>&1)")
mallory=$(token_of "$("$BOWLINE" user create mallory 2>&1)")
[ -n "$alice" ] && [ -n "$mallory" ] || abort "user create"
as() {
  local who=$1
  shift
  BOWLINE_TOKEN=$who "$BOWLINE" "$@"
}

# --- 1: users name things, never host paths -----------------------------------------------------
check_cmd "1: alice makes a disk" as "$alice" disk create secret --size 8M
secret=$(ls "$images"/volumes/*/secret.qcow2 2>/dev/null | head -n 1)
[ -n "$secret" ] || abort "alice's disk file"
qemu-io -c 'write -P 0x5a 0 1M' "$secret" >/dev/null || abort "qemu-io"
answers=()
for path in "$secret" /etc/shadow /etc/no-such-file "$work/allowed/golden.qcow2"; do
  out=$(as "$mallory" disk create loot --image "$path" 2>&1)
  status=$?
  check_eq "1: mallory's disk create --image $path fails" 1 "$([ $status -ne 0 ] && echo 1)"
  check_eq "1: ... and the answer names no file" "" "$(grep -oF -e "$path" -e shadow -e secret.qcow2 <<<"$out")"
  answers+=("$out")
done
check_eq "1: one answer whether the file exists, is alice's or is not there" 1 \
  "$(printf '%s\n' "${answers[@]}" | sort -u | wc -l)"
check_match "1: ... saying what may be named instead" "library or an https:// URL" "${answers[0]}"
check_eq "1: mallory has no disk" 0 "$(as "$mallory" disk list -o json | jq length)"
check_eq "1: no overlay of alice's disk exists" "" \
  "$(for f in "$images"/volumes/*/*.qcow2; do qemu-img info -U --output=json "$f" | jq -r '.["backing-filename"] // empty'; done)"
out=$(as "$mallory" disk create copy --from-disk secret 2>&1)
check_match "1: --from-disk finds only one's own disks" "mallory has no disk named secret" "$out"
admin_answers=()
for path in "$secret" /etc/shadow /etc/no-such-file; do
  admin_answers+=("$("$BOWLINE" disk create x --image "$path" 2>&1)")
done
check_eq "1: an admin gets one answer for every file outside server.kvm.import_paths" 1 \
  "$(printf '%s\n' "${admin_answers[@]}" | sort -u | wc -l)"
check_match "1: ... naming the setting, not the file" "under server.kvm.import_paths\$" "${admin_answers[0]}"
check_cmd "1: an admin makes a disk from a file under server.kvm.import_paths" \
  "$BOWLINE" disk create golden --image "$work/allowed/golden.qcow2"
check_eq "1: disk info names no host file" "" \
  "$(as "$alice" disk info secret -o json | grep -oF -e "$images" -e '"path"')"
check_eq "1: disk list --all names no host file" "" \
  "$("$BOWLINE" disk list --all -o json | grep -oF -e "$images" -e "$work")"

# --- 5: every byte counted ------------------------------------------------------------------------
check_eq "5: a user's default disk quota is finite" 536870912000 \
  "$(as "$mallory" user info mallory -o json | jq '.quota.disk.limit')"
"$BOWLINE" user set-quota mallory --disk 16M >/dev/null || abort "user set-quota"
check_cmd "5: a disk within the quota" as "$mallory" disk create small --size 8M
out=$(as "$mallory" disk create big --size 10M 2>&1)
check_match "5: a disk beyond the quota is refused, saying so" "quota: disk 8 MiB used \+ 10 MiB asked" "$out"
check_eq "5: ... and leaves no file" "" "$(ls "$images"/volumes/*/big.qcow2* 2>/dev/null)"
out=$(as "$mallory" disk create far --image https://127.0.0.1:1/images/none.qcow2 2>&1)
check_match "5: a download that fails says why" "image:" "$out"
check_eq "5: ... and leaves no partial file in the cache" "" "$(ls "$images/base" 2>/dev/null)"

# A download is charged to the user whose disk made it come, once: a second user of the same
# URL finds it cached and is not charged.
mkdir -p "$work/files"
qemu-img create -q -f qcow2 "$work/files/served.qcow2" 4M || abort "qemu-img create"
sum=$(sha256sum "$work/files/served.qcow2" | cut -d' ' -f1)
served=$(stat -c %s "$work/files/served.qcow2")
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
  -subj /CN=127.0.0.1 -keyout "$work/files/key.pem" -out "$work/files/cert.pem" 2>/dev/null ||
  abort "openssl"
python3 "$here/../unit/image/https_server.py" "$work/files/cert.pem" "$work/files/key.pem" \
  "$work/files" "$work/files/requests.log" >"$work/files/ports" 2>"$work/files/server.err" &
files_pid=$!
for _ in $(seq 50); do [ -s "$work/files/ports" ] && break; sleep 0.1; done
http_port=$(cut -d' ' -f2 "$work/files/ports")
[ -n "$http_port" ] || abort "the file server did not start"
url=http://127.0.0.1:$http_port/plain/t/served.qcow2
"$BOWLINE" user set-quota mallory --disk default >/dev/null || abort "user set-quota"
before=$(as "$mallory" user info mallory -o json | jq .usage.disk)
check_cmd "5: mallory makes a disk from an URL" \
  as "$mallory" disk create fetched --image "$url" --image-checksum "sha256:$sum"
check_eq "5: the download counts against mallory's disk quota, with the disk" \
  $((before + 4194304 + served)) "$(as "$mallory" user info mallory -o json | jq .usage.disk)"
check_cmd "5: alice makes a disk from the same URL" \
  as "$alice" disk create fetched --image "$url" --image-checksum "sha256:$sum"
check_eq "5: ... and is charged the disk only (the download was mallory's)" $((8388608 + 4194304)) \
  "$(as "$alice" user info alice -o json | jq .usage.disk)"
kill "$files_pid" 2>/dev/null
as "$mallory" disk delete fetched >/dev/null || abort "disk delete fetched"

# --- 9: the smaller items -------------------------------------------------------------------------
out=$("$BOWLINE" user create eve --email 'eve$(reboot)@example.org' 2>&1)
check_match "9: an e-mail address with shell metacharacters is refused" "not an address bowline takes" "$out"
id_before=$("$BOWLINE" user info mallory -o json | jq .id)
"$BOWLINE" disk delete small --owner mallory >/dev/null || abort "disk delete small"
check_cmd "9: mallory is deleted" "$BOWLINE" user delete mallory
"$BOWLINE" user create trent >/dev/null || abort "user create trent"
id_after=$("$BOWLINE" user info trent -o json | jq .id)
check_eq "9: the next user does not get mallory's id" 1 "$([ "$id_after" -gt "$id_before" ] && echo 1)"

summary
