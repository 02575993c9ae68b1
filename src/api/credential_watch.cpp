// What stays open after its request was answered (an event stream, an export's or an import's
// WebSocket) stays open only while the request's credential is still good: a revoked or expired
// token, a logout, a disabled or deleted user, or the route's own check failing ends it within a
// second (SocketWatch).
#include "api/api.hpp"

namespace bowline::api {

std::uint64_t Api::watch_credential(const Request& request, SocketCheck check,
                                    std::function<void()> end) {
  auto saved = std::make_shared<Request>(request);
  saved->body.clear();
  return sockets_->add(
      [this, saved, check = std::move(check)] {
        const auto caller = caller_of(*saved);
        if (!caller) return false;
        check(*caller, *saved);  // throws when refused now
        return true;
      },
      std::move(end));
}

void Api::watch_upgrade(Upgrade& upgrade, const Request& request, SocketCheck check) {
  // open() and close() run one after the other (Upgrade): the id needs no lock.
  auto watch = std::make_shared<std::uint64_t>(0);
  upgrade.open = [this, watch, request, check = std::move(check),
                  open = std::move(upgrade.open)](std::shared_ptr<SocketPeer> peer) {
    *watch = watch_credential(request, check, [peer] { peer->close(); });
    if (open) open(std::move(peer));
  };
  upgrade.close = [this, watch, close = std::move(upgrade.close)] {
    sockets_->remove(*watch);
    if (close) close();
  };
}

}  // namespace bowline::api
