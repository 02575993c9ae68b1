#include "cli/app.hpp"
#include "cli/completion.hpp"
#include "cli/ssh_verbs.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/client_disk_verbs.hpp"
#include "cli/verbs.hpp"

namespace bowline::cli {

namespace {

// CLI11 answers `--help` before it notices an unknown word, so `bowline frobnicate --help`
// would print the top-level help and exit 0. A verb that does not exist is a usage error
// whatever follows it: checked here for the verb and, for groups, the sub-verb.
std::string unknown_verb(CLI::App& app, int argc, char** argv) {
  CLI::App* level = &app;
  std::string path = "bowline";
  for (int i = 1; i < argc && i < 3; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] == '-' || level->get_subcommands({}).empty()) break;
    CLI::App* next = nullptr;
    for (auto* sub : level->get_subcommands({}))
      if (sub->check_name(word)) next = sub;
    if (!next) return path + " has no command " + word + " (see " + path + " --help)";
    level = next;
    path += " " + word;
  }
  return {};
}

}  // namespace

void add_verbs(CLI::App& app, int& exit_code) {
  app.set_version_flag("--version", std::string("bowline ") + BOWLINE_VERSION);
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 ok; 1 invalid input, refused by the server, operation or cloud-init failed, "
      "node not ready; 2 usage; 3 server unreachable; 4 not found, not allowed or not logged in; "
      "5 --wait timed out.");
  add_template_verbs(app, exit_code);
  add_catalog_verbs(app, exit_code);
  add_kubevirt_verbs(app, exit_code);
  add_server_verb(app, exit_code);
  add_space_verbs(app, exit_code);
  add_pool_verbs(app, exit_code);
  add_disk_verbs(app, exit_code);
  add_user_verbs(app, exit_code);
  add_token_verbs(app, exit_code);
  add_admin_verbs(app, exit_code);
  add_mcp_verb(app, exit_code);
  add_login_verb(app, exit_code);
  add_node_verbs(app, exit_code);
  add_image_verbs(app, exit_code);
  add_ssh_verbs(app, exit_code);
}

int run(int argc, char** argv) {
  CLI::App app{"bowline: persistent virtual machines from YAML templates", "bowline"};
  int exit_code = kExitOk;
  add_verbs(app, exit_code);
  // The shell's completion (completion.hpp): not a verb anyone types, so not in --help.
  if (argc >= 2 && std::string(argv[1]) == "__complete") return run_complete(app, argc, argv);
  if (const auto problem = unknown_verb(app, argc, argv); !problem.empty()) {
    std::cerr << problem << "\n";
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "bowline: " << e.what() << "\n";
    return kExitUsage;
  }
  return exit_code;
}

}  // namespace bowline::cli
