#include "api/preview_names.hpp"

namespace bowline::api {

namespace {
constexpr std::size_t kLabelMax = 63;
constexpr std::string_view kSeparator = "--";
}  // namespace

std::optional<std::string> preview_label(std::uint16_t port, std::string_view space,
                                         std::string_view owner) {
  auto label = std::to_string(port) + std::string(kSeparator) + std::string(space) +
               std::string(kSeparator) + std::string(owner);
  if (label.size() > kLabelMax) return std::nullopt;
  return label;
}

std::optional<std::string> preview_url(const PreviewOptions& options, std::uint16_t port,
                                       std::string_view space, std::string_view owner) {
  if (!options.enabled()) return std::nullopt;
  const auto label = preview_label(port, space, owner);
  if (!label) return std::nullopt;
  const bool default_port = options.port == (options.https ? 443 : 80);
  return std::string(options.https ? "https://" : "http://") + *label + "." + options.domain +
         (default_port ? "" : ":" + std::to_string(options.port)) + "/";
}

bool is_preview_host(const PreviewOptions& options, std::string_view host) {
  if (!options.enabled() || host.size() <= options.domain.size() + 1) return false;
  return host.ends_with(options.domain) && host[host.size() - options.domain.size() - 1] == '.';
}

std::vector<PreviewTarget> preview_targets(const PreviewOptions& options, std::string_view host) {
  std::vector<PreviewTarget> out;
  if (!is_preview_host(options, host)) return out;
  const auto label = host.substr(0, host.size() - options.domain.size() - 1);
  if (label.find('.') != std::string_view::npos) return out;
  const auto first = label.find(kSeparator);
  if (first == 0 || first == std::string_view::npos || first > 5) return out;
  unsigned long port = 0;
  for (const char c : label.substr(0, first)) {
    if (c < '0' || c > '9') return out;
    port = port * 10 + static_cast<unsigned long>(c - '0');
  }
  if (port == 0 || port > 65535) return out;
  const auto rest = label.substr(first + kSeparator.size());
  for (auto at = rest.find(kSeparator); at != std::string_view::npos;
       at = rest.find(kSeparator, at + 1)) {
    const auto space = rest.substr(0, at), owner = rest.substr(at + kSeparator.size());
    if (space.empty() || owner.empty()) continue;
    out.push_back({static_cast<std::uint16_t>(port), std::string(space), std::string(owner)});
  }
  return out;
}

}  // namespace bowline::api
