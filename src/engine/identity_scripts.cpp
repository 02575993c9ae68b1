#include "engine/identity_scripts.hpp"

namespace bowline::engine {

// Values reach these programs as arguments (@ARGV, $1...), so no value is ever program text.

const char* const kRenameAccountPerl = R"perl(use strict;
use warnings;
my ($root, $user, $host, $old, $keys, $hash) = @ARGV;
$SIG{__DIE__} = sub { print STDERR $_[0]; exit 1; };  # never 3, whatever errno says
my $live = $root eq '/';
sub at { return $live ? $_[0] : $root . $_[0]; }
sub slurp {
  my ($p) = @_;
  open(my $h, '<', at($p)) or die "cannot read $p: $!\n";
  local $/;
  my $c = <$h>;
  close($h);
  return defined $c ? $c : '';
}
# Replaces a file whole (rename(2): never half written), keeping the old one's owner and mode.
sub put {
  my ($p, $content, $mode, $uid, $gid) = @_;
  my $target = at($p);
  my $tmp = "$target.bowline-new";
  my @st = stat($target);
  ($mode, $uid, $gid) = ($st[2] & 07777, $st[4], $st[5]) if @st;
  open(my $h, '>', $tmp) or die "cannot write $p: $!\n";
  (print $h $content) && close($h) or die "cannot write $p: $!\n";
  chmod($mode, $tmp) && chown($uid, $gid, $tmp) && rename($tmp, $target)
    or die "cannot replace $p: $!\n";
}
# Applies EDIT to the fields of each name:...: line of FILE.
sub edit {
  my ($p, $fn) = @_;
  my @lines = split(/\n/, slurp($p), -1);
  for (@lines) {
    next if $_ eq '';
    my @f = split(/:/, $_, -1);
    $fn->(\@f);
    $_ = join(':', @f);
  }
  put($p, join("\n", @lines));
}
sub rename_in_list { return join(',', map { $_ eq $old ? $user : $_ } split(/,/, $_[0], -1)); }

my ($uid, $gid, $old_home, $home);
for (split(/\n/, slurp('/etc/passwd'))) {
  my @f = split(/:/, $_, -1);
  exit 3 if $f[0] eq $user;
  ($uid, $gid, $old_home) = @f[2, 3, 5] if $f[0] eq $old;
}
exit 3 unless defined $uid;
($home = $old_home) =~ s{/\Q$old\E$}{/$user};

edit('/etc/shadow', sub { @{$_[0]}[0, 1] = ($user, $hash ne '' ? $hash : '!') if $_[0][0] eq $old; });
edit('/etc/group', sub {
  my $f = shift;
  $f->[0] = $user if $f->[0] eq $old;
  $f->[3] = rename_in_list($f->[3]) if @$f > 3;
});
edit('/etc/gshadow', sub {
  my $f = shift;
  $f->[0] = $user if $f->[0] eq $old;
  $f->[$_] = rename_in_list($f->[$_]) for grep { $_ < @$f } 2, 3;
});
edit('/etc/passwd', sub { @{$_[0]}[0, 5, 6] = ($user, $home, '/bin/bash') if $_[0][0] eq $old; });

# sudo: the owner's rule, and none left for the old name.
opendir(my $d, at('/etc/sudoers.d')) or die "cannot list /etc/sudoers.d: $!\n";
for my $name (grep { !/[.~]/ } readdir($d)) {
  my $p = "/etc/sudoers.d/$name";
  my $c = slurp($p);
  put($p, $c) if $c =~ s/^\Q$old\E\s[^\n]*\n?//mg;
}
closedir($d);
put('/etc/sudoers.d/90-bowline-owner', "$user ALL=(ALL) NOPASSWD:ALL\n", 0440, 0, 0);

rename(at($old_home), at($home)) or die "cannot rename $old_home: $!\n"
  if $home ne $old_home && -d at($old_home) && !-e at($home);
unless (-d at("$home/.ssh")) {
  mkdir(at("$home/.ssh"), 0700) && chown($uid, $gid, at("$home/.ssh"))
    or die "cannot make $home/.ssh: $!\n";
}
put("$home/.ssh/authorized_keys", $keys, 0600, $uid, $gid);

if ($host ne '') {
  put('/etc/hostname', "$host\n", 0644, 0, 0);
  my $hosts = slurp('/etc/hosts');
  $hosts =~ s/^127\.0\.1\.1\s[^\n]*\n?//mg;
  $hosts .= "\n" if $hosts ne '' && $hosts !~ /\n$/;
  put('/etc/hosts', $hosts . "127.0.1.1 $host\n", 0644, 0, 0);
  if ($live) {
    open(my $h, '>', '/proc/sys/kernel/hostname') or die "cannot set the host name: $!\n";
    (print $h $host) && close($h) or die "cannot set the host name: $!\n";
  }
}
exit 0;
)perl";

// Mirrors the user cloud-init makes for the owner: bash, passwordless sudo, the
// keys, the password hash. Everything is one guest-exec with as few processes as the shell
// allows, because under emulation each exec costs tens of milliseconds and a claim is meant to
// take well under a second: the host name is written to /proc rather than through hostname(1)
// or hostnamectl (which wakes systemd-hostnamed over D-Bus: seconds on a busy guest), files are
// written by the shell, and the password is the hash the seed carries (chpasswd hashing in the
// guest took most of a second).
const char* const kMakeAccountShell = R"sh(set -e
user=$1 host=$2 old=$3 keys=$4 hash=$5
if ! home=$(getent passwd "$user"); then
  if [ -n "$hash" ]; then useradd -m -s /bin/bash -p "$hash" "$user"
  else useradd -m -s /bin/bash "$user"; fi
  home=$(getent passwd "$user")
elif [ -n "$hash" ]; then
  usermod -p "$hash" "$user"
fi
home=${home#*:*:*:*:*:}; home=${home%%:*}
umask 0227
printf '%s ALL=(ALL) NOPASSWD:ALL\n' "$user" > /etc/sudoers.d/90-bowline-owner
umask 0077
mkdir -p "$home/.ssh"
printf '%s' "$keys" > "$home/.ssh/authorized_keys"
chown -R "$user:" "$home/.ssh"
if [ -n "$host" ]; then
  echo "$host" > /etc/hostname
  echo "$host" > /proc/sys/kernel/hostname
  sed -i -e '/^127\.0\.1\.1[[:space:]]/d' -e "\$a 127.0.1.1 $host" /etc/hosts
fi
# The previous user goes in the background: the owner must not wait for it (userdel alone took
# about a second on an emulated guest), and guest-exec ends when our output pipes close.
if [ -n "$old" ] && [ "$old" != "$user" ] && id -u "$old" >/dev/null 2>&1; then
  setsid sh -c '
    pkill -KILL -u "$1" 2>/dev/null
    userdel -r "$1" 2>/dev/null || userdel "$1"
    for f in /etc/sudoers.d/*; do [ -f "$f" ] && sed -i "/^$1[[:space:]]/d" "$f"; done
  ' bowline-cleanup "$old" </dev/null >/dev/null 2>&1 &
fi
)sh";

}  // namespace bowline::engine
