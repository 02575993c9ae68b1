#include "image/nbd_image.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "image/errors.hpp"

extern char** environ;

namespace bowline::image {

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kNbdMagic = 0x4e42444d41474943ULL;  // "NBDMAGIC"
constexpr std::uint64_t kOptMagic = 0x49484156454F5054ULL;  // "IHAVEOPT"
constexpr std::uint32_t kRequestMagic = 0x25609513;
constexpr std::uint32_t kReplyMagic = 0x67446698;
constexpr std::uint16_t kFixedNewstyle = 1, kNoZeroes = 2;
constexpr std::uint32_t kOptExportName = 1;
constexpr std::uint16_t kCmdRead = 0, kCmdDisconnect = 2;

void write_all(int fd, const void* data, std::size_t size) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const auto n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw DiskError(std::string("qemu-nbd: write failed: ") + std::strerror(errno));
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

void read_all(int fd, void* data, std::size_t size) {
  auto* p = static_cast<char*>(data);
  while (size > 0) {
    const auto n = ::recv(fd, p, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw DiskError("qemu-nbd closed the connection");
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

std::uint64_t get_be(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  return v;
}

void put_be(unsigned char* p, std::uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i, v >>= 8) p[i] = static_cast<unsigned char>(v & 0xff);
}

}  // namespace

// One NBD connection: its own socket and request handles, used by one thread at a time.
class NbdImage::Connection : public GuestReader {
 public:
  // `server` is set to -1 when it is found to have exited (reaped here).
  Connection(const fs::path& socket, pid_t& server) {
    connect_socket(socket, server);
    try {
      handshake();
    } catch (...) {
      ::close(fd_);
      throw;
    }
  }
  ~Connection() override {
    try {
      unsigned char request[28] = {};
      put_be(request, kRequestMagic, 4);
      put_be(request + 6, kCmdDisconnect, 2);
      write_all(fd_, request, sizeof request);
    } catch (...) {
    }
    ::close(fd_);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  std::uint64_t size() const override { return size_; }
  void read(std::uint64_t offset, char* out, std::uint32_t length) override;

 private:
  void connect_socket(const fs::path& socket, pid_t& server);
  void handshake();

  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::uint64_t handle_ = 0;
};

NbdImage::NbdImage(const fs::path& image, const fs::path& socket_dir, const std::string& qemu_nbd,
                   std::size_t connections)
    : socket_dir_(socket_dir), socket_(socket_dir / "nbd.sock") {
  connections = std::max<std::size_t>(connections, 1);
  fs::create_directories(socket_dir_);
  fs::permissions(socket_dir_, fs::perms::owner_all, fs::perm_options::replace);
  fs::remove(socket_);
  const std::vector<std::string> argv{qemu_nbd,
                                      "--read-only",
                                      "--format=qcow2",
                                      "--shared=" + std::to_string(connections),
                                      "--socket=" + socket_.string(),
                                      image.string()};
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  const int rc = posix_spawnp(&pid_, qemu_nbd.c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    pid_ = -1;
    throw DiskError("cannot start " + qemu_nbd + ": " + std::strerror(rc));
  }
  try {
    for (std::size_t i = 0; i < connections; ++i)
      connections_.push_back(std::make_unique<Connection>(socket_, pid_));
    size_ = connections_.front()->size();
  } catch (...) {
    stop();
    throw;
  }
}

NbdImage::~NbdImage() {
  stop();
}

void NbdImage::stop() {
  connections_.clear();  // each one says goodbye
  if (pid_ > 0) {
    // qemu-nbd ends by itself once its clients are gone; a TERM makes sure.
    for (int i = 0; i < 50; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      if (i == 10) ::kill(pid_, SIGTERM);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }
  std::error_code ec;
  fs::remove_all(socket_dir_, ec);
}

GuestReader& NbdImage::connection(std::size_t i) {
  return *connections_.at(i);
}

void NbdImage::read(std::uint64_t offset, char* out, std::uint32_t length) {
  connections_.front()->read(offset, out, length);
}

void NbdImage::Connection::connect_socket(const fs::path& socket, pid_t& server) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (socket.string().size() >= sizeof address.sun_path)
    throw DiskError("the socket path " + socket.string() + " is too long");
  std::strncpy(address.sun_path, socket.c_str(), sizeof address.sun_path - 1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(server, &status, WNOHANG) == server) {
      server = -1;
      throw DiskError("qemu-nbd exited before serving the disk (is it in use, or not an image?)");
    }
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0)
      return;
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  throw DiskError("qemu-nbd did not open its socket within 10 s");
}

void NbdImage::Connection::handshake() {
  unsigned char hello[18];
  read_all(fd_, hello, sizeof hello);
  if (get_be(hello, 8) != kNbdMagic || get_be(hello + 8, 8) != kOptMagic)
    throw DiskError("qemu-nbd does not speak newstyle NBD");
  const auto server_flags = static_cast<std::uint16_t>(get_be(hello + 16, 2));
  const std::uint32_t flags = server_flags & (kFixedNewstyle | kNoZeroes);
  unsigned char client[4 + 16];
  put_be(client, flags, 4);
  put_be(client + 4, kOptMagic, 8);
  put_be(client + 12, kOptExportName, 4);
  put_be(client + 16, 0, 4);  // the default export: ""
  write_all(fd_, client, sizeof client);
  unsigned char reply[10];
  read_all(fd_, reply, sizeof reply);
  size_ = get_be(reply, 8);
  if (!(flags & kNoZeroes)) {
    unsigned char zeroes[124];
    read_all(fd_, zeroes, sizeof zeroes);
  }
}

void NbdImage::Connection::read(std::uint64_t offset, char* out, std::uint32_t length) {
  if (offset + length > size_) throw DiskError("a read past the end of the disk");
  unsigned char request[28];
  put_be(request, kRequestMagic, 4);
  put_be(request + 4, 0, 2);
  put_be(request + 6, kCmdRead, 2);
  put_be(request + 8, ++handle_, 8);
  put_be(request + 16, offset, 8);
  put_be(request + 24, length, 4);
  write_all(fd_, request, sizeof request);
  unsigned char reply[16];
  read_all(fd_, reply, sizeof reply);
  if (get_be(reply, 4) != kReplyMagic || get_be(reply + 8, 8) != handle_)
    throw DiskError("qemu-nbd answered out of order");
  if (const auto error = get_be(reply + 4, 4); error != 0)
    throw DiskError("qemu-nbd could not read the disk at " + std::to_string(offset) + " (error " +
                    std::to_string(error) + ")");
  read_all(fd_, out, length);
}

}  // namespace bowline::image
