// The CLI and an https:// server: without a pin a certificate the trust store cannot verify is
// refused with its fingerprint; a pin must match exactly, for HTTP (libcurl) and WebSocket
// (Beast) alike, before any token is sent; one the trust store verifies needs no pin. Then
// `bowline login` against the real server: refused without a terminal, --accept-fingerprint
// (right and wrong), y/N on a terminal, and a changed certificate refused by every verb later.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "../common/scratch_files.hpp"
#include "../common/test_certificates.hpp"
#include "api/http_server.hpp"
#include "cli/client.hpp"
#include "cli/tls_trust.hpp"
#include "cli/ws_client.hpp"
#include "util/tls_fingerprint.hpp"

namespace bowline::cli {
namespace {

namespace fs = std::filesystem;
using test_support::make_test_certificate;
using test_support::TempDir;
using test_support::TestCertificate;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

std::string fingerprint_of(const TestCertificate& cert) {
  return util::pem_certificate_fingerprint(test_support::read_file(cert.cert.string()));
}

// An HTTPS server in this process: GET /api/v1/whoami answers, /ws echoes frames; it counts the
// requests that reached it (none may, past a refused certificate).
class TlsServer {
 public:
  explicit TlsServer(const TestCertificate& cert) {
    api::HttpServerOptions options;
    options.port = 0;
    options.tls = api::TlsFiles{cert.cert.string(), cert.key.string()};
    server_ = std::make_unique<api::HttpServer>(options, [this](api::Request& r) {
      ++requests;
      if (r.path != "/ws") return api::Response::json(200, {{"username", "alice"}});
      auto upgrade = std::make_shared<api::Upgrade>();
      auto peer = std::make_shared<std::shared_ptr<api::SocketPeer>>();
      upgrade->open = [peer](std::shared_ptr<api::SocketPeer> p) { *peer = p; };
      upgrade->message = [peer](std::string bytes) { (*peer)->send("echo: " + bytes); };
      api::Response response;
      response.upgrade = std::move(upgrade);
      return response;
    });
    server_->start();
  }
  ~TlsServer() { server_->stop(); }
  Endpoint endpoint(const std::string& pin = "") const {
    Endpoint e;
    e.server = "https://127.0.0.1:" + std::to_string(server_->port());
    e.server_from = "--server";
    e.token = "secret";
    e.fingerprint = pin;
    e.fingerprint_from = pin.empty() ? "" : "the test's login file";
    return e;
  }
  std::atomic<int> requests{0};

