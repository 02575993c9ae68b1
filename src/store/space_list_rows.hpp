// The rows of GET /api/v1/spaces: each space with its owner's and its template's names joined
// in, read in creation order, and the space_changes journal (kept by triggers: a row per space
// made, changed or deleted, with a growing sequence number) that lets a cached list catch up
// on what changed alone. The API writes the JSON; this is only the reading.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

#include "store/repository.hpp"

namespace bowline::store {

// Views into the row being read: valid only during the callback that is given it.
struct SpaceListRow {
  std::int64_t applied_revision = 0;
  std::int64_t created_at = 0;
  std::string_view desired_state, domain, error, id;
  std::optional<std::string_view> ip;  // bowline's choice (bridged)
  std::string_view name, node, owner, state, template_name;
  std::int64_t template_revision = 0;
  std::int64_t updated_at = 0;
  std::optional<std::int64_t> owner_id;
};

class SpaceListRows : public Repository {
 public:
  using Repository::Repository;

  // Every space (`owner_id` nullopt) or one owner's, in creation order.
  void each(std::optional<std::int64_t> owner_id,
            const std::function<void(const SpaceListRow&)>& visit);
  // The journal's newest sequence number (0 when empty).
  std::int64_t newest_change();
  // Each space changed after sequence number `seq` (-1: all there are), by the spaces table's
  // rowid: its row now, or nullptr when it is gone.
  void changes_since(std::int64_t seq,
                     const std::function<void(std::int64_t rowid, const SpaceListRow*)>& visit);
};

}  // namespace bowline::store
