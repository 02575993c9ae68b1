// A consistent copy of the store while the server keeps using it (`bowline admin backup`).
#pragma once

#include <filesystem>

namespace bowline::store {

// Copies the database `store_file` into the new file `target` with SQLite's online backup
// API, over a connection of its own, so no request of the server waits on it: the copy is the
// store as of one moment (a WAL read snapshot), and writers carry on meanwhile. `target` is
// made with mode 0600 before a byte is written (the store holds password hashes and private
// keys). Throws StoreError when `target` exists or the copy fails; a failed copy leaves no
// file behind.
void backup_store(const std::filesystem::path& store_file, const std::filesystem::path& target);

}  // namespace bowline::store
