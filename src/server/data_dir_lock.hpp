// One server per data directory: an exclusive lock on <data_dir>/server.lock, held for as long
// as the server (or a restore) runs and released by the kernel when the process ends, a kill -9
// included. Two servers on one store would each believe they own its spaces.
#pragma once

#include <filesystem>

namespace bowline::server {

class DataDirLock {
 public:
  // Throws std::runtime_error naming the holder's pid when another process holds it.
  explicit DataDirLock(const std::filesystem::path& data_dir);
  ~DataDirLock();
  DataDirLock(const DataDirLock&) = delete;
  DataDirLock& operator=(const DataDirLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace bowline::server
