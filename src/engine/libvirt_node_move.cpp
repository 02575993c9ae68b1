// A stopped space's files leaving this node or arriving on it (Engine::move_space spools them
// on the server between the two): its boot disk keeps every cluster it holds and is pointed at
// the new node's copy of the same base image; the seed is written again at its next start.
#include <filesystem>

#include "engine/engine_error.hpp"
#include "engine/libvirt_node.hpp"
#include "image/qcow2.hpp"
#include "spec/boot_disk.hpp"

namespace bowline::engine {

namespace fs = std::filesystem;

void LibvirtNode::export_files(const store::Space& space, const fs::path& dir) {
  const auto disk = plan::space_file(s_.node, space.domain_name, "disk.qcow2");
  if (!files_.exists(disk))
    throw EngineError(EngineError::Kind::Conflict,
                      "the space's disk is not on node " + s_.name + " (" + disk + " is missing)");
  files_.fetch(disk, (dir / "disk.qcow2").string());
  const auto nvram = plan::space_file(s_.node, space.domain_name, "nvram.fd");
  if (files_.exists(nvram)) files_.fetch(nvram, (dir / "nvram.fd").string());
}

void LibvirtNode::import_files(const NodeSpace& s, const fs::path& dir, const Progress& progress) {
  if (spec::boots_from_disk(s.spec))
    throw EngineError(EngineError::Kind::Invalid,
                      "the space boots from a disk object, which does not move with it");
  if (files_.any_left(s.space.domain_name))
    throw EngineError(EngineError::Kind::Conflict, "files named for " + s.space.domain_name +
                                                       " are on node " + s_.name +
                                                       " already: move them away first");
  const auto base = files_.place_base(resolve_image(s.spec, progress));
  image::set_backing_file(dir / "disk.qcow2", base.on_host);
  const auto plan = plan_for(s);
  try {
    files_.make_space_place(plan);
    progress.step("copying the disk to " + s_.name, 60);
    files_.put((dir / "disk.qcow2").string(), plan.system_disk.path);
    if (fs::exists(dir / "nvram.fd") && !plan.firmware.nvram.empty())
      files_.put((dir / "nvram.fd").string(), plan.firmware.nvram);
  } catch (...) {
    try {
      files_.remove_space(s.space.domain_name);
    } catch (const std::exception&) {  // the copy's error says more
    }
    throw;
  }
}

}  // namespace bowline::engine
