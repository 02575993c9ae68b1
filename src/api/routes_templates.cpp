// /api/v1/templates: YAML templates with a revision, validated before they are stored.
#include "api/api.hpp"
#include "api/body.hpp"
#include "api/json.hpp"
#include "spec/loader.hpp"
#include "spec/template_rules.hpp"

namespace bowline::api {

namespace {

void check_template_name(const std::string& name) {
  if (const auto problem = spec::template_name_problem(name); !problem.empty())
    throw HttpError(422, problem);
}

void check_template_size(const std::string& yaml) {
  if (const auto problem = spec::template_size_problem(yaml); !problem.empty())
    throw HttpError(422, problem);
}

// Validates without values (every expression checked, value-dependent checks left for the
// space); 422 with the diagnostics when there are errors. Returns the warnings.
nlohmann::json validated(const std::string& yaml, const std::string& name) {
  check_template_size(yaml);
  const auto result = spec::load_spec(yaml, nullptr);
  const auto diagnostics = diagnostics_json(result.diagnostics);
  if (result.diagnostics.has_errors()) {
    std::string first;
    for (const auto& d : result.diagnostics.sorted())
      if (d.severity == spec::Severity::Error) {
        first = spec::format(d, name);
        break;
      }
    throw HttpError(422, "the template is not valid: " + first, {{"diagnostics", diagnostics}});
  }
  return diagnostics;
}

// Admins and the template's author read its YAML; everyone else its summary (template_json).
bool may_read_yaml(const Caller& caller, const store::Template& tmpl) {
  return caller.admin() || (tmpl.author_id && *tmpl.author_id == caller.user.id);
}

}  // namespace

void Api::add_template_routes() {
  router_.add("GET", "/api/v1/templates", Access::Any, [this](const Caller&, const Request&) {
    auto out = nlohmann::json::array();
    for (const auto& t : store_.templates().list()) out.push_back(template_json(t, false));
    for (auto& t : out) t.erase("readable");  // the list never carries YAML
    return Response::json(200, out);
  });

  router_.add("POST", "/api/v1/templates", Access::Admin,
              [this](const Caller& caller, const Request& request) {
                const auto body = object_body(request);
                const auto name = required_string(body, "name");
                check_template_name(name);
                const auto yaml = required_string(body, "yaml");
                const auto warnings = validated(yaml, name);
                auto out =
                    template_json(store_.templates().create(name, yaml, caller.user.id), true);
                out["diagnostics"] = warnings;
                return Response::json(201, out);
              });

  router_.add("POST", "/api/v1/templates/validate", Access::Any,
              [](const Caller&, const Request& request) {
                const auto yaml = required_string(object_body(request), "yaml");
                check_template_size(yaml);
                const auto result = spec::load_spec(yaml, nullptr);
                return Response::json(200, {{"valid", !result.diagnostics.has_errors()},
                                            {"diagnostics", diagnostics_json(result.diagnostics)}});
              });

  router_.add("GET", "/api/v1/templates/{name}", Access::Any,
              [this](const Caller& caller, const Request& request) {
                auto t = store_.templates().find_by_name(request.param("name"));
                if (!t) throw HttpError(404, "no template named " + request.param("name"));
                return Response::json(200, template_json(*t, may_read_yaml(caller, *t)));
              });

  router_.add("PUT", "/api/v1/templates/{name}", Access::Admin,
              [this](const Caller&, const Request& request) {
                auto t = store_.templates().find_by_name(request.param("name"));
                if (!t) throw HttpError(404, "no template named " + request.param("name"));
                const auto yaml = required_string(object_body(request), "yaml");
                const auto warnings = validated(yaml, t->name);
                engine_.check_template_update(*t, yaml);  // pools take NAT templates only
                auto out = template_json(store_.templates().update(t->id, yaml), true);
                out["diagnostics"] = warnings;
                return Response::json(200, out);
              });

  router_.add("DELETE", "/api/v1/templates/{name}", Access::Admin,
              [this](const Caller&, const Request& request) {
                auto t = store_.templates().find_by_name(request.param("name"));
                if (!t) throw HttpError(404, "no template named " + request.param("name"));
                store_.templates().remove(t->id);  // ConflictError (409) while in use
                return Response::no_content();
              });
}

}  // namespace bowline::api
