// The serial consoles of running spaces, shared: one console stream per space (keyed by its id,
// never by a domain name another space could take over), fanned out to every viewer (each sees
// the output, each may type), with recent output kept as scrollback for whoever joins later.
// The stream is reopened when it ends while someone is watching (a guest reboot that restarts
// QEMU, a libvirtd restart), and held a while after the last viewer leaves so a newcomer still
// finds what the guest printed meanwhile. A space that is gone ends its console and its viewers.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "api/http.hpp"
#include "util/byte_stream.hpp"
#include "util/timer.hpp"

namespace bowline::api {

class ConsoleHub {
 public:
  // Opens the console of the space `key`: a stream, nullptr when the space is gone for good, or
  // an exception for "not now" (not running yet, libvirtd away: tried again).
  using Opener = std::function<std::unique_ptr<util::ByteStream>(const std::string& key)>;

  // `timer`: when the linger is over (tests move it on). `input_limit`: bytes typed but not yet
  // taken by the guest, per console, beyond which input() refuses more.
  ConsoleHub(Opener open, std::size_t scrollback,
             std::chrono::milliseconds linger = std::chrono::minutes(10),
             util::Timer& timer = util::steady_timer(), std::size_t input_limit = 1024 * 1024);
  ~ConsoleHub();  // closes every stream and waits for the threads
  ConsoleHub(const ConsoleHub&) = delete;
  ConsoleHub& operator=(const ConsoleHub&) = delete;

  // Sends the space's scrollback to `peer`, then everything the guest prints. Returns the
  // viewer's id for input() and detach().
  std::uint64_t attach(const std::string& key, std::shared_ptr<SocketPeer> peer);
  // Bytes a viewer typed; never blocks (a writer thread sends them to the console). false when
  // the console already holds `input_limit` bytes the guest has not read (a stopped space, a
  // guest that does not read, a flood): the caller drops that viewer, the server's memory
  // does not grow.
  bool input(const std::string& key, std::string bytes);
  void detach(const std::string& key, std::uint64_t viewer);

  std::size_t viewers(const std::string& key);
  // How many times a console stream has been opened for `key` (tests: reopened after an end).
  std::uint64_t opens(const std::string& key);

 private:
  struct Console;
  void pump(const std::shared_ptr<Console>& console);
  void write_loop(const std::shared_ptr<Console>& console);

  Opener open_;
  const std::size_t scrollback_;
  const std::chrono::milliseconds linger_;
  util::Timer& timer_;
  const std::size_t input_limit_;
  std::mutex mutex_;  // guards consoles_ and each Console's fields
  std::map<std::string, std::shared_ptr<Console>> consoles_;
  std::vector<std::shared_ptr<Console>> retired_;  // ended, replaced: their threads are leaving
  std::uint64_t next_viewer_ = 1;
  bool stopping_ = false;
};

}  // namespace bowline::api
