#!/usr/bin/env bash
# Preview URLs (docs/teams.md) through the real `bowline server` over HTTPS (self-signed, with
# the previews' wildcard certificate picked by SNI) on the real libvirtd with the tiny test guest:
# busybox httpd on 8000 (private: http: true) and 8001 (preview: team) with a CGI script that
# prints the request's cookies and X-Forwarded-* and streams two lines three seconds apart, and
# an echo service on 7000 (preview: private) for the Upgrade pass-through.
#   login     a browser without a pass goes to the UI's authorize step and back with a one-use
#             code bound to its state cookie; a replayed code or one without the state is refused
#   relay     the guest's page comes back; the guest never sees the preview cookie (on the
#             first request nor a later one on the same connection), sees the app's own, and
#             X-Forwarded-For is bowline's, not the client's; an answer streams as it comes;
#             after an Upgrade the bytes pass both ways
#   who       bob may open the team port but not alice's private one, until she shares the
#             space; her unshare closes his open preview connection within a second
#   logout    alice's UI logout ends her preview pass
#   audit     preview connections are in the audit log
# Names: the preview hosts are reached with curl --connect-to (no DNS needed). Networks: an
# isolated libvirt network on a free /27 of 198.51.100.0/24. Everything made here starts with
# bwe2e and is removed on exit, also on failure.
# Usage: preview_test.sh BOWLINE_BINARY
set -uo pipefail

BOWLINE=${1:?usage: preview_test.sh BOWLINE_BINARY}
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

spaces_begin preview_test
images=$work/images
spaces_prepare_images "$images" || abort "building the test guest into $images/cloud-images"
spaces_nat_network
domain=preview.test

# HTTPS on loopback (self-signed), so that cookies are __Host- and SNI picks certificates.
"$BOWLINE" server --listen 127.0.0.1:0 --tls-mode self-signed --preview-domain "$domain" \
  --data-dir "$work/data" --images-path "$images" --libvirt-uri qemu:///system \
  --domain-type qemu --stop-timeout 20 >"$work/server.log" 2>&1 &
SERVER_PID=$!
SERVER_DATA=$work/data
for _ in $(seq 1 600); do
  url=$(grep -aoE 'listening on https://127\.0\.0\.1:[0-9]+' "$work/server.log" | tail -n 1)
  [ -n "$url" ] && break
  kill -0 "$SERVER_PID" 2>/dev/null || break
  sleep 0.1
