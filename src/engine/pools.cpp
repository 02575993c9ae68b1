// Pools: members of a NAT template kept booted and unowned on the default node, handed out by
// claims.
#include <algorithm>
#include <thread>

#include "engine/engine.hpp"
#include "engine/event_kinds.hpp"
#include "engine/identifiers.hpp"
#include "spec/loader.hpp"
#include "store/errors.hpp"

namespace bowline::engine {

using store::SpaceState;

const char* to_string(ClaimMethod method) {
  switch (method) {
    case ClaimMethod::Agent:
      return "agent";
    case ClaimMethod::Reboot:
      return "reboot";
    case ClaimMethod::Boot:
      return "boot";
  }
  return "?";
}

store::Pool Engine::create_pool(const std::string& name, const std::string& template_name,
                                std::int64_t size) {
  check_name("pool name", name);
  // 0 is a pool that is kept but makes no members (e.g. while its template is reworked).
  if (size < 0 || size > 100)
    throw EngineError(EngineError::Kind::Invalid, "pool size: must be between 0 and 100");
  auto tmpl = store_.templates().find_by_name(template_name);
  if (!tmpl) throw EngineError(EngineError::Kind::NotFound, "no template named " + template_name);
  if (store_.pools().find_by_name(name))
    throw EngineError(EngineError::Kind::Conflict, "a pool named " + name + " already exists");
  store::Space probe;
  probe.name = name + "-probe";
  probe.template_id = tmpl->id;
  const auto spec = space_spec(probe);
  if (auto problem = pool_template_problem(spec, template_name))
    throw EngineError(EngineError::Kind::Invalid, *problem);
  refuse_unrunnable(*nodes_.front(), spec, template_name);
  auto pool = store_.pools().create(name, tmpl->id, size);
  events_.publish(event::kPoolCreated, std::nullopt,
                  {{"pool", pool.name}, {"template", template_name}, {"size", size}});
  replenish(pool.id);
  return pool;
}

// A bridged space takes its address from the range when it is made, and the guest is built
// around it: a member would hold an address (and a name) before anyone claims it.
std::optional<std::string> Engine::pool_template_problem(const spec::Spec& spec,
                                                         const std::string& template_name) {
  if (!spec.disks.empty())
    return "template " + template_name +
           " has disks:, which name the owner's disks, and a pool's members have no owner "
           "until they are claimed";
  if (spec.network.mode != spec::NetworkMode::Bridged) return std::nullopt;
  return "template " + template_name +
         " is bridged: a bridged space's address is chosen when it is made, so pool members "
         "would each hold one before anybody claims them; pools take NAT templates "
         "(network.mode: nat)";
}

void Engine::check_template_update(const store::Template& tmpl, const std::string& yaml) {
  const auto loaded = spec::load_spec(yaml, nullptr);
  if (!loaded.spec) return;  // the caller reports what is invalid
  for (const auto& pool : store_.pools().list())
    if (pool.template_id == tmpl.id)
      if (auto problem = pool_template_problem(*loaded.spec, tmpl.name))
        throw EngineError(
            EngineError::Kind::Conflict,
            "pool " + pool.name + " uses template " + tmpl.name + ": " + *problem +
                "; delete the pool first, or store the bridged YAML as a new template");
}

void Engine::delete_pool(const std::string& name) {
  auto pool = store_.pools().find_by_name(name);
  if (!pool) throw EngineError(EngineError::Kind::NotFound, "no pool named " + name);
  const auto members = store_.spaces().list_for_pool(pool->id);
  // The pool goes first, so that no member's deletion makes the pool refill.
  store_.pools().remove(pool->id);
  for (const auto& member : members) delete_space(member.id);
  events_.publish(event::kPoolDeleted, std::nullopt, {{"pool", name}});
}

void Engine::replenish(std::int64_t pool_id) {
  // One queue per pool: two refills never both see the pool short and overfill it.
  executor_.submit("pool:" + std::to_string(pool_id), [this, pool_id] {
    try {
      fill_pool(pool_id);
    } catch (const std::exception& e) {
      events_.publish(event::kPoolError, std::nullopt, {{"pool_id", pool_id}, {"error", e.what()}});
    }
  });
}

void Engine::fill_pool(std::int64_t pool_id) {
  const auto pool = store_.pools().get(pool_id);
  if (!pool) return;  // deleted meanwhile
  const auto members = store_.spaces().list_for_pool(pool_id);
  // A member that failed stays for an admin to see; making more would fail the same way.
  for (const auto& m : members)
    if (m.state == SpaceState::Error) {
      events_.publish(event::kPoolError, std::nullopt,
                      {{"pool", pool->name},
                       {"error", "member " + m.name + " failed (" + m.error +
                                     "): not making more until it is deleted"}});
      return;
    }
  auto tmpl = store_.templates().get(pool->template_id);
  if (!tmpl) throw EngineError(EngineError::Kind::NotFound, "the pool's template is gone");
  // A template that became bridged behind the pool's back (an older server let it): say so
  // and make nothing (replenish publishes this as pool.error).
  store::Space probe;
  probe.name = pool->name + "-probe";
  probe.template_id = tmpl->id;
  if (auto problem = pool_template_problem(space_spec(probe), tmpl->name))
    throw EngineError(EngineError::Kind::Invalid,
                      "pool " + pool->name + " stopped refilling: " + *problem);
  for (auto n = static_cast<std::int64_t>(members.size()); n < pool->size; ++n) {
    const auto accepted = make_space(std::nullopt, pool_id, *tmpl, pool->name + "-" + random_hex(6),
                                     std::nullopt, true, *nodes_.front());
    events_.publish(event::kPoolMember, accepted.space.id,
                    {{"pool", pool->name}, {"member", accepted.space.name}});
  }
}

// One try at the pool's best member (booted, then suspended, then stopped); nullopt: none.
std::optional<store::Space> Engine::pick_member(const store::Pool& pool, const store::User& owner,
                                                const std::string& name) {
  std::lock_guard lock(claims_mutex_);
  try {
    auto transaction = store_.transaction();
    auto member = store_.spaces().claim_pool_member(pool.id, owner.id, name);
    if (!member) return std::nullopt;
    // The member as it is now (the owner's, under its new name) against the owner's quota:
    // refused, the claim is rolled back and the member stays in the pool.
    check_quota(owner.id, member->id, space_spec(*member));
    transaction.commit();
    return member;
  } catch (const store::ConflictError& e) {
    throw EngineError(EngineError::Kind::Conflict, e.what());
  }
}

store::Space Engine::take_member(const store::Pool& pool, const store::User& owner,
                                 const std::string& name) {
  // A member being suspended to wait (seconds) is as good as ready: the claim waits for it.
  for (int tries = 0;; ++tries) {
    if (auto member = pick_member(pool, owner, name)) return *member;
    const auto members = store_.spaces().list_for_pool(pool.id);
    const bool saving = std::any_of(members.begin(), members.end(), [](const auto& m) {
      return m.state == SpaceState::Suspending;
    });
    if (!saving || tries >= 240) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  // None ready: a claim the quota would refuse anyway says so rather than "try again".
  store::Space probe;
  probe.owner_id = owner.id;
  probe.name = name;
  probe.template_id = pool.template_id;
  std::optional<spec::Spec> spec;
  try {
    spec = space_spec(probe);
  } catch (const EngineError&) {
  }
  if (spec) check_quota(owner.id, {}, *spec);
  const auto booting = store_.spaces().list_for_pool(pool.id).size();
  throw EngineError(EngineError::Kind::Conflict,
                    "pool " + pool.name + " has no member ready" +
                        (booting ? " (" + std::to_string(booting) + " being made)" : "") +
                        ": try again shortly");
}

Claimed Engine::claim(const std::string& pool_name, std::int64_t owner_id,
                      const std::string& name) {
  check_space_name(name);
  auto pool = store_.pools().find_by_name(pool_name);
  if (!pool) throw EngineError(EngineError::Kind::NotFound, "no pool named " + pool_name);
  auto owner = store_.users().get(owner_id);
  if (!owner) throw EngineError(EngineError::Kind::NotFound, "no such user");
  if (store_.spaces().find_by_name(owner->id, name))
    throw EngineError(EngineError::Kind::Conflict,
                      owner->username + " already has a space named " + name);
  const auto member = take_member(*pool, *owner, name);
  events_.publish(event::kSpaceClaimed, member.id,
                  {{"pool", pool_name}, {"owner", owner->username}, {"name", name}});
  // The refill boots a new guest: it starts once this claim is done with the CPU, not while
  // the claimed guest is being personalised (under emulation they would share two cores).
  struct Refill {
    Engine& engine;
    std::int64_t pool;
    ~Refill() {
      try {
        engine.replenish(pool);
      } catch (...) {
      }
    }
  } refill{*this, pool->id};

  Claimed result{member, ClaimMethod::Agent, std::nullopt, {}};
  if (member.state == SpaceState::Suspended) {
    // An idle member was suspended: it runs again, as it was, before it is personalised.
    wake(member.id, "claim by " + owner->username);
    result.space = require(member.id);
  }
  if (result.space.state == SpaceState::Running) {
    try {
      const auto loaded = load(result.space);
      node_of(member).personalise(node_space(loaded), "pool");
      events_.publish(event::kSpacePersonalised, member.id, {{"owner", owner->username}});
      return result;
    } catch (const std::exception& e) {
      result.agent_problem = e.what();
      events_.publish(event::kSpacePersonaliseFailed, member.id, {{"error", e.what()}});
    }
    // No usable agent: reboot into the owner's seed (its every-boot program makes the account).
    result.method = ClaimMethod::Reboot;
    result.operation = restart_space(member.id);
  } else {
    result.method = ClaimMethod::Boot;
    result.operation = start_space(member.id);
  }
  return result;
}

}  // namespace bowline::engine
