// The engine's side of quotas (quota.hpp): what each owner holds, from their spaces' specs,
// and the check a create or a claim runs inside the transaction that writes the space.
#include "engine/engine.hpp"

namespace bowline::engine {

Limits Engine::limits_of(const store::User& user) const {
  return effective_limits(user.quota, settings_.default_quota);
}

// A space whose template no longer expands still holds its place and its disk: it counts as
// a space, with no size (it cannot start until its template is fixed).
Usage Engine::space_usage(const store::Space& space) {
  try {
    return usage_of(space_spec(space));
  } catch (const EngineError&) {
    return Usage{1, 0, 0, 0};
  }
}

Usage Engine::usage_of_owner(std::int64_t owner_id) {
  Usage total;
  for (const auto& space : store_.spaces().list_for_owner(owner_id)) total += space_usage(space);
  return total;
}

std::map<std::int64_t, Usage> Engine::usage_by_owner() {
  std::map<std::int64_t, Usage> out;
  for (const auto& space : store_.spaces().list())
    if (space.owner_id) out[*space.owner_id] += space_usage(space);
  return out;
}

void Engine::check_quota(std::int64_t owner_id, const std::string& space_id,
                         const spec::Spec& spec) {
  // Read here, in the caller's transaction: a quota set a moment ago counts.
  const auto owner = store_.users().get(owner_id);
  if (!owner) throw EngineError(EngineError::Kind::NotFound, "no such user");
  Usage used;
  for (const auto& space : store_.spaces().list_for_owner(owner_id))
    if (space.id != space_id) used += space_usage(space);
  if (const auto why = quota_refusal(owner->username, used, usage_of(spec), limits_of(*owner)))
    throw EngineError(EngineError::Kind::Forbidden, *why);
}

}  // namespace bowline::engine