done
[ -n "$url" ] || { sed 's/^/    /' "$work/server.log"; abort "bowline server"; }
export BOWLINE_SERVER=${url#listening on }
port=${BOWLINE_SERVER##*:}
export BOWLINE_TOKEN
BOWLINE_TOKEN=$(cat "$work/data/admin.token")
# Both certificates in one bundle: a preview host verifies only if the server chose the
# wildcard by its name.
cat "$work/data/tls-cert.pem" "$work/data/preview-$domain-cert.pem" >"$work/ca.pem"
export SSL_CERT_FILE=$work/ca.pem # the CLI trusts the server through OpenSSL's trust store
check_match "the server names the previews' self-signed certificate" \
  "previews' TLS certificate .*preview-$domain-cert.pem" "$(cat "$work/server.log")"

for who in alice bob; do
  "$BOWLINE" user create "$who" --password "$who-$tag-pw" --permission use-ports -o json \
    | jq -r .token >"$work/$who.token" || abort "user create $who"
done
as() {
  local who=$1
  shift
  BOWLINE_TOKEN=$(cat "$work/$who.token") "$BOWLINE" "$@"
}

spaces_tiny_template web "ports:
  - {port: 8000, http: true}
  - {port: 8001, preview: team}
  - {port: 7000, preview: private}
cloudInit: |
  #cloud-config
  runcmd:
    - mkdir -p /www/cgi-bin && echo preview-index-\$(hostname) > /www/index.html
    - printf '#!/bin/sh\\necho Content-Type: text/plain\\necho\\necho \"cookie=\$HTTP_COOKIE\"\\necho \"xff=\$HTTP_X_FORWARDED_FOR\"\\necho \"proto=\$HTTP_X_FORWARDED_PROTO\"\\necho first\\nsleep 3\\necho second\\n' > /www/cgi-bin/see && chmod +x /www/cgi-bin/see
    - 'busybox httpd -p 8000 -h /www; busybox httpd -p 8001 -h /www; echo \"TEST: web on 8000\"'
    - 'busybox nc -ll -p 7000 -e /bin/cat </dev/null >/dev/null 2>&1 & echo \"TEST: echo service on 7000\"'"
as alice space create web box --wait --timeout 300 >"$work/create.out" 2>&1 ||
  { sed 's/^/    /' "$work/create.out"; abort "alice's space create"; }
check_cmd "the guest started its web servers" wait_for "$images/$prefix-box/console.log" \
  '^TEST: web on 8000' 120
wait_for "$images/$prefix-box/console.log" '^TEST: echo service on 7000' 60 || true

host=8000--box--alice.$domain
team=8001--box--alice.$domain
echo_host=7000--box--alice.$domain
check_match "space info shows the private preview URL" \
  "preview 8000: +https://$host:$port/ +\\(private\\)" "$(as alice space info box)"
check_match "... and the team one" "preview 8001: +https://$team:$port/ +\\(team\\)" \
  "$(as alice space info box)"

# c WHO ARGS: curl as WHO's browser (a cookie jar), every preview host sent to the server.
c() {
  local who=$1
  shift
  curl -s --cacert "$work/ca.pem" --connect-to "::127.0.0.1:$port" -b "$work/$who.jar" \
    -c "$work/$who.jar" "$@"
}
login() {
  rm -f "$work/$1.jar"
  c "$1" -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
    -d "{\"username\":\"$1\",\"password\":\"$1-$tag-pw\"}" "$BOWLINE_SERVER/api/v1/session"
}
# pass_for WHO HOST: the login steps to HOST's pass, not following into the guest; prints it.
pass_for() {
  local next
  next=$(c "$1" -o /dev/null -w '%{redirect_url}' "https://$2:$port/ws")         # to authorize
  next=$(c "$1" -o /dev/null -w '%{redirect_url}' "$next")                         # the code
  c "$1" -o /dev/null "$next"                                                      # the pass
  awk -v h="#HttpOnly_$2" '$1 == h && $6 == "__Host-bowline_preview" {print $7}' "$work/$1.jar"
}
check_eq "alice logs in to the UI" 200 "$(login alice)"
check_eq "bob logs in to the UI" 200 "$(login bob)"

# --- login ---------------------------------------------------------------------------------------
first=$(c alice -o /dev/null -D - "https://$host:$port/index.html")
check_match "without a pass: 302 to the UI's authorize step" \
  "location: https://127.0.0.1:$port/api/v1/preview/authorize\\?host=$host&path=%2Findex.html&state=" \
  "$(tr -d '\r' <<<"$first" | tr 'A-Z' 'a-z' | sed 's/%2f/%2F/g' | grep -i '^location')"
check_match "... setting a state cookie on the preview host alone (__Host-)" \
  "set-cookie: __host-bowline_preview_state=[0-9a-f]{64}; path=/; httponly; samesite=lax; max-age=600; secure" \
  "$(tr -d '\r' <<<"$first" | grep -i '^set-cookie' | tr 'A-Z' 'a-z')"
auth=$(c alice -o /dev/null -D - "$(tr -d '\r' <<<"$first" | grep -i '^location' | cut -d' ' -f2)")
code_url=$(tr -d '\r' <<<"$auth" | grep -i '^location' | cut -d' ' -f2)
check_match "the UI's session gives a one-use code for that host" \
  "^https://$host:$port/\\.bowline/login\\?code=[0-9a-f]{64}&path=%2Findex.html$" "$code_url"
check_eq "another browser (no state cookie) cannot use the code" 403 \
  "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$work/ca.pem" --connect-to "::127.0.0.1:$port" "$code_url")"
check_eq "... which used it up: alice's browser is refused it too" 403 \
  "$(c alice -o /dev/null -w '%{http_code}' "$code_url")"
page=$(c alice -L -D "$work/follow.headers" "https://$host:$port/index.html")
check_eq "following the redirects, alice sees the guest's page (the wildcard certificate verifies)" \
  "preview-index-box" "$page"
[ "$page" = preview-index-box ] || sed 's/^/    /' "$work/follow.headers"
check_not_cmd "the preview cookie is not the UI's: her UI cookie is not the preview host's" \
  grep -q "$domain.*bowline_session" "$work/alice.jar"
check_cmd "... and the preview's own cookie is host-only, Secure, on the preview host" grep -qE \
  "^#HttpOnly_$host[[:space:]]FALSE[[:space:]]/[[:space:]]TRUE[[:space:]][0-9]+[[:space:]]__Host-bowline_preview[[:space:]]" \
  "$work/alice.jar"

# --- relay ---------------------------------------------------------------------------------------
printf '%s\tFALSE\t/\tTRUE\t0\tapp\t1\n' "$host" >>"$work/alice.jar" # the app's own cookie
seen=$(c alice -H 'X-Forwarded-For: 6.6.6.6' "https://$host:$port/cgi-bin/see")
check_match "the guest sees the app's own cookie and never the preview's" "^cookie=app=1$" \
  "$(grep '^cookie=' <<<"$seen")"
check_eq "X-Forwarded-For is the client as bowline saw it, not as it claimed" "xff=127.0.0.1" \
  "$(grep '^xff=' <<<"$seen")"
check_eq "X-Forwarded-Proto is https" "proto=https" "$(grep '^proto=' <<<"$seen")"
pass_alice=$(awk -v h="#HttpOnly_$host" '$1 == h && $6 == "__Host-bowline_preview" {print $7}' "$work/alice.jar")
gap=$(python3 "$here/lib/preview_client.py" "$work/ca.pem" "$host" "$port" "$pass_alice" stream /cgi-bin/see)
check_cmd "an answer streams: its lines arrive as the guest writes them (${gap} s apart)" \
  python3 -c "import sys; sys.exit(0 if float('$gap') >= 2 else 1)"
echoed=$(python3 "$here/lib/preview_client.py" "$work/ca.pem" "$echo_host" "$port" "-" upgrade)
check_match "no pass, no guest: the echo service is not reached" "^HTTP/1.1 302" "$(head -1 <<<"$echoed")"
pass_echo=$(pass_for alice "$echo_host")
echoed=$(python3 "$here/lib/preview_client.py" "$work/ca.pem" "$echo_host" "$port" "$pass_echo" upgrade)
check_match "Upgrade: the guest got the request" "^GET /ws HTTP/1.1" "$echoed"
check_match "... with the app's cookie" "Cookie: app=1" "$echoed"
check_no_match "... without the preview's, nor the client's X-Forwarded-For" "bowline_preview|6\.6\.6\.6" "$echoed"
check_match "... and then the raw bytes, both ways" "RAW-BYTES-AFTER-UPGRADE" "$echoed"
twice=$(python3 "$here/lib/preview_client.py" "$work/ca.pem" "$echo_host" "$port" "$pass_echo" twice)
check_eq "two requests on one connection both reach the guest rewritten" \
  "GET /one HTTP/1.1|GET /two HTTP/1.1|X-Forwarded-For: 127.0.0.1|X-Forwarded-For: 127.0.0.1" \
  "$(tr -d '\r' <<<"$twice" | grep -E '^(GET|X-Forwarded-For)' | sort | paste -sd'|')"
check_no_match "... neither carrying the preview cookie" "bowline_preview" "$twice"
check_match "... the second with its body" "BODY-OF-TWO" "$twice"
check_cmd "a pass is for its own host only" bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' --cacert '$work/ca.pem' --connect-to '::127.0.0.1:$port' -b '__Host-bowline_preview=$pass_echo' 'https://$host:$port/')\" = 302 ]"

# --- who -----------------------------------------------------------------------------------------
check_eq "bob opens the team port" "preview-index-box" "$(c bob -L "https://$team:$port/index.html")"
check_match "bob is refused the private one, on the UI's origin (404, as if it did not exist)" \
  "no preview at $host that you may open" "$(c bob -L "https://$host:$port/")"
check_cmd "alice shares box with bob as viewer" as alice space share box bob --role viewer
check_eq "now bob opens the private port" "preview-index-box" "$(c bob -L "https://$host:$port/index.html")"
pass_bob=$(pass_for bob "$echo_host")
python3 "$here/lib/preview_client.py" "$work/ca.pem" "$echo_host" "$port" "$pass_bob" hold >"$work/hold.out" &
holder=$!
wait_for "$work/hold.out" '^open' 10 >/dev/null
sleep 1
as alice space unshare box bob >/dev/null
unshared=$(date +%s.%N)
wait "$holder"
closed=$(sed -n 's/^closed at //p' "$work/hold.out")
check_cmd "alice's unshare closes bob's open preview connection within a second (${closed:-never})" \
  python3 -c "import sys; sys.exit(0 if '$closed' and float('$closed') - $unshared < 1.0 else 1)"
check_match "... and he is refused the private port again" "no preview at $host" \
  "$(c bob -L "https://$host:$port/")"

# --- logout --------------------------------------------------------------------------------------
csrf=$(c alice "$BOWLINE_SERVER/api/v1/session" | jq -r .csrf)
check_eq "alice logs out of the UI" 204 "$(c alice -o /dev/null -w '%{http_code}' -X DELETE \
  -H "X-CSRF-Token: $csrf" -H "Origin: $BOWLINE_SERVER" "$BOWLINE_SERVER/api/v1/session")"
check_eq "alice's UI logout ends her preview pass (302 to log in again)" 302 \
  "$(c alice -o /dev/null -w '%{http_code}' "https://$host:$port/index.html")"

# --- audit ---------------------------------------------------------------------------------------
check_match "the audit log has bob's preview connections (101)" "GET preview $echo_host" \
  "$("$BOWLINE" admin audit --user bob 2>&1)"

[ "$CHECK_FAILED" -eq 0 ] || tail -n 20 "$work/server.log" | sed 's/^/  server: /'
server_stop
summary
