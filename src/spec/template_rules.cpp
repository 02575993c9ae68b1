#include "spec/template_rules.hpp"

#include <algorithm>
#include <cctype>

namespace bowline::spec {

std::string template_name_problem(const std::string& name) {
  const bool ok = !name.empty() && name.size() <= 63 &&
                  std::isalnum(static_cast<unsigned char>(name.front())) &&
                  std::all_of(name.begin(), name.end(), [](unsigned char c) {
                    return std::isalnum(c) || c == '-' || c == '_' || c == '.';
                  });
  if (ok) return {};
  return "template name \"" + name +
         "\": use 1 to 63 letters, digits, '-', '_' and '.', starting with a letter or digit";
}

std::string template_size_problem(const std::string& yaml) {
  if (yaml.size() <= kMaxTemplateBytes) return {};
  return "the template is larger than " + std::to_string(kMaxTemplateBytes / 1024) + " KiB";
}

}  // namespace bowline::spec
