#include "spec/validators.hpp"

#include <openssl/evp.h>

#include <cctype>
#include <charconv>
#include <vector>

#include "util/strings.hpp"

namespace bowline::spec {
namespace {

bool is_alnum(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}
bool is_hex(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}

bool all_of(std::string_view s, bool (*pred)(char)) {
  for (char c : s)
    if (!pred(c)) return false;
  return true;
}

bool bare_name_char(char c) {
  return is_alnum(c) || c == '.' || c == '_' || c == '-';
}

std::string check_bare_file_name(std::string_view name, std::string_view what) {
  if (name.empty()) return std::string(what) + " is empty";
  if (name == "." || name == "..") return std::string(what) + " must not be . or ..";
  if (!all_of(name, bare_name_char))
    return std::string(what) + " may only hold letters, digits, '.', '_' and '-'";
  return {};
}

std::optional<std::uint32_t> hex_field(std::string_view s, std::size_t min, std::size_t max) {
  if (s.size() < min || s.size() > max || !all_of(s, is_hex)) return std::nullopt;
  std::uint32_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v, 16);
  return v;
}

std::optional<std::uint32_t> dec_field(std::string_view s, std::size_t min, std::size_t max) {
  if (s.size() < min || s.size() > max) return std::nullopt;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  std::uint32_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v, 10);
  return v;
}

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.empty() || text.size() % 4 != 0) return std::nullopt;
  for (char c : text)
    if (!(is_alnum(c) || c == '+' || c == '/' || c == '=')) return std::nullopt;
  std::string out(text.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0) return std::nullopt;
  std::size_t padding = 0;
  if (text.back() == '=') ++padding;
  if (text.size() > 1 && text[text.size() - 2] == '=') ++padding;
  out.resize(static_cast<std::size_t>(n) - padding);
  return out;
}

}  // namespace

std::string sanitize_domain_name(std::string_view name) {
  std::string out(name);
  for (auto& c : out)
    if (!(is_alnum(c) || c == '_' || c == '.' || c == '+' || c == '-')) c = '-';
  return out;
}

std::string check_domain_name(std::string_view name) {
  if (name.empty()) return "the domain name is empty";
  if (name.size() > 200) return "the domain name is longer than 200 characters";
  // The name also names the space's directory: a leading '.' or '-' would hide it or read as
  // an option, and "." or ".." would escape the images path.
  if (!is_alnum(name.front()) && name.front() != '_')
    return "the domain name must start with a letter, a digit or '_' (it was \"" +
           std::string(name) + "\")";
  return {};
}

std::string check_hostname(std::string_view hostname) {
  if (hostname.empty()) return "the host name is empty";
  if (hostname.size() > 253) return "the host name is longer than 253 characters";
  for (const auto& label : util::split(hostname, '.')) {
    if (label.empty())
      return "\"" + std::string(hostname) + "\" has an empty label (two dots, or a dot at an end)";
    if (label.size() > 63) return "the label \"" + label + "\" is longer than 63 characters";
    for (char c : label)
      if (!(is_alnum(c) || c == '-'))
        return "\"" + std::string(hostname) +
               "\" is not a valid host name: only letters, digits, '-' and '.' are allowed";
    if (label.front() == '-' || label.back() == '-')
      return "the label \"" + label + "\" must not start or end with '-'";
  }
  return {};
}

std::string check_dns_label(std::string_view name) {
  if (name.empty()) return "the name is empty";
  if (name.size() > 63) return "\"" + std::string(name) + "\" is longer than 63 characters";
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
      return "\"" + std::string(name) + "\" must be lowercase letters, digits and '-'";
  if (name.front() == '-' || name.back() == '-')
    return "\"" + std::string(name) + "\" must not start or end with '-'";
  return {};
}

std::string url_file_name(std::string_view url) {
  auto cut = url.find_first_of("?#");
  if (cut != std::string_view::npos) url = url.substr(0, cut);
  const auto slash = url.rfind('/');
  return std::string(slash == std::string_view::npos ? url : url.substr(slash + 1));
}

bool is_plain_http_url(std::string_view url) {
  return util::starts_with_ci(url, "http://");
}

std::string check_image(std::string_view ref, ImageKind& kind) {
  if (ref.empty()) return "image must be set: a library name, an https:// URL or an absolute path";
  for (char c : ref)
    if (std::isspace(static_cast<unsigned char>(c)) || std::iscntrl(static_cast<unsigned char>(c)))
      return "the image reference must not contain spaces or control characters";
  const auto scheme_end = ref.find("://");
  if (scheme_end != std::string_view::npos) {
    const auto scheme = util::to_lower(ref.substr(0, scheme_end));
    if (scheme != "https" && scheme != "http")
      return "the scheme " + scheme + ":// is not supported: use https:// (or http://)";
    kind = ImageKind::Url;
    const auto rest = ref.substr(scheme_end + 3);
    const auto host_end = rest.find('/');
    if (rest.empty() || host_end == 0) return "the URL has no host";
    if (host_end == std::string_view::npos)
      return "the URL must end in a file name (e.g. https://host/debian-12.qcow2)";
    const auto file = url_file_name(rest.substr(host_end));
    if (auto problem = check_bare_file_name(file, "the URL's file name"); !problem.empty())
      return problem + " (the base image is cached under that name)";
    return {};
  }
  if (ref.front() == '/') {
    kind = ImageKind::Path;
    for (const auto& segment : util::split(ref.substr(1), '/'))
      if (segment == "..") return "the image path must not contain '..'";
    if (ref.back() == '/') return "the image path names a directory, not a file";
    return {};
  }
  if (ref.find('/') != std::string_view::npos)
    return "\"" + std::string(ref) +
           "\" is a relative path: use a bare name from the image library, an absolute path or an "
           "URL";
  kind = ImageKind::Library;
  return check_bare_file_name(ref, "an image name");
}

