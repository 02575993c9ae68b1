#include "engine/engine.hpp"

#include <algorithm>

#include "engine/event_kinds.hpp"
#include "plan/guest_plan.hpp"
#include "spec/loader.hpp"
#include "util/host_paths.hpp"

namespace bowline::engine {

using store::SpaceState;

namespace {

// An unclaimed pool member has no owner: its guest user is "pool" until someone claims it.
plan::Owner guest_owner_of(const store::Space& space, const store::User& owner) {
  if (!space.owner_id) return plan::Owner{"pool", "", "", "", "", {}};
  return plan::Owner{owner.username,
                     owner.email,
                     owner.timezone,
                     std::to_string(owner.id),
                     owner.service_password_hash.value_or(""),
                     owner.ssh_keys};
}

}  // namespace

Engine::Engine(store::Store& store, EventBus& events, EngineSettings settings)
    : store_(store),
      events_(events),
      settings_(std::move(settings)),
      timer_(settings_.timer ? *settings_.timer : util::steady_timer()),
      stats_(std::make_unique<StatsSampler>(store, nodes_, settings_.stats, timer_)),
      executor_(settings_.workers, settings_.max_workers) {}

Engine::~Engine() {
  stats_->stop();  // its rounds ask the nodes
  for (auto* node : nodes_) node->unwatch();
  {
    std::lock_guard lock(audit_mutex_);
    audit_stop_ = true;
  }
  audit_wake_.notify_all();
  if (auditor_.joinable()) auditor_.join();
  {
    std::lock_guard lock(forwards_mutex_);
    publisher_stop_ = true;
  }
  publisher_wake_.notify_all();
  if (publisher_.joinable()) publisher_.join();
  executor_.drain();
}

void Engine::start() {
  if (nodes_.empty()) throw std::logic_error("the engine has no node");
  for (auto* node : nodes_)
    node->watch([this, node](const MachineEvent& e) { on_machine_event(*node, e); });
  reconcile();
  // What a previous server published is replaced as each running space's address is known.
  for (const auto& space : store_.spaces().list())
    if (space.state == SpaceState::Running) publish_ports(space.id);
  if (settings_.reconcile_interval.count() > 0) auditor_ = std::thread([this] { audit_loop(); });
  stats_->set_after_round([this] { suspend_idle(); });
  stats_->start();
}

void Engine::audit_loop() {
  std::unique_lock lock(audit_mutex_);
  auto next = timer_.now() + settings_.reconcile_interval;
  while (!audit_stop_) {
    if (!timer_.wait_until(lock, audit_wake_, next)) continue;
    next = timer_.now() + settings_.reconcile_interval;
    lock.unlock();
    try {
      audit();
    } catch (const std::exception& e) {
      events_.publish(event::kReconcileError, std::nullopt, {{"error", e.what()}});
    }
    lock.lock();
  }
}

void Engine::wait_idle() {
  executor_.drain();
}

store::Space Engine::require(const std::string& id) {
  auto space = store_.spaces().get(id);
  if (!space) throw EngineError(EngineError::Kind::NotFound, "no space with id " + id);
  return *space;
}

void Engine::set_state(const std::string& id, SpaceState state, const std::string& error) {
  store_.spaces().set_state(id, state, error);
  nlohmann::json payload = {{"state", store::to_string(state)}};
  if (!error.empty()) payload["error"] = error;
  events_.publish(event::kSpaceState, id, payload);
}

void Engine::progress(std::int64_t operation, const std::string& id, const std::string& step,
                      int percent, std::optional<std::pair<std::uint64_t, std::uint64_t>> bytes) {
  // Recorded first: the event carries the percent the store kept, which never goes back.
  std::lock_guard lock(progress_mutex_);
  const int recorded = store_.operations().progress(operation, step, percent);
  nlohmann::json payload = {{"operation", operation}, {"step", step}, {"progress", recorded}};
  if (bytes) {
    payload["bytes"] = bytes->first;
    payload["total"] = bytes->second;
  }
  events_.publish(event::kOperationProgress, id, payload);
}

Engine::Loaded Engine::load(const store::Space& space) {
  Loaded l{space, {}, {}, {}, {}};
  auto tmpl = store_.templates().get(space.template_id);
  if (!tmpl) throw EngineError(EngineError::Kind::NotFound, "the space's template is gone");
  l.tmpl = *tmpl;
  if (space.owner_id) {
    auto owner = store_.users().get(*space.owner_id);
    if (!owner) throw EngineError(EngineError::Kind::NotFound, "the space's owner is gone");
    l.owner = *owner;
  }
  l.spec = space_spec(space);
  l.guest_owner = guest_owner_of(space, l.owner);
  // Colleagues the space is shared with as user or admin ssh in as its owner, with their own
  // keys; the guest's boot script writes the keys anew at every start, and refresh_keys
  // rewrites them in a running guest when a share changes.
  if (space.owner_id)
    for (const auto& share : store_.shares().of_space(space.id)) {
      if (share.role == store::ShareRole::Viewer) continue;
      const auto colleague = store_.users().get(share.user_id);
      if (!colleague || colleague->disabled) continue;
      auto& keys = l.guest_owner.ssh_keys;
      for (const auto& key : colleague->ssh_keys)
        if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
    }
  return l;
}

NodeSpace Engine::node_space(const Loaded& l) {
  return NodeSpace{l.space,
                   l.tmpl,
                   l.spec,
                   l.guest_owner,
                   [this, space = l.space] { return neighbours(space); },
                   resolve_disks(l.space, l.spec)};
}

spec::Spec Engine::space_spec(const store::Space& space) {
  auto tmpl = store_.templates().get(space.template_id);
  if (!tmpl) throw EngineError(EngineError::Kind::NotFound, "the space's template is gone");
  std::optional<store::User> owner;
  if (space.owner_id) owner = store_.users().get(*space.owner_id);
  return expand_spec(space, *tmpl, owner);
}

spec::Spec Engine::expand_spec(const store::Space& space, const store::Template& tmpl,
                               const std::optional<store::User>& owner) const {
  spec::Variables values = settings_.server_variables;
  values["user.username"] = owner ? owner->username : "pool";
  values["user.email"] = owner ? owner->email : "";
  values["user.timezone"] = owner ? owner->timezone : "";
  values["user.id"] = owner ? std::to_string(owner->id) : "";
  values["space.name"] = space.name;
  values["space.id"] = space.id;
  values["space.ip_address"] = space.ip.value_or("");
  values["template.name"] = tmpl.name;
  values["template.id"] = std::to_string(tmpl.id);
  auto result = spec::load_spec(tmpl.yaml, &values);
  if (!result.spec) {
    std::string message = "template \"" + tmpl.name + "\" does not expand for this space:";
    for (const auto& d : result.diagnostics.sorted())
      if (d.severity == spec::Severity::Error) message += " " + spec::format(d, tmpl.name);
    throw EngineError(EngineError::Kind::Invalid, message);
  }
  // A domain keeps the name it was made with: a template whose name changed, or a pool member
  // claimed under a new name, is the same domain (its disk, NVRAM and console are there).
  if (!space.domain_name.empty()) result.spec->name = space.domain_name;
  return *result.spec;
}

std::int64_t Engine::enqueue(const store::Space& space, const std::string& kind,
                             std::function<void(std::int64_t)> body, bool failure_is_error) {
  // After a restart, the work continues under the operation a client may be waiting on.
  const auto adopted = take_adopted(space.id);
  const auto operation = adopted ? *adopted : store_.operations().create(space.id, kind).id;
  events_.publish(event::kOperationStarted, space.id,
                  adopted
                      ? nlohmann::json{{"operation", operation}, {"kind", kind}, {"resumed", true}}
                      : nlohmann::json{{"operation", operation}, {"kind", kind}});
  executor_.submit(space.id, [this, id = space.id, op = operation, kind, body = std::move(body),
                              failure_is_error] {
    try {
      body(op);
      store_.operations().succeed(op);
      events_.publish(event::kOperationSucceeded, id, {{"operation", op}, {"kind", kind}});
    } catch (const std::exception& e) {
      // Users read the words; a host path in them (qemu-img, libvirt) goes to the log only.
      const auto said = util::redact_host_paths(e.what());
      if (said != e.what() && settings_.log)
        settings_.log("bowline server: operation " + std::to_string(op) + " (" + kind +
                      ") of space " + id + " failed: " + e.what());
      store_.operations().fail(op, said);
      events_.publish(event::kOperationFailed, id,
                      {{"operation", op}, {"kind", kind}, {"error", said}});
      if (failure_is_error && store_.spaces().get(id))
        set_state(id, SpaceState::Error, kind + " failed: " + said);
    }
  });
  return operation;
}

SpaceView Engine::describe(const std::string& id) {
  SpaceView view;
  view.space = require(id);
  if (view.space.owner_id)
    if (auto owner = store_.users().get(*view.space.owner_id)) view.owner = owner->username;
  if (auto tmpl = store_.templates().get(view.space.template_id)) {
    view.template_name = tmpl->name;
    view.template_revision = tmpl->revision;
    view.redefine_pending = view.space.applied_template_revision != 0 &&
                            view.space.applied_template_revision != tmpl->revision;
  }
  view.address = view.space.ip;
  view.pending = pending_of(view.space);
  describe_idle(view);
  {
    std::lock_guard lock(forwards_mutex_);
    const auto active = forwards_.find(id);
    for (const auto& port : store_.host_ports().of_space(id)) {
      bool on = false;
      if (active != forwards_.end())
        for (const auto& f : active->second) on = on || f.host_port == port.host_port;
      view.external_ports.push_back(
          {port.protocol, port.host_port, port.guest_port, on,
           settings_.external_address == "any" ? "" : settings_.external_address});
    }
    if (const auto it = forward_errors_.find(id); it != forward_errors_.end())
      view.external_error = it->second;
  }
  auto* node = find_node(view.space.node);
  if (!node) {
    view.readiness_known = false;
    return view;
  }
  if (!view.address && view.space.state == SpaceState::Running)
    view.address = node->address(view.space);
  const auto readiness = node->readiness(view.space);
  view.readiness_known = readiness.has_value();  // false: the node keeps no console log here
  if (readiness) view.readiness = *readiness;
  return view;
}

// What this start applies: every part as it is now, except those that reach new spaces only,
// which keep what the space was made with (so space info keeps saying the space lacks them).
std::string Engine::applied_parts(const store::Space& space,
                                  const std::map<std::string, std::string>& now) {
  auto parts = now;
  const auto before = nlohmann::json::parse(space.applied_parts, nullptr, false);
  if (before.is_object())
    for (const auto& rule : plan::part_rules())
      if (rule.applies == plan::Applies::NewSpaces && before.contains(rule.name) &&
          before[rule.name].is_string())
        parts[rule.name] = before[rule.name].get<std::string>();
  return nlohmann::json(parts).dump();
}

void Engine::renew_instance(Loaded& l, Node& node) {
  const auto parts = node.parts(node_space(l));
  if (!parts || !parts->contains("cloudInit")) return;
  const auto applied = nlohmann::json::parse(l.space.applied_parts, nullptr, false);
  std::string before;
  if (applied.is_object() && applied.contains("cloudInit") && applied["cloudInit"].is_string())
    before = applied["cloudInit"].get<std::string>();
  const auto current =
      l.space.instance_id.empty() ? plan::base_instance_id(l.space.id) : l.space.instance_id;
  const auto next =
      plan::next_instance_id(l.space.id, l.space.instance_id, before, parts->at("cloudInit"));
  if (next == current) return;
  store_.spaces().set_instance_id(l.space.id, next);
  l.space.instance_id = next;
}

std::vector<plan::PendingChange> Engine::pending_of(const store::Space& space) {
  const auto applied = nlohmann::json::parse(space.applied_parts, nullptr, false);
  if (!applied.is_object() || applied.empty()) return {};
  try {
    auto* node = find_node(space.node);
    if (!node) return {};
    const auto loaded = load(space);
    const auto parts = node->parts(node_space(loaded));
    if (!parts) return {};
    return plan::pending_changes(applied.get<std::map<std::string, std::string>>(), *parts);
  } catch (const std::exception&) {
    return {};  // a template that no longer expands says so when the space starts
  }
}

}  // namespace bowline::engine
