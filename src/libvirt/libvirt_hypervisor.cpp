// LibvirtHypervisor: the Hypervisor seam over the libvirt C API.
//
// Connection: one virConnectPtr, replaced when its close callback fired or libvirt says it is
// dead. Each call takes its own reference (virConnectRef) under the mutex and then works
// without it, so calls run in parallel and a reconnect never pulls a connection from under a
// call in flight. Events: one lifecycle callback per connection fans out to the subscribers
// kept in `Shared`, which outlives this object for as long as libvirt holds the callback.
#include "libvirt/libvirt_hypervisor.hpp"

#include <atomic>
#include <map>
#include <mutex>
#include <pugixml.hpp>
#include <sstream>
#include <thread>
#include <utility>

#include "libvirt/libvirt_handles.hpp"
#include "libvirt/nwfilter.hpp"

namespace bowline::libvirt {

using namespace detail;

// ---- shared helpers (detail) -------------------------------------------------------------

namespace detail {

HypervisorError last_error(std::string_view subject, std::string_view action) {
  const virError* error = virGetLastError();
  const int code = error ? error->code : VIR_ERR_INTERNAL_ERROR;
  const int domain = error ? error->domain : VIR_FROM_NONE;
  std::string cause = error && error->message ? error->message : "unknown libvirt error";
  virResetLastError();
  std::string message(subject);
  message += ": cannot ";
  message += action;
  message += ": ";
  message += cause;
  return HypervisorError(message, code, domain, std::move(cause));
}

std::string domain_subject(std::string_view name) {
  return "domain \"" + std::string(name) + "\"";
}

Domain find_domain(virConnectPtr connection, const std::string& name, std::string_view action) {
  virDomainPtr domain = virDomainLookupByName(connection, name.c_str());
  if (!domain) throw last_error(domain_subject(name), action);
  return Domain(domain);
}

DomainState domain_state(int state) {
  switch (state) {
    case VIR_DOMAIN_NOSTATE:
      return DomainState::NoState;
    case VIR_DOMAIN_RUNNING:
      return DomainState::Running;
    case VIR_DOMAIN_BLOCKED:
      return DomainState::Blocked;
    case VIR_DOMAIN_PAUSED:
      return DomainState::Paused;
    case VIR_DOMAIN_SHUTDOWN:
      return DomainState::ShuttingDown;
    case VIR_DOMAIN_SHUTOFF:
      return DomainState::Shutoff;
    case VIR_DOMAIN_CRASHED:
      return DomainState::Crashed;
    case VIR_DOMAIN_PMSUSPENDED:
      return DomainState::PMSuspended;
    default:
      return DomainState::Unknown;
  }
}

}  // namespace detail

// ---- process-wide setup ------------------------------------------------------------------

void ensure_libvirt_event_loop() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (virInitialize() < 0) throw last_error("libvirt", "initialise");
    // Errors reach callers as exceptions; libvirt's default handler would also print them.
    virSetErrorFunc(nullptr, [](void*, virErrorPtr) {});
    if (virEventRegisterDefaultImpl() < 0) throw last_error("libvirt", "register an event loop");
    std::thread([] {
      for (;;) {
        if (virEventRunDefaultImpl() < 0) {
          virResetLastError();
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
      }
    }).detach();
  });
}

namespace {

// ---- events ------------------------------------------------------------------------------

// Subscribers. Callbacks run with `dispatch` held, so removing a subscriber waits for a
// delivery in progress (the mutex is recursive so a callback may unsubscribe itself).
class EventHub {
 public:
  std::uint64_t add(LifecycleCallback callback) {
    std::lock_guard lock(dispatch_);
    const auto id = next_id_++;
    subscribers_.emplace(id, std::make_shared<LifecycleCallback>(std::move(callback)));
    return id;
  }

  void remove(std::uint64_t id) {
    std::lock_guard lock(dispatch_);
    subscribers_.erase(id);
  }

  void deliver(const LifecycleEvent& event) {
    std::lock_guard lock(dispatch_);
    std::vector<std::uint64_t> ids;
    ids.reserve(subscribers_.size());
    for (const auto& [id, callback] : subscribers_) ids.push_back(id);
    for (const auto id : ids) {
      const auto it = subscribers_.find(id);
      if (it == subscribers_.end()) continue;  // removed by an earlier callback
      const auto callback = it->second;        // stays alive if it removes itself
      try {
        (*callback)(event);
      } catch (...) {
        // Documented: a callback's exception is dropped.
      }
    }
  }

