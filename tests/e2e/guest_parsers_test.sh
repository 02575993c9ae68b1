#!/usr/bin/env bash
# Checks the tiny test guest's YAML and MIME parsers (tests/e2e/guest/*.awk) on the host with
# busybox awk/sh, the same implementations the guest runs. Needs busybox (busybox-static); no VM.
# Prints "N passed, M failed"; exit status 1 when a check failed.
set -uo pipefail

g=$(cd "$(dirname "$0")/guest" && pwd)
passed=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! command -v busybox >/dev/null; then
  echo "guest_parsers_test: missing busybox (apt-get install busybox-static)" >&2
  echo "0 passed, 1 failed"
  exit 1
fi

check() { # NAME EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "guest_parsers_test: FAIL: $1"
    diff <(printf '%s\n' "$2") <(printf '%s\n' "$3") | sed 's/^/    /'
  fi
}
flat() { busybox awk -f "$g/yaml.awk"; }

# --- yaml.awk: yaml-cpp style (quoted scalars, indented block sequences, flow sequences) -------
check "yaml-cpp cloud-config" "$(
  cat <<'EOF'
hostname	dev
users.0	default
users.1.name	tester
users.1.ssh_authorized_keys.0	ssh-ed25519 AAAA k1
users.1.ssh_authorized_keys.1	ssh-ed25519 BBBB k2
runcmd.0	echo "TEST: hi"
runcmd.1.0	sh
runcmd.1.1	-c
runcmd.1.2	echo "a, b" # kept
runcmd.2.0	ls
runcmd.2.1	-l
write_files.0.path	/etc/x
write_files.0.content	line 1\n  line 2\n
write_files.1.path	/etc/y
write_files.1.content	a\\tb\n
EOF
)" "$(
  flat <<'EOF'
#cloud-config
hostname: "dev"   # a comment
users:
  - default
  - name: "tester"
    ssh_authorized_keys:
      - "ssh-ed25519 AAAA k1"
      - ssh-ed25519 BBBB k2
runcmd:
  - "echo \"TEST: hi\""
  - [sh, -c, 'echo "a, b" # kept']
  - - ls
    - -l
write_files:
  - path: /etc/x
    content: |
      line 1
        line 2
  - path: '/etc/y'
    content: "a\\tb\n"
EOF
)"

# --- yaml.awk: PyYAML/hand style (sequences not indented under their key, lenient items) ------
check "hand-written network-config" "$(
  cat <<'EOF'
network.version	2
network.ethernets.nic0.match.macaddress	52:54:00:12:34:56
network.ethernets.nic0.set-name	eth0
network.ethernets.nic0.addresses.0	198.51.100.10/24
network.ethernets.nic0.routes.0.to	default
network.ethernets.nic0.routes.0.via	198.51.100.1
network.ethernets.nic0.routes.1.to	10.0.0.0/8
network.ethernets.nic0.routes.1.via	198.51.100.2
network.ethernets.nic0.nameservers.addresses.0	198.51.100.1
network.ethernets.nic0.nameservers.addresses.1	198.51.100.2
network.ethernets.all.match.name	en*
network.ethernets.all.dhcp4	true
EOF
)" "$(
  flat <<'EOF'
network:
  version: 2
  ethernets:
    nic0:
      match: {macaddress: '52:54:00:12:34:56'}
      set-name: eth0
      addresses:
      - 198.51.100.10/24
      routes:
      - to: default
        via: 198.51.100.1
      - {to: 10.0.0.0/8, via: 198.51.100.2}
      nameservers:
        addresses: [ 198.51.100.1,
                     "198.51.100.2" ]
    all:
      match:
        name: "en*"
      dhcp4: true
EOF
)"

check "scalars and block styles" "$(
  cat <<'EOF'
a	it's
b	
c	x
d	folded text\nnext\n
e	no newline
f	keep\n\n
g	with: colon
h	http://example.test:8080/x
i	plain continued
key with blanks	1
EOF
)" "$(
  flat <<'EOF'
---
a: 'it''s'
b: ~
c: !!str x
d: >
  folded
  text

  next
e: |-
  no newline
f: |+
  keep

g: "with: colon"
h: http://example.test:8080/x
i: plain
  continued
key with blanks: 1
empty: []
...
EOF
)"

