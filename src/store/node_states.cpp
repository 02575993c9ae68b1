#include "store/node_states.hpp"

namespace bowline::store {

void NodeStateRepository::set_cordoned(std::string_view node, bool cordoned,
                                       std::string_view reason) {
  auto guard = db_.lock();
  db_.cached(
         "INSERT INTO node_states (name, cordoned, reason, updated_at) VALUES (?, ?, ?, ?) "
         "ON CONFLICT (name) DO UPDATE SET cordoned = excluded.cordoned, "
         "reason = excluded.reason, updated_at = excluded.updated_at")
      ->bind_all(node, cordoned ? 1 : 0, cordoned ? reason : std::string_view(), now())
      .run();
}

std::map<std::string, std::string> NodeStateRepository::cordoned() {
  auto guard = db_.lock();
  auto select = db_.cached("SELECT name, reason FROM node_states WHERE cordoned = 1");
  std::map<std::string, std::string> out;
  while (select->step()) out[select->column_text(0)] = select->column_text(1);
  return out;
}

}  // namespace bowline::store