 private:
  std::recursive_mutex dispatch_;
  std::map<std::uint64_t, std::shared_ptr<LifecycleCallback>> subscribers_;
  std::uint64_t next_id_ = 1;
};

struct Shared {
  EventHub hub;
};

LifecycleEventType event_type(int event) {
  switch (event) {
    case VIR_DOMAIN_EVENT_DEFINED:
      return LifecycleEventType::Defined;
    case VIR_DOMAIN_EVENT_UNDEFINED:
      return LifecycleEventType::Undefined;
    case VIR_DOMAIN_EVENT_STARTED:
      return LifecycleEventType::Started;
    case VIR_DOMAIN_EVENT_SUSPENDED:
      return LifecycleEventType::Suspended;
    case VIR_DOMAIN_EVENT_RESUMED:
      return LifecycleEventType::Resumed;
    case VIR_DOMAIN_EVENT_STOPPED:
      return LifecycleEventType::Stopped;
    case VIR_DOMAIN_EVENT_SHUTDOWN:
      return LifecycleEventType::Shutdown;
    case VIR_DOMAIN_EVENT_PMSUSPENDED:
      return LifecycleEventType::PMSuspended;
    case VIR_DOMAIN_EVENT_CRASHED:
      return LifecycleEventType::Crashed;
    default:
      return LifecycleEventType::Unknown;
  }
}

int on_lifecycle(virConnectPtr, virDomainPtr domain, int event, int detail, void* opaque) noexcept {
  try {
    auto& shared = *static_cast<std::shared_ptr<Shared>*>(opaque);
    LifecycleEvent e;
    if (const char* name = virDomainGetName(domain)) e.domain = name;
    char uuid[VIR_UUID_STRING_BUFLEN];
    if (virDomainGetUUIDString(domain, uuid) == 0) e.uuid = uuid;
    e.type = event_type(event);
    e.detail = detail;
    shared->hub.deliver(e);
  } catch (...) {
  }
  return 0;
}

void free_shared(void* opaque) noexcept {
  delete static_cast<std::shared_ptr<Shared>*>(opaque);
}

// Set by libvirt's close callback (on the event thread) when the connection dies.
struct CloseFlag {
  std::atomic<bool> closed{false};
};

void on_close(virConnectPtr, int /*reason*/, void* opaque) noexcept {
  static_cast<CloseFlag*>(opaque)->closed.store(true);
}

// ---- small conversions -------------------------------------------------------------------

// `domain "x"` for the domain an XML document defines, for messages about a failed define.
std::string subject_of_xml(const std::string& xml) {
  pugi::xml_document doc;
  if (doc.load_buffer(xml.data(), xml.size())) {
    const std::string name = doc.child("domain").child_value("name");
    if (!name.empty()) return domain_subject(name);
  }
  return "domain XML";
}

bool unsupported_flags(const HypervisorError& e) {
  return e.code() == VIR_ERR_INVALID_ARG &&
         e.cause().find("unsupported flags") != std::string::npos;
}

// "0x10de" or "16" (libvirt writes ids in hex and addresses in decimal).
std::uint32_t number(const char* text) {
  const std::string_view s(text);
  if (s.empty()) return 0;
  const bool hex = s.starts_with("0x") || s.starts_with("0X");
  return static_cast<std::uint32_t>(std::strtoul(text, nullptr, hex ? 16 : 10));
}

DomainStatus status_of(virDomainPtr domain, const std::string& name) {
  int state = 0, reason = 0;
  if (virDomainGetState(domain, &state, &reason, 0) < 0)
    throw last_error(domain_subject(name), "read the state");
  return {domain_state(state), reason};
}

// virDomainGetMetadata returns our element with its namespace stripped (`<space><id>…`):
// libvirt found it by our namespace, so put the namespace back before reading it.
std::optional<DomainMetadata> metadata_from_element(const char* element) {
  pugi::xml_document doc;
  if (!doc.load_string(element)) return std::nullopt;
  auto root = doc.document_element();
  if (!root.attribute("xmlns") && std::string_view(root.name()).find(':') == std::string::npos)
    root.append_attribute("xmlns") = kMetadataNamespace;
  std::ostringstream out;
  doc.save(out, "", pugi::format_raw | pugi::format_no_declaration);
  return read_domain_metadata(out.str());
}

DomainInfo info_of(virDomainPtr domain) {
  DomainInfo info;
  if (const char* name = virDomainGetName(domain)) info.name = name;
  const auto subject = domain_subject(info.name);
  char uuid[VIR_UUID_STRING_BUFLEN];
  if (virDomainGetUUIDString(domain, uuid) < 0) throw last_error(subject, "read the UUID");
  info.uuid = uuid;
  info.status = status_of(domain, info.name);
  const int persistent = virDomainIsPersistent(domain);
  if (persistent < 0) throw last_error(subject, "read whether it is persistent");
  info.persistent = persistent == 1;
  int autostart = 0;
  if (virDomainGetAutostart(domain, &autostart) < 0) {
    virResetLastError();  // transient domains have no autostart
    autostart = 0;
  }
  info.autostart = autostart != 0;
  CString metadata(virDomainGetMetadata(domain, VIR_DOMAIN_METADATA_ELEMENT, kMetadataNamespace,
                                        VIR_DOMAIN_AFFECT_CURRENT));
  if (metadata) {
    info.metadata = metadata_from_element(metadata.get());
  } else {
    auto error = last_error(subject, "read the metadata");
    if (error.code() != VIR_ERR_NO_DOMAIN_METADATA) throw error;
  }
  return info;
}

NetworkInfo network_info(virNetworkPtr network) {
  NetworkInfo info;
  if (const char* name = virNetworkGetName(network)) info.name = name;
  const auto subject = "network \"" + info.name + "\"";
  char uuid[VIR_UUID_STRING_BUFLEN];
  if (virNetworkGetUUIDString(network, uuid) < 0) throw last_error(subject, "read the UUID");
  info.uuid = uuid;
  const int active = virNetworkIsActive(network);
  if (active < 0) throw last_error(subject, "read whether it is active");
  info.active = active == 1;
  const int persistent = virNetworkIsPersistent(network);
  if (persistent < 0) throw last_error(subject, "read whether it is persistent");
  info.persistent = persistent == 1;
  int autostart = 0;
  if (virNetworkGetAutostart(network, &autostart) < 0) {
    virResetLastError();
    autostart = 0;
  }
  info.autostart = autostart != 0;
  if (CString bridge{virNetworkGetBridgeName(network)})
    info.bridge = bridge.get();
  else
    virResetLastError();  // networks without a bridge (hostdev, direct)
  CString xml(virNetworkGetXMLDesc(network, 0));
  if (!xml) throw last_error(subject, "read the XML");
  info.dhcp_servers = parse_dhcp_servers(xml.get());
  info.one_lease_per_mac = parse_one_lease_per_mac(xml.get());
  return info;
}

}  // namespace

