#!/usr/bin/env bash
# Agents through `bowline mcp`, driven by the official MCP TypeScript SDK (web/tests/
# mcp_agent.mjs) against the real `bowline server` on the real libvirtd with the tiny test guest:
#   tools     tools/list names every tool; create, get (with the console's last lines),
#             snapshot, stop, restore, start and list answer as the API does
#   refusals  a missing argument and a call by another user (with the space's id) are tool
#             errors that say why; an unknown tool is a protocol error
#   ssh       run_command on a guest without sshd is a tool error with ssh's words
#   audit     every call is in the audit log under its user, marked [mcp/TOOL], reads included
# Networks: an isolated libvirt network on a free /27 of 198.51.100.0/24 (spaces_nat_network). Everything
# made here starts with bwe2e and is removed on exit, also on failure.
# Usage: mcp_test.sh BOWLINE_BINARY
set -uo pipefail

BOWLINE=${1:?usage: mcp_test.sh BOWLINE_BINARY}
BOWLINE=$(cd "$(dirname "$BOWLINE")" && pwd)/$(basename "$BOWLINE") # the client runs in web/
here=$(cd "$(dirname "$0")" && pwd)
web=$(cd "$here/../../web" && pwd)
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

started=$(date +%s)
spaces_begin mcp_test
[ -d "$web/node_modules/@modelcontextprotocol/sdk" ] ||
  abort "no MCP SDK in web/node_modules: run scripts/setup"
images=$work/images
spaces_prepare_images "$images" || abort "building the test guest into $images/cloud-images"

spaces_nat_network

server_start "$BOWLINE" "$work/server.log" --data-dir "$work/data" --images-path "$images" \
  --libvirt-uri qemu:///system --domain-type qemu --stop-timeout 20 || abort "bowline server"
mallory=$("$BOWLINE" user create mallory -o json | jq -r .token)
[ "${mallory:-null}" != null ] || abort "user create mallory"
spaces_tiny_template tiny

out=$(cd "$web" && node tests/mcp_agent.mjs "$BOWLINE" tiny agent1 "$mallory" 2>"$work/agent.err")
[ -n "$out" ] || {
  sed 's/^/    /' "$work/agent.err"
  abort "the MCP client ran"
}
j() { jq -r "$1" <<<"$out"; }

check_eq "tools: the server names itself" bowline "$(j .server.name)"
check_eq "tools: tools/list" \
  "list_spaces get_space create_space start_space stop_space snapshot_space restore_snapshot run_command" \
  "$(j '.tools | join(" ")')"
check_match "tools: create_space waits for the space to run" "create succeeded.*agent1.*running" "$(j .create.text)"
check_eq "tools: ... and names its id" "$("$BOWLINE" space info agent1 -o json | jq -r .id)" "$(j .spaceId)"
check_match "tools: stop_space" "^stop succeeded.*stopped" "$(j .stop.text)"
check_match "tools: snapshot_space" "^snapshot succeeded" "$(j .snapshot.text)"
check_match "tools: restore_snapshot" "^restore succeeded" "$(j .restore.text)"
check_match "tools: start_space" "^start succeeded.*running" "$(j .start.text)"
check_match "tools: get_space shows the state and the console's last lines" \
  "running.*console \\(last lines\\):.+" "$(j .get.text)"
check_match "tools: list_spaces" "^1 spaces" "$(j .list.text)"
check_eq "tools: the snapshot is the API's" before \
  "$("$BOWLINE" space snapshots agent1 -o json | jq -r '.[].name')"
check_eq "ssh: run_command on a guest without sshd is a tool error" true "$(j .run.isError)"
check_match "ssh: ... with ssh's words and its exit code" "^exit code [1-9]" "$(j .run.text)"
check_eq "refusals: a missing argument is a tool error" true "$(j .missingArgument.isError)"
check_match "refusals: ... naming it" 'argument "name"' "$(j .missingArgument.text)"
check_match "refusals: an unknown tool is a protocol error" "no tool named" "$(j .unknownTool.protocolError)"
check_eq "refusals: another user's stop of the space is refused" true "$(j .otherStop.isError)"
check_match "refusals: ... as the API refuses it" "no space with id" "$(j .otherStop.text)"
check_match "refusals: ... and she does not see it" "^0 spaces" "$(j .otherList.text)"
check_eq "refusals: the space still runs" running "$(space_json agent1 | jq -r .state)"

audit=$("$BOWLINE" admin audit -o json)
a() { jq -r "$1" <<<"$audit"; }
check_eq "audit: the create, by admin, answered 202" "admin 202" \
  "$(a '[.[] | select(.action == "POST /api/v1/spaces [mcp/create_space]")][0] | "\(.user) \(.status)"')"
check_match "audit: a read by an agent is recorded too" "GET /api/v1/spaces/[0-9a-f-]+ \\[mcp/get_space\\]" \
  "$(a '.[].action' | grep -E '^GET /api/v1/spaces/[0-9a-f-]+ \[mcp/get_space\]' | head -n 1)"
check_eq "audit: mallory's refused stop, under her name" "mallory 404" \
  "$(a "[.[] | select(.action == \"POST /api/v1/spaces/$(j .spaceId)/stop [mcp/stop_space]\" and .user == \"mallory\")][0] | \"\(.user) \(.status)\"")"

log "total $(($(date +%s) - started)) s"
summary
