#!/usr/bin/env bash
# Single sign-on (docs/teams.md) against a real OpenID Connect provider: node-oidc-provider
# (web/tests/oidc_provider.mjs) on loopback, and the real `bowline server` over HTTPS (on
# libvirt's test driver: no guest is needed). Through Debian's Chromium (web/tests/sso.mjs):
#   web     carol logs in through the provider's pages and lands in the UI as herself; a
#           provider user named like the local admin is refused, saying why
#   CLI     `bowline login --sso` prints an address and a code; approved in the browser as olga,
#           it saves a token: `bowline whoami` is olga
#   groups  carol (developers) has use-ssh and use-ports; olga (ops) is an admin
#   local   a local account still logs in with its password
#   hostile a callback with a state this browser did not start lands on the login page with the
#           reason, and makes no session
#   audit   each SSO login and the refusal are in the audit log
# Usage: sso_test.sh BOWLINE_BINARY
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=lib/check.sh
. "$here/lib/check.sh"
# shellcheck source=lib/web.sh
. "$here/lib/web.sh"
# Everything runs in a network namespace of its own with only loopback (lib/web.sh says why).
if [ "${1:-}" != --inner ]; then
  web_preflight "$root" || { fail "$WEB_ERROR"; summary; exit 1; }
  web_in_netns "$0" "$@"
  exit $?
fi
shift
web_netns_up
BOWLINE=${1:?usage: sso_test.sh BOWLINE_BINARY}

work=$(mktemp -d /tmp/bwsso.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
abort() {
  fail "$*"
  summary
  exit 1
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
unset "${!BOWLINE_@}"
export HOME=$work/home
mkdir -p "$HOME"

port=$(free_port)
oidc_port=$(free_port)
url=https://127.0.0.1:$port
secret=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
printf '%s\n' "$secret" >"$work/secret" && chmod 600 "$work/secret"
(cd "$root/web" && OIDC_PORT=$oidc_port OIDC_REDIRECT_URI=$url/api/v1/sso/callback \
  OIDC_CLIENT_SECRET=$secret exec node tests/oidc_provider.mjs) >"$work/oidc.log" 2>&1 &
pids+=($!)
"$BOWLINE" server --listen "127.0.0.1:$port" --tls-mode self-signed --data-dir "$work/data" \
  --libvirt-uri test:///default --domain-type qemu --images-path "$work/images" \
  --sso-issuer "http://127.0.0.1:$oidc_port" --sso-client-id bowline \
  --sso-client-secret-file "$work/secret" --sso-admin-groups ops \
  --sso-group-permissions developers=use-ssh+use-ports >"$work/server.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 300); do
  grep -q "listening on" "$work/oidc.log" && grep -q "listening on https" "$work/server.log" && break
  sleep 0.1
done
grep -q "listening on https" "$work/server.log" || { sed 's/^/    /' "$work/server.log"; abort "bowline server"; }
grep -q "listening on" "$work/oidc.log" || { sed 's/^/    /' "$work/oidc.log"; abort "the OIDC provider"; }
export SSL_CERT_FILE=$work/data/tls-cert.pem BOWLINE_SERVER=$url
admin_token=$(cat "$work/data/admin.token")
as_admin() { BOWLINE_TOKEN=$admin_token "$BOWLINE" "$@"; }
as_admin user create dora --password "dora-$$-pw" >/dev/null || abort "user create dora"
c() { curl -s --cacert "$work/data/tls-cert.pem" "$@"; }

check_eq "GET /api/v1/sso says it is on, naming the issuer" "true http://127.0.0.1:$oidc_port" \
  "$(c "$url/api/v1/sso" | jq -r '"\(.enabled) \(.issuer)"')"
forged=$(c -o /dev/null -D - "$url/api/v1/sso/callback?code=stolen&state=made-up" | tr -d '\r')
check_match "a callback this browser did not start lands on the login page, saying why" \
  "Location: /\\?sso_error=this%20login%20did%20not%20start%20in%20this%20browser" "$forged"
check_no_match "... and makes no session" "bowline_session" "$forged"

# The CLI's device login waits in the background; the browser approves it.
"$BOWLINE" login --sso >"$work/login.out" 2>"$work/login.err" &
login_pid=$!
while IFS= read -r line; do
  case $line in
    *": PASS "*) pass "browser: ${line#*PASS }" ;;
    *": FAIL "*) fail "browser: ${line#*FAIL }" ;;
    *) echo "  $line" ;;
  esac
done < <(BASE_URL="$url" DEVICE_FILE="$work/login.err" \
  SERVER_SPKI="$(openssl x509 -in "$work/data/tls-cert.pem" -pubkey -noout | openssl pkey -pubin -outform der |
    openssl dgst -sha256 -binary | base64)" timeout 300 node "$root/web/tests/sso.mjs" 2>&1)
timeout 60 tail --pid="$login_pid" -f /dev/null
check_cmd "bowline login --sso printed the address and the code" grep -q "enter the code" "$work/login.err"
check_match "... and, once approved, logged in as olga" "logged in to $url as olga" "$(cat "$work/login.out")"
check_eq "bowline user info (the saved token) is olga's" olga \
  "$("$BOWLINE" user info -o json | jq -r '.user.username // .username')"

users=$(as_admin user list -o json)
check_eq "carol (developers) has use-ssh and use-ports" "use-ports,use-ssh" \
  "$(jq -r '.[] | select(.username == "carol") | .permissions | sort | join(",")' <<<"$users")"
check_match "olga (ops) is an admin" "admin" \
  "$(jq -r '.[] | select(.username == "olga") | .permissions | join(",")' <<<"$users")"
check_eq "the local admin is still one account, untouched" 1 \
  "$(jq '[.[] | select(.username == "admin")] | length' <<<"$users")"
check_eq "a local account still logs in with its password" 200 \
  "$(c -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
    -d "{\"username\":\"dora\",\"password\":\"dora-$$-pw\"}" "$url/api/v1/session")"

audit=$(as_admin admin audit 2>&1)
check_match "the audit log has carol's web login" "carol .*SSO login \\(web\\) .*200" "$audit"
check_match "... olga's CLI login" "olga .*SSO login \\(CLI\\) .*200" "$audit"
check_match "... and the refused one" "SSO login \\(web\\) .*403" "$audit"
[ "$CHECK_FAILED" -eq 0 ] || { tail -n 20 "$work/server.log" | sed 's/^/  server: /'; sed 's/^/  login: /' "$work/login.err"; }
summary