// ---- XML parsers -------------------------------------------------------------------------

std::optional<NodeDevice> parse_node_device(std::string_view xml) {
  pugi::xml_document doc;
  if (!doc.load_buffer(xml.data(), xml.size())) return std::nullopt;
  const auto device = doc.child("device");
  if (!device) return std::nullopt;
  NodeDevice out;
  out.name = device.child_value("name");
  out.parent = device.child_value("parent");
  out.driver = device.child("driver").child_value("name");
  for (const auto capability : device.children("capability")) {
    const std::string_view type = capability.attribute("type").value();
    if (type != "pci" && type != "usb_device") continue;
    out.vendor_id = number(capability.child("vendor").attribute("id").value());
    out.product_id = number(capability.child("product").attribute("id").value());
    out.vendor = capability.child_value("vendor");
    out.product = capability.child_value("product");
    if (type == "pci") {
      out.kind = NodeDeviceKind::Pci;
      out.pci_domain = number(capability.child_value("domain"));
      out.pci_bus = number(capability.child_value("bus"));
      out.pci_slot = number(capability.child_value("slot"));
      out.pci_function = number(capability.child_value("function"));
      out.pci_class = number(capability.child_value("class"));
      if (const auto group = capability.child("iommuGroup"))
        if (const auto attribute = group.attribute("number"))
          out.iommu_group = number(attribute.value());
    } else {
      out.kind = NodeDeviceKind::Usb;
      out.usb_bus = number(capability.child_value("bus"));
      out.usb_device = number(capability.child_value("device"));
    }
    return out;
  }
  return std::nullopt;
}

std::vector<std::string> parse_dhcp_servers(std::string_view network_xml) {
  std::vector<std::string> out;
  pugi::xml_document doc;
  if (!doc.load_buffer(network_xml.data(), network_xml.size())) return out;
  for (const auto ip : doc.child("network").children("ip")) {
    const std::string_view family = ip.attribute("family").value();
    const std::string address = ip.attribute("address").value();
    if ((family.empty() || family == "ipv4") && ip.child("dhcp") && !address.empty())
      out.push_back(address);
  }
  return out;
}

bool parse_one_lease_per_mac(std::string_view network_xml) {
  pugi::xml_document doc;
  if (!doc.load_buffer(network_xml.data(), network_xml.size())) return false;
  // libvirt writes the namespace's elements with the prefix the definition used (dnsmasq:).
  const auto local = [](const char* name) {
    const std::string_view n(name);
    const auto colon = n.find(':');
    return colon == std::string_view::npos ? n : n.substr(colon + 1);
  };
  for (const auto options : doc.child("network").children())
    if (local(options.name()) == "options")
      for (const auto option : options.children())
        if (local(option.name()) == "option" &&
            std::string_view(option.attribute("value").value()) == "dhcp-ignore-clid")
          return true;
  return false;
}

DomainCapabilities parse_domain_capabilities(std::string_view xml) {
  DomainCapabilities out;
  pugi::xml_document doc;
  const auto root =
      doc.load_buffer(xml.data(), xml.size()) ? doc.child("domainCapabilities") : pugi::xml_node();
  if (!root) {
    out.reason = "libvirt returned domain capabilities that are not readable XML";
    return out;
  }
  out.domain_type = root.child_value("domain");
  out.emulator = root.child_value("path");
  out.machine = root.child_value("machine");
  out.arch = root.child_value("arch");
  out.max_vcpus = number(root.child("vcpu").attribute("max").value());
  out.requires_kvm = out.domain_type == "kvm";
  const auto os = root.child("os");
  for (const auto e : os.children("enum"))
    if (std::string_view(e.attribute("name").value()) == "firmware")
      for (const auto value : e.children("value")) out.firmware.emplace_back(value.child_value());
  out.supported = std::string_view(os.attribute("supported").value()) != "no";
  if (!out.supported) out.reason = "libvirt reports no supported guest OS for this domain type";
  return out;
}

// ---- the connection ----------------------------------------------------------------------

class LibvirtHypervisor::Impl {
 public:
  // `events`: whether this connection delivers domain events (the agent's does not).
  explicit Impl(LibvirtOptions options, bool events = true)
      : options_(std::move(options)), events_(events) {
    ensure_libvirt_event_loop();
    std::lock_guard lock(mutex_);
    live_ = open();
  }

  ~Impl() {
    std::lock_guard lock(mutex_);
    close(live_);
  }

  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  const LibvirtOptions& options() const { return options_; }

