// Who may open which preview host from a browser. The UI's origin gives a logged-in user a
// one-use code for one host (a minute, bound to the state cookie that host set first, so that
// nobody can log a browser in as themselves); the host trades it for a pass, its own cookie.
// A pass opens that host only, for as long as the UI session it came from lives. Kept in
// memory: after a restart browsers go through the UI once more, which their session answers
// without a prompt.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "util/clock.hpp"

namespace bowline::api {

class PreviewPasses {
 public:
  struct Grant {
    std::int64_t user_id = 0;
    std::string host;            // the preview host, lower case
    std::string session_sha256;  // the UI session it came from
  };

  explicit PreviewPasses(const util::Clock& clock,
                         std::chrono::milliseconds code_life = std::chrono::minutes(1),
                         std::chrono::milliseconds pass_life = std::chrono::hours(12));

  // A code for `grant`, good once, with the same `state`.
  std::string issue(Grant grant, std::string state);
  // The pass for a code presented at `host` with the browser's `state`; nullopt when the code
  // is unknown, used, too old, or for another host or state.
  std::optional<std::string> redeem(std::string_view code, std::string_view host,
                                    std::string_view state);
  // The grant of a pass at `host`; nullopt when it is unknown, too old or another host's.
  std::optional<Grant> find(std::string_view pass, std::string_view host);
  // Every pass of a UI session goes (its logout).
  void forget_session(std::string_view session_sha256);

 private:
  struct Entry {
    Grant grant;
    std::string state;  // codes only
    std::int64_t expires_at = 0;
  };
  void prune(std::int64_t now);

  const util::Clock& clock_;
  const std::int64_t code_life_ms_, pass_life_ms_;
  std::mutex mutex_;
  std::map<std::string, Entry> codes_, passes_;  // by the token's SHA-256
  std::int64_t next_prune_ = 0;
};

}  // namespace bowline::api
