// `bowline server` as a user runs it: --print-config, and a real start on libvirt's test
// driver (first admin and token file, the API answering, a clean stop on SIGTERM).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <regex>

#include "../api/api_test_support.hpp"
#include "../api/tls_relay.hpp"
#include "server/settings.hpp"

namespace bowline::server::testing {
namespace {

using api::testing::HttpClient;
using api::testing::receive_some;
using api::testing::TempDir;
using api::testing::TlsRelay;
using namespace std::chrono_literals;

namespace fs = std::filesystem;

const std::string kBowline = std::string(BOWLINE_BINARY_DIR) + "/src/bowline";

// A child process with its stdout and stderr on one pipe.
class Child {
 public:
  Child(const std::vector<std::string>& argv, const std::vector<std::string>& env,
        const fs::path& cwd) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe");
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(fds[1], 1);
      ::dup2(fds[1], 2);
      ::close(fds[0]);
      ::close(fds[1]);
      if (::chdir(cwd.c_str()) != 0) _exit(126);
      std::vector<char*> args, envp;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
      envp.push_back(nullptr);
      ::execve(argv[0].c_str(), args.data(), envp.data());
      _exit(127);
    }
    ::close(fds[1]);
    out_ = fds[0];
  }
  ~Child() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      wait();
    }
    ::close(out_);
  }
  // Output until `pattern` matches (or the timeout); the match's first group.
  std::string await(const std::regex& pattern, std::chrono::seconds timeout = 30s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::smatch m;
    while (!std::regex_search(output_, m, pattern)) {
      if (std::chrono::steady_clock::now() > deadline) return {};
      bool eof = false;
      output_ += receive_some(out_, 200ms, &eof);
      if (eof) return {};
    }
    return m.size() > 1 ? m[1].str() : m[0].str();
  }
  int wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    reaped_ = true;
    bool eof = false;
    do output_ += receive_some(out_, 100ms, &eof);
    while (!eof);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  void signal(int s) { ::kill(pid_, s); }
  const std::string& output() const { return output_; }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  bool reaped_ = false;
  std::string output_;
};

TEST(ServerBinaryTest, PrintConfigShowsEachSettingAndItsSource) {
  TempDir dir;
  std::ofstream(dir.path() / "bowline.yaml")
      << "server:\n  domain_type: qemu\n  kvm:\n    images_path: imgs\n";
  Child child({kBowline, "server", "--config", "bowline.yaml", "--print-config", "--listen",
               "127.0.0.1:9999"},
              {"BOWLINE_DATA_DIR=state", "PATH=/usr/bin:/bin"}, dir.path());
  EXPECT_EQ(child.wait(), 0) << child.output();
  const auto& out = child.output();
  const auto root = dir.path().string();
  EXPECT_NE(out.find("config file: " + root + "/bowline.yaml (--config)"), std::string::npos)
      << out;
  EXPECT_TRUE(
      std::regex_search(out, std::regex("server.listen +127.0.0.1:9999 +flag \\(--listen\\)")))
      << out;
  EXPECT_TRUE(std::regex_search(
      out, std::regex("server.data_dir +" + root + "/state +env \\(BOWLINE_DATA_DIR\\)")))
      << out;
  EXPECT_TRUE(std::regex_search(out, std::regex("server.domain_type +qemu +file \\("))) << out;
  EXPECT_TRUE(std::regex_search(
      out, std::regex("server.kvm.cloud_image_path +" + root + "/imgs/cloud-images +default")))
      << out;
  EXPECT_TRUE(std::regex_search(out, std::regex("server.libvirt_uri +qemu:///system +default")))
      << out;

  Child bad({kBowline, "server", "--print-config", "--domain-type", "xen"}, {}, dir.path());
  EXPECT_EQ(bad.wait(), 2);
  EXPECT_NE(bad.output().find("none of auto, kvm and qemu"), std::string::npos) << bad.output();
}

// The docs' table of settings, as a maintainer regenerates it from the binary.
TEST(ServerBinaryTest, SettingsMarkdownPrintsTheDocsTable) {
  TempDir dir;
  Child child({kBowline, "server", "--settings-markdown"}, {}, dir.path());
  child.await(std::regex("server\\.quota\\.disk[^\\n]*\\n"));  // read before the pipe fills
  EXPECT_EQ(child.wait(), 0);
  EXPECT_EQ(child.output(), settings_markdown());
}

