// Handing a user's spaces to another user (bowline user delete USER --transfer-to OTHER).
// Only the store changes: the domain, its disks and its directory are named by the domain
// name, which stays, and the guest gets the new owner's account at its next start (the
// "account" part of the pending changes says so meanwhile).
#include "engine/engine.hpp"

namespace bowline::engine {
namespace {

std::string listed(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace

std::vector<std::string> Engine::transfer_spaces(std::int64_t from_id, std::int64_t to_id) {
  auto transaction = store_.transaction();
  const auto from = store_.users().get(from_id);
  const auto to = store_.users().get(to_id);
  if (!from || !to) throw EngineError(EngineError::Kind::NotFound, "no such user");
  if (from_id == to_id)
    throw EngineError(EngineError::Kind::Invalid, "the spaces would go to their own owner");
  auto moving = store_.spaces().list_for_owner(from_id);
  std::vector<std::string> names, clashes, busy;
  for (const auto& space : moving) {
    names.push_back(space.name);
    if (store_.spaces().find_by_name(to_id, space.name)) clashes.push_back(space.name);
    if (store::operation_owns(space.state))
      busy.push_back(space.name + " (" + store::to_string(space.state) + ")");
  }
  if (!clashes.empty())
    throw EngineError(EngineError::Kind::Conflict, to->username + " already has spaces named " +
                                                       listed(clashes) +
                                                       ": rename or delete one side first");
  if (!busy.empty())
    throw EngineError(EngineError::Kind::Conflict,
                      "spaces in an operation cannot change hands: " + listed(busy) +
                          "; try again when it is done");
  // The quota counts what the spaces are as the new owner's (a template may size by owner).
  auto handed = moving;
  for (auto& space : handed) space.owner_id = to_id;
  const auto used = count_usage(store_.spaces().list_for_owner(to_id), store_.templates(),
                                store_.users(), snapshot_rows_)[to_id];
  const auto asked = count_usage(handed, store_.templates(), store_.users(), snapshot_rows_)[to_id];
  if (const auto why = quota_refusal(to->username, used, asked, limits_of(*to)))
    throw EngineError(EngineError::Kind::Forbidden, *why);
  for (const auto& space : moving) store_.spaces().set_owner(space.id, to_id);
  transaction.commit();
  return names;
}

}  // namespace bowline::engine
