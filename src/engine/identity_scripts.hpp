// The programs a claim runs inside a pool member (through the guest agent) to make it its new
// owner's. Both take their values as arguments, never spliced into the text.
#pragma once

namespace bowline::engine {

// perl: the fast way. Renames the member's placeholder account (the `pool` user cloud-init
// made) to the owner in place: passwd, shadow, group and gshadow entries, the home directory,
// sudo rule, keys, password hash, host name. One process and no account tools: under emulation
// each process costs ~100 ms and useradd alone ~400 ms, and a claim should take under a second.
// The account keeps its uid, so nothing needs a chown. Each file is replaced by rename(2),
// keeping its owner and mode.
//   perl -e SCRIPT ROOT USER HOST OLD KEYS HASH
// ROOT is "/" in a guest (a directory in tests; /proc is then left alone). Exit 0: done;
// exit 3: nothing changed, because USER exists already or OLD does not (use the shell way).
extern const char* const kRenameAccountPerl;

// sh: the general way, for images without perl or without the placeholder account: useradd,
// the keys, sudo, the host name; the old account removed in the background.
//   sh -c SCRIPT bowline-claim USER HOST OLD KEYS HASH
extern const char* const kMakeAccountShell;

}  // namespace bowline::engine
