#include "api/json.hpp"

#include "plan/change_parts.hpp"
#include "spec/loader.hpp"

namespace bowline::api {

namespace {

nlohmann::json optional_json(const std::optional<std::string>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json optional_json(const std::optional<std::int64_t>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json user_json(const store::User& user) {
  auto permissions = nlohmann::json::array();
  for (auto p : user.permissions) permissions.push_back(store::to_string(p));
  return {{"id", user.id},
          {"username", user.username},
          {"email", user.email},
          {"timezone", user.timezone},
          {"sshKeys", user.ssh_keys},
          {"permissions", permissions},
          {"hasPassword", !user.password_hash.empty()},
          {"hasServicePassword", user.service_password_hash.has_value()},
          {"disabled", user.disabled},
          {"createdAt", user.created_at}};
}

void add_quota_json(nlohmann::json& out, const engine::Limits& limits, const engine::Usage& usage) {
  const auto limit = [](const engine::Limit& l) {
    return nlohmann::json{{"limit", optional_json(l.value)},
                          {"source", engine::to_string(l.source)}};
  };
  out["quota"] = {{"spaces", limit(limits.spaces)},
                  {"cpus", limit(limits.cpus)},
                  {"memory", limit(limits.memory)},
                  {"disk", limit(limits.disk)}};
  out["usage"] = {{"spaces", usage.spaces},
                  {"cpus", usage.cpus},
                  {"memory", usage.memory},
                  {"disk", usage.disk}};
}

nlohmann::json token_json(const store::ApiToken& token) {
  return {{"id", token.id},
          {"name", token.name},
          {"createdAt", token.created_at},
          {"lastUsed", token.last_used ? nlohmann::json(*token.last_used) : nullptr},
          {"expiresAt", token.expires_at ? nlohmann::json(*token.expires_at) : nullptr}};
}

nlohmann::json template_json(const store::Template& tmpl, bool with_yaml) {
  nlohmann::json out = {{"id", tmpl.id},
                        {"name", tmpl.name},
                        {"revision", tmpl.revision},
                        {"createdAt", tmpl.created_at},
                        {"updatedAt", tmpl.updated_at}};
  // Environment values and cloudInit may hold secrets: the YAML is for admins and the author.
  if (with_yaml) out["yaml"] = tmpl.yaml;
  out["readable"] = with_yaml;
  // What everyone sees: what the template is for and what the create form and the space menu
  // need (VM Display, VM Console, an address to choose, the ports to forward).
  const auto loaded = spec::load_spec(tmpl.yaml, nullptr);
  const auto* spec = loaded.spec ? &*loaded.spec : nullptr;
  out["description"] = spec ? spec->description : "";
  out["display"] = spec && spec->display;
  out["console"] = spec && spec->console;
  out["network"] = spec ? spec::to_string(spec->network.mode) : "";
  auto ports = nlohmann::json::array();
  if (spec)
    for (const auto& p : spec->ports) {
      nlohmann::json entry = {{"port", p.port}};
      if (!p.name.empty()) entry["name"] = p.name;
      ports.push_back(entry);
    }
  out["ports"] = ports;
  return out;
}

nlohmann::json space_json(const store::Space& space, const SpaceNames& names) {
  const bool pending = space.applied_template_revision != 0 &&
                       space.applied_template_revision != names.template_revision;
  return {{"id", space.id},
          {"name", space.name},
          {"owner", names.owner},
          {"template", names.template_name},
          {"state", store::to_string(space.state)},
          {"desiredState", store::to_string(space.desired_state)},
          {"error", space.error},
          {"ip", optional_json(space.ip)},
          {"domain", space.domain_name},
          {"node", space.node},
          {"appliedRevision", space.applied_template_revision},
          {"templateRevision", names.template_revision},
          {"redefinePending", pending},
          {"createdAt", space.created_at},
          {"updatedAt", space.updated_at}};
}

nlohmann::json space_info_json(const engine::SpaceView& view) {
  const auto& r = view.readiness;
  auto pending = nlohmann::json::array();
  for (const auto& change : view.pending)
    pending.push_back({{"part", change.part},
                       {"applies", plan::to_string(change.applies)},
                       {"what", change.what}});
  auto external = nlohmann::json::array();
  for (const auto& port : view.external_ports)
    external.push_back({{"protocol", port.protocol},
                        {"hostPort", port.host_port},
                        {"guestPort", port.guest_port},
                        {"active", port.active},
                        {"hostAddress", port.address}});
  const bool suspended = view.space.state == store::SpaceState::Suspended;
  return {{"address", optional_json(view.address)},
          {"suspended", suspended ? nlohmann::json{{"at", view.space.suspended_at},
                                                   {"reason", view.space.suspend_reason}}
                                  : nlohmann::json(nullptr)},
          {"idleSuspend",
           {{"after", view.idle_after.count()},
            {"idleFor",
             view.idle_for ? nlohmann::json(view.idle_for->count()) : nlohmann::json(nullptr)}}},
          {"redefinePending", view.redefine_pending},
          {"pendingChanges", pending},
          {"externalPorts", external},
          {"externalError", view.external_error},
          {"readiness", view.readiness_known ? nlohmann::json{{"booted", r.booted},
                                                              {"ready", r.finished && !r.failed},
                                                              {"finished", r.finished},
                                                              {"failed", r.failed},
                                                              {"detail", r.detail}}
                                             : nlohmann::json(nullptr)},
          {"consoleTail", r.last_lines}};
}

nlohmann::json operation_json(const store::Operation& op) {
  return {{"id", op.id},
          {"spaceId", optional_json(op.space_id)},
          {"kind", op.kind},
          {"state", store::to_string(op.state)},
          {"step", op.step},
          {"progress", op.progress},
          {"error", op.error},
          {"createdAt", op.created_at},
          {"finishedAt", optional_json(op.finished_at)}};
}

nlohmann::json event_json(const store::Event& event) {
  return {{"seq", event.seq},
          {"time", event.time},
          {"kind", event.kind},
          {"spaceId", optional_json(event.space_id)},
          {"payload", event.payload}};
}

nlohmann::json diagnostics_json(const spec::Diagnostics& diagnostics) {
  auto out = nlohmann::json::array();
  for (const auto& d : diagnostics.sorted())
    out.push_back({{"line", d.line},
                   {"column", d.column},
                   {"path", d.path},
                   {"severity", d.severity == spec::Severity::Error ? "error" : "warning"},
                   {"message", d.message}});
  if (diagnostics.dropped() > 0)
    out.push_back({{"line", 0},
                   {"column", 0},
                   {"path", ""},
                   {"severity", diagnostics.has_errors() ? "error" : "warning"},
                   {"message", spec::more_problems(diagnostics)}});
  return out;
}

}  // namespace bowline::api