  // A reference to the live connection, reconnecting first when it broke.
  Connection connection() {
    std::lock_guard lock(mutex_);
    if (live_.close_flag->closed.load() || virConnectIsAlive(live_.connection) != 1) {
      virResetLastError();
      replace_locked();
    }
    virConnectRef(live_.connection);
    return Connection(live_.connection);
  }

  void reconnect() {
    std::lock_guard lock(mutex_);
    replace_locked();
  }

  // The connection for guest agent calls: a second one, opened at its first use, so calls that
  // a guest stalls never take the main connection's turns at libvirtd. test:// keeps one (a
  // file-backed test driver's state is its connection's own).
  Connection agent_connection() {
    if (options_.uri.starts_with("test:")) return connection();
    {
      std::lock_guard lock(agent_mutex_);
      if (!agent_) agent_ = std::make_unique<Impl>(options_, false);
    }
    return agent_->connection();
  }

  unsigned long connection_count() const {
    std::lock_guard lock(mutex_);
    return opened_;
  }

  Subscription subscribe(LifecycleCallback callback) {
    connection();  // so that events flow again if the connection had broken
    const auto id = shared_->hub.add(std::move(callback));
    return Subscription([weak = std::weak_ptr<Shared>(shared_), id] {
      if (const auto shared = weak.lock()) shared->hub.remove(id);
    });
  }

 private:
  // One opened connection with our callbacks on it.
  struct Live {
    virConnectPtr connection = nullptr;
    std::unique_ptr<CloseFlag> close_flag;
    bool close_registered = false;
    int lifecycle_callback = -1;
  };

  // The new connection is open before the old one closes: the test driver keeps its state
  // only while some connection to it is open, and callers wait less.
  void replace_locked() {
    auto old = std::exchange(live_, open());
    close(old);
  }

  Live open() {
    const std::string subject = "libvirt at \"" + options_.uri + "\"";
    virConnectPtr raw = virConnectOpen(options_.uri.c_str());
    if (!raw) throw last_error(subject, "connect");
    Connection connection(raw);
    if (options_.keepalive_interval.count() > 0 &&
        virConnectSetKeepAlive(raw, static_cast<int>(options_.keepalive_interval.count()),
                               options_.keepalive_count) < 0)
      virResetLastError();  // local drivers (test://) have no keepalive
    Live live;
    live.close_flag = std::make_unique<CloseFlag>();
    // Drivers without close callbacks (test://) return 0 without registering anything.
    live.close_registered =
        virConnectRegisterCloseCallback(raw, on_close, live.close_flag.get(), nullptr) == 0;
    if (!live.close_registered) virResetLastError();
    if (!events_) {
      live.connection = connection.release();
      ++opened_;
      return live;
    }
    auto* opaque = new std::shared_ptr<Shared>(shared_);
    live.lifecycle_callback = virConnectDomainEventRegisterAny(
        raw, nullptr, VIR_DOMAIN_EVENT_ID_LIFECYCLE, VIR_DOMAIN_EVENT_CALLBACK(on_lifecycle),
        opaque, free_shared);
    if (live.lifecycle_callback < 0) {
      auto error = last_error(subject, "subscribe to domain events");
      delete opaque;
      if (live.close_registered) virConnectUnregisterCloseCallback(raw, on_close);
      throw error;
    }
    live.connection = connection.release();
    ++opened_;
    return live;
  }

  static void close(Live& live) {
    if (!live.connection) return;
    // Both fail harmlessly on a dead connection; the local bookkeeping goes either way.
    if (live.lifecycle_callback >= 0)
      virConnectDomainEventDeregisterAny(live.connection, live.lifecycle_callback);
    if (live.close_registered) virConnectUnregisterCloseCallback(live.connection, on_close);
    virResetLastError();
    virConnectClose(live.connection);  // calls in flight keep their own references
    live = Live{};
  }

  const LibvirtOptions options_;
  const bool events_;
  const std::shared_ptr<Shared> shared_ = std::make_shared<Shared>();

  mutable std::mutex mutex_;  // guards the members below
  Live live_;
  unsigned long opened_ = 0;

  std::mutex agent_mutex_;
  std::unique_ptr<Impl> agent_;  // agent_connection()'s
};

// ---- LibvirtHypervisor -------------------------------------------------------------------

