// The program bowline's seed runs at every boot (cloud-init's bootcmd) to make the guest's
// owner what the seed says now: cloud-init's own users, ssh and write_files modules run once
// per instance, and a space keeps its instance-id for life (a new one would also make new SSH
// host keys), so a changed key, password, environment or time zone would otherwise never arrive.
//   sh -c SCRIPT bowline-owner USER KEYS HASH ENVIRONMENT TIMEZONE RESOLV IDENTITY NAMES PAM
//   SYSTEMD
// Values reach it as arguments, never as program text. KEYS: one authorized key per line;
// HASH: crypt(3) hash or empty (password locked); ENVIRONMENT: the whole profile.d script or
// empty (no file); TIMEZONE: e.g. Europe/Berlin or empty (the image's); RESOLV: the whole
// resolv.conf for a static address, or empty; IDENTITY: the space's for life (a clone's is
// another); NAMES, PAM, SYSTEMD: the environment's names, /etc/environment block and systemd
// drop-in (guest/environment_files.hpp), or empty.
#pragma once

namespace bowline::guest {

// What it does, idempotently:
//   - a new identity on a disk that knew another (a clone): a new /etc/machine-id, so the
//     clone's DHCP client id, journal and D-Bus identity are its own;
//   - an account bowline gave another user before (a clone for someone else, a handed-over
//     space): the keys bowline gave it are removed and its password locked;
//   - the account: made when missing (useradd -m, or busybox's adduser; bash where the image
//     has it): a pool member claimed with a reboot, or the first boot, before cloud-init's users
//     module, which then finds it made (an image with neither tool leaves it to that module);
//     its password hash set (chpasswd -e) or locked; passwordless sudo through
//     /etc/sudoers.d/90-bowline-owner;
//   - authorized_keys: the keys bowline gave at the previous boot (kept root-only in
//     /var/lib/bowline/owner-keys) are replaced by the current ones; keys the owner added by
//     hand stay;
//   - /etc/profile.d/bowline-environment.sh: written (0640, group of the owner: readable by
//     root and the owner only, and /etc/profile skips files it cannot read; root's group until
//     the account exists), or removed;
//   - the environment for every session (a bowline block in /etc/environment, for pam_env;
//     0640, the owner's group, while it holds values) and every service (systemd's
//     DefaultEnvironment drop-in, 0600, and the running manager's environment);
//   - the time zone (/etc/localtime and /etc/timezone) when one is given and the image has it;
//   - /etc/resolv.conf (static addresses), only where nothing else manages it: not a symlink
//     (systemd-resolved, resolvconf), and missing or written by bowline before.
// The host name is cloud-init's own per-boot business (update_hostname, update_etc_hosts).
extern const char* const kOwnerBootScript;

}  // namespace bowline::guest
