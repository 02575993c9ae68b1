#include "cli/tunnel_pipe.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <thread>

#include "cli/local_sockets.hpp"
#include "cli/ws_client.hpp"

namespace bowline::cli {

std::string tunnel_path(const std::string& space_id, unsigned port) {
  return "/api/v1/spaces/" + escape_segment(space_id) + "/tunnel/" + std::to_string(port);
}

void splice_tunnel(const Endpoint& endpoint, const std::string& path, int in, int out,
                   bool out_is_socket) {
  WsConnection ws(endpoint, path);
  int wake[2];
  if (::pipe(wake) != 0) throw std::runtime_error("pipe failed");
  std::atomic<bool> out_open{true};
  auto end_out = [&] {
    if (!out_open.exchange(false)) return;
    if (out_is_socket)
      ::shutdown(out, SHUT_WR);
    else
      ::close(out);
  };
  std::thread down([&] {
    while (auto bytes = ws.read()) {
      if (bytes->empty()) {
        end_out();  // the guest's end; the WebSocket closes once ours is sent too
        continue;
      }
      if (out_open && !write_all(out, *bytes)) break;
    }
    end_out();
    [[maybe_unused]] auto n = ::write(wake[1], "x", 1);
  });
  char buffer[64 * 1024];
  bool in_open = true;
  for (;;) {
    pollfd fds[2] = {{in, static_cast<short>(in_open ? POLLIN : 0), 0}, {wake[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents) break;  // the WebSocket closed
    if (!in_open || !(fds[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    const auto n = ::read(in, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      in_open = false;
      ws.write(std::string());  // our end: the guest reads EOF
      continue;
    }
    if (!ws.write(std::string(buffer, static_cast<std::size_t>(n)))) break;
  }
  ws.close();
  down.join();
  ::close(wake[0]);
  ::close(wake[1]);
}

}  // namespace bowline::cli
