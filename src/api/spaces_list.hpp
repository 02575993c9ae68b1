// GET /api/v1/spaces, fast: the JSON text of a list of spaces, written straight from SQLite rows
// with the owner's and the template's names joined in. Building an nlohmann::json object per
// space costs ~10 µs each, too much for a list of 10,000 (the target is a p99 under 20 ms);
// the objects are the same as space_json() makes (a test holds the two together).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "store/store.hpp"

namespace bowline::api {

// Every space's JSON object, kept between lists and brought up to date from the store's
// space_changes journal (kept by triggers: a row per space made, changed or deleted, with a
// growing sequence number). A list after no writes costs one indexed read; after a few
// writes, it re-reads those spaces alone; 10,000 objects are built once, not per list. Both
// the admin's list of everyone and a user's own are cut from it.
class SpacesListCache {
 public:
  // `owner_id` nullopt: every space. In creation order. Shared, not copied: a response
  // writes it in place (3 MB at 10,000 spaces).
  std::shared_ptr<const std::string> list(store::Store& store,
                                          std::optional<std::int64_t> owner_id);

 private:
  struct Entry {
    std::optional<std::int64_t> owner;
    std::string json;
  };
  void catch_up(store::Store& store);

  std::mutex mutex_;
  std::optional<std::int64_t> seq_;       // the journal's last sequence number we have seen
  std::map<std::int64_t, Entry> spaces_;  // by the spaces table's rowid: creation order
  // The list of every space (valid while `all_valid_`). Rebuilt in the same buffer when no
  // response still holds it: a fresh 3 MB allocation each time costs page faults, which
  // under load took longer than the building.
  std::shared_ptr<std::string> all_;
  bool all_valid_ = false;
};

// The same list, built from one query without any cache (for comparison and benchmarks).
std::string spaces_list_json(store::Store& store, std::optional<std::int64_t> owner_id);

// Appends `text` as a JSON string (quoted, escaped; invalid UTF-8 becomes U+FFFD).
void append_json_string(std::string& out, std::string_view text);

}  // namespace bowline::api
