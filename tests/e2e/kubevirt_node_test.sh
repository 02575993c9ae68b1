#!/usr/bin/env bash
# End-to-end proof of the kubevirt node: the real `bowline server`, started with the
# server.kubevirt.* settings, driven by the `bowline` CLI, against a local HTTPS stand-in for a
# Kubernetes API server with KubeVirt (tests/unit/kubevirt/fake_apiserver.py, stateful: it keeps
# the objects, powers VMs by runStrategy, answers the subresources and refuses on cue). Checks
# what reached the "cluster" (method, path, query, content type, token, body) and what the
# server made of the answers:
#   1  --print-config shows the kubevirt settings; GET /api/v1/nodes lists the kubevirt node
#   2  space create --node: every object server-side applied, the space runs
#   3  stop merge-patches runStrategy Halted; a changed template applies at the next start
#   4  restart goes through the restart subresource
#   5  a 422 from the API server puts the space in error with its message
#   6  a bridged template and --ip are refused for the node
#   7  delete removes every object, then the space
#   8  an unreachable API server: the operation fails, the space says why, the node is not ready
# No guests, no networks: the local node is libvirt's in-process test driver.
# Usage: kubevirt_node_test.sh BOWLINE_BINARY
set -uo pipefail

BOWLINE=${1:?usage: kubevirt_node_test.sh BOWLINE_BINARY}
here=$(cd "$(dirname "$0")" && pwd)
fake=$here/../unit/kubevirt/fake_apiserver.py
# shellcheck source=lib/check.sh
. "$here/lib/check.sh"
# shellcheck source=lib/server.sh
. "$here/lib/server.sh"

