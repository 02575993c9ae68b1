// Reading template files and --var values, shared by the template verbs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "spec/expand.hpp"
#include "spec/loader.hpp"
#include "util/files.hpp"

namespace bowline::cli {

using util::read_file;

// --var user.username=alice -> {"user.username": "alice"}; a leading '.' is allowed.
// Throws CLI::ValidationError on a malformed pair.
spec::Variables parse_vars(const std::vector<std::string>& pairs);

void print_diagnostics(const spec::Diagnostics& diagnostics, const std::string& file,
                       std::ostream& out);

struct LoadedTemplate {
  std::optional<spec::Spec> spec;
  int exit_code = 0;  // when spec is empty
  explicit operator bool() const { return spec.has_value(); }
};

// Loads and validates with values; prints problems (warnings to stderr when valid).
LoadedTemplate load_template(const std::string& file, const spec::Variables* values);

}  // namespace bowline::cli
