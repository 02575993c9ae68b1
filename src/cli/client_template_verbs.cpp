// bowline template create|list|get|update|delete: templates on the server. They sit beside the
// offline verbs (validate, show and render work on FILEs, without a server), so the server's
// copy of a template is printed by `get`, not `show`.
#include <filesystem>
#include <iostream>

#include "cli/app.hpp"
#include "cli/client_format.hpp"
#include "cli/client_verbs.hpp"
#include "cli/template_input.hpp"
#include "cli/verbs.hpp"

namespace bowline::cli {
namespace {

std::string template_path(const std::string& name) {
  return "/api/v1/templates/" + escape_segment(name);
}

struct FileArgs {
  ClientOptions client;
  std::string file, name;
};

// The template's name: --name, else the file's name without .yaml/.yml.
std::string name_for(const FileArgs& a) {
  if (!a.name.empty()) return a.name;
  auto stem = std::filesystem::path(a.file).filename().string();
  for (const std::string ext : {".yaml", ".yml"})
    if (stem.size() > ext.size() && stem.compare(stem.size() - ext.size(), ext.size(), ext) == 0)
      return stem.substr(0, stem.size() - ext.size());
  return stem;
}

std::string read_or_throw(const std::string& file) {
  const auto text = read_file(file);
  if (!text) throw CliError(kExitUsage, file + ": cannot read the file");
  return *text;
}

// A 422 carries the template's problems: print them as `template validate` does.
int upload(const FileArgs& a, bool create) {
  const auto yaml = read_or_throw(a.file);
  const auto name = name_for(a);
  Client client(resolve_endpoint(a.client.server));
  ojson answer;
  try {
    answer = create ? client.post("/api/v1/templates", {{"name", name}, {"yaml", yaml}})
                    : client.put(template_path(name), {{"yaml", yaml}});
  } catch (const ApiError& e) {
    if (e.status() != 422 || !e.body().contains("diagnostics")) throw;
    if (a.client.json()) {
      print_json(e.body());
    } else {
      std::cout << format_diagnostics(e.body()["diagnostics"], a.file);
      std::cerr << "bowline: " << e.what() << "\n";
    }
    return kExitInvalid;
  }
  if (a.client.json()) {
    print_json(answer);
  } else if (create) {
    std::cout << "template " << text_of(answer, "name", name) << " created (revision "
              << text_of(answer, "revision", "1") << ")\n";
  } else {
    std::cout << "template " << text_of(answer, "name", name) << " updated to revision "
              << text_of(answer, "revision", "?") << "; spaces get it at their next start\n";
  }
  return kExitOk;
}

struct NameArgs {
  ClientOptions client;
  std::string name;
};

int list(const ClientOptions& o) {
  Client client(resolve_endpoint(o.server));
  const auto templates = client.get("/api/v1/templates");
  if (o.json())
    print_json(templates);
  else
    std::cout << format_templates(templates);
  return kExitOk;
}

int get(const NameArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto t = client.get(template_path(a.name));
  if (a.client.json()) {
    print_json(t);
  } else {
    if (!t.contains("yaml")) {
      // Not an admin nor its author: what the template offers, not how it does it.
      std::cout << "# " << text_of(t, "name") << " (revision " << t.value("revision", 0) << ")\n";
      if (const auto d = text_of(t, "description"); !d.empty()) std::cout << "# " << d << "\n";
      std::cout << "# network " << text_of(t, "network") << "; its YAML is for admins and its "
                << "author (environment values and cloudInit may hold secrets)\n";
      return kExitOk;
    }
    auto yaml = text_of(t, "yaml");
    if (!yaml.empty() && yaml.back() != '\n') yaml += '\n';
    std::cout << yaml;
  }
  return kExitOk;
}

int remove(const NameArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  const auto answer = client.del(template_path(a.name));
  if (a.client.json()) {
    if (!answer.is_null()) print_json(answer);
  } else {
    std::cout << "template " << a.name << " deleted\n";
  }
  return kExitOk;
}

}  // namespace

void add_client_template_verbs(CLI::App& group, int& exit_code) {
  {
    auto a = std::make_shared<FileArgs>();
    auto* cmd = group.add_subcommand("create", "Server: upload a template file as a new template");
    cmd->add_option("FILE", a->file, "Template file")->required();
    cmd->add_option("--name", a->name, "The template's name (default: FILE without .yaml)");
    add_client_options(*cmd, a->client);
    cmd->callback(
        [a, &exit_code] { run_client_verb(exit_code, [&] { return upload(*a, true); }); });
  }
  {
    auto a = std::make_shared<ClientOptions>();
    auto* cmd = group.add_subcommand("list", "Server: list the templates");
    add_client_options(*cmd, *a);
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return list(*a); }); });
  }
  {
    auto a = std::make_shared<NameArgs>();
    auto* cmd = group.add_subcommand(
        "get", "Server: print a template's YAML as stored (`show FILE` expands a local file)");
    cmd->add_option("NAME", a->name, "The template's name")->required();
    add_client_options(*cmd, a->client);
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return get(*a); }); });
  }
  {
    auto a = std::make_shared<FileArgs>();
    auto* cmd = group.add_subcommand(
        "update",
        "Server: replace a template with a file's content (revision + 1; spaces get it at their "
        "next start)");
    cmd->add_option("FILE", a->file, "Template file")->required();
    cmd->add_option("--name", a->name, "The template's name (default: FILE without .yaml)");
    add_client_options(*cmd, a->client);
    cmd->callback(
        [a, &exit_code] { run_client_verb(exit_code, [&] { return upload(*a, false); }); });
  }
  {
    auto a = std::make_shared<NameArgs>();
    auto* cmd = group.add_subcommand("delete", "Server: delete a template no space or pool uses");
    cmd->add_option("NAME", a->name, "The template's name")->required();
    add_client_options(*cmd, a->client);
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return remove(*a); }); });
  }
}

}  // namespace bowline::cli
