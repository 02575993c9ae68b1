#include "api/preview_passes.hpp"

#include "api/auth.hpp"
#include "api/web_session.hpp"

namespace bowline::api {

PreviewPasses::PreviewPasses(const util::Clock& clock, std::chrono::milliseconds code_life,
                             std::chrono::milliseconds pass_life)
    : clock_(clock), code_life_ms_(code_life.count()), pass_life_ms_(pass_life.count()) {}

std::string PreviewPasses::issue(Grant grant, std::string state) {
  const auto code = new_token();
  const auto now = clock_.now_unix_ms();
  std::lock_guard lock(mutex_);
  prune(now);
  codes_[token_hash(code)] = Entry{std::move(grant), std::move(state), now + code_life_ms_};
  return code;
}

std::optional<std::string> PreviewPasses::redeem(std::string_view code, std::string_view host,
                                                 std::string_view state) {
  const auto now = clock_.now_unix_ms();
  std::lock_guard lock(mutex_);
  const auto it = codes_.find(token_hash(code));
  if (it == codes_.end()) return std::nullopt;
  const auto entry = std::move(it->second);
  codes_.erase(it);  // one use, whatever the outcome
  if (entry.expires_at <= now || entry.grant.host != host || state.empty() ||
      !same_secret(entry.state, state))
    return std::nullopt;
  const auto pass = new_token();
  passes_[token_hash(pass)] = Entry{entry.grant, {}, now + pass_life_ms_};
  return pass;
}

std::optional<PreviewPasses::Grant> PreviewPasses::find(std::string_view pass,
                                                        std::string_view host) {
  if (pass.empty()) return std::nullopt;
  const auto now = clock_.now_unix_ms();
  std::lock_guard lock(mutex_);
  const auto it = passes_.find(token_hash(pass));
  if (it == passes_.end() || it->second.expires_at <= now || it->second.grant.host != host)
    return std::nullopt;
  return it->second.grant;
}

void PreviewPasses::forget_session(std::string_view session_sha256) {
  std::lock_guard lock(mutex_);
  std::erase_if(passes_,
                [&](const auto& p) { return p.second.grant.session_sha256 == session_sha256; });
}

// At most once a minute: what has expired goes.
void PreviewPasses::prune(std::int64_t now) {
  if (now < next_prune_) return;
  next_prune_ = now + 60'000;
  std::erase_if(codes_, [&](const auto& c) { return c.second.expires_at <= now; });
  std::erase_if(passes_, [&](const auto& p) { return p.second.expires_at <= now; });
}

}  // namespace bowline::api
