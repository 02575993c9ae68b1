// server.nodes' libvirt hosts as LibvirtNodes, each on its own connection.
#include "server/listed_nodes.hpp"

#include <algorithm>

#include "engine/engine_error.hpp"
#include "spec/ipv4.hpp"
#include "ssh/forward.hpp"
#include "util/upstream_error.hpp"

namespace bowline::server {

namespace {

// The bridges a node's entry names: its host's interfaces are not the server's to read.
class DeclaredBridges final : public engine::HostProbe {
 public:
  explicit DeclaredBridges(std::vector<std::string> bridges) : bridges_(std::move(bridges)) {}
  bool bridge_exists(const std::string& name) const override {
    return std::find(bridges_.begin(), bridges_.end(), name) != bridges_.end();
  }
  std::vector<std::string> bridge_ports(const std::string&) const override { return {}; }

 private:
  std::vector<std::string> bridges_;
};

// What GET /api/v1/nodes says of a listed node: reachable (its libvirt answers now) or not.
std::function<nlohmann::json()> reachability(libvirt::LibvirtHypervisor& hypervisor,
                                             const NodeSetting& n) {
  return [&hypervisor, name = n.name, uri = n.uri, labels = n.labels, pool = n.pool] {
    nlohmann::json record{{"name", name},
                          {"kind", "libvirt"},
                          {"uri", uri},
                          {"labels", labels},
                          {"checks", nlohmann::json::array()}};
    if (!pool.empty()) record["pool"] = pool;
    try {
      hypervisor.list();
      record["state"] = "ready";
      record["ready"] = true;
      record["runtimes"] = nlohmann::json::array({"kvm"});
    } catch (const std::exception& e) {
      record["state"] = "unreachable";
      record["ready"] = false;
      record["reason"] = e.what();
      record["runtimes"] = nlohmann::json::array();
    }
    return record;
  };
}

// The parts of a qemu+ssh URI its sshd is reached by: [user@]host[:port] and keyfile=.
struct SshTarget {
  std::string user = "root", host, key_file;
  std::uint16_t port = 22;
};

SshTarget ssh_target_of(const NodeSetting& n) {
  SshTarget t;
  const auto scheme = n.uri.find("://");
  if (scheme == std::string::npos) return t;
  auto authority = n.uri.substr(scheme + 3, n.uri.find('/', scheme + 3) - scheme - 3);
  if (const auto at = authority.find('@'); at != std::string::npos) {
    t.user = authority.substr(0, at);
    authority.erase(0, at + 1);
  }
  // [v6 address]:port, or host:port; a port that is not a number is the URI's problem, which
  // libvirt reports when it connects.
  const auto close =
      !authority.empty() && authority.front() == '[' ? authority.find(']') : std::string::npos;
  const auto colon = authority.find(':', close == std::string::npos ? 0 : close);
  if (colon != std::string::npos) {
    const auto port = authority.substr(colon + 1);
    if (!port.empty() && port.size() <= 5 &&
        port.find_first_not_of("0123456789") == std::string::npos && std::stoul(port) <= 65535)
      t.port = static_cast<std::uint16_t>(std::stoul(port));
    authority.erase(colon);
  }
  if (close != std::string::npos) authority = authority.substr(1, close - 1);
  t.host = authority;
  if (const auto key = n.uri.find("keyfile="); key != std::string::npos)
    t.key_file = n.uri.substr(key + 8, n.uri.find('&', key) - key - 8);
  if (!n.ssh_key.empty()) t.key_file = n.ssh_key.string();
  return t;
}

// TCP to the node's guests through its sshd, with its host key pinned; without a key in the
// settings, a refusal saying what to add.
std::function<int(const std::string&, std::uint16_t, std::chrono::milliseconds)> through_sshd(
    const NodeSetting& n) {
  return [n, t = ssh_target_of(n)](const std::string& address, std::uint16_t port,
                                   std::chrono::milliseconds timeout) {
    if (n.ssh_host_key.empty() || t.host.empty() || t.key_file.empty())
      throw engine::EngineError(
          engine::EngineError::Kind::Invalid,
          "TCP to the guests of node " + n.name +
              " goes through its sshd: give its server.nodes entry ssh_host_key (the host's "
              "/etc/ssh/ssh_host_ed25519_key.pub) and a qemu+ssh uri with keyfile= (or ssh_key)");
    ssh::ForwardOptions o;
    o.host = t.host;
    o.port = t.port;
    o.user = t.user;
    o.key_file = t.key_file;
    o.host_key_public = n.ssh_host_key;
    o.to_host = address;
    o.to_port = port;
    o.timeout = timeout;
    try {
      return ssh::open_forward(o);
    } catch (const ssh::ForwardError& e) {
      throw util::UpstreamError("ssh", e.what());
    }
  };
}

// The node's images path: as listed, else its pool's directory, asked of its libvirt now.
std::string images_path_of(const NodeSetting& n, engine::PoolNodeFiles& files) {
  if (!n.images_path.empty()) return n.images_path.string();
  try {
    return files.directory();
  } catch (const std::exception& e) {
    throw SettingsError("server.nodes: " + n.name + ": cannot ask pool " + n.pool +
                        " for its directory (" + e.what() +
                        "): give images_path, the pool's directory on its host, so the server "
                        "starts while the host is away");
  }
}

}  // namespace

std::vector<ListedNode> make_listed_nodes(const ServerSettings& settings,
                                          const engine::LibvirtNodeSettings& base,
                                          image::ImageCache& images, image::Disks& disks,
                                          std::ostream& out) {
  std::vector<ListedNode> made;
  for (const auto& n : settings.nodes) {
    if (n.kind != "libvirt")
      throw SettingsError("server.nodes: " + n.name +
                          ": a kubevirt node is named by server.kubevirt.name for now");
    libvirt::LibvirtOptions options;
    options.uri = n.uri;
    ListedNode listed;
    listed.hypervisor = std::make_unique<libvirt::LibvirtHypervisor>(options);
    listed.host = std::make_unique<DeclaredBridges>(n.bridges);
    auto node_settings = base;
    node_settings.name = n.name;
    node_settings.guard = nullptr;
    node_settings.elsewhere = true;
    node_settings.reserve_memory = n.reserve_memory;
    node_settings.connect = through_sshd(n);
    // Its own address is never a guest's (a lease cannot make its sshd connect to itself).
    node_settings.host_addresses = [host = ssh_target_of(n).host] {
      std::set<std::uint32_t> own;
      if (const auto a = spec::Ipv4Address::parse(host)) own.insert(a->value);
      return own;
    };
    node_settings.report = reachability(*listed.hypervisor, n);
    if (!n.pool.empty()) {
      listed.files = std::make_unique<engine::PoolNodeFiles>(*listed.hypervisor, n.pool);
      node_settings.files = listed.files.get();
      node_settings.node.side_by_side = true;
      node_settings.node.images_path = images_path_of(n, *listed.files);
    } else if (!n.images_path.empty()) {
      node_settings.node.images_path = n.images_path.string();
    }
    listed.node = std::make_unique<engine::LibvirtNode>(*listed.hypervisor, images, disks,
                                                        *listed.host, std::move(node_settings));
    out << "bowline server: libvirt node " << n.name << " at " << n.uri << ", spaces' files in "
        << (n.pool.empty() ? "directory " : "pool " + n.pool + " at ") << listed.node->images_path()
        << "\n";
    made.push_back(std::move(listed));
  }
  return made;
}

}  // namespace bowline::server
