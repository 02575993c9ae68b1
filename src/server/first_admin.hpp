// The first start of a server: an admin user and a token to reach it with.
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>

#include "store/store.hpp"

namespace bowline::server {

// On a store without users: creates the admin user "admin" with a first API token, writes the
// token to `token_file` (mode 0600) and returns it; nullopt when there are users already.
std::optional<std::string> bootstrap_admin(store::Store& store,
                                           const std::filesystem::path& token_file);

// bootstrap_admin, saying what it did on `out`: the token itself only when `out` is a terminal
// (a service's output ends up in logs that others read), else only the file's path.
void announce_first_admin(store::Store& store, const std::filesystem::path& token_file,
                          std::ostream& out, bool out_is_terminal);

}  // namespace bowline::server