 private:
  std::unique_ptr<api::HttpServer> server_;
};

CertificateError certificate_error(const std::function<void()>& connect) {
  try {
    connect();
  } catch (const CertificateError& e) {
    return e;
  }
  ADD_FAILURE() << "the connection was not refused for its certificate";
  return CertificateError(CertificateError::Kind::Unverified, "", "", "");
}

std::function<void()> http_get(const Endpoint& e) {
  return [e] { Client(e).get("/api/v1/whoami"); };
}
std::function<void()> websocket(const Endpoint& e) {
  return [e] { WsConnection ws(e, "/ws"); };
}

class security_cli_tls : public ::testing::Test {
 protected:
  TempDir dir_;
  TestCertificate a_ = make_test_certificate(dir_.path(), "a");
  TestCertificate b_ = make_test_certificate(dir_.path(), "b");
  TlsServer server_{a_};
};

TEST_F(security_cli_tls, AnUnverifiableCertificateIsRefusedWithItsFingerprint) {
  for (const auto& connect : {http_get(server_.endpoint()), websocket(server_.endpoint())}) {
    const auto e = certificate_error(connect);
    EXPECT_EQ(e.kind(), CertificateError::Kind::Unverified);
    EXPECT_EQ(e.seen(), fingerprint_of(a_));
    EXPECT_EQ(e.exit_code(), 3);
    EXPECT_THAT(e.what(), HasSubstr("cannot be verified"));
    EXPECT_THAT(e.what(), HasSubstr("--accept-fingerprint " + fingerprint_of(a_)));
  }
  EXPECT_EQ(server_.requests, 0) << "no request (no token) went out";
}

TEST_F(security_cli_tls, APinnedCertificateIsAcceptedOverHttpAndWebSocket) {
  const auto e = server_.endpoint(fingerprint_of(a_));
  EXPECT_EQ(Client(e).get("/api/v1/whoami")["username"], "alice");
  WsConnection ws(e, "/ws");
  ASSERT_TRUE(ws.write("ping"));
  EXPECT_EQ(ws.read(), std::optional<std::string>("echo: ping"));
}

TEST_F(security_cli_tls, AnotherCertificateThanThePinnedOneIsRefusedNamingBoth) {
  const auto e = server_.endpoint(fingerprint_of(b_));
  for (const auto& connect : {http_get(e), websocket(e)}) {
    const auto error = certificate_error(connect);
    EXPECT_EQ(error.kind(), CertificateError::Kind::Mismatch);
    EXPECT_THAT(error.what(), HasSubstr(fingerprint_of(a_)));
    EXPECT_THAT(error.what(), HasSubstr(fingerprint_of(b_) + " is pinned for it"));
    EXPECT_THAT(error.what(), HasSubstr("the test's login file"));
  }
  EXPECT_EQ(server_.requests, 0) << "no request (no token) went out";
}

// SSL_CERT_FILE stands in for the system's trust store.
TEST_F(security_cli_tls, ACertificateTheTrustStoreVerifiesNeedsNoPin) {
  ::setenv("SSL_CERT_FILE", a_.cert.c_str(), 1);
  EXPECT_EQ(Client(server_.endpoint()).get("/api/v1/whoami")["username"], "alice");
  {
    WsConnection ws(server_.endpoint(), "/ws");
    ASSERT_TRUE(ws.write("ping"));
    EXPECT_EQ(ws.read(), std::optional<std::string>("echo: ping"));
  }
  // Trusted, but for another name: not this server's.
  const auto other = make_test_certificate(dir_.path(), "other", "DNS:other.example");
  TlsServer elsewhere(other);
  ::setenv("SSL_CERT_FILE", other.cert.c_str(), 1);
  for (const auto& connect : {http_get(elsewhere.endpoint()), websocket(elsewhere.endpoint())})
    EXPECT_EQ(certificate_error(connect).kind(), CertificateError::Kind::Unverified);
  ::unsetenv("SSL_CERT_FILE");
}

// ---- bowline login against the real server ---------------------------------------------------

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string slurp(const fs::path& file) {
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// `bowline server` on 127.0.0.1 with a certificate, on `port` (0: any).
class ServerProcess {
 public:
  ServerProcess(const fs::path& dir, const TestCertificate& cert, const std::string& port) {
    fs::create_directories(dir / "images");
    const auto log = dir / ("server-" + cert.cert.stem().string() + ".log");
    const std::string binary = std::string(BOWLINE_BINARY_DIR) + "/src/bowline";
    const auto listen = "127.0.0.1:" + port;
    pid_ = ::fork();
    if (pid_ == 0) {
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      const auto data = (dir / "data").string(), images = (dir / "images").string();
      ::execl(binary.c_str(), binary.c_str(), "server", "--listen", listen.c_str(), "--data-dir",
              data.c_str(), "--images-path", images.c_str(), "--libvirt-uri", "test:///default",
              "--domain-type", "qemu", "--tls-cert", cert.cert.c_str(), "--tls-key",
              cert.key.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    const std::regex listening("listening on (https://127\\.0\\.0\\.1:([0-9]+))");
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    std::smatch match;
    while (std::chrono::steady_clock::now() < deadline) {
      text_ = slurp(log);
      if (std::regex_search(text_, match, listening)) break;
      std::this_thread::sleep_for(50ms);
    }
    if (!std::regex_search(text_, match, listening))
      throw std::runtime_error("the server did not start:\n" + text_);
    url_ = match[1];
    port_ = match[2];
    token_ = slurp(dir / "data" / "admin.token");
    while (!token_.empty() && token_.back() == '\n') token_.pop_back();
  }
  ~ServerProcess() {
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  const std::string& url() const { return url_; }
  const std::string& port() const { return port_; }
  const std::string& token() const { return token_; }
  const std::string& log() const { return text_; }

 private:
  pid_t pid_ = -1;
  std::string text_, url_, port_, token_;
};

struct Run {
  int code = -1;
  std::string out, err;
};

// The real CLI with HOME of its own and stdin from a file (not a terminal).
Run bowline(const fs::path& home, const std::string& args, const std::string& stdin_text = "") {
  const auto err_file = home / "stderr.txt";
  const auto in_file = home / "stdin.txt";
  std::ofstream(in_file) << stdin_text;
  const auto command =
      "env -u BOWLINE_TOKEN -u BOWLINE_SERVER -u SSL_CERT_FILE HOME=" + quote(home.string()) + " " +
      BOWLINE_BINARY_DIR + "/src/bowline " + args + " <" + quote(in_file.string()) + " 2>" +
      quote(err_file.string());
  Run r;
  FILE* pipe = popen(command.c_str(), "r");
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) r.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = slurp(err_file);
  return r;
}

// The real CLI on a pseudo-terminal: what it wrote until `prompt`, then `answer` typed.
Run bowline_on_terminal(const fs::path& home, const std::vector<std::string>& args,
                        const std::string& prompt, const std::string& answer) {
  int master = -1;
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    ::setenv("HOME", home.c_str(), 1);
    ::unsetenv("BOWLINE_TOKEN");
    ::unsetenv("BOWLINE_SERVER");
    ::unsetenv("SSL_CERT_FILE");
    const std::string binary = std::string(BOWLINE_BINARY_DIR) + "/src/bowline";
    std::vector<char*> argv{const_cast<char*>(binary.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  Run r;
  bool answered = false;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{master, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buffer[4096];
    const auto n = ::read(master, buffer, sizeof buffer);
    if (n <= 0) break;  // the child is gone (EIO)
    r.out.append(buffer, static_cast<std::size_t>(n));
    if (!answered && r.out.find(prompt) != std::string::npos) {
      answered = true;
      const auto line = answer + "\n";
      if (::write(master, line.data(), line.size()) < 0) break;
    }
  }
  ::close(master);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

nlohmann::json login_file(const fs::path& home) {
  return nlohmann::json::parse(slurp(home / ".config" / "bowline" / "login.json"));
}

TEST_F(security_cli_tls, LoginPinsTheCertificateAndEveryVerbRefusesAnotherLater) {
  const auto fa = fingerprint_of(a_), fb = fingerprint_of(b_);
  const auto home = dir_.path() / "home";
  fs::create_directories(home);
  std::string port, token;
  {
    ServerProcess server(dir_.path(), a_, "0");
    EXPECT_THAT(server.log(),
                HasSubstr("TLS certificate " + a_.cert.string() + " (given), fingerprint " + fa));
    port = server.port();
    token = server.token();
    const auto login = "login --server " + server.url();
    // No terminal, no flag: refused, naming the fingerprint and the flag; nothing saved.
    auto r = bowline(home, login, token + "\n");
    EXPECT_EQ(r.code, 3) << r.err;
    EXPECT_THAT(r.err, HasSubstr("its fingerprint is " + fa));
    EXPECT_THAT(r.err, HasSubstr("--accept-fingerprint " + fa));
    EXPECT_FALSE(fs::exists(home / ".config" / "bowline" / "login.json"));
    // A wrong fingerprint is refused, naming both; one not in the form is a usage error.
    r = bowline(home, login + " --accept-fingerprint " + fb, token + "\n");
    EXPECT_EQ(r.code, 3) << r.err;
    EXPECT_THAT(r.err, HasSubstr(fa + ", not " + fb + " (--accept-fingerprint)"));
    EXPECT_EQ(bowline(home, login + " --accept-fingerprint 12:34", token + "\n").code, 2);
    // The right one: logged in and pinned.
    r = bowline(home, login + " --accept-fingerprint " + fa, token + "\n");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("pinned the certificate " + fa + " for " + server.url()));
    EXPECT_EQ(login_file(home)["fingerprints"][server.url()], fa);
    r = bowline(home, "space list");
    EXPECT_EQ(r.code, 0) << r.err;
    r = bowline(home, "space console no-such-space");
    EXPECT_EQ(r.code, 4) << "past the certificate, the space is looked up: " << r.err;
  }
  // The same address with another certificate: every verb refuses, naming both fingerprints.
  ServerProcess changed(dir_.path(), b_, port);
  for (const auto* verb : {"space list", "space console dev", "template list"}) {
    const auto r = bowline(home, verb);
    EXPECT_EQ(r.code, 3) << verb << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("has the fingerprint " + fb + ", but " + fa + " is pinned"));
    EXPECT_THAT(r.err, HasSubstr("--accept-fingerprint " + fb));
  }
  // Logging in again without the flag does not re-pin behind the user's back; with it, it does.
  EXPECT_EQ(bowline(home, "login --server " + changed.url(), token + "\n").code, 3);
  EXPECT_EQ(login_file(home)["fingerprints"][changed.url()], fa);
  EXPECT_EQ(
      bowline(home, "login --server " + changed.url() + " --accept-fingerprint " + fb, token + "\n")
          .code,
      0);
  EXPECT_EQ(login_file(home)["fingerprints"][changed.url()], fb);
  EXPECT_EQ(bowline(home, "space list").code, 0);

  // On a terminal, the user is asked: no keeps the old pin; yes pins the new certificate.
  const std::vector<std::string> args{"login", "--server", changed.url(), "--token", token};
  fs::remove(home / ".config" / "bowline" / "login.json");
  auto r = bowline_on_terminal(home, args, "[y/N]", "n");
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_THAT(r.out, HasSubstr("Its fingerprint is " + fb));
  r = bowline_on_terminal(home, args, "[y/N]", "y");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(login_file(home)["fingerprints"][changed.url()], fb);
  EXPECT_EQ(bowline(home, "space list").code, 0);
}

}  // namespace
}  // namespace bowline::cli
