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
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

#include "store/store.hpp"

namespace bowline::api {

// Every space's JSON object, kept between lists and brought up to date from the store's
// space_changes journal (kept by triggers: a row per space made, changed or deleted, with a
// growing sequence number). A list after no writes costs one indexed read; after a few
// writes, it re-reads those spaces alone; 10,000 objects are built once, not per list. Both
// the admin's list of everyone and a user's own are cut from it.
//
// Each object's "address" is its space's IP when bowline chose one (bridged), else, while it
// runs, what `addresses` (the engine's learned_addresses: the nodes' DHCP leases) says, else
// null.
class SpacesListCache {
 public:
  using Addresses = std::map<std::string, std::string>;  // space id -> IPv4 address
  // JSON text by space id, written into those spaces' objects as "stats" (what running
  // spaces use, from the stats sampler); a new map means new figures.
  using StatsTexts = std::unordered_map<std::string, std::string>;

  // `owner_id` nullopt: every space; else that owner's and those whose ids are in `shared`
  // (shared with them). In creation order. Shared, not copied: a response writes it in place
  // (3 MB at 10,000 spaces). The list of every space is kept while the store, `addresses` and
  // `stats` (compared by pointer) stay the same.
  std::shared_ptr<const std::string> list(store::Store& store, std::optional<std::int64_t> owner_id,
                                          std::shared_ptr<const Addresses> addresses = nullptr,
                                          std::shared_ptr<const StatsTexts> stats = nullptr,
                                          const std::set<std::string>& shared = {});

 private:
  struct Entry {
    std::optional<std::int64_t> owner;
    std::string id;
    std::optional<std::string> ip;  // bowline's choice: the address
    bool running = false;           // else the learned address, while it runs
    std::string json;               // the object from its first key after "address" on, without "{"
  };
  void catch_up(store::Store& store);
  void append_entry(std::string& out, const Entry& entry, const Addresses* addresses,
                    const StatsTexts* stats) const;

  std::mutex mutex_;
  std::optional<std::int64_t> seq_;       // the journal's last sequence number we have seen
  std::map<std::int64_t, Entry> spaces_;  // by the spaces table's rowid: creation order
  // The list of every space (valid while `all_valid_`). Rebuilt in the same buffer when no
  // response still holds it: a fresh 3 MB allocation each time costs page faults, which
  // under load took longer than the building.
  std::shared_ptr<std::string> all_;
  bool all_valid_ = false;
  std::shared_ptr<const Addresses> all_addresses_;  // what all_ was built with
  std::shared_ptr<const StatsTexts> all_stats_;     // the figures `all_` was made with
};

// The same list, built from one query without any cache (for comparison and benchmarks).
std::string spaces_list_json(store::Store& store, std::optional<std::int64_t> owner_id,
                             const SpacesListCache::Addresses& addresses = {});

// Appends `text` as a JSON string (quoted, escaped; invalid UTF-8 becomes U+FFFD).
void append_json_string(std::string& out, std::string_view text);

}  // namespace bowline::api
