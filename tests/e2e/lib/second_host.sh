# shellcheck shell=bash
# A second KVM host on this machine for multi-node tests (source this file; needs root, iproute2,
# util-linux unshare/nsenter, libvirt-daemon, openssh-server, openssh-client).
#
# The host is a network namespace plus a private mount namespace in which its own virtlogd,
# libvirtd and sshd run. Everything libvirt keeps is its own: /run (sockets, pidfiles, domain
# status), /etc/libvirt (a copy of the daemons' .conf files only: no domains, networks or pools of
# the first host), /var/lib/libvirt, /var/cache/libvirt and /var/log/libvirt are bind mounts of
# directories under the host's state directory. A veth pair joins it to the first host in
# 198.51.100.240/29: the first host's end is .241, the second host's .242, where its sshd listens
# (root login with a key generated here only). The server then reaches it the way it reaches any
# remote libvirt host: qemu+ssh, which runs virt-ssh-helper through that sshd, inside the second
# host's namespaces, against its libvirtd's socket.
#
#   second_host_up DIR      bring the host up with its state under DIR (made if missing); sets
#                           SECOND_HOST_ADDR, SECOND_HOST_URI, SECOND_HOST_KEY, SECOND_HOST_IMAGES
#                           (its images directory, in its own /var/lib/libvirt) and
#                           SECOND_HOST_POOL (a started dir storage pool there)
#   second_host_exec CMD..  run CMD inside the second host (its mounts and network)
#   second_host_virsh ARGS  virsh against the second libvirtd, from inside (no ssh)
#   second_host_libvirtd_stop / second_host_libvirtd_start
#                           stop (SIGTERM, waits until gone) or start its libvirtd again
#   second_host_down        kill everything in it, delete the veth and the namespace, remove DIR;
#                           idempotent, so `trap second_host_down EXIT` is always safe
#
# SECOND_HOST_NS (default bwnode2) names the network namespace.

SECOND_HOST_NS=${SECOND_HOST_NS:-bwnode2}
SECOND_HOST_NET=198.51.100.240
SECOND_HOST_PEER=198.51.100.241
SECOND_HOST_ADDR=198.51.100.242
SECOND_HOST_POOL=bowline-node2
_SH_VETH=bwn2h
_SH_DIR=
_SH_ANCHOR=

_sh_log() { echo "second_host.sh: $*" >&2; }

# The first process of the mount namespace (a sleeping anchor), so later commands can join it.
_sh_anchor_pid() { cat "$_SH_DIR/anchor.pid" 2>/dev/null; }

second_host_exec() {
  nsenter -t "$(_sh_anchor_pid)" -m -n -- "$@"
}

second_host_virsh() {
  second_host_exec virsh -q -c qemu:///system "$@"
}

