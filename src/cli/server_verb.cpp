// bowline server: the HTTP API with the engine, until SIGINT or SIGTERM.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <string>

#include "api/server.hpp"
#include "api/settings.hpp"
#include "cli/app.hpp"
#include "cli/verbs.hpp"

namespace bowline::cli {

void add_server_verb(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "server",
      "Run the bowline server: the HTTP API (docs/api.md), the store and the engine on libvirt.\n"
      "Settings come from a flag, a BOWLINE_* environment variable, the --config YAML file "
      "(keys server.*) or the default, in that order.");
  struct Args {
    std::string config;
    bool print_config = false;
    std::map<std::string, std::string> flags;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("--config", args->config, "YAML config file (also BOWLINE_CONFIG)");
  cmd->add_flag("--print-config", args->print_config,
                "Print each effective setting and where it came from, then exit");
  for (const auto& key : api::setting_keys()) {
    cmd->add_option_function<std::string>(
        key.flag,
        [args, name = std::string(key.key)](const std::string& v) { args->flags[name] = v; },
        std::string(key.help) + " (" + key.key + ", " + key.env + ")");
  }
  cmd->callback([args, &exit_code] {
    api::SettingsInput input;
    input.flags = args->flags;
    input.env = api::process_environment();
    if (!args->config.empty()) input.config_file = args->config;
    input.cwd = std::filesystem::current_path();
    api::ServerSettings settings;
    try {
      settings = api::resolve_settings(input);
    } catch (const api::SettingsError& e) {
      std::cerr << "bowline server: " << e.what() << "\n";
      exit_code = kExitUsage;
      return;
    }
    if (args->print_config) {
      std::cout << api::describe_settings(settings);
      exit_code = kExitOk;
      return;
    }
    api::block_stop_signals();
    exit_code = api::run_server(settings, std::cout, std::cerr, ::isatty(STDOUT_FILENO) == 1);
  });
}

}  // namespace bowline::cli