std::string check_image_checksum(std::string_view text, std::string& sha256_hex) {
  if (!text.starts_with("sha256:")) return "expected sha256:<64 hex digits>";
  const auto hex = text.substr(7);
  if (hex.size() != 64)
    return "expected sha256:<64 hex digits>, got " + std::to_string(hex.size()) +
           " characters after sha256:";
  if (!all_of(hex, is_hex))
    return "expected sha256:<64 hex digits>, got a character that is not 0-9 or a-f";
  sha256_hex = util::to_lower(hex);
  return {};
}

std::string check_env_name(std::string_view name) {
  if (name.empty()) return "the variable name is empty (expected KEY=value)";
  if (std::isdigit(static_cast<unsigned char>(name.front())))
    return "\"" + std::string(name) + "\" must not start with a digit";
  for (char c : name)
    if (!(is_alnum(c) || c == '_'))
      return "\"" + std::string(name) + "\" is not a variable name: letters, digits and '_' only";
  return {};
}

std::string parse_device(std::string_view text, Device& out) {
  const auto lower = util::to_lower(text);
  out.text = std::string(text);
  if (lower.starts_with("pci_")) {
    const auto parts = util::split(std::string_view(lower).substr(4), '_');
    if (parts.size() == 4) {
      auto d = hex_field(parts[0], 2, 4), b = hex_field(parts[1], 2, 4),
           s = hex_field(parts[2], 2, 4), f = hex_field(parts[3], 1, 2);
      if (d && b && s && f && *s < 32 && *f < 8) {
        out.address = PciAddress{*d, *b, *s, *f};
        return {};
      }
    }
    return "\"" + std::string(text) +
           "\" must be a PCI address like pci_0000_01_00_0 (domain_bus_slot_function in hex)";
  }
  if (lower.starts_with("usb_")) {
    const auto parts = util::split(std::string_view(lower).substr(4), '_');
    if (parts.size() == 2) {
      auto bus = dec_field(parts[0], 1, 3), dev = dec_field(parts[1], 1, 3);
      if (bus && dev) {
        out.address = UsbAddress{*bus, *dev};
        return {};
      }
    }
    return "\"" + std::string(text) + "\" must be a USB bus.device pair like usb_002_003";
  }
  const auto colon = lower.find(':');
  if (colon != std::string::npos) {
    auto strip = [](std::string_view s) { return s.starts_with("0x") ? s.substr(2) : s; };
    auto vendor = hex_field(strip(std::string_view(lower).substr(0, colon)), 1, 4);
    auto product = hex_field(strip(std::string_view(lower).substr(colon + 1)), 1, 4);
    if (vendor && product) {
      out.address = UsbId{*vendor, *product};
      return {};
    }
  }
  return "\"" + std::string(text) +
         "\" must be a PCI address (pci_0000_01_00_0), a USB pair (usb_002_003) or a "
         "vendor:product pair (0x8086:0x1234)";
}

std::string check_ssh_public_key(std::string_view line, bool allow_options) {
  static const std::vector<std::string_view> kTypes = {"ssh-ed25519",
                                                       "ssh-rsa",
                                                       "ecdsa-sha2-nistp256",
                                                       "ecdsa-sha2-nistp384",
                                                       "ecdsa-sha2-nistp521",
                                                       "sk-ssh-ed25519@openssh.com",
                                                       "sk-ecdsa-sha2-nistp256@openssh.com",
                                                       "ssh-dss"};
  if (line.find('\n') != std::string_view::npos || line.find('\r') != std::string_view::npos)
    return "an SSH key must be one line";
  std::vector<std::string> words;
  for (auto& w : util::split(util::trim(line), ' '))
    if (!w.empty()) words.push_back(w);
  // Skip an options field ("from=...,no-pty ssh-ed25519 AAAA...").
  std::size_t i = 0;
  auto is_type = [&](const std::string& w) {
    for (auto t : kTypes)
      if (t == w) return true;
    return false;
  };
  if (allow_options && !words.empty() && !is_type(words[0])) i = 1;
  if (words.size() < i + 2 || !is_type(words[i]))
    return "not an OpenSSH public key: expected \"<type> <base64> [comment]\" with type "
           "ssh-ed25519, ssh-rsa, ecdsa-sha2-nistp256, ...";
  const auto blob = base64_decode(words[i + 1]);
  if (!blob || blob->size() < 4) return "the key's base64 part does not decode";
  const auto& b = *blob;
  const std::uint32_t n =
      (static_cast<unsigned char>(b[0]) << 24) | (static_cast<unsigned char>(b[1]) << 16) |
      (static_cast<unsigned char>(b[2]) << 8) | static_cast<unsigned char>(b[3]);
  if (n > b.size() - 4 || b.compare(4, n, words[i]) != 0)
    return "the key's data does not match its type " + words[i] + " (truncated or pasted wrongly?)";
  return {};
}

std::string check_cpu_model(std::string_view model) {
  if (model.empty()) return "cpuModel is empty";
  if (model.size() > 64) return "cpuModel is longer than 64 characters";
  for (char c : model)
    if (!(is_alnum(c) || c == '-' || c == '_' || c == '.'))
      return "\"" + std::string(model) +
             "\" is not a CPU model name (host-model, host-passthrough or a libvirt model such as "
             "Skylake-Server)";
  return {};
}

std::optional<Device> gpu_pci_address(const std::string& gpu) {
  Device device;
  if (parse_device(gpu, device).empty() && device.kind() == DeviceKind::Pci) return device;
  return std::nullopt;
}

}  // namespace bowline::spec
