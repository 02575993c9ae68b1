#include "cli/app.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/verbs.hpp"

namespace bowline::cli {

int run(int argc, char** argv) {
  CLI::App app{"bowline: persistent virtual machines from YAML templates", "bowline"};
  app.set_version_flag("--version", std::string("bowline ") + BOWLINE_VERSION);
  app.require_subcommand(1);
  int exit_code = kExitOk;
  add_template_verbs(app, exit_code);
  add_catalog_verbs(app, exit_code);
  add_kubevirt_verbs(app, exit_code);
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
