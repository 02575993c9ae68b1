#include "kubevirt/names.hpp"

namespace bowline::kubevirt {
namespace {

bool lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}
bool alnum(char c) {
  return lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

std::string quoted(std::string_view name) {
  return "\"" + std::string(name) + "\"";
}

// What is wrong with a DNS-1123 label, or empty.
std::string label_problem(std::string_view label) {
  if (label.empty()) return "has an empty part";
  for (char c : label) {
    if (c >= 'A' && c <= 'Z') return "has an uppercase letter (Kubernetes names are lowercase)";
    if (c == '_') return "has '_', which Kubernetes names cannot hold (use '-')";
    if (!lower_alnum(c) && c != '-')
      return std::string("has '") + c + "': only lowercase letters, digits and '-' are allowed";
  }
  if (label.front() == '-' || label.back() == '-') return "starts or ends with '-'";
  return {};
}

}  // namespace

std::string check_subdomain(std::string_view name) {
  if (name.empty()) return "the name is empty";
  if (name.size() > 253) return quoted(name) + " is longer than 253 characters";
  std::size_t start = 0;
  while (start <= name.size()) {
    const auto dot = name.find('.', start);
    const auto part = name.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (auto problem = label_problem(part); !problem.empty())
      return quoted(name) + " is not a valid Kubernetes object name: it " + problem;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return {};
}

std::string check_dns1123_label(std::string_view name) {
  if (name.empty()) return "the name is empty";
  if (name.size() > 63) return quoted(name) + " is longer than 63 characters";
  if (name.find('.') != std::string_view::npos)
    return quoted(name) + " has '.', which this name cannot hold";
  if (auto problem = label_problem(name); !problem.empty()) return quoted(name) + " " + problem;
  return {};
}

std::string check_dns1035_label(std::string_view name) {
  if (auto problem = check_dns1123_label(name); !problem.empty()) return problem;
  if (!(name.front() >= 'a' && name.front() <= 'z'))
    return quoted(name) + " starts with a digit; this name must start with a letter";
  return {};
}

bool is_label_value(std::string_view value) {
  if (value.empty()) return true;
  if (value.size() > 63 || !alnum(value.front()) || !alnum(value.back())) return false;
  for (char c : value)
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

}  // namespace bowline::kubevirt
