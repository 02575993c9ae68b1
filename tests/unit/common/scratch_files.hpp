// Files for tests that work on real ones: a temporary directory removed with everything in
// it, whole-file reads and writes, and paths inside the repository. Linked into every unit
// test binary (bowline_test_support).
#pragma once

#include <filesystem>
#include <string>

namespace bowline::test_support {

std::string source_path(const std::string& relative);  // inside the repository

// A fresh directory (mode 0700) under the system's temporary directory, removed with its
// contents, read-only ones included, on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& bytes);

}  // namespace bowline::test_support
