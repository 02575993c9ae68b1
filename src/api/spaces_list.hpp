// GET /api/v1/spaces, fast: the JSON text of a list of spaces straight from one query with the
// owner's and the template's names joined in. Building an nlohmann::json object per space costs
// ~10 µs each, too much for a list of 10,000 (the target is a p99 under 20 ms); the objects
// are the same as space_json() makes (a test holds the two together).
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "store/store.hpp"

namespace bowline::api {

// The last list of every space, kept while the database has not changed: SQLite's
// data_version on the reader connection moves with every commit of the writer, so an idle
// server answers a second GET /spaces?all=1 without building 10,000 objects again.
struct SpacesListCache {
  std::mutex mutex;
  std::optional<std::int64_t> data_version;
  std::string text;
};

// `owner_id` nullopt: every space (through `cache` when given). In creation order.
std::string spaces_list_json(store::Store& store, std::optional<std::int64_t> owner_id,
                             SpacesListCache* cache = nullptr);

// Appends `text` as a JSON string (quoted, escaped; invalid UTF-8 becomes U+FFFD).
void append_json_string(std::string& out, std::string_view text);

}  // namespace bowline::api
