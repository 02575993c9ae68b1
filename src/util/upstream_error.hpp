// A failure of a system bowline drives (libvirtd, a Kubernetes API server), as opposed to a
// wrong request or a bug: the API answers 502 with the upstream's words. libvirt's
// HypervisorError and kubevirt's TransportError derive from it, so api/ names neither.
#pragma once

#include <stdexcept>
#include <string>

namespace bowline::util {

class UpstreamError : public std::runtime_error {
 public:
  UpstreamError(std::string upstream, const std::string& message)
      : std::runtime_error(message), upstream_(std::move(upstream)) {}
  const std::string& upstream() const noexcept { return upstream_; }  // "libvirt", "kubernetes"

 private:
  std::string upstream_;
};

}  // namespace bowline::util