work=$(mktemp -d /tmp/bwe2e-kv-XXXXXX)
fake_pid=""
cleanup() {
  server_stop KILL
  [ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
abort() {
  fail "$*"
  summary
  exit 1
}
log() { echo "kubevirt_node_test: $*"; }

unset "${!BOWLINE_@}" KUBECONFIG
export HOME=$work/home
mkdir -p "$HOME"
token=e2e-token-$RANDOM$RANDOM
ns=tenant-e2e

# HTTPS METHOD URL [BODY] [BEARER]: the response body; exit 1 unless 2xx. Trusts only the test CA.
https() {
  python3 - "$work/ca.crt" "$@" <<'PY'
import ssl, sys, urllib.request, urllib.error
ca, method, url = sys.argv[1:4]
body = sys.argv[4].encode() if len(sys.argv) > 4 and sys.argv[4] else None
req = urllib.request.Request(url, data=body, method=method)
req.add_header("Content-Type", "application/json")
if len(sys.argv) > 5:
    req.add_header("Authorization", "Bearer " + sys.argv[5])
ctx = ssl.create_default_context(cafile=ca) if url.startswith("https") else None
try:
    with urllib.request.urlopen(req, context=ctx, timeout=30) as r:
        sys.stdout.write(r.read().decode())
except urllib.error.HTTPError as e:
    sys.stdout.write(e.read().decode())
    sys.exit(1)
PY
}
cue() { https POST "$kube/fake/$1" "$2" >/dev/null || abort "fake API server cue $1"; }
# The requests the fake received, one JSON object a line; `requests_since N` skips the first N
# and the GETs (state reads).
requests_since() { tail -n "+$(($1 + 1))" "$work/requests.log" | jq -c 'select(.method != "GET")'; }
mark() { wc -l <"$work/requests.log"; }

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
  -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout "$work/ca.key" \
  -out "$work/ca.crt" 2>/dev/null || abort "openssl: a certificate for the fake API server"
touch "$work/requests.log"
python3 "$fake" "$work/ca.crt" "$work/ca.key" "$work/requests.log" "$token" >"$work/port" &
fake_pid=$!
for _ in $(seq 100); do
  [ -s "$work/port" ] && break
  sleep 0.1
done
port=$(head -n 1 "$work/port")
[ -n "$port" ] || abort "the fake API server did not start"
kube=https://127.0.0.1:$port
cat >"$work/kubeconfig" <<YAML
apiVersion: v1
kind: Config
current-context: e2e
clusters:
- name: fake
  cluster:
    server: $kube
    certificate-authority: ca.crt
contexts:
- name: e2e
  context: {cluster: fake, user: bowline}
users:
- name: bowline
  user:
    token: $token
YAML
log "fake API server on $kube"

kv_flags=(--kubevirt-node cluster --kubevirt-kubeconfig "$work/kubeconfig"
  --kubevirt-namespace "$ns")
server_flags=(--data-dir "$work/data" --images-path "$work/images" --libvirt-uri test:///default
  --domain-type qemu --stop-timeout 10 --reconcile-interval 0 "${kv_flags[@]}")

# 1: settings and the node list
config=$("$BOWLINE" server --print-config "${server_flags[@]}" | grep kubevirt)
check_match "print-config: the node's name, from its flag" \
  'server\.kubevirt\.name +cluster +flag \(--kubevirt-node\)' "$config"
check_match "print-config: the namespace" "server\\.kubevirt\\.namespace +$ns +flag" "$config"

server_start "$BOWLINE" "$work/server.log" "${server_flags[@]}" || abort "bowline server"
check_match "the server names its kubevirt node" "kubevirt node cluster at $kube, namespace $ns" \
  "$(cat "$work/server.log")"
nodes=$(https GET "$BOWLINE_SERVER/api/v1/nodes" "" "$BOWLINE_TOKEN")
check_eq "GET /api/v1/nodes: local and cluster" "local libvirt|cluster kubevirt" \
  "$(jq -r '[.[] | .name + " " + .kind] | join("|")' <<<"$nodes")"
check_eq "the kubevirt node is ready, runtime kubevirt" "true [\"kubevirt\"]" \
  "$(jq -c -r '.[1] | "\(.ready) \(.runtimes)"' <<<"$nodes")"

cat >"$work/kv.yaml" <<'YAML'
name: e2e-${{ .space.name }}
image: https://images.example.org/debian-12.qcow2
disk: 10Gi
network: {mode: nat}
instanceType: u1.small
instanceProfile: debian
cloudInit: |
  #cloud-config
  packages: [htop]
YAML
sed 's/u1.small/u1.large/' "$work/kv.yaml" >"$work/kv-v2.yaml"
cat >"$work/bridged.yaml" <<'YAML'
name: e2e-br-${{ .space.name }}
image: https://images.example.org/debian-12.qcow2
network:
  mode: bridged
  bridge: br0
  cidr: 198.51.100.0/24
  ip_range_start: 198.51.100.10
  ip_range_end: 198.51.100.20
YAML
"$BOWLINE" template create "$work/kv.yaml" --name kv >/dev/null || abort "template create kv"
"$BOWLINE" template create "$work/bridged.yaml" --name bridged >/dev/null ||
  abort "template create bridged"

# 2: create
out=$("$BOWLINE" space create kv dev --node cluster --wait --timeout 60 2>&1)
check_match "space create --node cluster --wait" "space dev is running" "$out"
info=$("$BOWLINE" space info dev -o json)
check_eq "the space is on the node cluster, running" "cluster running" \
  "$(jq -r '"\(.node) \(.state)"' <<<"$info")"
out=$("$BOWLINE" space info dev 2>&1)
check_match "space info (text) names the node" "node[: ]+cluster" "$out"
applies=$(requests_since 0)
check_eq "four server-side applies, in order" \
  "/apis/cdi.kubevirt.io/v1beta1/namespaces/$ns/datavolumes/e2e-dev-system /api/v1/namespaces/$ns/secrets/e2e-dev-cloud-init /apis/kubevirt.io/v1/namespaces/$ns/virtualmachines/e2e-dev /api/v1/namespaces/$ns/services/e2e-dev" \
  "$(jq -r .path <<<"$applies" | paste -sd ' ')"
check_eq "each: PATCH ?fieldManager=bowline (new: no force), apply-patch+yaml, the kubeconfig's token" \
  "4" "$(jq -r --arg t "Bearer $token" 'select(.method == "PATCH" and .query == {"fieldManager": ["bowline"]} and .content_type == "application/apply-patch+yaml" and .authorization == $t) | 1' <<<"$applies" | wc -l | tr -d ' ')"
vm_body=$(jq -r 'select(.path | endswith("/virtualmachines/e2e-dev")) | .body' <<<"$applies")
check_eq "the VirtualMachine's body: name, namespace, owner, runStrategy, instance type" \
  "e2e-dev $ns admin Always u1.small" \
  "$(jq -r '"\(.metadata.name) \(.metadata.namespace) \(.metadata.annotations["bowline/owner"]) \(.spec.runStrategy) \(.spec.instancetype.name)"' <<<"$vm_body")"
check_eq "the Secret carries the user-data" "true" \
  "$(jq -r 'select(.path | endswith("/secrets/e2e-dev-cloud-init")) | .body | fromjson | .data.userdata != null' <<<"$applies")"

# 3: stop, then a changed template at the next start
m=$(mark)
out=$("$BOWLINE" space stop dev --wait --timeout 60 2>&1)
check_match "space stop --wait" "space dev is stopped" "$out"
check_eq "stop: one merge patch of runStrategy" \
  "PATCH /apis/kubevirt.io/v1/namespaces/$ns/virtualmachines/e2e-dev application/merge-patch+json {\"spec\":{\"runStrategy\":\"Halted\"}}" \
  "$(requests_since "$m" | jq -r '"\(.method) \(.path) \(.content_type) \(.body)"')"
"$BOWLINE" template update "$work/kv-v2.yaml" --name kv >/dev/null || abort "template update"
m=$(mark)
out=$("$BOWLINE" space start dev --wait --timeout 60 2>&1)
check_match "space start --wait" "space dev is running" "$out"
check_eq "start re-applies the changed template, running, forced over its own objects" \
  "Always u1.large true" \
  "$(requests_since "$m" | jq -r 'select(.path | endswith("/virtualmachines/e2e-dev")) | "\(.body | fromjson | "\(.spec.runStrategy) \(.spec.instancetype.name)") \(.query.force[0])"')"

# 4: restart
m=$(mark)
out=$("$BOWLINE" space restart dev --wait --timeout 60 2>&1)
check_match "space restart --wait" "space dev is running" "$out"
check_eq "restart: PUT on the restart subresource" \
  "PUT /apis/subresources.kubevirt.io/v1/namespaces/$ns/virtualmachines/e2e-dev/restart" \
  "$(requests_since "$m" | jq -r 'select(.method == "PUT") | "\(.method) \(.path)"')"

# 5: the API server refuses
cue refuse '{"method": "PATCH", "contains": "/virtualmachines/e2e-bad", "status": 422, "reason": "Invalid", "message": "VirtualMachine.kubevirt.io \"e2e-bad\" is invalid: spec.template.spec.domain: Required value"}'
"$BOWLINE" space create kv bad --node cluster --wait --timeout 60 >"$work/bad.out" 2>&1
check_eq "create refused by the API server: exit 1" "1" "$?"
bad=$("$BOWLINE" space info bad -o json)
check_eq "the space is in error" "error" "$(jq -r .state <<<"$bad")"
check_match "with the API server's message" \
  'applying VirtualMachine/e2e-bad: HTTP 422: Invalid: VirtualMachine.kubevirt.io "e2e-bad" is invalid: spec.template.spec.domain: Required value' \
  "$(jq -r .error <<<"$bad")"
check_match "the CLI's --wait reports it" "HTTP 422: Invalid" "$(cat "$work/bad.out")"
cue clear '{}'

# 6: what the node cannot run
out=$("$BOWLINE" space create bridged br --node cluster 2>&1)
check_match "a bridged template is refused for the node" \
  "network.mode bridged takes a host bridge.*kubevirt node cluster" "$out"
out=$("$BOWLINE" space create kv withip --node cluster --ip 198.51.100.7 2>&1)
check_match "--ip is refused for the node" "gets its address from the cluster" "$out"
out=$("$BOWLINE" space create kv nowhere --node elsewhere 2>&1)
check_match "an unknown node is refused" "no node named elsewhere \\(nodes: local, cluster\\)" "$out"

# 7: delete
m=$(mark)
out=$("$BOWLINE" space delete dev --wait --timeout 60 2>&1)
check_match "space delete --wait" "space dev deleted" "$out"
check_eq "delete: Service, VirtualMachine, Secret, DataVolume" \
  "DELETE /api/v1/namespaces/$ns/services/e2e-dev DELETE /apis/kubevirt.io/v1/namespaces/$ns/virtualmachines/e2e-dev DELETE /api/v1/namespaces/$ns/secrets/e2e-dev-cloud-init DELETE /apis/cdi.kubevirt.io/v1beta1/namespaces/$ns/datavolumes/e2e-dev-system" \
  "$(requests_since "$m" | jq -r '"\(.method) \(.path)"' | paste -sd ' ')"
check_no_match "the space is gone" '(^| )dev( |$)' "$("$BOWLINE" space list 2>&1)"
"$BOWLINE" space delete bad --wait --timeout 60 >/dev/null 2>&1
check_eq "the failed space deletes too (its objects are already gone: 404): no spaces left" "0" \
  "$("$BOWLINE" space list -o json | jq -r length)"

# 8: the cluster goes away
out=$("$BOWLINE" space create kv late --node cluster --no-start --wait --timeout 60 2>&1)
check_match "a space created stopped" "space late is stopped" "$out"
kill "$fake_pid" 2>/dev/null
wait "$fake_pid" 2>/dev/null
fake_pid=""
"$BOWLINE" space start late --wait --timeout 60 >/dev/null 2>&1
late=$("$BOWLINE" space info late -o json)
check_eq "start against an unreachable API server: error" "error" "$(jq -r .state <<<"$late")"
check_match "the reason names the server" "start failed: (GET|PATCH) $kube/.*(Connection refused|Couldn't connect)" \
  "$(jq -r .error <<<"$late")"
# The report is kept for a while (15 s); an admin's ?refresh=1 checks now.
nodes=$(https GET "$BOWLINE_SERVER/api/v1/nodes?refresh=1" "" "$BOWLINE_TOKEN")
check_eq "the kubevirt node is not ready; its api-server check says so" "false missing" \
  "$(jq -r '.[1] | "\(.ready) \(.checks[0].status)"' <<<"$nodes")"

summary
