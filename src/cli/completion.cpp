#include "cli/completion.hpp"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <optional>

#include "cli/client.hpp"
#include "cli/client_format.hpp"
#include "store/records.hpp"

namespace bowline::cli {

namespace {

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

// Where the words before the one being completed leave the parse.
struct Position {
  CLI::App* level = nullptr;
  std::vector<std::string> path;         // the verbs, from the top
  int positionals = 0;                   // positional words at this level so far
  const CLI::Option* pending = nullptr;  // the option whose value comes next
  std::string server;                    // a --server given on the line
};

bool takes_value(const CLI::Option& option) {
  return option.get_type_size_max() > 0;
}

const CLI::Option* find_option(CLI::App& level, const std::string& word) {
  for (const auto* option : level.get_options()) {
    for (const auto& name : option->get_lnames())
      if (word == "--" + name) return option;
    for (const auto& name : option->get_snames())
      if (word == "-" + name) return option;
  }
  return nullptr;
}

bool is_server_option(const CLI::Option* option) {
  if (!option) return false;
  const auto& names = option->get_lnames();
  return std::find(names.begin(), names.end(), "server") != names.end();
}

std::vector<CLI::App*> visible_verbs(CLI::App& level) {
  return level.get_subcommands([](CLI::App* sub) { return !sub->get_group().empty(); });
}

// A word that is an option (or --option=value), read for what it tells the walk.
void read_option(Position& p, const std::string& word) {
  const auto eq = word.find('=');
  const auto* option = find_option(*p.level, word.substr(0, eq));
  if (!option || !takes_value(*option)) return;
  if (eq == std::string::npos)
    p.pending = option;
  else if (is_server_option(option))
    p.server = word.substr(eq + 1);
}

Position walk(CLI::App& app, const std::vector<std::string>& words) {
  Position p;
  p.level = &app;
  bool only_positionals = false;  // after "--"
  for (std::size_t i = 1; i < words.size(); ++i) {
    const auto& word = words[i];
    if (p.pending) {
      if (is_server_option(p.pending)) p.server = word;
      p.pending = nullptr;
    } else if (!only_positionals && word == "--") {
      only_positionals = true;
    } else if (!only_positionals && word.size() > 1 && word[0] == '-') {
      read_option(p, word);
    } else {
      CLI::App* verb = nullptr;
      if (p.positionals == 0)
        for (auto* sub : visible_verbs(*p.level))
          if (sub->check_name(word)) verb = sub;
      if (verb) {
        p.level = verb;
        p.path.push_back(verb->get_name());
      } else {
        ++p.positionals;
      }
    }
  }
  return p;
}

// The positional option that the `index`th positional word (from 0) of `level` fills.
const CLI::Option* positional_at(const CLI::App& level, int index) {
  for (const auto* option :
       level.get_options([](const CLI::Option* o) { return o->get_positional(); })) {
    const int takes = std::max(option->get_items_expected_max(), 1);
    if (index < takes) return option;
    index -= takes;
  }
  return nullptr;
}

// What fills a slot, by its kind: fixed words, the server's names, or files.
struct Values {
  std::vector<std::string> words;
  std::optional<NameKind> names;
  bool files = false;
};

std::vector<std::string> permission_names() {
  std::vector<std::string> out;
  for (auto p :
       {store::Permission::Admin, store::Permission::UseVnc, store::Permission::UseWebTerminal,
        store::Permission::UseSsh, store::Permission::UsePorts})
    out.emplace_back(store::to_string(p));
  return out;
}

Values option_values(const CLI::Option& option) {
  const auto& name = option.get_lnames().empty() ? std::string() : option.get_lnames().front();
  if (name == "output") return {{"table", "json"}, {}, false};
  if (name == "domain-type") return {{"auto", "kvm", "qemu"}, {}, false};
  if (name == "tls-mode") return {{"auto", "self-signed", "off"}, {}, false};
  if (name == "secure-cookies") return {{"auto", "true", "false"}, {}, false};
  if (name == "permission") return {permission_names(), {}, false};
  if (name == "template") return {{}, NameKind::Templates, false};
  static const std::vector<std::string> files{
      "config", "tls-cert", "tls-key", "kubeconfig", "kubevirt-kubeconfig", "ssh-key", "seed-iso"};
  const bool is_path = name.size() > 5 && (name.ends_with("-path") || name.ends_with("-dir"));
  return {{}, {}, is_path || std::find(files.begin(), files.end(), name) != files.end()};
}

Values positional_values(const CLI::Option& slot, const std::vector<std::string>& path) {
  const auto& name = slot.get_single_name();
  if (name == "SPACE" || name == "HOST") return {{}, NameKind::Spaces, false};
  if (name == "TEMPLATE") return {{}, NameKind::Templates, false};
  if (name == "POOL") return {{}, NameKind::Pools, false};
  if (name == "FILE" || name == "KEY") return {{}, {}, true};
  // `template info NAME`, `pool delete NAME`: an existing one; `... create NAME`: a new one.
  if (name == "NAME" && path.size() >= 2 && path.back() != "create") {
    const auto& group = path[path.size() - 2];
    if (group == "template") return {{}, NameKind::Templates, false};
    if (group == "pool") return {{}, NameKind::Pools, false};
  }
  return {};
}

void add_matching(std::vector<std::string>& out, const std::vector<std::string>& words,
                  const std::string& prefix, const std::string& current) {
  for (const auto& word : words)
    if (starts_with(prefix + word, current)) out.push_back(prefix + word);
}

// The candidates a slot offers (`prefix`: what goes before each, as in --output=).
std::vector<std::string> fill(const Values& values, const std::string& prefix,
                              const std::string& current, const Position& p,
                              const NameSource& names) {
  if (values.files) return {kCompleteFiles};
  std::vector<std::string> out;
  add_matching(out, values.words, prefix, current);
  if (values.names && names) add_matching(out, names(*values.names, p.server), prefix, current);
  return out;
}

std::vector<std::string> options_of(CLI::App& level, const std::string& current) {
  std::vector<std::string> out;
  for (const auto* option : level.get_options()) {
    for (const auto& name : option->get_lnames())
      if (starts_with("--" + name, current)) out.push_back("--" + name);
    // Short names only once the word is a lone dash or one: "-o", not among the long ones.
    if (current.size() <= 2)
      for (const auto& name : option->get_snames())
        if (starts_with("-" + name, current)) out.push_back("-" + name);
  }
  return out;
}

}  // namespace

std::vector<std::string> complete(CLI::App& app, const std::vector<std::string>& words,
                                  const std::string& current, const NameSource& names) {
  const auto p = walk(app, words);
  if (p.pending) return fill(option_values(*p.pending), "", current, p, names);
  if (starts_with(current, "--") && current.find('=') != std::string::npos) {
    const auto eq = current.find('=');
    const auto* option = find_option(*p.level, current.substr(0, eq));
    if (!option || !takes_value(*option)) return {};
    return fill(option_values(*option), current.substr(0, eq + 1), current, p, names);
  }
  if (starts_with(current, "-")) return options_of(*p.level, current);
  std::vector<std::string> out;
  if (p.positionals == 0)
    for (auto* verb : visible_verbs(*p.level))
      if (starts_with(verb->get_name(), current)) out.push_back(verb->get_name());
  if (const auto* slot = positional_at(*p.level, p.positionals)) {
    const auto values = positional_values(*slot, p.path);
    if (values.files && out.empty()) return {kCompleteFiles};
    if (!values.files) {
      const auto more = fill(values, "", current, p, names);
      out.insert(out.end(), more.begin(), more.end());
    }
  }
  return out;
}

std::vector<std::string> server_names(NameKind kind, const std::string& server) {
  static const std::map<NameKind, const char*> paths{{NameKind::Spaces, "/api/v1/spaces"},
                                                     {NameKind::Templates, "/api/v1/templates"},
                                                     {NameKind::Pools, "/api/v1/pools"}};
  std::vector<std::string> out;
  try {
    Client client(resolve_endpoint(server));
    client.set_timeout(std::chrono::seconds(3));
    const auto list = client.get(paths.at(kind));
    if (list.is_array())
      for (const auto& item : list)
        if (const auto name = text_of(item, "name"); !name.empty()) out.push_back(name);
  } catch (const std::exception&) {
    return {};  // no server, no login, no pools: nothing to offer
  }
  return out;
}

int run_complete(CLI::App& app, int argc, char** argv) {
  // argv: bowline __complete CWORD WORD0 WORD1 ...
  if (argc < 3) return 0;
  int cword = 0;
  try {
    cword = std::stoi(argv[2]);
  } catch (const std::exception&) {
    return 0;
  }
  std::vector<std::string> words;
  for (int i = 3; i < argc; ++i) words.emplace_back(argv[i]);
  if (cword < 1 || static_cast<std::size_t>(cword) > words.size()) return 0;
  const auto current = static_cast<std::size_t>(cword) < words.size() ? words[cword] : "";
  words.resize(static_cast<std::size_t>(cword));
  for (const auto& candidate : complete(app, words, current, server_names))
    std::cout << candidate << "\n";
  return 0;
}

}  // namespace bowline::cli
