#!/usr/bin/env bash
# The heavier end-to-end suite (ctest label e2e-debian): the real `bowline server` on the real
# libvirtd (domain type qemu) with a real Debian 12 cloud image and Debian's own cloud-init
# (scripts/build-debian-guest), driven only through the bowline CLI:
#   - a user with an SSH key (user create, user add-key), a NAT template on an isolated libvirt
#     network in 198.51.100.0/24 with `environment` and a `cloudInit` runcmd;
#   - `space create --wait` as that user returns once cloud-init has finished;
#   - the owner logs in over SSH with their key as their own username; the hostname is the
#     template's; the environment variable is set in a login shell; the runcmd ran;
#   - the QEMU guest agent answers guest-ping (pool claims rely on it);
#   - pools (when the CLI has them): a member, once ready, waits suspended (managed save); a
#     claim resumes it and lets the user in with their key, without a reboot;
#   - through the server (ctest -R 'tunnel|ssh|forward' names this suite's tunnel checks): a
#     client in a network namespace that reaches only the server's address (a veth pair in
#     198.51.100.0/24, no route to any guest network) runs `bowline ssh`, scp of 50 MB both ways,
#     ssh-config then rsync to dev.bowline, `bowline forward`, and is refused port 9000, another
#     user's space and port 22 without use-ssh; a replaced host key is refused; a delete closes
#     an open tunnel.
# Every ssh pins the host key bowline made (StrictHostKeyChecking yes): none is trusted on first
# use.
# Needs root, a running libvirtd (scripts/prepare-host), the packages of scripts/setup.
# Everything it makes has a unique name (bwdeb-*) and is removed on exit, also on failure.
# Prints the time of each phase and "N passed, M failed"; exit status 1 when a check failed.
# Usage: debian_guest_test.sh BOWLINE_BINARY
set -uo pipefail

bowline=${1:?usage: debian_guest_test.sh BOWLINE_BINARY}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=lib/net.sh
. "$here/lib/net.sh"

VIRSH="virsh -c qemu:///system"
READY_TIMEOUT=${READY_TIMEOUT:-900} # TCG on 2 cores: ~50 s idle, 10+ minutes while others compile
passed=0
failed=0
tag=$(printf '%04x' $((RANDOM)))$(printf '%02x' $(($$ % 256)))
prefix=bwdeb-$tag
work=""
images=""
server_pid=""
t_start=$(date +%s.%N)

