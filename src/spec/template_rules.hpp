// What a stored template must be, besides a valid spec: its name and its size. Here so that the
// API, the CLI and the web UI's answers all come from one rule.
#pragma once

#include <cstddef>
#include <string>

namespace bowline::spec {

// Bytes of YAML a template may hold.
inline constexpr std::size_t kMaxTemplateBytes = 512 * 1024;

// Empty when `name` is a template name (1 to 63 letters, digits, '-', '_' and '.', starting
// with a letter or digit); else what is wrong with it.
std::string template_name_problem(const std::string& name);

// Empty when `yaml` is small enough; else the message.
std::string template_size_problem(const std::string& yaml);

}  // namespace bowline::spec
