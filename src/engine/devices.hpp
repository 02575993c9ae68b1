// Host devices handed to spaces: each goes to one running space at a time, and only a device
// the node has and can pass through is accepted.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "libvirt/hypervisor.hpp"
#include "spec/spec.hpp"

namespace bowline::engine {

// The spec's devices plus GPUs given as PCI addresses (device-plugin names are KubeVirt's).
std::vector<spec::Device> passthrough_devices(const spec::Spec& spec);

// Whether a node device is the one `wanted` names: the PCI address, the USB bus and device, or
// (for vendor:product) a USB device with those ids. The one matcher for create checks, node
// check and placement.
bool matches(const spec::Device& wanted, const libvirt::NodeDevice& have);

// The node device that `wanted` names, if the node has it.
std::optional<libvirt::NodeDevice> find_node_device(const std::vector<libvirt::NodeDevice>& node,
                                                    const spec::Device& wanted);

// Empty when every device exists and can be passed through; else why not, per device.
std::vector<std::string> device_problems(const std::vector<libvirt::NodeDevice>& node,
                                         const std::vector<spec::Device>& wanted);

}  // namespace bowline::engine