log() { echo "debian_guest_test: $*"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
pass() { passed=$((passed + 1)); log "ok: $*"; }
fail() { failed=$((failed + 1)); log "FAIL: $*"; }
# check WHAT COMMAND...: one assertion
check() {
  local what=$1
  shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}
finish() {
  log "total $(since "$t_start") s"
  echo "$passed passed, $failed failed"
  [ "$failed" = 0 ] && [ "$passed" -gt 0 ]
  exit $?
}
abort() { # a step that the rest depends on failed
  fail "$*"
  finish
}

cleanup() {
  local d j
  for j in $(jobs -p); do kill "$j" 2>/dev/null; done # a CLI still waiting
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null
    wait "$server_pid" 2>/dev/null
  fi
  # whatever the server left (it is gone now): our domains all carry the prefix
  for d in $($VIRSH list --all --name 2>/dev/null | grep "^$prefix-"); do
    $VIRSH -q destroy "$d" >/dev/null 2>&1
    $VIRSH -q undefine --nvram "$d" >/dev/null 2>&1 || $VIRSH -q undefine "$d" >/dev/null 2>&1
  done
  # Whatever still runs in the client's namespace (a forward whose wrapper was killed alone).
  [ -n "${client_ns:-}" ] && ip netns pids "$client_ns" 2>/dev/null | xargs -r kill 2>/dev/null
  net_cleanup
  [ -n "${forwarding_before:-}" ] && sysctl -qw net.ipv4.ip_forward="$forwarding_before"
  [ -z "$work" ] || net_guard_drop "$work/data" # the guest guard's nftables table
  [ -n "$images" ] && rm -rf "$images"
  [ -n "$work" ] && rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" = 0 ] || abort "needs root (libvirt system connection, networks, loop mounts)"
for tool in virsh qemu-img ssh ssh-keygen iptables python3; do
  command -v "$tool" >/dev/null || abort "missing $tool (scripts/setup installs it)"
done
[ -x "$bowline" ] || abort "no bowline binary at $bowline"
$VIRSH -q list >/dev/null 2>&1 || "$root/scripts/prepare-host" >/dev/null

work=$(mktemp -d "${TMPDIR:-/tmp}/$prefix.XXXXXX") # private: keys, data dir, logs
mkdir -p /var/lib/libvirt/images
images=$(mktemp -d "/var/lib/libvirt/images/$prefix.XXXXXX") # libvirt-qemu reads it
chmod 0755 "$images"
mkdir -p "$images/cloud-images"

# --- the Debian image (built once per version of the script, then cached) ---------------------
t=$(now)
"$root/scripts/build-debian-guest" "$images/cloud-images/debian-12.qcow2" >"$work/build.log" 2>&1 ||
  { cat "$work/build.log"; abort "scripts/build-debian-guest"; }
grep -E 'up to date|in [0-9]+ s' "$work/build.log" | sed 's/^/  /'
log "image ready in $(since "$t") s"

# --- an isolated libvirt network (DHCP only) on a free /28 -------------------------------------
subnet=$(net_free_subnet 28) || abort "no free /28 in 198.51.100.0/24"
base=${subnet##*.}
net3=${subnet%.*}
network=$prefix
bridge=bwd$tag # at most 15 characters
net_isolated_create "$network" "$bridge" "$net3.$((base + 1))/28" "$net3.$((base + 2))" \
  "$net3.$((base + 14))" || abort "isolated network on $subnet/28"
log "network $network on $subnet/28 (bridge $bridge)"

# --- the client's machine: a network namespace that reaches the server's address and nothing
# else (no route to any guest network), so whatever it reaches of a guest went through the server
client_subnet=$(net_free_subnet 30) || abort "no free /30 in 198.51.100.0/24 for the client"
client_ns=bwcl$tag
net_client_netns "$client_ns" "$client_subnet" || abort "the client's namespace on $client_subnet/30"
server_ip=$NET_HOST_IP
log "client namespace $client_ns at $NET_CLIENT_IP; the server listens on $server_ip"
# The address guests' ports are published on (server.external_address): another address of the
# host on the client's link, never the UI's ($server_ip), which the client reaches by a route.
ext_subnet=$(net_free_subnet 30) || abort "no free /30 for the external address"
ext_ip=${ext_subnet%.*}.$((${ext_subnet##*.} + 1))
ip addr add "$ext_ip/32" dev "${client_ns:0:12}h" &&
  ip netns exec "$client_ns" ip route add "$ext_ip/32" dev "${client_ns:0:12}c" ||
  abort "the external address $ext_ip"
ext_first=$((40000 + (RANDOM % 200) * 100))
# The host must forward IPv4 for published ports (bowline does not turn it on by itself). The
# isolated network's guests have no route out and libvirt rejects their forwarding; the client
# forwards nothing (net_client_netns): turning it on here lets nothing else through.
forwarding_before=$(cat /proc/sys/net/ipv4/ip_forward)
sysctl -qw net.ipv4.ip_forward=1 || abort "net.ipv4.ip_forward=1"

# --- the real server: private data dir, its own images path, a free port on the client's link --
resolver=$net3.$((base + 1)) # what bridged guests are told to use (the test checks the config)
"$bowline" server --listen "$server_ip:0" --data-dir "$work/data" --images-path "$images" \
  --domain-type qemu --libvirt-uri qemu:///system --resolvers "$resolver" \
  --external-address "$ext_ip" --external-ports "$ext_first-$((ext_first + 99))" \
  --preview-domain preview.test >"$work/server.log" 2>&1 &
server_pid=$!
url=""
for _ in $(seq 300); do
  url=$(grep -oE "listening on https?://${server_ip//./\\.}:[0-9]+" "$work/server.log" | head -n 1 | cut -d' ' -f3)
  [ -n "$url" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
[ -n "$url" ] || { cat "$work/server.log"; abort "bowline server did not start"; }
admin_token=$(cat "$work/data/admin.token")
log "server at $url"
export HOME=$work/home BOWLINE_SERVER=$url
mkdir -p "$HOME"
# Off loopback the server serves HTTPS with a certificate it made: the CLI pins its fingerprint
# (from the server's own words) on each machine, and Python's checks trust that certificate.
fingerprint=""
if [ "${url%%://*}" = https ]; then
  fingerprint=$(grep -aoE 'fingerprint SHA256:[A-Za-z0-9+/]+' "$work/server.log" | head -n 1 | cut -d' ' -f2)
  "$bowline" login --server "$url" --token "$admin_token" --accept-fingerprint "$fingerprint" >/dev/null ||
    abort "bowline login --accept-fingerprint $fingerprint"
fi
export SSL_CERT_FILE=$work/data/tls-cert.pem # for Python's urllib and ssl below
as_admin() { BOWLINE_TOKEN=$admin_token "$bowline" "$@"; }
as_user() { BOWLINE_TOKEN=$user_token "$bowline" "$@"; }
# COMMAND... on the client's machine, as the user, with a home of its own
client_home=$work/client
mkdir -p "$client_home/.ssh" && chmod 700 "$client_home/.ssh"
in_client() {
  ip netns exec "$client_ns" env HOME="$client_home" BOWLINE_SERVER="$url" BOWLINE_TOKEN="$user_token" "$@"
}
if [ -n "$fingerprint" ]; then
  ip netns exec "$client_ns" env HOME="$client_home" "$bowline" login --server "$url" \
    --token "$admin_token" --accept-fingerprint "$fingerprint" >/dev/null ||
    abort "bowline login on the client's machine"
fi

# --- a user with an SSH key -------------------------------------------------------------------
user=dana
ssh-keygen -q -t ed25519 -N '' -C "$user@bowline-e2e" -f "$work/id_ed25519" || abort "ssh-keygen"
# A service password with a space and quotes: the guest's hash must verify it as typed.
service_pw="d4na's \"service\" pw"
web_pw="dana-web-$tag"
out=$(as_admin user create "$user" --email "$user@example.org" --service-password "$service_pw" \
  --password "$web_pw" --permission use-ssh --permission use-ports) ||
  abort "user create: $out"
user_token=$(sed -n 's/.*token (shown once): *\([^ ]*\).*/\1/p' <<<"$out")
[ -n "$user_token" ] || abort "user create printed no token: $out"
as_user user add-key "$user" "$work/id_ed25519.pub" >/dev/null || abort "user add-key"
check "the user has the key" \
  grep -qF "$(cut -d' ' -f2 "$work/id_ed25519.pub")" <(as_admin user list -o json)

# --- a NAT template with environment and a runcmd -----------------------------------------------
hostname=deb-$tag
greeting="hello from bowline's environment"
cat >"$work/debian-nat.yaml" <<YAML
name: $prefix-\${{ .space.name }}
hostname: $hostname
image: debian-12
memory: 1G
cpus: 2
network:
  mode: nat
  bridge: $network
environment:
  - BWDEB_GREETING=$greeting
ports: [{port: 8000, http: true}]
external: true
externalPorts: [8000]
cloudInit: |
  #cloud-config
  runcmd:
    - [ sh, -c, 'echo "runcmd ran on \$(hostname) at uptime \$(cut -d" " -f1 /proc/uptime)" > /var/lib/bwdeb-runcmd' ]
YAML
as_admin template create "$work/debian-nat.yaml" >/dev/null || abort "template create"

# POOL PART (1/2): the pool's member boots beside the space (two guests on two cores).
pools=0
# (`bowline pool --help` alone would print the main help and succeed on a bowline without it)
if "$bowline" --help 2>/dev/null | grep -qE '^ +pool +'; then
  pools=1
  t_pool=$(now)
  as_admin pool create warm --template debian-nat --size 1 >/dev/null || { pools=0; fail "pool create"; }
else
  log "skipped: pools (this bowline has no 'pool' verb yet)"
fi

# --- a space, created by its owner, waited for until cloud-init has finished ----------------
t=$(now)
# In the background and waited for: a TERM (ctest's timeout, ^C) then runs the cleanup at once.
as_user space create debian-nat dev --wait --timeout "$READY_TIMEOUT" >"$work/create.out" 2>"$work/create.err" &
if ! wait $!; then
  cat "$work/create.out" "$work/create.err"
  as_user space info dev
  abort "space create --wait"
fi
boot_to_ready=$(since "$t")
log "space create --wait: ready $boot_to_ready s after the request"
info=$(as_user space info dev -o json) || abort "space info"
field() { python3 -c 'import json,sys; v=json.load(sys.stdin)
for k in sys.argv[1].split("."): v=v.get(k) if isinstance(v, dict) else None
print("" if v is None else v)' "$1" <<<"$2"; }
domain=$(field domain "$info")
address=$(field info.address "$info")
log "guest: $(field info.readiness.detail "$info")"
check "space info: state running" [ "$(field state "$info")" = running ]
check "space info: ready" [ "$(field info.readiness.ready "$info")" = True ]
check "the domain carries the template's name ($domain)" [ "$domain" = "$prefix-dev" ]
[ -n "$address" ] || abort "space info shows no address: $info"
check "the address ($address) is on the test network" grep -q "^$net3\." <<<"$address"

# The host's own checks reach the guest straight, with the host key bowline made for it pinned
# before the first connection (known-hosts, from the server): no key is trusted on first use.
as_user known-hosts dev.bowline >"$work/known_dev" || abort "known-hosts dev.bowline"
pin_opts() { # KNOWN_HOSTS ALIAS: options that accept only the key in KNOWN_HOSTS under ALIAS
  echo -i "$work/id_ed25519" -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=yes \
    -o UserKnownHostsFile="$1" -o HostKeyAlias="$2" -o LogLevel=ERROR -o ConnectTimeout=20 \
    -o BindInterface="$bridge"
}
read -ra ssh_opts <<<"$(pin_opts "$work/known_dev" dev.bowline)"
guest() { ssh "${ssh_opts[@]}" "$user@$address" "$@"; }
# sshd is up before cloud-init's last stage; a retry covers a slow first key exchange
for _ in 1 2 3; do guest true 2>"$work/ssh.err" && break; sleep 2; done

check "the owner logs in with their key as $user" [ "$(guest id -un 2>>"$work/ssh.err")" = "$user" ]
check "the hostname is the template's ($hostname)" [ "$(guest hostname 2>>"$work/ssh.err")" = "$hostname" ]
check "the environment is set in a login shell" \
  [ "$(guest "bash -lc 'printf %s \"\$BWDEB_GREETING\"'" 2>>"$work/ssh.err")" = "$greeting" ]
check "the environment reaches a command over ssh, without a login shell (pam_env)" \
  [ "$(guest printenv BWDEB_GREETING 2>>"$work/ssh.err")" = "$greeting" ]
check "the environment reaches a service (systemd's DefaultEnvironment)" \
  [ "$(guest sudo -n systemd-run --quiet --pipe --wait printenv BWDEB_GREETING 2>>"$work/ssh.err")" = "$greeting" ]
check "the template's runcmd ran" \
  grep -q "^runcmd ran on $hostname " <<<"$(guest cat /var/lib/bwdeb-runcmd 2>>"$work/ssh.err")"
check "the owner has passwordless sudo" guest sudo -n true 2>>"$work/ssh.err"
# HASH: whether it is the crypt(3) hash of the service password (the guest logs the user in
# on the console with it)
verifies_service_password() {
  python3 -W ignore -c 'import crypt,sys; sys.exit(0 if sys.argv[2].startswith("$") and crypt.crypt(sys.argv[1], sys.argv[2]) == sys.argv[2] else 1)' "$service_pw" "$1"
}
check "the owner's password is the service password" \
  verifies_service_password "$(guest sudo -n getent shadow "$user" 2>>"$work/ssh.err" | cut -d: -f2)"
check "cloud-init reports done" grep -q 'status: done' <<<"$(guest cloud-init status 2>>"$work/ssh.err")"
[ -s "$work/ssh.err" ] && sed 's/^/  ssh: /' "$work/ssh.err"
# A few tries with a long timeout: on a loaded emulated host the agent's first answer can take
# longer than virsh's default wait.
# The agent is asked until two minutes have passed: a busy CI machine once kept it silent for
# three tries of 30 s while the claim below, minutes later, found it answering. The last error
# is printed when it never answers.
agent_ping() {
  local deadline=$((SECONDS + 120)) out
  while :; do
    out=$($VIRSH qemu-agent-command --timeout 30 "$1" '{"execute":"guest-ping"}' 2>&1)
    grep -q '"return"' <<<"$out" && return 0
    [ "$SECONDS" -ge "$deadline" ] && break
    sleep 3
  done
  echo "  guest-ping: $out" >&2
  return 1
}
check "the QEMU guest agent answers guest-ping" agent_ping "$domain"

# --- PREVIEW: the port's own HTTPS origin, in Chromium (web/tests/preview.mjs) ---------------
# The browser runs on the client's machine (its namespace reaches only the server's address);
# *.preview.test is mapped there, and both of the server's self-signed certificates are pinned.
preview_checks() {
  local preview spki="" cert line
  preview=$(as_user space info dev -o json | jq -r '.info.connect.ports[0].previewUrl // empty')
  check "preview: space info gives port 8000 a URL under preview.test ($preview)" \
    grep -qE "^https://8000--dev--$user\.preview\.test:[0-9]+/$" <<<"$preview"
  for cert in "$work/data/tls-cert.pem" "$work/data/preview-preview.test-cert.pem"; do
    spki+=${spki:+,}$(openssl x509 -in "$cert" -pubkey -noout | openssl pkey -pubin -outform der |
      openssl dgst -sha256 -binary | base64)
  done
  while IFS= read -r line; do
    case $line in
      *": PASS "*) pass "preview: browser: ${line#*PASS }" ;;
      *": FAIL "*) fail "preview: browser: ${line#*FAIL }" ;;
      *) echo "  $line" ;;
    esac
  done < <(ip netns exec "$client_ns" env BASE_URL="$url" \
    SPACE_ID="$(as_user space info dev -o json | jq -r .id)" USERNAME="$user" PASSWORD="$web_pw" \
    PREVIEW_URL="$preview" SERVER_SPKI="$spki" RESOLVE="MAP *.preview.test $server_ip" \
    timeout 300 node "$root/web/tests/preview.mjs" 2>&1)
}

# --- TUNNEL: ssh, scp, rsync and port forwards from the client's machine, through the server ---
# Every ssh below has StrictHostKeyChecking yes and no known host but bowline's. (OpenSSH reads
# ~/.ssh of the passwd entry, not $HOME: the config bowline writes is passed with -F.)
check "tunnel: the client has no route to the guest ($address:22)" \
  bash -c "! ip netns exec '$client_ns' timeout 5 bash -c 'exec 3<>/dev/tcp/$address/22' 2>/dev/null"
cp "$work/id_ed25519" "$client_home/.ssh/id_ed25519" && chmod 600 "$client_home/.ssh/id_ed25519"
key_opts=(-i "$client_home/.ssh/id_ed25519" -o IdentitiesOnly=yes -o BatchMode=yes -o ConnectTimeout=30)
bssh_batch=(-- "${key_opts[@]}")
check "tunnel/ssh: bowline ssh dev runs hostname on the first connection, key pinned" \
  [ "$(in_client "$bowline" ssh dev "${bssh_batch[@]}" hostname 2>"$work/bssh.err")" = "$hostname" ]
[ -s "$work/bssh.err" ] && sed 's/^/  bowline ssh: /' "$work/bssh.err"
# Agents: bowline mcp's run_command (docs/agents.md) over the same tunnel, as the user, with
# the key in an ssh-agent as a user's desktop has it; one JSON-RPC exchange on stdin/stdout.
eval "$(ssh-agent -s)" >/dev/null && ssh-add -q "$work/id_ed25519" 2>/dev/null
mcp_reply=$(printf '%s\n' \
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}' \
  '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_command","arguments":{"space":"dev","command":"hostname; id -un"}}}' |
  in_client env SSH_AUTH_SOCK="$SSH_AUTH_SOCK" "$bowline" mcp 2>"$work/mcp.err" | tail -n 1)
mcp_text=$(python3 -c 'import json,sys; r=json.loads(sys.stdin.read())["result"]
print(("error " if r["isError"] else "") + r["content"][0]["text"])' <<<"$mcp_reply" 2>/dev/null)
mcp_want=$(printf 'exit code 0\nstdout:\n%s\n%s' "$hostname" "$user")
check "agents: bowline mcp's run_command runs as the owner over the tunnel" \
  [ "${mcp_text:0:${#mcp_want}}" = "$mcp_want" ]
[ "${mcp_text:0:${#mcp_want}}" = "$mcp_want" ] ||
  log "mcp answered: ${mcp_reply:0:600} $(head -c 600 "$work/mcp.err")"
ssh-agent -k >/dev/null 2>&1
pinned=$(as_user known-hosts dev.bowline | ssh-keygen -lf - | awk '{ print $2 }')
actual=$(guest "ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub" 2>>"$work/ssh.err" | awk '{ print $2 }')
check "tunnel/ssh: the guest's host key is the one the server made ($pinned)" \
  [ -n "$pinned" ] && [ "$pinned" = "$actual" ]
head -c 50000000 /dev/urandom >"$work/up.bin"
config=$client_home/.ssh/config
# ssh runs ssh-config's ProxyCommand and KnownHostsCommand with its environment: the token.
check "tunnel/ssh-config --write: a Host *.bowline block, once" bash -c "
  ip netns exec '$client_ns' env HOME='$client_home' BOWLINE_SERVER='$url' BOWLINE_TOKEN='$user_token' '$bowline' ssh-config --write >/dev/null &&
  ip netns exec '$client_ns' env HOME='$client_home' BOWLINE_SERVER='$url' BOWLINE_TOKEN='$user_token' '$bowline' ssh-config --write >/dev/null &&
  [ \"\$(grep -c '^# >>> bowline' '$config')\" = 1 ]"
# Both ways in together: with ssh-config's block in the config ssh reads, `bowline ssh` still
# works for an ordinary user (the block's KnownHostsCommand is asked for dev.OWNER.bowline).
check "tunnel/ssh: bowline ssh dev works beside ssh-config's Host *.bowline block" \
  [ "$(in_client "$bowline" ssh dev -- -F "$config" "${key_opts[@]}" hostname 2>>"$work/bssh.err")" = "$hostname" ]
sum_of() { sha256sum "$@" | cut -d' ' -f1; }
scp_up() {
  in_client scp -q -F "$config" "${key_opts[@]}" "$work/up.bin" dev.bowline:up.bin &&
    [ "$(in_client ssh -F "$config" "${key_opts[@]}" dev.bowline sha256sum up.bin | cut -d' ' -f1)" = "$(sum_of "$work/up.bin")" ]
}
scp_down() {
  in_client scp -q -F "$config" "${key_opts[@]}" dev.bowline:up.bin "$work/down.bin" &&
    cmp -s "$work/up.bin" "$work/down.bin"
}
rsync_tree() {
  in_client rsync -a -e "ssh -F $config ${key_opts[*]}" "$work/tree/" dev.bowline:tree/ &&
    [ "$(in_client ssh -F "$config" "${key_opts[@]}" dev.bowline 'cd tree && sha256sum a.txt sub/b.bin')" = "$(cd "$work/tree" && sha256sum a.txt sub/b.bin)" ]
}
t=$(now)
check "tunnel/scp: 50 MB up through the tunnel, checksums equal" scp_up 2>>"$work/bssh.err"
log "scp up and checksum: $(since "$t") s"
t=$(now)
check "tunnel/scp: 50 MB down through the tunnel, checksums equal" scp_down 2>>"$work/bssh.err"
log "scp down: $(since "$t") s"
mkdir -p "$work/tree/sub" && echo "one" >"$work/tree/a.txt" && head -c 300000 /dev/urandom >"$work/tree/sub/b.bin"
check "tunnel/rsync: a directory to dev.bowline, with ssh-config's Host block and nothing else" \
  rsync_tree 2>>"$work/bssh.err"
[ -s "$work/bssh.err" ] && sed 's/^/  ssh: /' "$work/bssh.err"
# A unit of its own: nothing of it holds the ssh session open.
# A web app with a WebSocket echo (lib/guest_web_app.py), for the forward, the external port and
# the preview URL below.
guest "cat > /tmp/app.py" <"$here/lib/guest_web_app.py" 2>>"$work/ssh.err"
guest "mkdir -p /tmp/www && echo 'served from the guest' > /tmp/www/hello.txt && sudo -n systemd-run --quiet --unit bwdeb-www python3 /tmp/app.py 8000 /tmp/www" 2>>"$work/ssh.err"
# Python starts slowly under emulation: wait until the guest's port answers inside the guest.
guest "bash -c 'for i in \$(seq 1 90); do (exec 3<>/dev/tcp/127.0.0.1/8000) 2>/dev/null && exit 0; sleep 1; done; exit 1'" 2>>"$work/ssh.err" ||
  log "the guest's web server did not start: $(guest 'systemctl status bwdeb-www --no-pager' 2>&1 | tail -5)"
in_client "$bowline" forward dev 18080:8000 >"$work/forward.out" 2>&1 &
forward_pid=$!
got=""
for _ in $(seq 1 30); do
  got=$(in_client python3 -c 'import urllib.request; print(urllib.request.urlopen("http://127.0.0.1:18080/hello.txt", timeout=10).read().decode().strip())' 2>>"$work/forward.err") && break
  sleep 1
done
check "tunnel/forward: bowline forward dev 18080:8000 prints the local URL" grep -q "http://127.0.0.1:18080" "$work/forward.out"
check "tunnel/forward: the client's 127.0.0.1:18080 reaches the guest's port 8000" [ "$got" = "served from the guest" ]
[ "$got" = "served from the guest" ] || { sed 's/^/  forward: /' "$work/forward.out" "$work/forward.err"; tail -3 "$work/ssh.err"; }
kill "$forward_pid" 2>/dev/null
pkill -f " forward dev 18080:8000" 2>/dev/null # ip netns exec does not pass the signal on
preview_checks
# The same port published on the external address (external: true): from the client, never on
# the web UI's address.
ext_port=$(as_user space info dev -o json | python3 -c 'import json, sys; print(json.load(sys.stdin)["info"]["externalPorts"][0]["hostPort"])' 2>/dev/null)
reach_ext() { # ADDRESS PORT: what GET /hello.txt answers there, from the client
  in_client python3 -c 'import sys, urllib.request; print(urllib.request.urlopen("http://%s:%s/hello.txt" % (sys.argv[1], sys.argv[2]), timeout=5).read().decode().strip())' "$1" "$2" 2>/dev/null
}
got=""
for _ in $(seq 1 30); do
  got=$(reach_ext "$ext_ip" "$ext_port") && [ -n "$got" ] && break
  sleep 1
done
check "external: the guest's port 8000 answers on $ext_ip:$ext_port from the client ('$got')" \
  [ "$got" = "served from the guest" ]
check "external: ... and not on the web UI's address $server_ip:$ext_port" \
  [ -z "$(reach_ext "$server_ip" "$ext_port")" ]
out=$(in_client "$bowline" tunnel dev 9000 </dev/null 2>&1)
check "tunnel: port 9000 (not in ports:) is refused with 403, naming the rule" \
  grep -q "port 9000 is not one the space's template lists in ports: (8000)" <<<"$out"
# STATUS of a tunnel's upgrade from the client's machine with TOKEN
upgrade_status() {
  ip netns exec "$client_ns" python3 - "$url" "$1" "$2" "$work/data/tls-cert.pem" <<'PY'
import socket, sys, urllib.parse
url, path, token = sys.argv[1:4]
import ssl
u = urllib.parse.urlsplit(url)
s = socket.create_connection((u.hostname, u.port), timeout=10)
if u.scheme == "https":
    s = ssl.create_default_context(cafile=sys.argv[4]).wrap_socket(s, server_hostname=u.hostname)
s.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
           "Authorization: Bearer %s\r\n\r\n" % (path, u.netloc, token)).encode())
print(s.recv(64).decode(errors="replace").split(" ")[1])
PY
}
space_id=$(field id "$info")
out=$(as_admin user create eve --permission use-ssh) || fail "user create eve: $out"
eve_token=$(sed -n 's/.*token (shown once): *\([^ ]*\).*/\1/p' <<<"$out")
check "tunnel: another user (with use-ssh) gets 404 for $user's space" \
  [ "$(upgrade_status "/api/v1/spaces/$space_id/tunnel/22" "$eve_token")" = 404 ]
check "tunnel: the owner gets 101 for port 22" \
  [ "$(upgrade_status "/api/v1/spaces/$space_id/tunnel/22" "$user_token")" = 101 ]
permissions() { # PERMISSION...: the user's permissions, as an admin sets them (PATCH)
  python3 -c 'import json, sys, urllib.request
r = urllib.request.Request(sys.argv[1] + "/api/v1/users/" + sys.argv[2], method="PATCH",
    data=json.dumps({"permissions": sys.argv[4:]}).encode(),
    headers={"Authorization": "Bearer " + sys.argv[3], "Content-Type": "application/json"})
urllib.request.urlopen(r, timeout=10)' "$url" "$user" "$admin_token" "$@"
}
permissions use-ports || fail "drop $user's use-ssh"
check "tunnel: the owner without use-ssh gets 403 for port 22" \
  [ "$(upgrade_status "/api/v1/spaces/$space_id/tunnel/22" "$user_token")" = 403 ]
permissions use-ssh use-ports || fail "give $user use-ssh again"
# A host key replaced inside the guest: bowline ssh refuses, naming both fingerprints. (The old
# key is kept aside and put back afterwards through the guest agent: the pin then holds again.)
replaced=$(guest "sudo -n sh -c 'cp -a /etc/ssh/ssh_host_ed25519_key /etc/ssh/ssh_host_ed25519_key.pub /root/ && rm -f /etc/ssh/ssh_host_ed25519_key* && ssh-keygen -q -t ed25519 -N \"\" -f /etc/ssh/ssh_host_ed25519_key && ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub && systemctl restart ssh'" 2>>"$work/ssh.err" | awk '{ print $2 }')
out=$(in_client "$bowline" ssh dev "${bssh_batch[@]}" true 2>&1)
check "tunnel/ssh: a replaced host key is refused, naming the space and both fingerprints" \
  bash -c 'grep -q "host key of space dev" <<<"$1" && grep -qF "$2" <<<"$1" && [ -n "$3" ] && grep -qF "$3" <<<"$1"' _ "$out" "$pinned" "$replaced"
# The first key back, so the checks below reach the guest with the pin again.
$VIRSH qemu-agent-command "$domain" '{"execute":"guest-exec","arguments":{"path":"/bin/sh","arg":["-c","cp -a /root/ssh_host_ed25519_key /root/ssh_host_ed25519_key.pub /etc/ssh/ && systemctl restart ssh"]}}' >/dev/null 2>&1
for _ in $(seq 1 20); do guest true 2>/dev/null && break; sleep 1; done
check "tunnel/ssh: with the first key back, bowline ssh connects again" \
  [ "$(in_client "$bowline" ssh dev "${bssh_batch[@]}" hostname 2>>"$work/bssh.err")" = "$hostname" ]

# --- POOL PART (2/2): a claimed pre-booted member lets its new owner in without a reboot ------
# The member is made before anyone owns it; the claim must hand it to $user (their user and
# key, through the guest agent) with no reboot: the kernel's boot id stays the same.
json_get() { python3 -c 'import json,sys; d=json.load(sys.stdin)
for k in sys.argv[1].split("."): d=d[int(k)] if isinstance(d, list) else d.get(k)
print("" if d is None else d)' "$1"; }
pool_refilled() { # CLAIMED_ID: the pool has a member that is not it, within a minute
  local n
  for _ in $(seq 60); do
    n=$(as_admin pool info warm -o json | python3 -c 'import json,sys
print(sum(m["id"] != sys.argv[1] for m in json.load(sys.stdin)["members"]))' "$1" 2>/dev/null)
    [ "${n:-0}" -ge 1 ] && return 0
    sleep 1
  done
  return 1
}
pool_case() {
  local member="" member_id="" member_domain info_m boot_took up claimed deadline t
  deadline=$(($(date +%s) + READY_TIMEOUT))
  # the member: running, and cloud-init finished
  while [ "$(date +%s)" -lt "$deadline" ]; do
    member_id=$(as_admin pool info warm -o json 2>/dev/null | json_get members.0.id 2>/dev/null)
    if [ -n "$member_id" ]; then
      info_m=$(as_admin space info "$member_id" -o json 2>/dev/null)
      [ "$(field info.readiness.ready "$info_m")" = True ] && break
      [ "$(field state "$info_m")" = error ] && break
    fi
    sleep 5
  done
  [ "$(field info.readiness.ready "$info_m")" = True ] ||
    { as_admin pool info warm; [ -z "$member_id" ] || as_admin space info "$member_id"; fail "the pool's member became ready"; return; }
  member_domain=$(field domain "$info_m")
  member=$(field name "$info_m")
  log "pool member $member ($member_domain) ready $(since "$t_pool") s after pool create"
  # How long the member's boot took, by cloud-init's own words ("Up N seconds"): a claim that
  # rebooted it would leave it up for less than that.
  boot_took=$(as_admin space info "$member_id" | grep -oE 'Up [0-9.]+ seconds' | head -n 1 | grep -oE '[0-9.]+')
  # Once ready, the member waits suspended (server.pools.wait): its memory on disk, not in RAM.
  for _ in $(seq 60); do
    [ "$(as_admin space info "$member_id" -o json 2>/dev/null | json_get state)" = suspended ] && break
    sleep 2
  done
  check "the ready member waits suspended" \
    [ "$(as_admin space info "$member_id" -o json | json_get state)" = suspended ]
  check "... its memory saved to disk (libvirt: shut off, managed save)" bash -c \
    "$VIRSH dominfo '$member_domain' | grep -qE '^Managed save: +yes' && [ \"\$($VIRSH domstate '$member_domain')\" = 'shut off' ]"
  # The member's own host key, from the server (an admin's view of an unowned space), pinned.
  python3 -c 'import json, sys, urllib.request
r = urllib.request.Request(sys.argv[1] + "/api/v1/spaces/" + sys.argv[2] + "/host-keys",
                           headers={"Authorization": "Bearer " + sys.argv[3]})
for k in json.load(urllib.request.urlopen(r, timeout=10))["keys"]: print("member.bowline", k["publicKey"])' \
    "$url" "$member_id" "$admin_token" >"$work/known_member" || { fail "the member's host keys"; return; }
  read -ra member_opts <<<"$(pin_opts "$work/known_member" member.bowline)"

  t=$(now)
  claimed=$(as_user pool claim warm --name mine -o json) || { fail "pool claim: $claimed"; return; }
  log "claim answered in $(since "$t") s (method $(json_get method <<<"$claimed"))"
  info_m=$(as_user space info mine -o json) || { fail "space info mine"; return; }
  check "the claimed space is $user's" [ "$(field owner "$info_m")" = "$user" ]
  check "the claimed space is the member ($member_domain)" [ "$(field domain "$info_m")" = "$member_domain" ]
  # In place, or not at all: a reboot would make the user wait for a boot.
  if [ "$(json_get method <<<"$claimed")" = agent ]; then
    pass "the claim was done in place by the guest agent"
    local addr
    addr=$(field info.address "$info_m")
    check "the claimed space has an address ($addr)" [ -n "$addr" ]
    for _ in 1 2 3; do ssh "${member_opts[@]}" "$user@$addr" true 2>/dev/null && break; sleep 2; done
    check "the new owner logs in with their key as $user" \
      [ "$(ssh "${member_opts[@]}" "$user@$addr" id -un 2>>"$work/ssh.err")" = "$user" ]
    up=$(ssh "${member_opts[@]}" "$user@$addr" "cut -d' ' -f1 /proc/uptime" 2>>"$work/ssh.err")
    check "no reboot: up ${up:-?} s, more than its boot took (${boot_took:-?} s)" \
      python3 -c "import sys; sys.exit(0 if float('${up:-0}') > float('${boot_took:-1e9}') else 1)"
    check "the new owner has passwordless sudo" ssh "${member_opts[@]}" "$user@$addr" sudo -n true
    check "the new owner's password is the service password" verifies_service_password \
      "$(ssh "${member_opts[@]}" "$user@$addr" sudo -n getent shadow "$user" 2>>"$work/ssh.err" | cut -d: -f2)"
    check "the host name is the template's ($hostname)" \
      [ "$(ssh "${member_opts[@]}" "$user@$addr" hostname 2>>"$work/ssh.err")" = "$hostname" ]
  else
    fail "the claim was done in place by the guest agent: method $(json_get method <<<"$claimed"), agent problem: $(json_get agentProblem <<<"$claimed")"
  fi
  check "the pool refills (a member other than the claimed one)" pool_refilled "$(field id "$info_m")"
  check "pool delete" as_admin pool delete warm >/dev/null
  check "the claimed space survives its pool" [ "$(as_user space info mine -o json | json_get state)" = running ]
  check "claimed space delete --wait" as_user space delete mine --wait >/dev/null
}
if [ "$pools" = 1 ]; then pool_case; fi

# --- BRIDGED: a static address on real cloud-init, and what a template change and set-ip do ----
# Debian 12's cloud-init (22.4, ifupdown) is where a stand-in guest's acceptance proves nothing:
# address, default route, resolvers; then a changed environment, a new key of the owner and a
# new address reach the guest at the next start, while its SSH host key (its identity) and the
# template's per-instance runcmd stay as they were.
bridged_case() {
  local sub bbase bnet3 brbr gw first second info_b keys_before hostkey t
  sub=$(net_free_subnet 28) || { fail "no second free /28 for the bridged case"; return; }
  bbase=${sub##*.}
  bnet3=${sub%.*}
  brbr=bwb$tag
  gw=$bnet3.$((bbase + 1))
  net_bridge_create "$brbr" "$gw/28" || { fail "test bridge $brbr on $sub/28"; return; }
  log "bridge $brbr on $sub/28"
  bridged_yaml() { # STAGE: the template at a stage of the test
    cat <<YAML
name: $prefix-\${{ .space.name }}
hostname: brd-$tag
image: debian-12
memory: 1G
cpus: 2
network:
  mode: bridged
  bridge: $brbr
  cidr: $sub/28
  gateway: $gw
  ip_range_start: $bnet3.$((bbase + 2))
  ip_range_end: $bnet3.$((bbase + 6))
environment:
  - BWDEB_STAGE=$1
cloudInit: |
  #cloud-config
  runcmd:
    - [ sh, -c, 'echo "$1" >> /var/lib/bwdeb-runs' ]
YAML
  }
  bridged_yaml one >"$work/debian-br.yaml"
  as_admin template create "$work/debian-br.yaml" >/dev/null || { fail "bridged template create"; return; }
  t=$(now)
  as_user space create debian-br br --wait --timeout "$READY_TIMEOUT" >"$work/br.out" 2>&1 &
  if ! wait $!; then
    cat "$work/br.out"
    as_user space info br
    fail "bridged space create --wait"
    return
  fi
  log "bridged space ready $(since "$t") s after the request"
  info_b=$(as_user space info br -o json)
  first=$(field ip "$info_b")
  check "the bridged space has an address from the range ($first)" \
    grep -qE "^$bnet3\.($((bbase + 2))|$((bbase + 3))|$((bbase + 4))|$((bbase + 5))|$((bbase + 6)))$" <<<"$first"
  local known=$work/br_known_hosts
  # The key bowline made for the guest, from the server, before the first connection: it must
  # answer at the first address and, after set-ip, at the second.
  as_user known-hosts br.bowline | sed "s/^[^ ]* /bwdeb-br /" >"$known"
  hostkey=$(awk '{ print $3 }' "$known")
  [ -n "$hostkey" ] || { fail "the bridged space's pinned SSH host key"; return; }
  bssh() { # ADDRESS KEY COMMAND...: strict host key checking against the first key
    local addr=$1 key=$2
    shift 2
    ssh -i "$key" -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=yes \
      -o UserKnownHostsFile="$known" -o HostKeyAlias=bwdeb-br -o LogLevel=ERROR \
      -o ConnectTimeout=20 -o BindInterface="$brbr" "$user@$addr" "$@"
  }
  for _ in 1 2 3; do bssh "$first" "$work/id_ed25519" true 2>"$work/ssh.err" && break; sleep 2; done
  check "bridged: the owner logs in at $first" [ "$(bssh "$first" "$work/id_ed25519" id -un 2>>"$work/ssh.err")" = "$user" ]
  check "bridged: eth0 holds $first/28" \
    grep -q "inet $first/28" <<<"$(bssh "$first" "$work/id_ed25519" ip -4 -o addr show eth0 2>>"$work/ssh.err")"
  check "bridged: the default route goes through the gateway $gw" \
    grep -q "^default via $gw " <<<"$(bssh "$first" "$work/id_ed25519" ip route 2>>"$work/ssh.err")"
  check "bridged: the resolver is the server's ($resolver)" \
    grep -qx "nameserver $resolver" <<<"$(bssh "$first" "$work/id_ed25519" cat /etc/resolv.conf 2>>"$work/ssh.err")"
  check "bridged: cloud-init reports done (its network stage accepted the config)" \
    grep -q 'status: done' <<<"$(bssh "$first" "$work/id_ed25519" cloud-init status 2>>"$work/ssh.err")"
  check "bridged: the environment is the template's" \
    [ "$(bssh "$first" "$work/id_ed25519" "bash -lc 'printf %s \"\$BWDEB_STAGE\"'" 2>>"$work/ssh.err")" = one ]
  check "bridged: the environment file is the owner's and root's only" \
    [ "$(bssh "$first" "$work/id_ed25519" "stat -c '%a %U %G' /etc/profile.d/bowline-environment.sh" 2>>"$work/ssh.err")" = "640 root $user" ]

  local machine_id
  machine_id=$(bssh "$first" "$work/id_ed25519" cat /etc/machine-id 2>>"$work/ssh.err")
  # The changes: the template (environment, cloudInit), a second key of the owner, an address.
  bridged_yaml two >"$work/debian-br.yaml"
  as_admin template update "$work/debian-br.yaml" --name debian-br >/dev/null || fail "template update"
  ssh-keygen -q -t ed25519 -N '' -C "$user-second" -f "$work/id_second" || fail "ssh-keygen"
  as_user user add-key "$user" "$work/id_second.pub" >/dev/null || fail "user add-key"
  local pending
  pending=$(as_user space info br | awk -F': +' '$1 == "pending" { print $2 }')
  check "space info names the pending changes ($pending)" \
    grep -qE '(environment.*cloudInit|cloudInit.*environment).*\(at the next start\)' <<<"$pending"
  check "  ... the owner's new key among them" grep -q account <<<"$pending"
  # Shares (docs/teams.md): a colleague with the user role gets her key into the owner's
  # account, at once through the guest agent and again at every start; a viewer does not.
  ssh-keygen -q -t ed25519 -N '' -C "erin@bowline-e2e" -f "$work/id_erin" || fail "ssh-keygen"
  ssh-keygen -q -t ed25519 -N '' -C "finn@bowline-e2e" -f "$work/id_finn" || fail "ssh-keygen"
  local erin_token
  erin_token=$(as_admin user create erin --permission use-ssh --ssh-key "$work/id_erin.pub" -o json | json_get token)
  as_admin user create finn --ssh-key "$work/id_finn.pub" >/dev/null || fail "user create finn"
  check "share: dana shares br with erin as user" as_user space share br erin --role user
  check "share: ... and with finn as viewer" as_user space share br finn --role viewer
  # The running guest takes erin's key at once, through its guest agent (space.keys).
  local tries
  for tries in $(seq 1 30); do bssh "$first" "$work/id_erin" true 2>/dev/null && break; sleep 1; done
  check "share: erin's key logs in to dana's account at once, with no restart (try $tries)" \
    [ "$(bssh "$first" "$work/id_erin" id -un 2>>"$work/ssh.err")" = "$user" ]
  check "share: finn's key (a viewer's) is refused by the guest's sshd" grep -q "Permission denied (publickey" \
    <<<"$(ssh -i "$work/id_finn" -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no \
      -o UserKnownHostsFile=/dev/null -o ConnectTimeout=20 -o BindInterface="$brbr" "$user@$first" true 2>&1)"
  check "share: dana's own key still logs in" bssh "$first" "$work/id_ed25519" true
  check "bridged: space stop --wait" as_user space stop br --wait >/dev/null
  second=$bnet3.$((bbase + 6))
  [ "$second" = "$first" ] && second=$bnet3.$((bbase + 5))
  check "bridged: set-ip $second while stopped" as_user space set-ip br "$second"
  t=$(now)
  as_user space start br --wait --timeout "$READY_TIMEOUT" >"$work/br.out" 2>&1 &
  wait $! || { cat "$work/br.out"; fail "bridged space start --wait"; return; }
  log "bridged space up again at $second $(since "$t") s after the start"
  for _ in 1 2 3 4 5; do bssh "$second" "$work/id_second" true 2>"$work/ssh.err" && break; sleep 3; done
  check "after set-ip: the same host key answers at $second (StrictHostKeyChecking yes)" \
    bssh "$second" "$work/id_second" true
  check "after set-ip: $first is gone" bash -c "! busybox ping -c 1 -W 2 -I $brbr $first >/dev/null 2>&1"
  check "after set-ip: the default route still goes through $gw" \
    grep -q "^default via $gw " <<<"$(bssh "$second" "$work/id_second" ip route 2>>"$work/ssh.err")"
  check "after the change: the owner's new key logs in" \
    [ "$(bssh "$second" "$work/id_second" id -un 2>>"$work/ssh.err")" = "$user" ]
  check "after the change: the first key still logs in" bssh "$second" "$work/id_ed25519" true
  check "share: erin's key logs in to dana's account after the start" \
    [ "$(bssh "$second" "$work/id_erin" id -un 2>>"$work/ssh.err")" = "$user" ]
  check "share: ... through bowline ssh br.$user, as erin, with the host key pinned" \
    [ "$(BOWLINE_TOKEN=$erin_token "$bowline" ssh "br.$user" -- -i "$work/id_erin" -o IdentitiesOnly=yes \
      -o BatchMode=yes -o ConnectTimeout=30 id -un 2>>"$work/bssh.err")" = "$user" ]
  # An ended share takes the key out of the running guest at once.
  check "share: dana ends erin's share" as_user space unshare br erin
  for tries in $(seq 1 30); do bssh "$second" "$work/id_erin" true 2>/dev/null || break; sleep 1; done
  check "share: erin's key no longer logs in, with no restart (try $tries)" grep -q "Permission denied (publickey" \
    <<<"$(bssh "$second" "$work/id_erin" true 2>&1)"
  check "share: ... while dana's keys still do" bssh "$second" "$work/id_second" true
  check "tunnel/ssh: after the template change and set-ip, bowline ssh br finds the pinned key" \
    [ "$(as_user ssh br "${bssh_batch[@]}" id -un 2>>"$work/bssh.err")" = "$user" ]
  check "after the change: the environment is the new one" \
    [ "$(bssh "$second" "$work/id_second" "bash -lc 'printf %s \"\$BWDEB_STAGE\"'" 2>>"$work/ssh.err")" = two ]
  check "after the change: the environment reaches a command over ssh and a service" \
    [ "$(bssh "$second" "$work/id_second" 'printenv BWDEB_STAGE; sudo -n systemd-run --quiet --pipe --wait printenv BWDEB_STAGE' 2>>"$work/ssh.err" | tr '\n' ' ')" = "two two " ]
  check "after the change: the new cloudInit ran at this start, as a new instance" \
    [ "$(bssh "$second" "$work/id_second" cat /var/lib/bwdeb-runs 2>>"$work/ssh.err" | tr '\n' ' ')" = "one two " ]
  check "after the change: the machine-id is the space's still" \
    [ "$(bssh "$second" "$work/id_second" cat /etc/machine-id 2>>"$work/ssh.err")" = "$machine_id" ]
  check "after the start: no change is pending" \
    [ -z "$(as_user space info br | awk -F': +' '$1 == "pending" { print $2 }')" ]

  # A stopped runStrategy Always space stays stopped across a host reboot: libvirtd restarted
  # with its once-per-boot marker gone autostarts what is marked for it.
  check "bridged: space stop --wait (before the simulated reboot)" as_user space stop br --wait >/dev/null
  local bdomain
  bdomain=$(field domain "$info_b")
  pkill -x libvirtd
  for _ in $(seq 50); do pgrep -x libvirtd >/dev/null || break; sleep 0.2; done
  rm -f /run/libvirt/qemu/autostarted
  # Without the test's inherited descriptors (a lock, ctest's pipes), which a daemon would hold
  # for as long as it runs.
  (for fd in /proc/$BASHPID/fd/*; do
    n=${fd##*/}
    [ "$n" -gt 2 ] && eval "exec $n>&-"
  done
  exec libvirtd -d) 2>/dev/null
  for _ in $(seq 100); do $VIRSH -q version >/dev/null 2>&1 && break; sleep 0.2; done
  sleep 5 # autostart happens as libvirtd comes up
  check "after a simulated host reboot the stopped space's domain is still off" \
    [ "$($VIRSH domstate "$bdomain" 2>/dev/null)" = "shut off" ]
  check "  ... and the space is still stopped" [ "$(as_user space info br -o json | json_get state)" = stopped ]
  check "bridged: space delete --wait" as_user space delete br --wait >/dev/null
  [ -s "$work/ssh.err" ] && sed 's/^/  ssh: /' "$work/ssh.err"
}
bridged_case

# --- SPOOF: the addresses bowline connects to are its own choice, never the guest's word ------
# The guest, through its agent (it has no network meanwhile), puts the gateway's address (the
# host's own on this network) on its lo, where the agent reports it, and releases its DHCP
# lease. A service of the host listens on that address's port 8000, a port the template lists:
# `bowline forward` must never reach it. Afterwards the guest takes a lease again, and the
# forward reaches the guest's own port 8000 at whatever address the lease gave.
agent_sh() { # CMD: runs CMD in the guest through its agent; prints its output, exits with its status
  python3 - "$domain" "$1" <<'PY'
import base64, json, subprocess, sys, time
dom, cmd = sys.argv[1:3]
def agent(request):
    out = subprocess.run(["virsh", "-c", "qemu:///system", "qemu-agent-command", dom,
                          json.dumps(request)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["return"]
pid = agent({"execute": "guest-exec", "arguments": {"path": "/bin/sh", "arg": ["-c", cmd],
                                                    "capture-output": True}})["pid"]
for _ in range(600):
    status = agent({"execute": "guest-exec-status", "arguments": {"pid": pid}})
    if status.get("exited"):
        sys.stdout.write(base64.b64decode(status.get("out-data", "")).decode(errors="replace"))
        sys.exit(status.get("exitcode", 0))
    time.sleep(0.2)
sys.exit(124)
PY
}
fetch_through_forward() { # LOCAL_PORT: what GET /hello.txt answers through `bowline forward dev`
  local pid out=""
  in_client "$bowline" forward dev "$1:8000" >"$work/forward-$1.out" 2>&1 &
  pid=$!
  for _ in $(seq 1 15); do
    out=$(in_client python3 -c 'import sys, urllib.request; print(urllib.request.urlopen("http://127.0.0.1:" + sys.argv[1] + "/hello.txt", timeout=5).read().decode().strip())' "$1" 2>/dev/null) && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 1
  done
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  pkill -f " forward dev $1:8000" 2>/dev/null # ip netns exec does not pass the signal on
  echo "$out"
}
spoof_case() {
  local gwip=$net3.$((base + 1)) nic host_pid got lease_before lease_after new_address
  mkdir -p "$work/hostwww" && echo "the host, not the guest" >"$work/hostwww/hello.txt"
  python3 -m http.server 8000 --bind "$gwip" --directory "$work/hostwww" >/dev/null 2>&1 &
  host_pid=$!
  for _ in $(seq 1 50); do (exec 3<>"/dev/tcp/$gwip/8000") 2>/dev/null && break; sleep 0.1; done
  nic=$(agent_sh "ip -o -4 addr show | awk '\$4 ~ /^$address\\// { print \$2 }'")
  log "spoof: the guest's NIC is ${nic:-?}; the host serves on $gwip:8000"
  lease_before=$($VIRSH net-dhcp-leases "$network" | grep -c "$address/")
  # (ifdown releases the lease with the pid and lease files ifup's dhclient keeps; every tool's
  # output goes to a file: a daemon holding the agent's pipes would keep the command running)
  agent_sh "ifdown $nic >/tmp/spoof.log 2>&1 </dev/null; ip addr add $gwip/32 dev lo; ip -o -4 addr show" \
    >"$work/spoof.out" 2>&1
  check "spoof: the guest has the gateway's address ($gwip) on lo and none on $nic" \
    bash -c "grep -q ' lo .*$gwip/32' '$work/spoof.out' && ! grep -q ' $nic .*inet ' '$work/spoof.out'"
  for _ in $(seq 1 30); do
    [ "$($VIRSH net-dhcp-leases "$network" | grep -c "$address/")" = 0 ] && break
    sleep 1
  done
  lease_after=$($VIRSH net-dhcp-leases "$network" | grep -c "$address/")
  check "spoof: its lease is released ($lease_before lease(s) before, $lease_after after)" \
    [ "$lease_after" = 0 ]
  check "spoof: the agent reports the gateway's address" bash -c \
    "$VIRSH qemu-agent-command '$domain' '{\"execute\":\"guest-network-get-interfaces\"}' | grep -q '\"$gwip\"'"
  got=$(field info.address "$(as_user space info dev -o json)")
  check "spoof: space info gives the guest no address of the guest's choosing ('$got')" \
    [ "$got" != "$gwip" ]
  got=$(fetch_through_forward 18082)
  check "spoof: bowline forward dev 18082:8000 does not reach the host's $gwip:8000 ('$got')" \
    [ "$got" != "the host, not the guest" ]
  out=$(printf 'GET /hello.txt HTTP/1.0\r\n\r\n' | timeout 20 ip netns exec "$client_ns" env \
    HOME="$client_home" BOWLINE_SERVER="$url" BOWLINE_TOKEN="$user_token" "$bowline" tunnel dev 8000 2>&1)
  check "spoof: bowline tunnel dev 8000 does not reach the host either" \
    bash -c '! grep -q "the host, not the guest" <<<"$1"' _ "$out"
  sleep 5 # a poll of the external ports' publisher
  got=$(reach_ext "$ext_ip" "$ext_port")
  check "spoof: the published port $ext_ip:$ext_port does not reach the host's $gwip:8000 ('$got')" \
    [ "$got" != "the host, not the guest" ]
  # The guest mends its ways: a lease again (maybe another address), the gateway off lo.
  agent_sh "ip addr del $gwip/32 dev lo; ifup $nic >/tmp/spoof.log 2>&1 </dev/null" >/dev/null 2>&1
  new_address=""
  for _ in $(seq 1 60); do
    new_address=$(field info.address "$(as_user space info dev -o json)")
    [ -n "$new_address" ] && [ "$new_address" != None ] && break
    sleep 1
  done
  log "spoof: the guest's address after a new lease: $new_address"
  got=$(fetch_through_forward 18083)
  check "spoof: with a lease again, bowline forward reaches the guest's own port 8000 ('$got')" \
    [ "$got" = "served from the guest" ]
  for _ in $(seq 1 60); do
    got=$(reach_ext "$ext_ip" "$ext_port") && [ "$got" = "served from the guest" ] && break
    sleep 1
  done
  check "spoof: ... and so does the published port, at the new lease ('$got')" \
    [ "$got" = "served from the guest" ]
  kill "$host_pid" 2>/dev/null
  wait "$host_pid" 2>/dev/null
}
spoof_case

# --- delete leaves no domain, and ends the tunnels open to it ---------------------------------
# A tunnel held open from the client (sshd's banner came through), then the delete.
sleep 600 | in_client "$bowline" tunnel dev 22 >"$work/held.out" 2>&1 &
held=$!
for _ in $(seq 1 50); do grep -q '^SSH-' "$work/held.out" 2>/dev/null && break; sleep 0.2; done
check "tunnel: an open tunnel carries sshd's banner" grep -q '^SSH-' "$work/held.out"
t=$(now)
as_user space delete dev >/dev/null || fail "space delete dev"
t_asked=$(now)
for _ in $(seq 1 100); do kill -0 "$held" 2>/dev/null || break; sleep 0.05; done
closed_after=$(since "$t_asked")
check "tunnel: deleting the space closed its open tunnel (${closed_after} s after the delete was accepted)" \
  bash -c "! kill -0 $held 2>/dev/null && awk -v s=$closed_after 'BEGIN { exit !(s < 2.5) }'"
kill "$held" 2>/dev/null
check "space delete: the operation finishes" bash -c "
  for _ in \$(seq 1 600); do BOWLINE_TOKEN='$user_token' '$bowline' space info dev >/dev/null 2>&1 || exit 0; sleep 0.5; done; exit 1"
check "the domain is gone" bash -c "! $VIRSH -q dominfo '$domain' >/dev/null 2>&1"
log "delete $(since "$t") s"
finish
