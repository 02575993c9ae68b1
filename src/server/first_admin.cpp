#include "server/first_admin.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "api/auth.hpp"

namespace bowline::server {

namespace fs = std::filesystem;

namespace {

void write_secret(const fs::path& file, const std::string& text) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    throw std::runtime_error("cannot write " + file.string() + ": " + std::strerror(errno));
  ::fchmod(fd, 0600);  // an older file may have had other bits
  const std::string line = text + "\n";
  const bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  ::close(fd);
  if (!ok) throw std::runtime_error("cannot write " + file.string());
}

}  // namespace

std::optional<std::string> bootstrap_admin(store::Store& store, const fs::path& token_file) {
  std::string token;
  {
    auto transaction = store.transaction();
    if (store.users().count() != 0) return std::nullopt;
    store::NewUser admin;
    admin.username = "admin";
    admin.permissions = {store::Permission::Admin};
    const auto user = store.users().create(admin);
    token = api::issue_token(store, user.id, "first admin token");
    transaction.commit();
  }
  write_secret(token_file, token);
  return token;
}

void announce_first_admin(store::Store& store, const fs::path& token_file, std::ostream& out,
                          bool out_is_terminal) {
  const auto token = bootstrap_admin(store, token_file);
  if (!token) return;
  if (out_is_terminal)
    out << "First start: created the admin user \"admin\". Its API token, shown once:\n\n  "
        << *token << "\n\n(also in " << token_file.string()
        << ", readable only by this user; delete it once you have kept the token)\n";
  else
    out << "First start: created the admin user \"admin\". Its API token is in "
        << token_file.string()
        << " (readable only by this user; not printed here, since this output is not a "
           "terminal and may be logged). Keep it, then delete the file.\n";
}

}  // namespace bowline::server
