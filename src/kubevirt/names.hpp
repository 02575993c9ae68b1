// Kubernetes' naming rules, checked before anything is sent to a cluster. Each returns an
// empty string when the name is fine, else a message naming the rule it breaks.
#pragma once

#include <string>
#include <string_view>

namespace bowline::kubevirt {

// Object names (VirtualMachine, Secret, DataVolume): lowercase letters, digits, '-' and '.',
// starting and ending with a letter or digit, 253 characters at most.
std::string check_subdomain(std::string_view name);

// Service names and namespaces: lowercase letters, digits and '-', starting with a letter
// (a digit too for `dns1123_label`), ending with a letter or digit, 63 characters at most.
std::string check_dns1035_label(std::string_view name);
std::string check_dns1123_label(std::string_view name);

// A label value: empty, or up to 63 letters, digits, '-', '_' and '.', starting and ending
// with a letter or digit.
bool is_label_value(std::string_view value);

}  // namespace bowline::kubevirt
