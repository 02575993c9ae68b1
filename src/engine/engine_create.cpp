// Creating a space: everything is checked before anything is made (the spec with this space's
// values, the machine's name on its node, the network, devices, addresses), then the row, its
// address and host ports are written in one transaction, and the node makes the machine in the
// background.
#include "engine/devices.hpp"
#include "engine/engine.hpp"
#include "engine/event_kinds.hpp"
#include "engine/host_keys.hpp"
#include "engine/identifiers.hpp"
#include "engine/ipam.hpp"

namespace bowline::engine {

using store::SpaceState;

Accepted Engine::create_space(const CreateSpaceRequest& request, const std::string& node) {
  check_space_name(request.name);
  auto tmpl = store_.templates().find_by_name(request.template_name);
  if (!tmpl)
    throw EngineError(EngineError::Kind::NotFound, "no template named " + request.template_name);
  auto owner = store_.users().get(request.owner_id);
  if (!owner) throw EngineError(EngineError::Kind::NotFound, "no such user");
  if (store_.spaces().find_by_name(owner->id, request.name))
    throw EngineError(EngineError::Kind::Conflict,
                      owner->username + " already has a space named " + request.name);
  auto& chosen = node.empty() && nodes_.size() > 1 ? place_space(*owner, *tmpl, request.name)
                                                   : node_named(node);
  refuse_cordoned(chosen);
  return make_space(owner, std::nullopt, *tmpl, request.name, request.ip, request.start, chosen);
}

// One space for an owner, or an unowned member of a pool.
Accepted Engine::make_space(const std::optional<store::User>& owner,
                            std::optional<std::int64_t> pool_id, const store::Template& tmpl,
                            const std::string& name, const std::optional<std::string>& ip,
                            bool start, Node& node, const SpaceIdentity* identity,
                            std::function<void(const std::string&, std::int64_t)> prepare) {
  store::Space probe;
  probe.id = identity ? identity->id : random_uuid();
  probe.node = node.name();
  probe.name = name;
  if (owner) probe.owner_id = owner->id;
  probe.pool_id = pool_id;
  probe.template_id = tmpl.id;
  const auto spec = space_spec(probe);
  // runStrategy Halted: made, not started.
  const bool start_now = start && spec.run_strategy != spec::RunStrategy::Halted;
  admit(node, probe, spec, ip, start_now);

  store::NewSpace fresh;
  fresh.id = probe.id;
  fresh.name = name;
  fresh.owner_id = probe.owner_id;
  fresh.pool_id = pool_id;
  fresh.template_id = tmpl.id;
  fresh.desired_state = start_now ? store::DesiredState::Running : store::DesiredState::Stopped;
  fresh.state = SpaceState::Pending;
  fresh.uuid = identity ? identity->uuid : random_uuid();
  fresh.vnc_password = random_hex(8);
  fresh.domain_name = spec.name;
  fresh.node = node.name();
  if (identity && !identity->host_key.empty()) {
    fresh.host_key = identity->host_key;
    fresh.host_key_public = identity->host_key_public;
  } else {
    const auto host_key = make_host_key(spec.name);
    fresh.host_key = host_key.private_key;
    fresh.host_key_public = host_key.public_line;
  }
  const auto terminal_key = make_host_key("bowline-terminal@" + spec.name);
  fresh.terminal_key = terminal_key.private_key;
  fresh.terminal_key_public = terminal_key.public_line;
  const auto space = insert_space(fresh, spec, node, ip);
  events_.publish(event::kSpaceCreated, space.id,
                  {{"name", space.name}, {"domain", space.domain_name}, {"node", space.node}});
  const auto op =
      enqueue(space, prepare ? "clone" : "create",
              [this, id = space.id, start_now, prepare](std::int64_t operation) {
                // A clone's disk is copied before the machine is made (nothing else is yet).
                if (prepare) {
                  try {
                    set_state(id, SpaceState::Creating);
                    prepare(id, operation);
                  } catch (...) {
                    const auto made = require(id);
                    undo_create(made, node_of(made));
                    throw;
                  }
                }
                bring_up(id, {operation, prepare ? 50 : 0, 100}, {start_now, true, false});
              });
  return {space, op};
}

void Engine::admit(Node& node, const store::Space& probe, const spec::Spec& spec,
                   const std::optional<std::string>& ip, bool start_now) {
  if (store_.spaces().find_by_domain_name(spec.name))
    throw EngineError(EngineError::Kind::Conflict,
                      "another space already uses the domain name " + spec.name);
  node.check_machine_name(spec.name);
  if (ip)
    if (const auto why = node.fixed_address_refusal(spec))
      throw EngineError(EngineError::Kind::Invalid,
                        *why + ": --ip is for bridged templates on libvirt nodes");
  refuse_unrunnable(node, spec, store_.templates().get(probe.template_id)->name);
  // The template's disks are the owner's: a missing one is refused now, by name, not at boot.
  resolve_disks(probe, spec);
  if (start_now) {
    check_devices_free(probe, spec);
    check_disks_free(probe, spec);
  }
}

void Engine::refuse_unrunnable(Node& node, const spec::Spec& spec,
                               const std::string& template_name) {
  const auto refusals = node.refusals(spec);
  if (refusals.empty()) return;
  std::string message =
      "template " + template_name + " cannot run on the node " + node.name() + ":";
  for (std::size_t i = 0; i < refusals.size(); ++i) message += (i ? "; " : " ") + refusals[i];
  throw EngineError(EngineError::Kind::Invalid, message);
}

// The row, its address (from the template's range, where the node takes one from bowline) and
// its host ports: all or nothing, and only within the owner's quota.
store::Space Engine::insert_space(const store::NewSpace& fresh, const spec::Spec& spec, Node& node,
                                  const std::optional<std::string>& ip) {
  auto transaction = store_.transaction();
  // In the same transaction as the row: a second create waits for this one and counts it.
  if (fresh.owner_id) check_quota(*fresh.owner_id, fresh.id, spec);
  auto space = store_.spaces().create(fresh);
  if (!node.fixed_address_refusal(spec)) {
    const auto lease =
        ip ? Ipam(store_, settings_.host_addresses).lease_exact(spec.network, space.id, *ip)
           : Ipam(store_, settings_.host_addresses).lease_next(spec.network, space.id);
    space.ip = store::format_ipv4(lease.ip);
    store_.spaces().set_ip(space.id, space.ip);
  }
  allocate_ports(space, spec);
  transaction.commit();
  return space;
}

void Engine::check_devices_free(const store::Space& space, const spec::Spec& spec) {
  const auto wanted = passthrough_devices(spec);
  if (wanted.empty()) return;
  for (const auto& other : neighbours(space)) {
    std::vector<spec::Device> held;
    try {
      held = passthrough_devices(space_spec(other));
    } catch (const std::exception&) {
      continue;
    }
    for (const auto& w : wanted)
      for (const auto& h : held)
        if (w.same(h))
          throw EngineError(EngineError::Kind::Conflict,
                            "device " + w.text + " is held by the running space " + other.name +
                                " (" + other.domain_name + "): stop it first");
  }
}

}  // namespace bowline::engine
