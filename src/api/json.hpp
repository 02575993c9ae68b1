// The API's JSON shapes (docs/api.md): one function per object.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "engine/engine.hpp"
#include "spec/diagnostic.hpp"
#include "store/records.hpp"

namespace bowline::api {

nlohmann::json user_json(const store::User& user);
// The user's limits ("quota": {spaces, cpus, memory, disk}: each {limit (null: none), source:
// user | default}) and what they hold ("usage": {spaces, cpus, memory, disk}), added to `out`.
void add_quota_json(nlohmann::json& out, const engine::Limits& limits, const engine::Usage& usage);
// A token as its owner may see it: never the secret (which is not kept) nor its hash.
nlohmann::json token_json(const store::ApiToken& token);
nlohmann::json template_json(const store::Template& tmpl, bool with_yaml);
struct SpaceNames {
  std::string owner;
  std::string template_name;
  std::int64_t template_revision = 0;
};
nlohmann::json space_json(const store::Space& space, const SpaceNames& names);
nlohmann::json space_info_json(const engine::SpaceView& view);
nlohmann::json operation_json(const store::Operation& operation);
nlohmann::json event_json(const store::Event& event);
nlohmann::json diagnostics_json(const spec::Diagnostics& diagnostics);

}  // namespace bowline::api
