// Helpers for the kubevirt tests: temporary directories, files, child processes (python3,
// openssl) with their output captured, and rendering a template file the way the CLI does.
#pragma once

#include "../common/scratch_files.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kubevirt/render.hpp"
#include "spec/expand.hpp"

namespace bowline::kubevirt::test {

using test_support::read_file;
using test_support::source_path;
using test_support::TempDir;
using test_support::write_file;

// A fake server's request log (requests.log in `dir`): one JSON object per request, oldest
// first; empty before the first request.
std::vector<nlohmann::ordered_json> logged_requests(const TempDir& dir);

struct Finished {
  int exit_code = -1;
  std::string out;
  std::string err;
};
// Runs argv[0] from PATH with no shell in between; stdin is /dev/null.
Finished run(const std::vector<std::string>& argv);

// A child process that keeps running: its first line of stdout is read at start.
class Server {
 public:
  explicit Server(const std::vector<std::string>& argv);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  const std::string& first_line() const { return first_line_; }

 private:
  int pid_ = -1;
  std::string first_line_;
};

// The variables and owner every test uses: alice, space dev, namespace tenant-test.
spec::Variables default_vars();
RenderOptions default_options();

// Loads the template (failing the test on any error) and renders it.
spec::Spec load(const std::string& yaml, const spec::Variables& vars = default_vars());
Manifests render(const std::string& yaml, const RenderOptions& options = default_options());

// The first object of that kind; fails the test when there is none.
const nlohmann::ordered_json& find_kind(const Manifests& m, const std::string& kind);
bool has_kind(const Manifests& m, const std::string& kind);

}  // namespace bowline::kubevirt::test