_sh_wait_for() { # TRIES CMD...: poll every 0.1 s
  local tries=$1 i
  shift
  for ((i = 0; i < tries; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  return 1
}

_sh_write_configs() {
  local d=$_SH_DIR
  mkdir -p "$d"/{run,etc,lib,cache,log,ssh}
  # Only the daemons' settings: domains, networks, pools and secrets of the first host stay out.
  cp /etc/libvirt/*.conf "$d/etc/"
  mkdir -p "$d/etc/qemu" "$d/etc/storage" "$d/etc/nwfilter"
  # Both libvirtds share the machine's cgroup tree; without controllers the second one does not
  # create cgroups the first could collide with.
  echo 'cgroup_controllers = [ ]' >>"$d/etc/qemu.conf"
  mkdir -p "$d/lib/images" "$d/lib/qemu" "$d/lib/dnsmasq" "$d/lib/boot"
  chmod 755 "$d" "$d/lib" "$d/lib/images"
  # The QEMU capabilities cache of the first host: saves the cold probe (about 4 s).
  cp -a /var/cache/libvirt/. "$d/cache/" 2>/dev/null || true
  ssh-keygen -q -t ed25519 -N '' -f "$d/ssh/host_key"
  ssh-keygen -q -t ed25519 -N '' -C bowline-second-host -f "$d/ssh/client_key"
  cp "$d/ssh/client_key.pub" "$d/ssh/authorized_keys"
  chmod 700 "$d/ssh"
  cat >"$d/ssh/sshd_config" <<EOF
ListenAddress $SECOND_HOST_ADDR
Port 22
HostKey $d/ssh/host_key
PidFile /run/sshd.pid
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
AuthorizedKeysFile $d/ssh/authorized_keys
StrictModes no
AllowTcpForwarding yes
Subsystem sftp internal-sftp
EOF
}

# Inside the new namespaces: bind the state directories, then the daemons daemonize, and the
# anchor keeps the mount namespace alive for nsenter.
_sh_inner_script() {
  local d=$_SH_DIR
  cat <<EOF
set -e
mount --bind $d/run /run
mount --bind $d/etc /etc/libvirt
mount --bind $d/lib /var/lib/libvirt
mount --bind $d/cache /var/cache/libvirt
mount --bind $d/log /var/log/libvirt
mkdir -p /run/sshd /run/libvirt /run/lock  # /var/lock: libvirtd locks a console's pty there
ip link set lo up
virtlogd -d -p /run/virtlogd.pid
libvirtd -d -p /run/libvirtd.pid
/usr/sbin/sshd -f $d/ssh/sshd_config -E $d/log/sshd.log
echo \$\$ > $d/anchor.pid
exec sleep infinity
EOF
}

second_host_libvirtd_start() {
  second_host_exec libvirtd -d -p /run/libvirtd.pid
  _sh_wait_for 100 second_host_virsh version || {
    _sh_log "libvirtd did not answer"
    return 1
  }
}

second_host_libvirtd_stop() {
  local pid
  pid=$(second_host_exec cat /run/libvirtd.pid 2>/dev/null) || return 0
  kill "$pid" 2>/dev/null || true
  _sh_wait_for 100 bash -c "! kill -0 $pid" || kill -9 "$pid" 2>/dev/null || true
}

second_host_up() {
  _SH_DIR=$1
  if ip netns list | grep -qw "$SECOND_HOST_NS"; then
    _sh_log "namespace $SECOND_HOST_NS exists already (another test, or a stale one)"
    return 1
  fi
  if ip route show to match "$SECOND_HOST_ADDR" | grep -vq '^default'; then
    _sh_log "$SECOND_HOST_NET/29 is routed already"
    return 1
  fi
  mkdir -p "$_SH_DIR"
  _SH_DIR=$(cd "$_SH_DIR" && pwd)
  _sh_write_configs
  ip netns add "$SECOND_HOST_NS"
  ip link add "$_SH_VETH" type veth peer name eth0 netns "$SECOND_HOST_NS"
  sysctl -qw "net.ipv6.conf.$_SH_VETH.disable_ipv6=1"
  ip addr add "$SECOND_HOST_PEER/29" dev "$_SH_VETH"
  ip link set "$_SH_VETH" up
  ip -n "$SECOND_HOST_NS" addr add "$SECOND_HOST_ADDR/29" dev eth0
  ip -n "$SECOND_HOST_NS" link set eth0 up
  _sh_inner_script >"$_SH_DIR/inner.sh"
  # setsid: the anchor and the daemons leave the caller's session (no terminal signals).
  setsid ip netns exec "$SECOND_HOST_NS" unshare -m --propagation private \
    bash "$_SH_DIR/inner.sh" </dev/null >"$_SH_DIR/inner.log" 2>&1 &
  _sh_wait_for 100 test -s "$_SH_DIR/anchor.pid" || {
    _sh_log "the namespaces did not come up: $(cat "$_SH_DIR/inner.log")"
    return 1
  }
  _sh_wait_for 100 second_host_virsh version || {
    _sh_log "the second libvirtd did not answer"
    return 1
  }
  SECOND_HOST_IMAGES=/var/lib/libvirt/images
  second_host_virsh pool-define-as "$SECOND_HOST_POOL" dir --target "$SECOND_HOST_IMAGES" >/dev/null
  second_host_virsh pool-start "$SECOND_HOST_POOL" >/dev/null
  second_host_virsh pool-autostart "$SECOND_HOST_POOL" >/dev/null
  SECOND_HOST_KEY=$_SH_DIR/ssh/client_key
  SECOND_HOST_URI="qemu+ssh://root@$SECOND_HOST_ADDR/system?keyfile=$SECOND_HOST_KEY&no_verify=1"
  _sh_wait_for 100 bash -c "exec 3<>/dev/tcp/$SECOND_HOST_ADDR/22" || true
  export SECOND_HOST_ADDR SECOND_HOST_URI SECOND_HOST_KEY SECOND_HOST_IMAGES SECOND_HOST_POOL
}

second_host_down() {
  local pids i
  if ip netns list 2>/dev/null | grep -qw "$SECOND_HOST_NS"; then
    # Every process with the namespace's network: daemons, QEMU, the anchor, sshd sessions.
    for i in 1 2 3; do
      pids=$(ip netns pids "$SECOND_HOST_NS" 2>/dev/null)
      [ -z "$pids" ] && break
      # shellcheck disable=SC2086
      kill -TERM $pids 2>/dev/null || true
      _sh_wait_for 30 bash -c "[ -z \"\$(ip netns pids $SECOND_HOST_NS)\" ]" && break
      # shellcheck disable=SC2046
      kill -KILL $(ip netns pids "$SECOND_HOST_NS" 2>/dev/null) 2>/dev/null || true
    done
    ip netns del "$SECOND_HOST_NS" 2>/dev/null || true
  fi
  ip link del "$_SH_VETH" 2>/dev/null || true
  # The mounts were private to the namespace and went with its last process; the files stay until
  # here (QEMU ran as libvirt-qemu, so root removes them).
  if [ -n "$_SH_DIR" ] && [ -d "$_SH_DIR" ]; then
    rm -rf "$_SH_DIR"
  fi
  _SH_DIR=
}

# Run directly: `second_host.sh DIR` brings the host up, prints its URI and waits until stopped.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -eu
  trap second_host_down EXIT
  trap 'exit 130' INT TERM
  second_host_up "${1:?usage: second_host.sh DIR}"
  echo "$SECOND_HOST_URI"
  sleep infinity &
  wait
fi
