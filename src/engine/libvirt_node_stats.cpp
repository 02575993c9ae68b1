// LibvirtNode::machine_samples: libvirt's statistics of every running domain in one call,
// as the engine's MachineSamples (bytes, counters summed over a domain's disks and NICs), and
// the host's free memory for placement.
#include "engine/libvirt_node.hpp"

namespace bowline::engine {

namespace {

std::optional<std::uint64_t> bytes_of_kib(const std::optional<std::uint64_t>& kib) {
  if (!kib) return std::nullopt;
  return *kib * 1024;
}

MachineSample sample_of(const libvirt::DomainStats& stats) {
  MachineSample out;
  out.machine = stats.name;
  out.vcpus = stats.vcpus.value_or(0);
  out.cpu_ns = stats.cpu_time_ns;
  out.memory_bytes = bytes_of_kib(stats.balloon_current_kib);
  out.memory_available = bytes_of_kib(stats.balloon_available_kib);
  out.memory_unused = bytes_of_kib(stats.balloon_unused_kib);
  out.memory_caches = bytes_of_kib(stats.balloon_disk_caches_kib);
  out.memory_rss = bytes_of_kib(stats.balloon_rss_kib);
  // A domain whose driver reported no block or interface group has no such counters at all,
  // which is not the same as counters at 0.
  if (!stats.disks.empty()) {
    out.disk_read_bytes = out.disk_write_bytes = out.disk_reads = out.disk_writes = 0;
    for (const auto& disk : stats.disks) {
      *out.disk_read_bytes += disk.read_bytes;
      *out.disk_write_bytes += disk.write_bytes;
      *out.disk_reads += disk.read_requests;
      *out.disk_writes += disk.write_requests;
    }
  }
  if (!stats.nics.empty()) {
    out.net_rx_bytes = out.net_tx_bytes = 0;
    for (const auto& nic : stats.nics) {
      *out.net_rx_bytes += nic.rx_bytes;
      *out.net_tx_bytes += nic.tx_bytes;
    }
  }
  return out;
}

}  // namespace

std::vector<MachineSample> LibvirtNode::machine_samples() {
  std::vector<MachineSample> out;
  for (const auto& stats : hypervisor_.all_domain_stats()) out.push_back(sample_of(stats));
  return out;
}

std::optional<std::int64_t> LibvirtNode::free_memory() {
  const auto free = hypervisor_.free_memory();
  if (!free) return std::nullopt;
  return static_cast<std::int64_t>(*free) - static_cast<std::int64_t>(s_.reserve_memory);
}

}  // namespace bowline::engine
