// bowline server: the HTTP API with the engine, until SIGINT or SIGTERM.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/app.hpp"
#include "cli/verbs.hpp"
#include "server/server.hpp"
#include "server/settings.hpp"
#include "server/tls.hpp"

namespace bowline::cli {

void add_server_verb(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "server",
      "Run the bowline server: the HTTP API (docs/api.md), the store and the engine on libvirt.\n"
      "Settings come from a flag, a BOWLINE_* (or knot's KNOT_KVM_*) environment variable, the "
      "--config YAML file (keys server.*) or the default, in that order.");
  struct Args {
    std::string config;
    bool print_config = false;
    bool settings_markdown = false;
    std::map<std::string, std::string> flags;
    std::map<std::string, std::string> spellings;  // a flag given in knot's spelling
    std::vector<std::string> twice;                // settings given by two flags
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("--config", args->config, "YAML config file (also BOWLINE_CONFIG)");
  cmd->add_flag("--print-config", args->print_config,
                "Print each effective setting and where it came from, then exit");
  cmd->add_flag("--settings-markdown", args->settings_markdown,
                "Print the table of settings that docs/configuration.md carries, then exit");
  for (const auto& key : server::setting_table()) {
    // Both spellings (bowline's, and knot's where it has one) set the same setting.
    auto set = [args, name = std::string(key.key)](const std::string& flag) {
      return [args, name, flag](const std::string& v) {
        // The same flag again: the last wins; bowline's and knot's both: ambiguous.
        if (auto it = args->spellings.find(name); it != args->spellings.end() && it->second != flag)
          args->twice.push_back(name);
        args->flags[name] = v;
        args->spellings[name] = flag;
      };
    };
    std::string help = std::string(key.summary) + " (" + key.key + ", " + key.env;
    if (key.knot_env) help += ", " + std::string(key.knot_env);
    cmd->add_option_function<std::string>(key.flag, set(key.flag), help + ")");
    if (key.knot_flag)
      cmd->add_option_function<std::string>(key.knot_flag, set(key.knot_flag),
                                            std::string("knot's name for ") + key.flag);
  }
  cmd->callback([args, &exit_code] {
    if (args->settings_markdown) {
      std::cout << server::settings_markdown();
      exit_code = kExitOk;
      return;
    }
    if (!args->twice.empty()) {
      std::cerr << "bowline server: " << args->twice.front()
                << " is given twice on the command line (bowline's and knot's flag name "
                   "the same setting): keep one\n";
      exit_code = kExitUsage;
      return;
    }
    server::SettingsInput input;
    input.flags = args->flags;
    input.flag_spellings = args->spellings;
    input.env = server::process_environment();
    if (!args->config.empty()) input.config_file = args->config;
    input.cwd = std::filesystem::current_path();
    server::ServerSettings settings;
    try {
      settings = server::resolve_settings(input);
    } catch (const server::SettingsError& e) {
      std::cerr << "bowline server: " << e.what() << "\n";
      exit_code = kExitUsage;
      return;
    }
    if (args->print_config) {
      std::cout << server::describe_settings(settings) << server::describe_tls(settings);
      exit_code = kExitOk;
      return;
    }
    server::block_stop_signals();
    exit_code = server::run_server(settings, std::cout, std::cerr, ::isatty(STDOUT_FILENO) == 1);
  });
}

}  // namespace bowline::cli
