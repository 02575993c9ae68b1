#include "spec/spec.hpp"

namespace bowline::spec {

const char* to_string(NetworkMode m) {
  return m == NetworkMode::Nat ? "nat" : "bridged";
}
const char* to_string(Preview p) {
  return p == Preview::Team ? "team" : p == Preview::Private ? "private" : "none";
}
const char* to_string(Bootloader b) {
  return b == Bootloader::Uefi ? "uefi" : "bios";
}
const char* to_string(ExternalMethod m) {
  return m == ExternalMethod::WholeIP ? "WholeIP" : "PortList";
}

const char* to_string(RunStrategy s) {
  switch (s) {
    case RunStrategy::Always:
      return "Always";
    case RunStrategy::Halted:
      return "Halted";
    case RunStrategy::Manual:
      return "Manual";
    case RunStrategy::RerunOnFailure:
      return "RerunOnFailure";
    case RunStrategy::Once:
      return "Once";
  }
  return "Always";
}

const char* to_string(ImageKind k) {
  switch (k) {
    case ImageKind::Library:
      return "library";
    case ImageKind::Url:
      return "url";
    case ImageKind::Path:
      return "path";
  }
  return "library";
}

const char* to_string(DeviceKind k) {
  switch (k) {
    case DeviceKind::Pci:
      return "pci";
    case DeviceKind::Usb:
      return "usb";
    case DeviceKind::VendorProduct:
      return "vendor-product";
  }
  return "pci";
}

const char* to_string(SizingSource s) {
  switch (s) {
    case SizingSource::Default:
      return "default";
    case SizingSource::Knot:
      return "memory/cpus";
    case SizingSource::Resources:
      return "resources";
    case SizingSource::InstanceType:
      return "instanceType";
  }
  return "default";
}

}  // namespace bowline::spec