// Seed 001's flags and variables, as a knot operator types them.
TEST(ServerBinaryTest, PrintConfigTakesKnotsFlagsAndVariables) {
  TempDir dir;
  Child child({kBowline, "server", "--print-config", "--kvm-images-path", "/srv/knot/images",
               "--kvm-resolvers", "192.168.1.1"},
              {"KNOT_KVM_CLOUD_IMAGE_PATH=/srv/library", "KNOT_KVM_BASE_IMAGE_PATH=cache",
               "PATH=/usr/bin:/bin"},
              dir.path());
  EXPECT_EQ(child.wait(), 0) << child.output();
  const auto& out = child.output();
  EXPECT_TRUE(std::regex_search(
      out, std::regex("server.kvm.images_path +/srv/knot/images +flag \\(--kvm-images-path\\)")))
      << out;
  EXPECT_TRUE(std::regex_search(
      out, std::regex("server.kvm.resolvers +192.168.1.1 +flag \\(--kvm-resolvers\\)")))
      << out;
  EXPECT_TRUE(std::regex_search(out, std::regex("server.kvm.cloud_image_path +/srv/library +env "
                                                "\\(KNOT_KVM_CLOUD_IMAGE_PATH\\)")))
      << out;
  EXPECT_TRUE(
      std::regex_search(out, std::regex("server.kvm.base_image_path +" + dir.path().string() +
                                        "/cache +env \\(KNOT_KVM_BASE_IMAGE_PATH\\)")))
      << out;

  // The other two of knot's flags.
  Child more({kBowline, "server", "--print-config", "--kvm-cloud-image-path", "/lib",
              "--kvm-base-image-path", "/cache"},
             {"PATH=/usr/bin:/bin"}, dir.path());
  EXPECT_EQ(more.wait(), 0) << more.output();
  EXPECT_TRUE(std::regex_search(more.output(), std::regex("server.kvm.cloud_image_path +/lib +flag "
                                                          "\\(--kvm-cloud-image-path\\)")))
      << more.output();
  EXPECT_TRUE(
      std::regex_search(more.output(), std::regex("server.kvm.base_image_path +/cache +flag "
                                                  "\\(--kvm-base-image-path\\)")))
      << more.output();

  Child twice(
      {kBowline, "server", "--print-config", "--images-path", "/a", "--kvm-images-path", "/b"},
      {"PATH=/usr/bin:/bin"}, dir.path());
  EXPECT_EQ(twice.wait(), 2);
  EXPECT_NE(twice.output().find("server.kvm.images_path is given twice"), std::string::npos)
      << twice.output();
}

// libvirt's test driver runs no KVM guest: auto falls back to qemu and says so; an explicit kvm
// is refused at start with the reason.
TEST(ServerBinaryTest, DomainTypeAutoFallsBackAndAnExplicitKvmIsRefused) {
  TempDir dir;
  fs::create_directories(dir.path() / "images");
  const std::vector<std::string> argv{kBowline,      "server",     "--listen",
                                      "127.0.0.1:0", "--data-dir", "data"};
  {
    Child server(argv,
                 {"PATH=/usr/bin:/bin:/usr/sbin:/sbin", "BOWLINE_LIBVIRT_URI=test:///default",
                  "BOWLINE_DOMAIN_TYPE=kvm", "BOWLINE_KVM_IMAGES_PATH=images"},
                 dir.path());
    EXPECT_EQ(server.wait(), 1) << server.output();
    EXPECT_NE(server.output().find("server.domain_type is kvm, but KVM does not run guests"),
              std::string::npos)
        << server.output();
    EXPECT_NE(server.output().find("Fix: "), std::string::npos) << server.output();
  }
  Child server(argv,
               {"PATH=/usr/bin:/bin:/usr/sbin:/sbin", "BOWLINE_LIBVIRT_URI=test:///default",
                "BOWLINE_KVM_IMAGES_PATH=images"},
               dir.path());
  const auto port = server.await(std::regex("listening on http://127\\.0\\.0\\.1:([0-9]+)"));
  ASSERT_FALSE(port.empty()) << server.output();
  EXPECT_NE(server.output().find("warning: software emulation"), std::string::npos)
      << server.output();
  EXPECT_NE(server.output().find("domain type qemu ("), std::string::npos) << server.output();
  std::string token;
  std::ifstream(dir.path() / "data" / "admin.token") >> token;
  HttpClient client(static_cast<unsigned short>(std::stoi(port)));
  const auto nodes = client.get("/api/v1/nodes", token);
  ASSERT_EQ(nodes.status, 200) << nodes.body;
  const auto node = nodes.parsed()[0];
  EXPECT_EQ(node["domainType"], "qemu") << nodes.body;
  EXPECT_EQ(node["domainTypeSetting"], "auto") << nodes.body;
  ASSERT_EQ(node["warnings"].size(), 1u) << nodes.body;
  EXPECT_NE(node["warnings"][0].get<std::string>().find("software emulation"), std::string::npos);
  bool kvm_runs_reported = false;
  for (const auto& check : node["checks"])
    if (check["name"] == "kvm-runs") {
      kvm_runs_reported = true;
      EXPECT_EQ(check["status"], "warn") << check.dump();
      EXPECT_EQ(check["required"], false) << check.dump();
    }
  EXPECT_TRUE(kvm_runs_reported) << nodes.body;
  server.signal(SIGTERM);
  EXPECT_EQ(server.wait(), 0) << server.output();
}

