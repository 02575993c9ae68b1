#include "engine/idle_watch.hpp"

#include <set>

namespace bowline::engine {

std::shared_ptr<void> IdleWatch::hold(const std::string& space_id) {
  {
    std::lock_guard lock(s_->mutex);
    ++s_->holders[space_id];
    s_->busy_at[space_id] = timer_.now();
  }
  // Nothing is pointed at: the deleter lets go when the last copy does. Idle time counts from
  // the moment the last holder closed; the next round stamps it when the watch is gone.
  std::weak_ptr<State> weak = s_;
  util::Timer* timer = &timer_;
  return std::shared_ptr<void>(nullptr, [weak, timer, space_id](void*) {
    const auto s = weak.lock();
    if (!s) return;
    std::lock_guard lock(s->mutex);
    if (--s->holders[space_id] <= 0) s->holders.erase(space_id);
    s->busy_at[space_id] = timer->now();
  });
}

void IdleWatch::touch(const std::string& space_id) {
  std::lock_guard lock(s_->mutex);
  s_->busy_at[space_id] = timer_.now();
}

std::vector<std::string> IdleWatch::due(const std::vector<IdleCandidate>& running,
                                        double cpu_threshold) {
  const auto now = timer_.now();
  std::vector<std::string> out;
  std::set<std::string> seen;
  std::lock_guard lock(s_->mutex);
  for (const auto& c : running) {
    seen.insert(c.space_id);
    const bool busy =
        s_->holders.count(c.space_id) > 0 || !c.cpu_percent || *c.cpu_percent >= cpu_threshold;
    auto [it, fresh] = s_->busy_at.try_emplace(c.space_id, now);
    if (busy || fresh) {
      it->second = now;
      continue;
    }
    if (c.after.count() > 0 && now - it->second >= c.after) {
      out.push_back(c.space_id);
      it->second = now;
    }
  }
  for (auto it = s_->busy_at.begin(); it != s_->busy_at.end();)
    it = seen.count(it->first) || s_->holders.count(it->first) ? std::next(it)
                                                               : s_->busy_at.erase(it);
  return out;
}

std::optional<util::Timer::TimePoint> IdleWatch::idle_since(const std::string& space_id) const {
  std::lock_guard lock(s_->mutex);
  if (s_->holders.count(space_id)) return std::nullopt;
  const auto it = s_->busy_at.find(space_id);
  if (it == s_->busy_at.end()) return std::nullopt;
  return it->second;
}

int IdleWatch::holders(const std::string& space_id) const {
  std::lock_guard lock(s_->mutex);
  const auto it = s_->holders.find(space_id);
  return it == s_->holders.end() ? 0 : it->second;
}

}  // namespace bowline::engine
