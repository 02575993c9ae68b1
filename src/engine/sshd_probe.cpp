#include "engine/sshd_probe.hpp"

#include <unistd.h>

#include "ssh/banner.hpp"
#include "util/tcp_connect.hpp"

namespace bowline::engine {

std::string sshd_state(const std::function<int()>& connect, std::chrono::milliseconds banner_wait) {
  int fd = -1;
  try {
    fd = connect();
  } catch (const util::ConnectError& e) {
    return e.refused() ? "closed" : "no route";
  }
  const auto banner = ssh::read_identification(fd, banner_wait);
  ::close(fd);
  return banner ? "open" : "no banner";
}

}  // namespace bowline::engine
