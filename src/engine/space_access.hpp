// Opening what a running space offers people, for the API's bridges: its serial console, its
// VNC display, its guest's TCP ports and a shell over SSH. The Engine implements it for the spaces
// of its nodes, by space id (never by a domain name, which another space may take once this one is
// gone); tests give the API a fake.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "util/byte_stream.hpp"

namespace bowline::engine {

class SpaceAccess {
 public:
  virtual ~SpaceAccess() = default;
  // The space's serial console, taken over from any other client (a stale stream of ours after
  // a libvirtd reconnect, a `virsh console` left open). nullptr when the space no longer exists.
  // Throws (EngineError, HypervisorError) when it cannot be opened now.
  virtual std::unique_ptr<util::ByteStream> open_console(const std::string& space_id) = 0;
  // A connected socket to the space's display (its VNC server, no password asked), for the
  // caller to own and close. Throws when it cannot be opened.
  virtual int open_display(const std::string& space_id) = 0;
  // A connected TCP socket to `port` of the space's guest, for the caller to own and close.
  // Throws when it cannot be opened (no address yet, refused, unreachable).
  virtual int open_port(const std::string& space_id, std::uint16_t port) = 0;
  // A shell as the space's owner over SSH (port 22), logged in with the space's terminal key
  // and the guest's host key pinned, with a terminal of `cols` x `rows`. Throws when it cannot
  // be opened (no address, sshd not up, the key not in the guest yet): the message says which.
  virtual std::unique_ptr<util::TerminalStream> open_terminal(const std::string& space_id,
                                                              unsigned cols, unsigned rows) = 0;

  // A suspended space is resumed before anything is opened: blocks until it runs again (or
  // throws saying why it cannot). `why` goes into its event ("console", "tunnel to port 22").
  // Nothing for a space that is not suspended.
  virtual void wake(const std::string& space_id, const std::string& why) {
    (void)space_id;
    (void)why;
  }
  // While the returned handle lives, the space is in use and is never suspended for being
  // idle (the API holds one for every open console, display, tunnel and terminal).
  virtual std::shared_ptr<void> hold(const std::string& space_id) {
    (void)space_id;
    return nullptr;
  }
};

}  // namespace bowline::engine
