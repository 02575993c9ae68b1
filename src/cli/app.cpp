#include "cli/app.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

namespace bowline::cli {

int run(int argc, char** argv) {
  CLI::App app{"bowline: persistent virtual machines from YAML templates", "bowline"};
  app.set_version_flag("--version", std::string("bowline ") + BOWLINE_VERSION);
  app.require_subcommand(1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  return kExitOk;
}

}  // namespace bowline::cli
