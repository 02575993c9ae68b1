// LibvirtHypervisor: the Hypervisor seam over the libvirt C API. This file holds the calls on
// domains (define, start, shut down, destroy, undefine, look up, list, state, XML, addresses,
// the agent, the console and the display) and the helpers the other files share (detail). The
// connection and its events are in libvirt_connection.cpp, networks, leases and network filters
// in libvirt_networks.cpp, the host's devices and capabilities in libvirt_host.cpp, snapshots
// and saved states in libvirt_snapshots.cpp.
#include "libvirt/libvirt_hypervisor.hpp"

#include <atomic>
#include <mutex>
#include <pugixml.hpp>
#include <sstream>
#include <utility>

#include "libvirt/libvirt_connection.hpp"
#include "libvirt/libvirt_handles.hpp"

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

namespace {

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

}  // namespace

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

}  // namespace bowline::libvirt
