// Domain statistics in our types: one virConnectGetAllDomainStats call for every running
// domain, each record's typed parameters flattened into StatFields and read by name, so the
// parser is tested on plain data (the test driver reports the state alone).
#include <charconv>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "libvirt/libvirt_handles.hpp"
#include "libvirt/libvirt_hypervisor.hpp"

namespace bowline::libvirt {

using namespace detail;

namespace {

// VCPU is there for vcpu.current only: CPU % is of the vCPUs the domain runs with now.
constexpr unsigned int kGroups = VIR_DOMAIN_STATS_STATE | VIR_DOMAIN_STATS_CPU_TOTAL |
                                 VIR_DOMAIN_STATS_BALLOON | VIR_DOMAIN_STATS_VCPU |
                                 VIR_DOMAIN_STATS_BLOCK | VIR_DOMAIN_STATS_INTERFACE;
// More disks or NICs than this in one record is not a record of a real domain.
constexpr std::size_t kMaxDevices = 1024;

std::uint64_t non_negative(long long value) {
  return value < 0 ? 0 : static_cast<std::uint64_t>(value);
}

StatField field_of(const virTypedParameter& p) {
  StatField f;
  f.key = p.field;
  switch (p.type) {
    case VIR_TYPED_PARAM_INT:
      f.number = non_negative(p.value.i);
      break;
    case VIR_TYPED_PARAM_UINT:
      f.number = p.value.ui;
      break;
    case VIR_TYPED_PARAM_LLONG:
      f.number = non_negative(p.value.l);
      break;
    case VIR_TYPED_PARAM_ULLONG:
      f.number = p.value.ul;
      break;
    case VIR_TYPED_PARAM_DOUBLE:
      f.number = p.value.d > 0 ? static_cast<std::uint64_t>(p.value.d) : 0;
      break;
    case VIR_TYPED_PARAM_BOOLEAN:
      f.number = p.value.b ? 1 : 0;
      break;
    case VIR_TYPED_PARAM_STRING:
      f.text = p.value.s ? p.value.s : "";
      break;
    default:
      break;
  }
  return f;
}

// "block.3.rd.bytes" in group "block" -> (3, "rd.bytes").
std::optional<std::pair<std::size_t, std::string_view>> indexed(std::string_view key,
                                                                std::string_view group) {
  if (key.size() <= group.size() + 1 || !key.starts_with(group) || key[group.size()] != '.')
    return std::nullopt;
  key.remove_prefix(group.size() + 1);
  std::size_t index = 0;
  const auto [end, error] = std::from_chars(key.data(), key.data() + key.size(), index);
  if (error != std::errc() || end == key.data() || index >= kMaxDevices) return std::nullopt;
  key.remove_prefix(static_cast<std::size_t>(end - key.data()));
  if (key.empty() || key.front() != '.') return std::nullopt;
  key.remove_prefix(1);
  return std::pair{index, key};
}

void read_disk(DiskCounters& disk, std::string_view what, const StatField& f) {
  if (what == "name") disk.name = f.text;
  if (what == "rd.bytes") disk.read_bytes = f.number;
  if (what == "wr.bytes") disk.write_bytes = f.number;
  if (what == "rd.reqs") disk.read_requests = f.number;
  if (what == "wr.reqs") disk.write_requests = f.number;
}

void read_nic(NicCounters& nic, std::string_view what, const StatField& f) {
  if (what == "name") nic.name = f.text;
  if (what == "rx.bytes") nic.rx_bytes = f.number;
  if (what == "tx.bytes") nic.tx_bytes = f.number;
}

// The scalar fields; false when `f` is none of them.
bool read_scalar(DomainStats& out, const StatField& f) {
  const std::pair<std::string_view, std::optional<std::uint64_t> DomainStats::*> balloon[] = {
      {"balloon.current", &DomainStats::balloon_current_kib},
      {"balloon.maximum", &DomainStats::balloon_maximum_kib},
      {"balloon.available", &DomainStats::balloon_available_kib},
      {"balloon.unused", &DomainStats::balloon_unused_kib},
      {"balloon.disk_caches", &DomainStats::balloon_disk_caches_kib},
      {"balloon.rss", &DomainStats::balloon_rss_kib},
  };
  if (f.key == "state.state") {
    out.status.state = domain_state(static_cast<int>(f.number));
  } else if (f.key == "state.reason") {
    out.status.reason = static_cast<int>(f.number);
  } else if (f.key == "cpu.time") {
    out.cpu_time_ns = f.number;
  } else if (f.key == "vcpu.current") {
    out.vcpus = static_cast<unsigned>(f.number);
  } else {
    for (const auto& [key, member] : balloon)
      if (f.key == key) {
        out.*member = f.number;
        return true;
      }
    return false;
  }
  return true;
}

}  // namespace

DomainStats parse_domain_stats(std::string name, const std::vector<StatField>& fields) {
  DomainStats out;
  out.name = std::move(name);
  std::map<std::size_t, DiskCounters> disks;
  std::map<std::size_t, NicCounters> nics;
  for (const auto& f : fields) {
    if (read_scalar(out, f)) continue;
    if (const auto disk = indexed(f.key, "block"))
      read_disk(disks[disk->first], disk->second, f);
    else if (const auto nic = indexed(f.key, "net"))
      read_nic(nics[nic->first], nic->second, f);
  }
  for (auto& [index, disk] : disks) out.disks.push_back(std::move(disk));
  for (auto& [index, nic] : nics) out.nics.push_back(std::move(nic));
  return out;
}

namespace detail {

std::vector<DomainStats> read_all_domain_stats(virConnectPtr connection, const std::string& uri) {
  virDomainStatsRecordPtr* raw = nullptr;
  // Groups a driver does not know are left out rather than refused (no ENFORCE_STATS).
  const int n = virConnectGetAllDomainStats(connection, kGroups, &raw,
                                            VIR_CONNECT_GET_ALL_DOMAINS_STATS_ACTIVE);
  if (n < 0) throw last_error("libvirt at \"" + uri + "\"", "read domain statistics");
  const std::unique_ptr<virDomainStatsRecordPtr, void (*)(virDomainStatsRecordPtr*)> records(
      raw, virDomainStatsRecordListFree);
  std::vector<DomainStats> out;
  out.reserve(static_cast<std::size_t>(n));
  std::vector<StatField> fields;
  for (int i = 0; i < n; ++i) {
    const virDomainStatsRecord& record = *raw[i];
    const char* name = virDomainGetName(record.dom);
    fields.clear();
    fields.reserve(static_cast<std::size_t>(record.nparams));
    for (int j = 0; j < record.nparams; ++j) fields.push_back(field_of(record.params[j]));
    out.push_back(parse_domain_stats(name ? name : "", fields));
  }
  return out;
}

}  // namespace detail

}  // namespace bowline::libvirt
