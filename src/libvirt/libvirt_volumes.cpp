// LibvirtHypervisor's storage calls (and the host's free memory, for placement): a pool's directory
// and volumes on its host, made, filled and read through libvirt's storage API and streams, so a
// node elsewhere needs nothing but libvirtd. Volume XML is made with pugixml (names and paths are
// escaped).
#include <pugixml.hpp>

#include <memory>
#include <sstream>
#include <vector>

#include "libvirt/libvirt_connection.hpp"
#include "libvirt/libvirt_handles.hpp"
#include "libvirt/libvirt_hypervisor.hpp"

namespace bowline::libvirt {

namespace {

struct PoolFree {
  void operator()(virStoragePoolPtr p) const noexcept { virStoragePoolFree(p); }
};
struct VolFree {
  void operator()(virStorageVolPtr p) const noexcept { virStorageVolFree(p); }
};
using Pool = std::unique_ptr<virStoragePool, PoolFree>;
using Vol = std::unique_ptr<virStorageVol, VolFree>;

std::string pool_subject(const std::string& pool) {
  return "storage pool \"" + pool + "\"";
}
std::string volume_subject(const std::string& pool, const std::string& name) {
  return pool_subject(pool) + " volume \"" + name + "\"";
}

// The pool, started when it is not (a pool defined but inactive after its host's reboot).
Pool find_pool(virConnectPtr connection, const std::string& name, std::string_view action) {
  Pool pool(virStoragePoolLookupByName(connection, name.c_str()));
  if (!pool) throw detail::last_error(pool_subject(name), action);
  if (virStoragePoolIsActive(pool.get()) == 0 && virStoragePoolCreate(pool.get(), 0) < 0)
    throw detail::last_error(pool_subject(name), "start");
  return pool;
}

Vol find_volume(virStoragePoolPtr pool, const std::string& pool_name, const std::string& name,
                std::string_view action) {
  Vol vol(virStorageVolLookupByName(pool, name.c_str()));
  if (!vol) throw detail::last_error(volume_subject(pool_name, name), action);
  return vol;
}

VolumeInfo info_of(virStorageVolPtr vol, const std::string& pool) {
  VolumeInfo out;
  out.name = virStorageVolGetName(vol);
  const detail::CString path(virStorageVolGetPath(vol));
  if (path) out.path = path.get();
  virStorageVolInfo info{};
  if (virStorageVolGetInfo(vol, &info) < 0)
    throw detail::last_error(volume_subject(pool, out.name), "read its size");
  out.capacity = info.capacity;
  out.allocation = info.allocation;
  return out;
}

std::string volume_xml(const NewVolume& v) {
  pugi::xml_document doc;
  auto vol = doc.append_child("volume");
  vol.append_child("name").text().set(v.name.c_str());
  auto capacity = vol.append_child("capacity");
  capacity.append_attribute("unit") = "bytes";
  capacity.text().set(static_cast<unsigned long long>(v.capacity));
  auto target = vol.append_child("target");
  target.append_child("format").append_attribute("type") = v.format.c_str();
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", v.mode);
  target.append_child("permissions").append_child("mode").text().set(mode);
  if (!v.backing_path.empty()) {
    auto backing = vol.append_child("backingStore");
    backing.append_child("path").text().set(v.backing_path.c_str());
    backing.append_child("format").append_attribute("type") = v.backing_format.c_str();
  }
  std::ostringstream out;
  doc.save(out, "", pugi::format_raw | pugi::format_no_declaration);
  return out.str();
}

struct StreamEnd {
  virStreamPtr stream;
  bool finished = false;
  ~StreamEnd() {
    if (!finished) virStreamAbort(stream);
  }
};

}  // namespace

std::optional<std::uint64_t> LibvirtHypervisor::free_memory() {
  const auto connection = impl_->connection();
  const unsigned long long free = virNodeGetFreeMemory(connection.get());
  if (free == 0) {
    virResetLastError();  // the test driver and some hosts do not say
    return std::nullopt;
  }
  return free;
}

std::string LibvirtHypervisor::pool_path(const std::string& pool) {
  const auto connection = impl_->connection();
  const auto p = find_pool(connection.get(), pool, "find its directory");
  const detail::CString xml(virStoragePoolGetXMLDesc(p.get(), 0));
  if (!xml) throw detail::last_error(pool_subject(pool), "read its definition");
  pugi::xml_document doc;
  doc.load_string(xml.get());
  std::string path = doc.child("pool").child("target").child_value("path");
  if (path.empty())
    throw HypervisorError(pool_subject(pool) + " has no target directory (a dir pool is needed)");
  return path;
}

std::vector<VolumeInfo> LibvirtHypervisor::volumes(const std::string& pool) {
  const auto connection = impl_->connection();
  const auto p = find_pool(connection.get(), pool, "list volumes");
  if (virStoragePoolRefresh(p.get(), 0) < 0)
    throw detail::last_error(pool_subject(pool), "refresh");
  virStorageVolPtr* list = nullptr;
  const int n = virStoragePoolListAllVolumes(p.get(), &list, 0);
  if (n < 0) throw detail::last_error(pool_subject(pool), "list volumes");
  std::vector<Vol> owned;
  for (int i = 0; i < n; ++i) owned.emplace_back(list[i]);
  std::free(list);
  std::vector<VolumeInfo> out;
  for (const auto& vol : owned) try {
      out.push_back(info_of(vol.get(), pool));
    } catch (const HypervisorError&) {  // removed since the listing
    }
  return out;
}

std::optional<VolumeInfo> LibvirtHypervisor::volume(const std::string& pool,
                                                    const std::string& name) {
  const auto connection = impl_->connection();
  const auto p = find_pool(connection.get(), pool, "find a volume");
  Vol vol(virStorageVolLookupByName(p.get(), name.c_str()));
  if (!vol) {
    // A file made since the pool's last refresh is not known to libvirt until the next one.
    virResetLastError();
    if (virStoragePoolRefresh(p.get(), 0) < 0)
      throw detail::last_error(pool_subject(pool), "refresh");
    vol.reset(virStorageVolLookupByName(p.get(), name.c_str()));
    if (!vol) {
      const auto* e = virGetLastError();
      const bool missing = e && e->code == VIR_ERR_NO_STORAGE_VOL;
      if (missing) {
        virResetLastError();
        return std::nullopt;
      }
      throw detail::last_error(volume_subject(pool, name), "find");
    }
  }
  return info_of(vol.get(), pool);
}

VolumeInfo LibvirtHypervisor::create_volume(const std::string& pool, const NewVolume& volume) {
  const auto connection = impl_->connection();
  const auto p = find_pool(connection.get(), pool, "make a volume");
  Vol vol(virStorageVolCreateXML(p.get(), volume_xml(volume).c_str(), 0));
  if (!vol) throw detail::last_error(volume_subject(pool, volume.name), "make");
  return info_of(vol.get(), pool);
}

void LibvirtHypervisor::upload_volume(const std::string& pool, const std::string& name,
                                      std::uint64_t size,
                                      const std::function<std::size_t(char*, std::size_t)>& read) {
  const auto connection = impl_->connection();
  const auto p = find_pool(connection.get(), pool, "upload a volume");
  const auto vol = find_volume(p.get(), pool, name, "upload");
  const detail::Stream stream(virStreamNew(connection.get(), 0));
  if (!stream) throw detail::last_error(volume_subject(pool, name), "open a stream");
  if (virStorageVolUpload(vol.get(), stream.get(), 0, size, 0) < 0)
    throw detail::last_error(volume_subject(pool, name), "upload");
  StreamEnd end{stream.get()};
  std::vector<char> chunk(256 * 1024);
  for (std::uint64_t sent = 0; sent < size;) {
    const auto n = read(chunk.data(), chunk.size());
    if (n == 0) throw HypervisorError(volume_subject(pool, name) + ": the upload ended early");
    for (std::size_t off = 0; off < n;) {
      const int w = virStreamSend(stream.get(), chunk.data() + off, n - off);
      if (w < 0) throw detail::last_error(volume_subject(pool, name), "upload");
      off += static_cast<std::size_t>(w);
    }
    sent += n;
  }
  end.finished = true;
  if (virStreamFinish(stream.get()) < 0)
    throw detail::last_error(volume_subject(pool, name), "finish the upload");
}

namespace {

// virStorageVolDownload of [offset, offset + length) (length 0: to the end) into `sink`.
void download_into(const detail::Connection& connection, virStoragePoolPtr pool,
                   const std::string& pool_name, const std::string& name, std::uint64_t offset,
                   std::uint64_t length,
                   const std::function<void(const char*, std::size_t)>& sink) {
  const auto vol = find_volume(pool, pool_name, name, "download");
  const detail::Stream stream(virStreamNew(connection.get(), 0));
  if (!stream) throw detail::last_error(volume_subject(pool_name, name), "open a stream");
  if (virStorageVolDownload(vol.get(), stream.get(), offset, length, 0) < 0)
    throw detail::last_error(volume_subject(pool_name, name), "download");
  StreamEnd end{stream.get()};
  std::vector<char> chunk(256 * 1024);
  for (;;) {
    const int n = virStreamRecv(stream.get(), chunk.data(), chunk.size());
    if (n < 0) throw detail::last_error(volume_subject(pool_name, name), "download");
    if (n == 0) break;
    sink(chunk.data(), static_cast<std::size_t>(n));
  }
  end.finished = true;
  if (virStreamFinish(stream.get()) < 0)
    throw detail::last_error(volume_subject(pool_name, name), "finish the download");
}

}  // namespace

std::string LibvirtHypervisor::download_volume(const std::string& pool, const std::string& name,
                                               std::uint64_t offset, std::uint64_t length) {
  const auto connection = impl_->connection();
  const auto p = find_pool(connection.get(), pool, "download a volume");
  std::string out;
  download_into(connection, p.get(), pool, name, offset, length,
                [&](const char* data, std::size_t n) { out.append(data, n); });
  return out;
}

void LibvirtHypervisor::download_volume(const std::string& pool, const std::string& name,
                                        const std::function<void(const char*, std::size_t)>& sink) {
  const auto connection = impl_->connection();
  const auto p = find_pool(connection.get(), pool, "download a volume");
  download_into(connection, p.get(), pool, name, 0, 0, sink);
}

void LibvirtHypervisor::resize_volume(const std::string& pool, const std::string& name,
                                      std::uint64_t capacity) {
  const auto connection = impl_->connection();
  const auto p = find_pool(connection.get(), pool, "resize a volume");
  const auto vol = find_volume(p.get(), pool, name, "resize");
  if (virStorageVolResize(vol.get(), capacity, 0) < 0)
    throw detail::last_error(volume_subject(pool, name), "resize");
}

bool LibvirtHypervisor::delete_volume(const std::string& pool, const std::string& name) {
  const auto connection = impl_->connection();
  const auto p = find_pool(connection.get(), pool, "delete a volume");
  Vol vol(virStorageVolLookupByName(p.get(), name.c_str()));
  if (!vol) {
    virResetLastError();
    return false;
  }
  if (virStorageVolDelete(vol.get(), 0) < 0)
    throw detail::last_error(volume_subject(pool, name), "delete");
  return true;
}

}  // namespace bowline::libvirt
