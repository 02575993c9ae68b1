#include "engine/usage_memo.hpp"

#include <functional>

namespace bowline::engine {

std::string UsageMemo::key(const store::Space& space, const store::Template& tmpl,
                           const std::optional<store::User>& owner) {
  // NUL between fields: none of them holds one, so two different inputs never join alike.
  std::string k;
  const auto add = [&k](const std::string& field) {
    k += field;
    k += '\0';
  };
  add(space.id);
  add(space.name);
  add(space.domain_name);
  add(space.ip.value_or(""));
  add(std::to_string(tmpl.id));
  add(tmpl.name);
  add(std::to_string(tmpl.revision));
  add(std::to_string(tmpl.yaml.size()));
  add(std::to_string(std::hash<std::string>{}(tmpl.yaml)));
  if (owner) {
    add(std::to_string(owner->id));
    add(owner->username);
    add(owner->email);
    add(owner->timezone);
  }
  return k;
}

std::optional<Usage> UsageMemo::find(const std::string& key) const {
  std::lock_guard lock(mutex_);
  const auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

void UsageMemo::put(const std::string& key, const Usage& usage) {
  std::lock_guard lock(mutex_);
  if (entries_.size() >= capacity_) entries_.clear();
  entries_[key] = usage;
}

}  // namespace bowline::engine