TEST(ServerBinaryTest, StartsServesAndStopsOnSigterm) {
  TempDir dir;
  fs::create_directories(dir.path() / "images");
  const std::vector<std::string> env{"PATH=/usr/bin:/bin:/usr/sbin:/sbin",
                                     "BOWLINE_LIBVIRT_URI=test:///default",
                                     "BOWLINE_DOMAIN_TYPE=qemu", "BOWLINE_KVM_IMAGES_PATH=images"};
  const std::vector<std::string> argv{kBowline,      "server",     "--listen",
                                      "127.0.0.1:0", "--data-dir", "data"};
  std::string token;
  {
    Child server(argv, env, dir.path());
    const auto port = server.await(std::regex("listening on http://127\\.0\\.0\\.1:([0-9]+)"));
    ASSERT_FALSE(port.empty()) << server.output();
    std::ifstream(dir.path() / "data" / "admin.token") >> token;
    ASSERT_EQ(token.size(), 64u);
    // Not a terminal: the first start says where the token is and keeps it out of the output.
    EXPECT_EQ(server.output().find(token), std::string::npos) << server.output();
    EXPECT_NE(server.output().find("Its API token is in " +
                                   (dir.path() / "data" / "admin.token").string()),
              std::string::npos)
        << server.output();
    EXPECT_EQ(fs::status(dir.path() / "data").permissions(), fs::perms::owner_all);
    EXPECT_TRUE(fs::exists(dir.path() / "images" / "cloud-images"));

    HttpClient client(static_cast<unsigned short>(std::stoi(port)));
    const auto me = client.get("/api/v1/whoami", token);
    ASSERT_EQ(me.status, 200) << me.body;
    EXPECT_EQ(me.parsed()["username"], "admin");
    const auto nodes = client.get("/api/v1/nodes", token);
    ASSERT_EQ(nodes.status, 200) << nodes.body;
    EXPECT_TRUE(nodes.parsed()[0]["checks"].is_array()) << nodes.body;
    EXPECT_EQ(client.get("/api/v1/whoami", "").status, 401);

    server.signal(SIGTERM);
    EXPECT_EQ(server.wait(), 0) << server.output();
    EXPECT_NE(server.output().find("SIGTERM: stopping"), std::string::npos) << server.output();
  }
  {
    // A second start keeps the admin and prints no new token; SIGINT stops it too.
    Child server(argv, env, dir.path());
    const auto port = server.await(std::regex("listening on http://127\\.0\\.0\\.1:([0-9]+)"));
    ASSERT_FALSE(port.empty()) << server.output();
    EXPECT_EQ(server.output().find("First start"), std::string::npos) << server.output();
    HttpClient client(static_cast<unsigned short>(std::stoi(port)));
    EXPECT_EQ(client.get("/api/v1/whoami", token).status, 200);
    server.signal(SIGINT);
    EXPECT_EQ(server.wait(), 0) << server.output();
  }
}

