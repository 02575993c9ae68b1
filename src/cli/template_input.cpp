#include "cli/template_input.hpp"

#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/app.hpp"

namespace bowline::cli {

spec::Variables parse_vars(const std::vector<std::string>& pairs) {
  spec::Variables values;
  for (const auto& pair : pairs) {
    const auto eq = pair.find('=');
    if (eq == std::string::npos || eq == 0)
      throw CLI::ValidationError("--var", "expected NAME=VALUE, got \"" + pair + "\"");
    auto name = pair.substr(0, eq);
    if (name.front() == '.') name.erase(0, 1);
    values[name] = pair.substr(eq + 1);
  }
  return values;
}

void print_diagnostics(const spec::Diagnostics& diagnostics, const std::string& file,
                       std::ostream& out) {
  for (const auto& d : diagnostics.sorted()) out << spec::format(d, file) << "\n";
  if (diagnostics.dropped() > 0) out << file << ": " << spec::more_problems(diagnostics) << "\n";
}

LoadedTemplate load_template(const std::string& file, const spec::Variables* values) {
  const auto text = read_file(file);
  if (!text) {
    std::cerr << file << ": cannot read the file\n";
    return {std::nullopt, kExitUsage};
  }
  auto result = spec::load_spec(*text, values);
  if (!result.spec) {
    print_diagnostics(result.diagnostics, file, std::cout);
    return {std::nullopt, kExitInvalid};
  }
  print_diagnostics(result.diagnostics, file, std::cerr);
  return {std::move(result.spec), kExitOk};
}

}  // namespace bowline::cli
