// knot's fields: name, hostname, image, memory, cpus, disk, environment, devices.
#include <map>

#include "spec/builder.hpp"
#include "spec/quantity.hpp"
#include "spec/validators.hpp"

namespace bowline::spec {
namespace {

constexpr std::uint64_t kMiB = 1ull << 20;
constexpr std::uint64_t kMaxCpus = 4294967295ull;

}  // namespace

void SpecBuilder::read_identity(const YAML::Node& root) {
  const YAML::Node name = root["name"];
  if (!Reader::absent(name)) {
    if (auto value = string_field(name, "name")) {
      spec_.name = sanitize_domain_name(*value);
      if (auto problem = check_domain_name(spec_.name); !problem.empty())
        r_.error(name, "name", problem);
    } else if (unknown("name")) {
      spec_.name = name.Scalar();
    }
  } else {
    const std::string fallback = "${{ .user.username }}-${{ .space.name }}";
    auto value = r_.string(YAML::Node(fallback), "name");
    spec_.name = value ? sanitize_domain_name(*value) : fallback;
    if (value) {
      if (auto problem = check_domain_name(spec_.name); !problem.empty())
        r_.error(root, "name", "the default name <username>-<space name>: " + problem);
    }
  }

  const YAML::Node hostname = root["hostname"];
  if (!Reader::absent(hostname)) {
    if (auto value = string_field(hostname, "hostname")) {
      spec_.hostname = *value;
      if (auto problem = check_hostname(*value); !problem.empty())
        r_.error(hostname, "hostname", problem);
    } else if (unknown("hostname")) {
      spec_.hostname = hostname.Scalar();
    }
  } else {
    const std::string fallback = "${{ .space.name }}";
    auto value = r_.string(YAML::Node(fallback), "hostname");
    spec_.hostname = value ? *value : fallback;
    if (value) {
      if (auto problem = check_hostname(*value); !problem.empty())
        r_.error(root, "hostname",
                 "the default host name is the space name, which is not a valid host name (" +
                     problem + "): set hostname");
    }
  }
}

void SpecBuilder::read_image(const YAML::Node& root) {
  const YAML::Node image = root["image"];
  bool plain_http = false;
  const YAML::Node disks = root["disks"];
  const bool boots_from_a_disk = disks && disks.IsSequence() && disks.size() > 0;
  if (Reader::absent(image) && boots_from_a_disk) {
    // Cozystack's form: no image, the VM boots from disks[0] (the owner's disk of that name).
    if (!Reader::absent(root["disk"]))
      r_.error(Reader::key_of(root, "disk"), "disk",
               "disk sizes the system disk made from image; without image the space boots from "
               "disks[0], whose size is its own (bowline disk create NAME --size SIZE)");
  } else if (Reader::absent(image)) {
    r_.error(Reader::key_of(root, "image"), "image",
             "image must be set: a library name (debian-12), an https:// URL or an absolute "
             "path; or leave it out and boot from disks[0], one of the owner's disks");
  } else if (auto value = string_field(image, "image")) {
    spec_.image.reference = *value;
    if (auto problem = check_image(*value, spec_.image.kind); !problem.empty())
      r_.error(image, "image", problem);
    else
      plain_http = is_plain_http_url(*value);
  } else if (unknown("image")) {
    spec_.image.reference = image.Scalar();
  }
  const YAML::Node checksum = root["imageChecksum"];
  if (auto value = string_field(checksum, "imageChecksum")) {
    std::string hex;
    if (auto problem = check_image_checksum(*value, hex); !problem.empty())
      r_.error(checksum, "imageChecksum", problem);
    else
      spec_.image.sha256 = hex;
  }
  // Only a checksum makes a plain-HTTP download trustworthy (a bad or templated one is
  // reported, or checked, on its own).
  if (plain_http && Reader::absent(checksum))
    r_.error(image, "image",
             "an http:// image needs imageChecksum: plain HTTP can be altered in transit, so give "
             "the image's sha256:<64 hex digits> in imageChecksum to pin it (or use https://)");
}

void SpecBuilder::read_knot_sizing(const YAML::Node& root) {
  auto size = [&](const char* key, std::uint64_t minimum,
                  const std::string& too_small) -> std::optional<std::uint64_t> {
    const YAML::Node node = root[key];
    auto value = string_field(node, key);
    if (!value) return std::nullopt;
    auto parsed = parse_size(*value);
    if (!parsed.ok()) {
      r_.error(node, key, parsed.error());
      return std::nullopt;
    }
    if (parsed.value() < minimum) {
      r_.error(node, key, too_small);
      return std::nullopt;
    }
    return parsed.value();
  };
  spec_.memory_bytes =
      size("memory", kMiB,
           "below 1 MiB: a bare number is bytes, so \"memory: 2048\" asks for 2048 bytes. Write "
           "a unit: 2048M or 2G (knot would silently give 512M here; bowline refuses)");
  spec_.disk_bytes =
      size("disk", kMiB, "below 1 MiB: a bare number is bytes; write a unit, e.g. 20G");

  const YAML::Node cpus = root["cpus"];
  if (!Reader::absent(cpus)) {
    bool is_unknown = false;
    if (auto text = r_.string(cpus, "cpus", &is_unknown)) {
      auto parsed = parse_whole_number(*text, kMaxCpus);
      if (!parsed.ok())
        r_.error(cpus, "cpus", parsed.error());
      else
        spec_.cpus = static_cast<std::uint32_t>(parsed.value());
    }
    if (is_unknown) unknown_.insert("cpus");
  }
}

void SpecBuilder::read_environment(const YAML::Node& node) {
  if (Reader::absent(node) || !r_.sequence(node, "environment")) return;
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const auto path = index_path("environment", i);
    auto entry = r_.string(node[i], path);
    if (!entry) continue;
    const auto eq = entry->find('=');
    if (eq == std::string::npos) {
      r_.error(node[i], path, "\"" + *entry + "\" must be KEY=value");
      continue;
    }
    EnvVar var{entry->substr(0, eq), entry->substr(eq + 1)};
    if (auto problem = check_env_name(var.name); !problem.empty()) {
      r_.error(node[i], path, problem);
      continue;
    }
    // Said here, not when the seed is written: the template was accepted by then.
    if (var.value.find('\0') != std::string::npos) {
      r_.error(node[i], path, var.name + " holds a NUL character, which a shell cannot carry");
      continue;
    }
    if (auto [it, inserted] = seen.emplace(var.name, i); !inserted) {
      r_.error(node[i], path,
               var.name + " is already set by environment[" + std::to_string(it->second) + "]");
      continue;
    }
    spec_.environment.push_back(std::move(var));
  }
}

void SpecBuilder::read_devices(const YAML::Node& node) {
  if (Reader::absent(node) || !r_.sequence(node, "devices")) return;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const auto path = index_path("devices", i);
    auto text = r_.string(node[i], path);
    if (!text) continue;
    Device device;
    if (auto problem = parse_device(*text, device); !problem.empty()) {
      r_.error(node[i], path, problem);
      continue;
    }
    for (const auto& other : spec_.devices)
      if (other.same(device)) {
        r_.error(node[i], path, "\"" + *text + "\" is listed twice");
        text.reset();
        break;
      }
    if (text) spec_.devices.push_back(std::move(device));
  }
}

}  // namespace bowline::spec