LibvirtHypervisor::LibvirtHypervisor(LibvirtOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

LibvirtHypervisor::~LibvirtHypervisor() = default;

void LibvirtHypervisor::reconnect() {
  impl_->reconnect();
}

unsigned long LibvirtHypervisor::connection_count() const {
  return impl_->connection_count();
}

std::string LibvirtHypervisor::uri() const {
  return impl_->options().uri;
}

namespace {

// libxml2 (2.9 in Debian 12) sets up its XML Schema type library lazily and without a lock, so
// two validations that are the first in a process can race, and one fails with "Unable to
// parse RNG ... 'unsignedInt' is not exported". Drivers that validate in this process (test://)
// hit it; so the first validated define of the process runs alone, and later ones in parallel.
std::mutex first_validation_mutex;
std::atomic<bool> validation_warm{false};

virDomainPtr define_validated(virConnectPtr connection, const std::string& xml) {
  if (validation_warm.load(std::memory_order_acquire))
    return virDomainDefineXMLFlags(connection, xml.c_str(), VIR_DOMAIN_DEFINE_VALIDATE);
  const std::lock_guard lock(first_validation_mutex);
  virDomainPtr raw = virDomainDefineXMLFlags(connection, xml.c_str(), VIR_DOMAIN_DEFINE_VALIDATE);
  // A define that got through has loaded the schema; after a failure the next one stays alone.
  if (raw) validation_warm.store(true, std::memory_order_release);
  return raw;
}

}  // namespace

DomainInfo LibvirtHypervisor::define(const std::string& xml) {
  const auto connection = impl_->connection();
  virDomainPtr raw = impl_->options().validate
                         ? define_validated(connection.get(), xml)
                         : virDomainDefineXMLFlags(connection.get(), xml.c_str(), 0);
  if (!raw) throw last_error(subject_of_xml(xml), "define");
  const Domain domain(raw);
  return info_of(domain.get());
}

DomainInfo LibvirtHypervisor::create_transient(const std::string& xml) {
  const auto connection = impl_->connection();
  virDomainPtr raw =
      virDomainCreateXML(connection.get(), xml.c_str(), VIR_DOMAIN_START_AUTODESTROY);
  if (!raw) {
    auto error = last_error(subject_of_xml(xml), "start");
    // A driver without auto-destroy (the test driver) lives in this process anyway.
    if (!unsupported_flags(error)) throw error;
    raw = virDomainCreateXML(connection.get(), xml.c_str(), 0);
    if (!raw) throw last_error(subject_of_xml(xml), "start");
  }
  const Domain domain(raw);
  return info_of(domain.get());
}

void LibvirtHypervisor::start(const std::string& name, StartOptions options) {
  const auto connection = impl_->connection();
  const auto domain = find_domain(connection.get(), name, "start");
  unsigned int flags = 0;
  if (options.paused) flags |= VIR_DOMAIN_START_PAUSED;
  if (options.reset_nvram) flags |= VIR_DOMAIN_START_RESET_NVRAM;
  if (virDomainCreateWithFlags(domain.get(), flags) < 0)
    throw last_error(domain_subject(name), "start");
}

void LibvirtHypervisor::resume(const std::string& name) {
  const auto connection = impl_->connection();
  const auto domain = find_domain(connection.get(), name, "resume");
  if (virDomainResume(domain.get()) < 0) throw last_error(domain_subject(name), "resume");
}

void LibvirtHypervisor::shutdown(const std::string& name) {
  const auto connection = impl_->connection();
  const auto domain = find_domain(connection.get(), name, "shut down");
  if (virDomainShutdownFlags(domain.get(), VIR_DOMAIN_SHUTDOWN_ACPI_POWER_BTN) == 0) return;
  auto error = last_error(domain_subject(name), "shut down");
  // A driver that cannot choose the method (the test driver) shuts down its own way.
  if (!unsupported_flags(error)) throw error;
  if (virDomainShutdown(domain.get()) < 0) throw last_error(domain_subject(name), "shut down");
}

bool LibvirtHypervisor::destroy(const std::string& name) {
  const auto connection = impl_->connection();
  const auto domain = find_domain(connection.get(), name, "destroy");
  if (virDomainDestroy(domain.get()) == 0) return true;
  auto error = last_error(domain_subject(name), "destroy");
  if (error.is_operation_invalid() && virDomainIsActive(domain.get()) == 0) return false;
  virResetLastError();
  throw error;
}

bool LibvirtHypervisor::undefine(const std::string& name) {
  const auto connection = impl_->connection();
  virDomainPtr raw = virDomainLookupByName(connection.get(), name.c_str());
  if (!raw) {
    auto error = last_error(domain_subject(name), "undefine");
    if (error.is_no_domain()) return false;
    throw error;
  }
  const Domain domain(raw);
  // Everything first; drivers that know no NVRAM or checkpoints (the test driver) reject
  // those flags, and then have none of either to remove.
  constexpr unsigned int kAll = VIR_DOMAIN_UNDEFINE_NVRAM | VIR_DOMAIN_UNDEFINE_MANAGED_SAVE |
                                VIR_DOMAIN_UNDEFINE_SNAPSHOTS_METADATA |
                                VIR_DOMAIN_UNDEFINE_CHECKPOINTS_METADATA;
  constexpr unsigned int kBasic =
      VIR_DOMAIN_UNDEFINE_MANAGED_SAVE | VIR_DOMAIN_UNDEFINE_SNAPSHOTS_METADATA;
  for (const unsigned int flags : {kAll, kBasic}) {
    if (virDomainUndefineFlags(domain.get(), flags) == 0) return true;
    auto error = last_error(domain_subject(name), "undefine");
    if (error.is_no_domain()) return false;  // gone meanwhile
    if (flags == kBasic || !unsupported_flags(error)) throw error;
  }
  return true;  // not reached
}

std::optional<DomainInfo> LibvirtHypervisor::lookup(const std::string& name) {
  const auto connection = impl_->connection();
  virDomainPtr raw = virDomainLookupByName(connection.get(), name.c_str());
  if (!raw) {
    auto error = last_error(domain_subject(name), "look up");
    if (error.is_no_domain()) return std::nullopt;
    throw error;
  }
  const Domain domain(raw);
  try {
    return info_of(domain.get());
  } catch (const HypervisorError& e) {
    if (e.is_no_domain()) return std::nullopt;  // undefined meanwhile
    throw;
  }
}

std::vector<DomainInfo> LibvirtHypervisor::list() {
  const auto connection = impl_->connection();
  virDomainPtr* raw = nullptr;
  const int n = virConnectListAllDomains(connection.get(), &raw, 0);
  if (n < 0) throw last_error("libvirt at \"" + uri() + "\"", "list domains");
  std::vector<Domain> domains;
  domains.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) domains.emplace_back(raw[i]);
  std::free(raw);
  std::vector<DomainInfo> out;
  out.reserve(domains.size());
  for (const auto& domain : domains) {
    try {
      out.push_back(info_of(domain.get()));
    } catch (const HypervisorError& e) {
      if (!e.is_no_domain()) throw;  // undefined meanwhile: not listed
    }
  }
  return out;
}