check "JSON meta-data" "$(printf 'instance-id\tiid-1\nlocal-hostname\th1\n')" \
  "$(echo '{"instance-id": "iid-1", "local-hostname": "h1"}' | flat)"

# --- yq.awk ---------------------------------------------------------------------------------
printf '#cloud-config\nruncmd:\n  - echo "one two"\n  - [printf, '"'"'%%s\\n'"'"', "it'"'"'s"]\n' | flat >"$tmp/cc.flat"
check "runcmd script" "$(printf '#!/bin/sh\necho "one two"\n'"'printf' '%%s\\\\n' 'it'\\\\''s'"'\n')" \
  "$(busybox awk -v op=script -v k=runcmd -f "$g/yq.awk" "$tmp/cc.flat")"
check "runcmd script runs" "$(printf 'one two\nit'"'"'s')" \
  "$(busybox awk -v op=script -v k=runcmd -f "$g/yq.awk" "$tmp/cc.flat" | busybox sh)"
printf 'users:\n  - name: a\n    ssh_authorized_keys: [k1, k2]\nwrite_files:\n  - path: /x\n    content: |\n      l1\n      l2\n' |
  flat >"$tmp/u.flat"
check "shell variables" "$(printf 'a|k1 k2|0 1|l1\nl2\n|users write_files')" "$(
  busybox sh -c '
    eval "$(busybox awk -v op=shell -v ns=C -f "$1" "$2")"
    printf "%s|%s %s|%s|%s|%s" "$YC_users_d0_dname" "$YC_users_d0_dssh__authorized__keys_d0" \
      "$YC_users_d0_dssh__authorized__keys_d1" "$KC_users_d0_dssh__authorized__keys" \
      "$YC_write__files_d0_dcontent" "$KC_"' sh "$g/yq.awk" "$tmp/u.flat"
)"

# --- mime.awk ---------------------------------------------------------------------------------
mkdir -p "$tmp/parts"
cat >"$tmp/mime" <<'EOF'
Content-Type: multipart/mixed;
 boundary="===b=="
MIME-Version: 1.0

--===b==
Content-Type: text/cloud-config; charset="us-ascii"
Content-Disposition: attachment; filename="cc.yaml"

#cloud-config
hostname: m
--===b==
Content-Type: text/x-shellscript
Content-Transfer-Encoding: base64

IyEvYmluL3NoCmVjaG8gaGkK
--===b==--
EOF
check "mime index" "$(printf 'part-001\ttext/cloud-config\t7bit\tcc.yaml\t-\npart-002\ttext/x-shellscript\tbase64\t-\t-')" \
  "$(busybox awk -v dir="$tmp/parts" -f "$g/mime.awk" "$tmp/mime")"
check "mime part body" "$(printf '#cloud-config\nhostname: m')" "$(cat "$tmp/parts/part-001")"
cat >"$tmp/outer" <<'EOF'
Content-Type: multipart/mixed; boundary="out"
MIME-Version: 1.0

--out
Content-Type: multipart/mixed; boundary="in"
MIME-Version: 1.0

--in
Content-Type: text/x-shellscript

#!/bin/sh
--in--

--out--
EOF
mkdir -p "$tmp/outer.d" "$tmp/inner.d"
check "mime nested index" "$(printf 'part-001\tmultipart/mixed\t7bit\t-\tin')" \
  "$(busybox awk -v dir="$tmp/outer.d" -f "$g/mime.awk" "$tmp/outer")"
check "mime nested part" "$(printf 'part-001\ttext/x-shellscript\t7bit\t-\t-')" \
  "$(busybox awk -v dir="$tmp/inner.d" -v boundary=in -f "$g/mime.awk" "$tmp/outer.d/part-001")"
busybox awk -v dir="$tmp/parts" -f "$g/mime.awk" "$g/yaml.awk" >/dev/null 2>&1
check "not multipart" 2 $?

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
