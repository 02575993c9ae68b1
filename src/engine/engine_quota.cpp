// The engine's side of quotas (quota.hpp): what each owner holds, from their spaces' specs,
// and the check a create or a claim runs inside the transaction that writes the space.
#include "engine/engine.hpp"

namespace bowline::engine {

Limits Engine::limits_of(const store::User& user) const {
  return effective_limits(user.quota, settings_.default_quota);
}

std::map<std::int64_t, Usage> Engine::count_usage(const std::vector<store::Space>& spaces,
                                                  store::TemplateRepository& templates,
                                                  store::UserRepository& users) {
  std::map<std::int64_t, std::optional<store::Template>> tmpls;
  std::map<std::int64_t, std::optional<store::User>> owners;
  std::map<std::int64_t, Usage> out;
  for (const auto& space : spaces) {
    if (!space.owner_id) continue;  // an unclaimed pool member is nobody's
    auto t = tmpls.find(space.template_id);
    if (t == tmpls.end())
      t = tmpls.emplace(space.template_id, templates.get(space.template_id)).first;
    auto o = owners.find(*space.owner_id);
    if (o == owners.end()) o = owners.emplace(*space.owner_id, users.get(*space.owner_id)).first;
    // A space whose template is gone or no longer expands still holds its place and its disk:
    // it counts as a space, with no size (it cannot start until its template is fixed).
    Usage usage{1, 0, 0, 0};
    try {
      if (t->second) usage = usage_of(expand_spec(space, *t->second, o->second));
    } catch (const std::exception&) {
    }
    out[*space.owner_id] += usage;
  }
  return out;
}

Usage Engine::usage_of_owner(std::int64_t owner_id) {
  return count_usage(store_.read_spaces().list_for_owner(owner_id), store_.read_templates(),
                     store_.read_users())[owner_id];
}

std::map<std::int64_t, Usage> Engine::usage_by_owner() {
  return count_usage(store_.read_spaces().list(), store_.read_templates(), store_.read_users());
}

void Engine::check_quota(std::int64_t owner_id, const std::string& space_id,
                         const spec::Spec& spec) {
  // Read here, in the caller's transaction: a quota set a moment ago counts, and so does a
  // space another create wrote just before.
  const auto owner = store_.users().get(owner_id);
  if (!owner) throw EngineError(EngineError::Kind::NotFound, "no such user");
  auto others = store_.spaces().list_for_owner(owner_id);
  std::erase_if(others, [&](const store::Space& s) { return s.id == space_id; });
  const auto used = count_usage(others, store_.templates(), store_.users())[owner_id];
  if (const auto why = quota_refusal(owner->username, used, usage_of(spec), limits_of(*owner)))
    throw EngineError(EngineError::Kind::Forbidden, *why);
}

}  // namespace bowline::engine