// HTTPS without a certificate given (--tls-mode self-signed stands in for a non-loopback
// address, which tests cannot listen on): the first start makes the pair and prints its
// fingerprint, serves only HTTPS with it, and the next start and --print-config show the same.
TEST(security_tls_server, MakesASelfSignedCertificateOnceAndServesOnlyHttps) {
  TempDir dir;
  fs::create_directories(dir.path() / "images");
  const std::vector<std::string> env{"PATH=/usr/bin:/bin:/usr/sbin:/sbin",
                                     "BOWLINE_LIBVIRT_URI=test:///default",
                                     "BOWLINE_DOMAIN_TYPE=qemu", "BOWLINE_KVM_IMAGES_PATH=images"};
  const std::vector<std::string> argv{kBowline,     "server", "--listen",   "127.0.0.1:0",
                                      "--data-dir", "data",   "--tls-mode", "self-signed"};
  const auto cert = dir.path() / "data" / "tls-cert.pem";
  const std::regex made("TLS certificate " + cert.string() +
                        " \\(self-signed, made now\\), fingerprint (SHA256:[A-Za-z0-9+/]{43})\n");
  std::string fingerprint;
  {
    Child server(argv, env, dir.path());
    const auto port = server.await(std::regex("listening on https://127\\.0\\.0\\.1:([0-9]+)"));
    ASSERT_FALSE(port.empty()) << server.output();
    std::smatch match;
    ASSERT_TRUE(std::regex_search(server.output(), match, made)) << server.output();
    fingerprint = match[1];
    EXPECT_EQ(fs::status(dir.path() / "data" / "tls-key.pem").permissions(),
              fs::perms::owner_read | fs::perms::owner_write);
    std::string token;
    std::ifstream(dir.path() / "data" / "admin.token") >> token;

    TlsRelay relay(static_cast<unsigned short>(std::stoi(port)));
    HttpClient client(relay.port());
    EXPECT_EQ(client.get("/api/v1/whoami", token).status, 200);
    EXPECT_EQ(relay.server_fingerprint(), fingerprint);
    HttpClient plain(static_cast<unsigned short>(std::stoi(port)));
    EXPECT_EQ(plain.get("/api/v1/whoami", token).status, 400);
    server.signal(SIGTERM);
    EXPECT_EQ(server.wait(), 0) << server.output();
  }
  {
    Child server(argv, env, dir.path());
    ASSERT_FALSE(server.await(std::regex("listening on https://")).empty()) << server.output();
    EXPECT_NE(
        server.output().find("(self-signed, made at an earlier start), fingerprint " + fingerprint),
        std::string::npos)
        << server.output();
    server.signal(SIGTERM);
    EXPECT_EQ(server.wait(), 0) << server.output();
  }
  Child print(
      {kBowline, "server", "--print-config", "--data-dir", "data", "--tls-mode", "self-signed"},
      env, dir.path());
  EXPECT_EQ(print.wait(), 0) << print.output();
  EXPECT_NE(print.output().find("tls: HTTPS with the self-signed " + cert.string() +
                                " (server.tls.mode is self-signed), fingerprint " + fingerprint),
            std::string::npos)
      << print.output();
  EXPECT_TRUE(std::regex_search(print.output(),
                                std::regex("server.tls.mode +self-signed +flag \\(--tls-mode\\)")))
      << print.output();
}

// Loopback without a certificate stays plain HTTP, and --print-config says why.
TEST(security_tls_server, PrintConfigSaysLoopbackIsPlainHttp) {
  TempDir dir;
  Child print({kBowline, "server", "--print-config", "--listen", "127.0.0.1:7470"},
              {"PATH=/usr/bin:/bin"}, dir.path());
  EXPECT_EQ(print.wait(), 0) << print.output();
  EXPECT_NE(print.output().find("tls: off, plain HTTP (the listen address is loopback)"),
            std::string::npos)
      << print.output();
  EXPECT_TRUE(std::regex_search(print.output(), std::regex("server.tls.cert +\\(none\\) +default")))
      << print.output();
}

}  // namespace
}  // namespace bowline::server::testing
