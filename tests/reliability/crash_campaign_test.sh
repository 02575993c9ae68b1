#!/usr/bin/env bash
# The crash campaign's harness (tests/reliability/crash_campaign.py does the work): a host-only
# bridge in a free /28 of 198.51.100.0/24, the tiny test guest in a private images path, and
# everything this run made removed on exit, also on failure.
# Usage: crash_campaign_test.sh BOWLINE_BINARY [KILLS [SEED]]
#   KILLS (default 50) kill points; SEED (default: a random one, printed) reproduces a run.
#   CRASH_BUDGET (seconds, default none) stops starting kill points once spent; the run then
#   fails only with fewer than CRASH_MIN_KILLS (default 1) kill points done.
# Exit status 1 when an invariant failed after a kill (the table names the seed).
set -uo pipefail

BOWLINE=${1:?usage: crash_campaign_test.sh BOWLINE_BINARY [KILLS [SEED]]}
KILLS=${2:-50}
SEED=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
e2e=$here/../e2e
# shellcheck source=../e2e/lib/net.sh
. "$e2e/lib/net.sh"
# shellcheck source=../e2e/lib/check.sh
. "$e2e/lib/check.sh"
# shellcheck source=../e2e/lib/server.sh
. "$e2e/lib/server.sh"
# shellcheck source=../e2e/lib/spaces.sh
. "$e2e/lib/spaces.sh"

spaces_begin crash_campaign
# The driver starts and kills its own servers; their guest guard tables are named after the data
# directory, dropped here like a server_start's.
SERVER_DATA=$work/data
images=$work/images
spaces_prepare_images "$images" || abort "building the test guest into $images/cloud-images"
sub=$(net_free_subnet 28) || abort "no free /28 in 198.51.100.0/24"
pre=${sub%.*}
base=${sub##*.}
bridge=bwe2eb$tag
gw=$pre.$((base + 1))
net_bridge_create "$bridge" "$gw/28" || abort "bridge $bridge"

args=(--bowline "$BOWLINE" --work "$work" --images "$images" --data "$work/data" --prefix "$prefix"
  --bridge "$bridge" --cidr "$sub/28" --gateway "$gw" --range-start "$pre.$((base + 2))"
  --range-end "$pre.$((base + 14))" --kills "$KILLS")
[ -n "$SEED" ] && args+=(--seed "$SEED")
[ -n "${CRASH_BUDGET:-}" ] && args+=(--budget "$CRASH_BUDGET" --min-kills "${CRASH_MIN_KILLS:-1}")
python3 "$here/crash_campaign.py" "${args[@]}"
