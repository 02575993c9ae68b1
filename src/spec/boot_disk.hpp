// Cozystack's form of a VM: no image, the boot disk is disks[0] (the owner's disk of that name
// on libvirt, the DataVolume vm-disk-NAME on KubeVirt).
#pragma once

#include "spec/spec.hpp"

namespace bowline::spec {

inline bool boots_from_disk(const Spec& spec) {
  return spec.image.reference.empty() && !spec.disks.empty();
}

}  // namespace bowline::spec
