// What each space counts for in a quota, remembered. Counting a user's use expands every
// space's template (a YAML parse each), and a create counts inside the transaction that writes
// the space: without this, the thousandth space of a user costs a thousand parses while every
// other writer waits, and creates slow down as a user's spaces grow. The key holds everything
// the expansion reads (the space's values, the template's text, the owner's fields), so an
// entry is never stale: a changed input is another key. Bounded: cleared when full.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "engine/quota.hpp"
#include "store/records.hpp"

namespace bowline::engine {

class UsageMemo {
 public:
  explicit UsageMemo(std::size_t capacity = 50000) : capacity_(capacity) {}

  // The key of `space` expanded from `tmpl` for `owner`.
  static std::string key(const store::Space& space, const store::Template& tmpl,
                         const std::optional<store::User>& owner);

  std::optional<Usage> find(const std::string& key) const;
  void put(const std::string& key, const Usage& usage);

 private:
  std::size_t capacity_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Usage> entries_;
};

}  // namespace bowline::engine
