#include "guest/owner_boot_script.hpp"

namespace bowline::guest {

// POSIX sh with the tools every image has: glibc's (useradd, chpasswd) or busybox's (adduser,
// chpasswd), so Alpine's cloud images and the tiny test guest run it as Debian does.
const char* const kOwnerBootScript =
    R"sh(user=$1 keys=$2 hash=$3 environment=$4 timezone=$5 resolv=$6 instance=$7 names=$8
pam_env=$9 sd_env=${10}
state=/var/lib/bowline
umask 022
mkdir -p "$state" && chmod 0700 "$state"
# A disk another instance booted before (a clone) carries that machine's machine-id.
if [ -n "$instance" ]; then
  seen=$(cat "$state/instance-id" 2>/dev/null)
  fresh=$(tr -d '-' </proc/sys/kernel/random/uuid 2>/dev/null)
  if [ -n "$seen" ] && [ "$seen" != "$instance" ] && [ -s /etc/machine-id ] && [ -n "$fresh" ]; then
    # 32 random hex digits, as systemd writes them (its tools are not on every image).
    printf '%s\n' "$fresh" >/etc/machine-id
  fi
  printf '%s\n' "$instance" >"$state/instance-id"
fi
# The account bowline gave before, when it was another user's (a clone for someone else, a
# space handed over): the keys bowline gave it go and its password is locked; its files stay.
before=$(cat "$state/owner-user" 2>/dev/null)
if [ -n "$before" ] && [ "$before" != "$user" ]; then
  old=$(awk -F: -v u="$before" '$1 == u' /etc/passwd)
  if [ -n "$old" ]; then
    oak=$(echo "$old" | cut -d: -f6)/.ssh/authorized_keys
    if [ -f "$oak" ] && [ -f "$state/owner-keys" ]; then
      grep -vxF -f "$state/owner-keys" "$oak" >"$oak.bowline-new"
      chmod 0600 "$oak.bowline-new" && mv "$oak.bowline-new" "$oak"
    fi
    passwd -l "$before" >/dev/null 2>&1
  fi
fi
entry=$(awk -F: -v u="$user" '$1 == u' /etc/passwd)
if [ -z "$entry" ]; then
  shell=/bin/sh
  [ -x /bin/bash ] && shell=/bin/bash
  if command -v useradd >/dev/null 2>&1; then useradd -m -s "$shell" "$user"
  elif command -v adduser >/dev/null 2>&1; then adduser -D -s "$shell" "$user"
  fi # neither: cloud-init's users module makes the account after this
  entry=$(awk -F: -v u="$user" '$1 == u' /etc/passwd)
fi
gid=0
if [ -n "$entry" ]; then
  home=$(echo "$entry" | cut -d: -f6)
  gid=$(echo "$entry" | cut -d: -f4)
  if [ -n "$hash" ]; then printf '%s:%s\n' "$user" "$hash" | chpasswd -e
  else passwd -l "$user" >/dev/null 2>&1; fi
  mkdir -p /etc/sudoers.d
  printf '%s ALL=(ALL) NOPASSWD:ALL\n' "$user" >/etc/sudoers.d/90-bowline-owner
  chmod 0440 /etc/sudoers.d/90-bowline-owner
  mkdir -p "$home/.ssh"
  ak=$home/.ssh/authorized_keys
  touch "$ak"
  printf '%s\n' "$keys" | grep -v '^$' >"$state/owner-keys.new"
  # Drop the keys bowline gave before and the ones it gives now, then add the current ones.
  cat "$state/owner-keys" "$state/owner-keys.new" 2>/dev/null | grep -v '^$' >"$state/owner-keys.drop"
  grep -vxF -f "$state/owner-keys.drop" "$ak" >"$ak.bowline-new"
  cat "$state/owner-keys.new" >>"$ak.bowline-new"
  mv "$state/owner-keys.new" "$state/owner-keys"
  rm -f "$state/owner-keys.drop"
  chmod 0600 "$ak.bowline-new" && mv "$ak.bowline-new" "$ak"
  chmod 0700 "$home/.ssh"
  chown -R "$user:$gid" "$home/.ssh"
  printf '%s\n' "$user" >"$state/owner-user"
fi
env_file=/etc/profile.d/bowline-environment.sh
if [ -n "$environment" ]; then
  mkdir -p /etc/profile.d
  printf '%s' "$environment" >"$env_file.new"
  chown "0:$gid" "$env_file.new" && chmod 0640 "$env_file.new" && mv "$env_file.new" "$env_file"
else
  rm -f "$env_file"
fi
# Every session: pam_env reads /etc/environment for ssh (with or without a command), console
# logins, su and cron. bowline's block only; the file becomes the owner's and root's while it
# holds the space's values, which may be secrets.
pam=/etc/environment
if [ -n "$pam_env" ] || grep -q '^# bowline environment begin$' "$pam" 2>/dev/null; then
  if [ -f "$pam" ]; then
    sed '/^# bowline environment begin$/,/^# bowline environment end$/d' "$pam" >"$pam.bowline-new"
  else
    : >"$pam.bowline-new"
  fi
  if [ -n "$pam_env" ]; then
    printf '# bowline environment begin\n%s# bowline environment end\n' "$pam_env" >>"$pam.bowline-new"
    chown "0:$gid" "$pam.bowline-new" && chmod 0640 "$pam.bowline-new"
  else
    chmod 0644 "$pam.bowline-new"
  fi
  mv "$pam.bowline-new" "$pam"
fi
# Every service: systemd's DefaultEnvironment from the next boot on, and in the running manager
# now (this runs before most services start); names dropped since the last boot go.
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
  dropin=/etc/systemd/system.conf.d/bowline-environment.conf
  if [ -n "$sd_env" ]; then
    mkdir -p /etc/systemd/system.conf.d
    printf '%s' "$sd_env" >"$dropin.new" && chmod 0600 "$dropin.new" && mv "$dropin.new" "$dropin"
  else
    rm -f "$dropin"
  fi
  for gone in $(cat "$state/environment-names" 2>/dev/null); do
    case " $names " in *" $gone "*) ;; *) systemctl unset-environment "$gone" 2>/dev/null ;; esac
  done
  if [ -n "$names" ] && [ -f "$env_file" ]; then
    (. "$env_file" && systemctl import-environment $names) 2>/dev/null
  fi
  printf '%s\n' "$names" >"$state/environment-names"
fi
if [ -n "$timezone" ] && [ -e "/usr/share/zoneinfo/$timezone" ]; then
  ln -sf "/usr/share/zoneinfo/$timezone" /etc/localtime
  printf '%s\n' "$timezone" >/etc/timezone
fi
# resolv.conf: only a plain file that is missing or ours; a symlink (systemd-resolved,
# resolvconf) or another tool's file is theirs.
if [ -n "$resolv" ] && [ ! -L /etc/resolv.conf ] &&
  { [ ! -e /etc/resolv.conf ] || head -n 1 /etc/resolv.conf | grep -q '^# written by bowline'; }; then
  printf '%s' "$resolv" >/etc/resolv.conf.bowline-new && mv /etc/resolv.conf.bowline-new /etc/resolv.conf
fi
exit 0
)sh";

}  // namespace bowline::guest