std::vector<DomainStats> LibvirtHypervisor::all_domain_stats() {
  const auto connection = impl_->connection();
  return read_all_domain_stats(connection.get(), uri());
}

DomainStatus LibvirtHypervisor::state(const std::string& name) {
  const auto connection = impl_->connection();
  const auto domain = find_domain(connection.get(), name, "read the state");
  return status_of(domain.get(), name);
}

void LibvirtHypervisor::set_autostart(const std::string& name, bool autostart) {
  const auto connection = impl_->connection();
  const auto domain = find_domain(connection.get(), name, "set autostart");
  if (virDomainSetAutostart(domain.get(), autostart ? 1 : 0) < 0)
    throw last_error(domain_subject(name), autostart ? "turn autostart on" : "turn autostart off");
}

std::string LibvirtHypervisor::domain_xml(const std::string& name, bool inactive) {
  const auto connection = impl_->connection();
  const auto domain = find_domain(connection.get(), name, "read the XML");
  CString xml(virDomainGetXMLDesc(domain.get(), inactive ? VIR_DOMAIN_XML_INACTIVE : 0));
  if (!xml) throw last_error(domain_subject(name), "read the XML");
  return xml.get();
}

std::vector<InterfaceAddress> LibvirtHypervisor::interface_addresses(const std::string& name,
                                                                     AddressSource source) {
  (void)source;  // leases are the only source offered
  const auto connection = impl_->connection();
  const char* action = "read the addresses from DHCP leases";
  const auto domain = find_domain(connection.get(), name, action);
  virDomainInterfacePtr* interfaces = nullptr;
  const int n = virDomainInterfaceAddresses(domain.get(), &interfaces,
                                            VIR_DOMAIN_INTERFACE_ADDRESSES_SRC_LEASE, 0);
  if (n < 0) throw last_error(domain_subject(name), action);
  std::vector<InterfaceAddress> out;
  for (int i = 0; i < n; ++i) {
    const virDomainInterfacePtr iface = interfaces[i];
    for (unsigned int j = 0; j < iface->naddrs; ++j) {
      InterfaceAddress address;
      address.interface = iface->name ? iface->name : "";
      address.mac = iface->hwaddr ? iface->hwaddr : "";
      address.address = iface->addrs[j].addr ? iface->addrs[j].addr : "";
      address.prefix = iface->addrs[j].prefix;
      address.ipv6 = iface->addrs[j].type == VIR_IP_ADDR_TYPE_IPV6;
      out.push_back(std::move(address));
    }
  }
  for (int i = 0; i < n; ++i) virDomainInterfaceFree(interfaces[i]);
  std::free(interfaces);
  return out;
}

std::string LibvirtHypervisor::agent_command(const std::string& name, const std::string& json,
                                             std::chrono::seconds timeout) {
  const auto connection = impl_->agent_connection();
  const auto domain = find_domain(connection.get(), name, "talk to the guest agent");
  return detail::agent_command(domain.get(), name, json, timeout);
}

Subscription LibvirtHypervisor::subscribe(LifecycleCallback callback) {
  return impl_->subscribe(std::move(callback));
}

std::optional<NetworkInfo> LibvirtHypervisor::lookup_network(const std::string& name) {
  const auto connection = impl_->connection();
  virNetworkPtr raw = virNetworkLookupByName(connection.get(), name.c_str());
  if (!raw) {
    auto error = last_error("network \"" + name + "\"", "look up");
    if (error.is_no_network()) return std::nullopt;
    throw error;
  }
  const Network network(raw);
  try {
    return network_info(network.get());
  } catch (const HypervisorError& e) {
    if (e.is_no_network()) return std::nullopt;
    throw;
  }
}

std::vector<NetworkInfo> LibvirtHypervisor::list_networks() {
  const auto connection = impl_->connection();
  virNetworkPtr* raw = nullptr;
  const int n = virConnectListAllNetworks(connection.get(), &raw, 0);
  if (n < 0) throw last_error("libvirt at \"" + uri() + "\"", "list networks");
  std::vector<Network> networks;
  networks.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) networks.emplace_back(raw[i]);
  std::free(raw);
  std::vector<NetworkInfo> out;
  for (const auto& network : networks) {
    try {
      out.push_back(network_info(network.get()));
    } catch (const HypervisorError& e) {
      if (!e.is_no_network()) throw;
    }
  }
  return out;
}

