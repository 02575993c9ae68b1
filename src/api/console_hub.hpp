// The serial consoles of running domains, shared: one libvirt console stream per domain, fanned
// out to every viewer (each sees the output, each may type), with recent output kept as
// scrollback for whoever joins later. The stream is reopened when it ends while someone is
// watching (a guest reboot that restarts QEMU, a libvirtd restart), and held a while after
// the last viewer leaves so a newcomer still finds what the guest printed meanwhile.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "api/http.hpp"
#include "libvirt/hypervisor.hpp"

namespace bowline::api {

class ConsoleHub {
 public:
  ConsoleHub(libvirt::Hypervisor& hypervisor, std::size_t scrollback,
             std::chrono::milliseconds linger = std::chrono::minutes(10));
  ~ConsoleHub();  // closes every stream and waits for the threads
  ConsoleHub(const ConsoleHub&) = delete;
  ConsoleHub& operator=(const ConsoleHub&) = delete;

  // Sends the domain's scrollback to `peer`, then everything the guest prints. Returns the
  // viewer's id for input() and detach().
  std::uint64_t attach(const std::string& domain, std::shared_ptr<SocketPeer> peer);
  // Bytes a viewer typed; never blocks (a writer thread sends them to the console).
  void input(const std::string& domain, std::string bytes);
  void detach(const std::string& domain, std::uint64_t viewer);

  std::size_t viewers(const std::string& domain);
  // How many times a console stream has been opened for `domain` (tests: reopened after an end).
  std::uint64_t opens(const std::string& domain);

 private:
  struct Console;
  void pump(const std::shared_ptr<Console>& console);
  void write_loop(const std::shared_ptr<Console>& console);

  libvirt::Hypervisor& hypervisor_;
  const std::size_t scrollback_;
  const std::chrono::milliseconds linger_;
  std::mutex mutex_;  // guards consoles_ and each Console's fields
  std::map<std::string, std::shared_ptr<Console>> consoles_;
  std::vector<std::shared_ptr<Console>> retired_;  // ended, replaced: their threads are leaving
  std::uint64_t next_viewer_ = 1;
  bool stopping_ = false;
};

}  // namespace bowline::api
