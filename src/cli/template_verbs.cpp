// bowline template validate|show: offline checks of template files.
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/app.hpp"
#include "cli/output.hpp"
#include "cli/template_input.hpp"
#include "cli/verbs.hpp"
#include "spec/loader.hpp"
#include "spec/spec_json.hpp"

namespace bowline::cli {
namespace {

int validate(const std::vector<std::string>& files) {
  int code = kExitOk;
  for (const auto& file : files) {
    const auto text = read_file(file);
    if (!text) {
      std::cerr << file << ": cannot read the file\n";
      code = kExitUsage;
      continue;
    }
    const auto result = spec::load_spec(*text, nullptr);
    print_diagnostics(result.diagnostics, file, std::cout);
    if (result.diagnostics.has_errors()) {
      if (code == kExitOk) code = kExitInvalid;
    } else {
      std::cout << file << ": ok\n";
    }
  }
  return code;
}

int show(const std::string& file, const std::vector<std::string>& vars, const std::string& output) {
  const auto values = parse_vars(vars);
  const auto loaded = load_template(file, &values);
  if (!loaded) return loaded.exit_code;
  const auto json = spec::to_json(*loaded.spec);
  std::cout << (output == "json" ? json.dump(2) + "\n" : to_yaml(json));
  return kExitOk;
}

}  // namespace

void add_template_verbs(CLI::App& app, int& exit_code) {
  auto* group = app.add_subcommand(
      "template",
      "Templates: offline on FILEs (validate, show, render) and on the server (create, list, "
      "get, update, delete)");
  group->require_subcommand(1);

  auto* validate_cmd = group->add_subcommand(
      "validate",
      "Check template files; print every problem as FILE:LINE:COL: error: PATH: MESSAGE");
  auto files = std::make_shared<std::vector<std::string>>();
  validate_cmd->add_option("FILE", *files, "Template files")->required();
  validate_cmd->callback([files, &exit_code] { exit_code = validate(*files); });

  auto* show_cmd = group->add_subcommand(
      "show", "Print the expanded, validated spec with defaults filled in and sizes in bytes");
  struct ShowArgs {
    std::string file;
    std::vector<std::string> vars;
    std::string output = "yaml";
  };
  auto args = std::make_shared<ShowArgs>();
  show_cmd->add_option("FILE", args->file, "Template file")->required();
  show_cmd->add_option("--var", args->vars,
                       "A variable's value, e.g. user.username=alice (repeatable)");
  show_cmd->add_option("--output,-o", args->output, "Output format")
      ->check(CLI::IsMember({"yaml", "json"}));
  show_cmd->callback(
      [args, &exit_code] { exit_code = show(args->file, args->vars, args->output); });

  add_render_verb(*group, exit_code);
  add_client_template_verbs(*group, exit_code);
}

}  // namespace bowline::cli