namespace {

// One network's leases; a network stopped or removed meanwhile has none.
void append_leases(virNetworkPtr network, std::vector<DhcpLease>& out) {
  const char* name = virNetworkGetName(network);
  const std::string network_name = name ? name : "";
  virNetworkDHCPLeasePtr* leases = nullptr;
  const int n = virNetworkGetDHCPLeases(network, nullptr, &leases, 0);
  if (n < 0) {
    auto error = last_error("network \"" + network_name + "\"", "read the DHCP leases");
    if (error.is_no_network() || error.is_operation_invalid()) return;
    throw error;
  }
  for (int i = 0; i < n; ++i) {
    const auto* lease = leases[i];
    DhcpLease entry;
    entry.network = network_name;
    entry.mac = lease->mac ? lease->mac : "";
    entry.address = lease->ipaddr ? lease->ipaddr : "";
    entry.ipv6 = lease->type == VIR_IP_ADDR_TYPE_IPV6;
    entry.expiry = lease->expirytime;
    out.push_back(std::move(entry));
    virNetworkDHCPLeaseFree(leases[i]);
  }
  std::free(leases);
}

std::string filter_subject(const std::string& name) {
  return "network filter \"" + name + "\"";
}

// The filter and its XML; nullopt when libvirt has no filter of that name.
struct FoundFilter {
  std::string xml;
  std::string uuid;
};
std::optional<FoundFilter> find_filter(virConnectPtr connection, const std::string& name) {
  virNWFilterPtr raw = virNWFilterLookupByName(connection, name.c_str());
  if (!raw) {
    auto error = last_error(filter_subject(name), "look up");
    if (error.code() == VIR_ERR_NO_NWFILTER) return std::nullopt;
    throw error;
  }
  const NWFilter filter(raw);
  FoundFilter found;
  CString xml(virNWFilterGetXMLDesc(raw, 0));
  if (!xml) throw last_error(filter_subject(name), "read the XML");
  found.xml = xml.get();
  char uuid[VIR_UUID_STRING_BUFLEN];
  if (virNWFilterGetUUIDString(raw, uuid) < 0)
    throw last_error(filter_subject(name), "read the UUID");
  found.uuid = uuid;
  return found;
}

}  // namespace

std::vector<DhcpLease> LibvirtHypervisor::dhcp_leases() {
  const auto connection = impl_->connection();
  virNetworkPtr* raw = nullptr;
  const int n = virConnectListAllNetworks(connection.get(), &raw, VIR_CONNECT_LIST_NETWORKS_ACTIVE);
  if (n < 0) throw last_error("libvirt at \"" + uri() + "\"", "list networks");
  std::vector<Network> networks;
  networks.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) networks.emplace_back(raw[i]);
  std::free(raw);
  std::vector<DhcpLease> out;
  for (const auto& network : networks) append_leases(network.get(), out);
  return out;
}

std::optional<std::string> LibvirtHypervisor::nwfilter_xml(const std::string& name) {
  const auto connection = impl_->connection();
  if (auto found = find_filter(connection.get(), name)) return std::move(found->xml);
  return std::nullopt;
}

bool LibvirtHypervisor::ensure_nwfilter(const std::string& name, const std::string& xml) {
  if (filter_name(xml) != name)
    throw std::invalid_argument(filter_subject(name) + ": the XML defines \"" + filter_name(xml) +
                                "\"");
  const auto connection = impl_->connection();
  for (int attempt = 0;; ++attempt) {
    const auto found = find_filter(connection.get(), name);
    if (found && same_filter(found->xml, xml)) return false;
    // libvirt refuses a definition without the UUID of the filter it replaces.
    const auto definition = filter_with_uuid(xml, found ? found->uuid : "");
    if (virNWFilterPtr defined = virNWFilterDefineXML(connection.get(), definition.c_str())) {
      virNWFilterFree(defined);
      return true;
    }
    auto error = last_error(filter_subject(name), "define");
    // Another client defined it between our look and our define: look again, once.
    if (attempt > 0 || error.code() != VIR_ERR_OPERATION_FAILED) throw error;
  }
}

std::vector<NodeDevice> LibvirtHypervisor::node_devices() {
  const auto connection = impl_->connection();
  virNodeDevicePtr* raw = nullptr;
  const int n = virConnectListAllNodeDevices(
      connection.get(), &raw,
      VIR_CONNECT_LIST_NODE_DEVICES_CAP_PCI_DEV | VIR_CONNECT_LIST_NODE_DEVICES_CAP_USB_DEV);
  if (n < 0) throw last_error("libvirt at \"" + uri() + "\"", "list node devices");
  std::vector<NodeDev> devices;
  devices.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) devices.emplace_back(raw[i]);
  std::free(raw);
  std::vector<NodeDevice> out;
  for (const auto& device : devices) {
    CString xml(virNodeDeviceGetXMLDesc(device.get(), 0));
    if (!xml) {
      const char* name = virNodeDeviceGetName(device.get());
      auto error =
          last_error("node device \"" + std::string(name ? name : "?") + "\"", "read the XML");
      if (error.code() == VIR_ERR_NO_NODE_DEVICE) continue;  // unplugged meanwhile
      throw error;
    }
    if (auto parsed = parse_node_device(xml.get())) out.push_back(std::move(*parsed));
  }
  return out;
}

