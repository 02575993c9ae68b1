# shellcheck shell=bash
# What the Debian-guest suites of disks, export and state share: the real Debian 12 image
# (scripts/build-debian-guest) in a private images path, an isolated libvirt network on a free
# /28 of 198.51.100.0/24, a `bowline server` on it, and one user with the use-ssh permission and
# an SSH key. Source lib/net.sh, check.sh, server.sh and spaces.sh first; needs $root.
#   debian_server_begin NAME USER [SERVER_FLAG...]
#                                   sets images, network, bridge, user, user_token and as_user
#   address_of SPACE                the space's address once it reports one
#   guest SPACE COMMAND...          over SSH as the user, bowline's host key for SPACE pinned
#   guest_retry SPACE COMMAND...    the same until it answers (GUEST_TRIES times, GUEST_PAUSE s apart)

debian_server_begin() {
  local name=$1 t subnet out
  user=$2
  shift 2
  spaces_begin "$name"
  images=$work/images
  mkdir -p "$images/cloud-images" && chmod 0755 "$images" "$images/cloud-images"
  t=$(date +%s)
  "$root/scripts/build-debian-guest" "$images/cloud-images/debian-12.qcow2" >"$work/build.log" 2>&1 ||
    { cat "$work/build.log"; abort "scripts/build-debian-guest"; }
  log "image ready in $(($(date +%s) - t)) s"

  subnet=$(net_free_subnet 28) || abort "no free /28 in 198.51.100.0/24"
  net3=${subnet%.*}
  base=${subnet##*.}
  network=$prefix-net
  bridge=bwx$tag
  net_isolated_create "$network" "$bridge" "$net3.$((base + 1))/28" "$net3.$((base + 2))" \
    "$net3.$((base + 14))" || abort "isolated network on $subnet/28"

  server_start "$BOWLINE" "$work/server.log" --data-dir "$work/data" --images-path "$images" \
    --libvirt-uri qemu:///system --domain-type qemu --resolvers "$net3.$((base + 1))" "$@" ||
    abort "bowline server"
  ssh-keygen -q -t ed25519 -N '' -C "$user@bowline-e2e" -f "$work/id_ed25519" || abort "ssh-keygen"
  out=$("$BOWLINE" user create "$user" --permission use-ssh) || abort "user create: $out"
  user_token=$(sed -n 's/.*token (shown once): *\([^ ]*\).*/\1/p' <<<"$out")
  [ -n "$user_token" ] || abort "user create printed no token: $out"
  as_user user add-key "$user" "$work/id_ed25519.pub" >/dev/null || abort "user add-key"
}

as_user() { BOWLINE_TOKEN=$user_token "$BOWLINE" "$@"; }

address_of() { as_user space info "$1" -o json | jq -r '.info.address // empty'; }

guest() {
  local space=$1 address
  shift
  address=$(address_of "$space")
  as_user known-hosts "$space.bowline" >"$work/known_$space" 2>/dev/null
  ssh -i "$work/id_ed25519" -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=yes \
    -o UserKnownHostsFile="$work/known_$space" -o HostKeyAlias="$space.bowline" -o LogLevel=ERROR \
    -o ConnectTimeout=20 -o BindInterface="$bridge" "$user@$address" "$@"
}

guest_retry() {
  local i
  for i in $(seq 1 "${GUEST_TRIES:-5}"); do
    guest "$@" 2>>"$work/ssh.err" && return 0
    sleep "${GUEST_PAUSE:-3}"
  done
  return 1
}
