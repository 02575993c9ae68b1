// Preview URLs' names: https://PORT--SPACE--OWNER.DOMAIN/ for a port a template marks for a
// preview (spec::Preview). One DNS label per preview, so that a wildcard certificate and a
// wildcard DNS name serve them all, and each is a browser origin of its own.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bowline::api {

struct PreviewOptions {
  std::string domain;  // "preview.example.com"; empty: no previews
  // Where the web UI is, as browsers reach it: "https://bowline.example.com:7470" (previews'
  // logins and single sign-on's redirect go there).
  std::string ui_origin;
  bool https = true;         // the previews' scheme
  std::uint16_t port = 443;  // the previews' port (in URLs unless it is the scheme's own)
  bool enabled() const { return !domain.empty(); }
};

// "8000--dev--dana"; nullopt when it is longer than a DNS label may be (63).
std::optional<std::string> preview_label(std::uint16_t port, std::string_view space,
                                         std::string_view owner);
// "https://8000--dev--dana.preview.example.com:7470/"; nullopt as for the label.
std::optional<std::string> preview_url(const PreviewOptions& options, std::uint16_t port,
                                       std::string_view space, std::string_view owner);

// Whether `host` (lower case, no port) is a name under the preview domain.
bool is_preview_host(const PreviewOptions& options, std::string_view host);

// What a preview host may mean: its port, and every split of the rest into SPACE--OWNER at a
// "--" (names may hold "--" themselves; the store says which split exists). Empty when the
// host is not one label under the domain with a port in front.
struct PreviewTarget {
  std::uint16_t port = 0;
  std::string space, owner;
};
std::vector<PreviewTarget> preview_targets(const PreviewOptions& options, std::string_view host);

}  // namespace bowline::api