DomainCapabilities LibvirtHypervisor::domain_capabilities(const std::string& domain_type) {
  const auto connection = impl_->connection();
  CString xml(virConnectGetDomainCapabilities(connection.get(), nullptr, nullptr, nullptr,
                                              domain_type.c_str(), 0));
  if (!xml) {
    auto error = last_error("domain type \"" + domain_type + "\"", "probe the capabilities");
    const int code = error.code();
    if (!(error.is_unsupported() || code == VIR_ERR_INVALID_ARG ||
          code == VIR_ERR_CONFIG_UNSUPPORTED))
      throw error;
    DomainCapabilities out;
    out.domain_type = domain_type;
    out.requires_kvm = domain_type == "kvm";
    out.reason = error.cause();
    return out;
  }
  auto out = parse_domain_capabilities(xml.get());
  if (out.domain_type.empty()) out.domain_type = domain_type;
  out.requires_kvm = domain_type == "kvm";
  return out;
}

std::unique_ptr<util::ByteStream> LibvirtHypervisor::open_console(const std::string& name,
                                                                  const std::string& device,
                                                                  bool force) {
  const auto connection = impl_->connection();
  const auto domain = find_domain(connection.get(), name, "open the console");
  virStreamPtr raw = virStreamNew(connection.get(), VIR_STREAM_NONBLOCK);
  if (!raw) throw last_error(domain_subject(name), "open the console");
  Stream stream(raw);
  if (virDomainOpenConsole(domain.get(), device.empty() ? nullptr : device.c_str(), raw,
                           force ? VIR_DOMAIN_CONSOLE_FORCE : 0) < 0)
    throw last_error(domain_subject(name), "open the console");
  virConnectRef(connection.get());
  return make_console_stream(std::move(stream), Connection(connection.get()), domain_subject(name));
}

int LibvirtHypervisor::open_graphics(const std::string& name, unsigned index, bool skip_auth) {
  const auto connection = impl_->connection();
  const auto domain = find_domain(connection.get(), name, "open the display");
  // The fd comes over libvirt's UNIX socket (SCM_RIGHTS), close-on-exec.
  const int fd = virDomainOpenGraphicsFD(domain.get(), index,
                                         skip_auth ? VIR_DOMAIN_OPEN_GRAPHICS_SKIPAUTH : 0);
  if (fd < 0) throw last_error(domain_subject(name), "open the display");
  return fd;
}

// ---- snapshots (libvirt_snapshots.cpp) ----------------------------------------------------

SnapshotInfo LibvirtHypervisor::create_snapshot(const std::string& domain, const std::string& name,
                                                const std::string& description) {
  const auto connection = impl_->connection();
  const auto d = find_domain(connection.get(), domain, "take a snapshot");
  return detail::create_snapshot(d.get(), domain, name, description);
}

std::vector<SnapshotInfo> LibvirtHypervisor::snapshots(const std::string& domain) {
  const auto connection = impl_->connection();
  const auto d = find_domain(connection.get(), domain, "list snapshots");
  return detail::list_snapshots(d.get(), domain);
}

void LibvirtHypervisor::revert_snapshot(const std::string& domain, const std::string& name,
                                        bool paused) {
  const auto connection = impl_->connection();
  const auto d = find_domain(connection.get(), domain, "revert to a snapshot");
  detail::revert_snapshot(d.get(), domain, name, paused);
}

bool LibvirtHypervisor::delete_snapshot(const std::string& domain, const std::string& name) {
  const auto connection = impl_->connection();
  const auto d = find_domain(connection.get(), domain, "delete a snapshot");
  return detail::delete_snapshot(d.get(), domain, name);
}

unsigned LibvirtHypervisor::freeze_filesystems(const std::string& domain) {
  const auto connection = impl_->agent_connection();
  const auto d = find_domain(connection.get(), domain, "freeze the guest's filesystems");
  return detail::freeze_filesystems(d.get(), domain, impl_->options().agent_timeout);
}

void LibvirtHypervisor::thaw_filesystems(const std::string& domain) {
  const auto connection = impl_->agent_connection();
  const auto d = find_domain(connection.get(), domain, "thaw the guest's filesystems");
  detail::thaw_filesystems(d.get(), domain, impl_->options().agent_timeout);
}

void LibvirtHypervisor::managed_save(const std::string& name) {
  const auto connection = impl_->connection();
  const auto d = find_domain(connection.get(), name, "save its state");
  if (virDomainManagedSave(d.get(), 0) < 0)
    throw last_error(domain_subject(name), "save its state");
}

bool LibvirtHypervisor::has_managed_save(const std::string& name) {
  const auto connection = impl_->connection();
  const auto d = find_domain(connection.get(), name, "look for a saved state");
  const int has = virDomainHasManagedSaveImage(d.get(), 0);
  if (has < 0) throw last_error(domain_subject(name), "look for a saved state");
  return has == 1;
}

bool LibvirtHypervisor::remove_managed_save(const std::string& name) {
  const auto connection = impl_->connection();
  const auto d = find_domain(connection.get(), name, "remove its saved state");
  const int has = virDomainHasManagedSaveImage(d.get(), 0);
  if (has < 0) throw last_error(domain_subject(name), "look for a saved state");
  if (has == 0) return false;
  if (virDomainManagedSaveRemove(d.get(), 0) < 0)
    throw last_error(domain_subject(name), "remove its saved state");
  return true;
}

}  // namespace bowline::libvirt
