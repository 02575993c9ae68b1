// A Plan as libvirt domain XML, written with pugixml (every value escaped by it, never pasted
// into text). Deterministic: the same plan and metadata give the same bytes, indented by two
// spaces. Our own metadata element marks the domain as bowline's and says which space it is.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "plan/plan.hpp"

namespace bowline::libvirt {

// The namespace of our <metadata> element, for virDomainGetMetadata/SetMetadata.
inline constexpr const char* kMetadataNamespace = "https://bowline.dev/xmlns/space/1";
inline constexpr const char* kMetadataPrefix = "bowline";
inline constexpr const char* kMetadataElement = "space";

// What bowline needs to recognise its domains; empty fields are left out of the XML.
struct DomainMetadata {
  std::string space_id;
  std::string space_name;
  std::string template_id;
  std::string template_name;
  std::string owner;  // the owner's username
  std::string owner_id;

  bool operator==(const DomainMetadata&) const = default;
};

DomainMetadata metadata_for(const plan::SpaceFacts& space, const plan::Owner& user);

// Throws std::invalid_argument when a value cannot be written so that libvirt accepts it: a
// name or path with a line break, a character XML cannot hold, a malformed UUID or MAC, an
// unknown disk bus, no memory or vCPUs, a display without a VNC password. Free text (notes,
// metadata) takes anything; notes become XML comments, with `--` and control characters
// defused.
std::string render_domain_xml(const plan::Plan& plan, const DomainMetadata& metadata = {});

// Our metadata from a domain's XML (the whole <domain>, or just the element as returned by
// virDomainGetMetadata); nullopt when the document is not bowline's or not XML. Matches the
// namespace URI, whatever its prefix.
std::optional<DomainMetadata> read_domain_metadata(std::string_view xml);

}  // namespace bowline::libvirt
