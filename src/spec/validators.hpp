// Checks of single values, independent of YAML. Each returns an empty string when the value
// is fine, else a message that says what is wrong.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "spec/spec.hpp"

namespace bowline::spec {

// libvirt domain name: characters outside [A-Za-z0-9_.+-] become '-'.
std::string sanitize_domain_name(std::string_view name);
std::string check_domain_name(std::string_view sanitized);

// RFC 1123 host name: labels of 1-63 letters, digits and '-', not starting or ending with
// '-', 253 characters at most.
std::string check_hostname(std::string_view hostname);

// A DNS-1123 label, as Kubernetes names disks and networks.
std::string check_dns_label(std::string_view name);

// Splits an image reference into kind + checks it: bare library name, http(s) URL whose last
// path segment names the cached file, or an absolute path without `..`.
std::string check_image(std::string_view reference, ImageKind& kind);
// The file name an URL is cached under: its last path segment, query and fragment dropped.
std::string url_file_name(std::string_view url);
// An http:// URL (any case): one that needs imageChecksum.
bool is_plain_http_url(std::string_view url);

// "sha256:<64 hex>" -> lowercase hex.
std::string check_image_checksum(std::string_view text, std::string& sha256_hex);

std::string check_env_name(std::string_view name);

// knot's passthrough forms: pci_DDDD_BB_SS_F, usb_BBB_DDD, [0x]vvvv:[0x]pppp.
std::string parse_device(std::string_view text, Device& out);
// A GPU given as a PCI address (pci_0000_01_00_0); nullopt for a device-plugin name.
std::optional<Device> gpu_pci_address(const std::string& gpu);

// One OpenSSH public key line: [options] type base64 [comment], base64 naming the same type.
// Without `allow_options`, the line must start with the type (an account's key, which
// bowline, not the user, places in authorized_keys).
std::string check_ssh_public_key(std::string_view line, bool allow_options = true);

// A CPU model: host-model, host-passthrough or a libvirt model name.
std::string check_cpu_model(std::string_view model);

}  // namespace bowline::spec
