// `bowline forward` against the real server on libvirt's test driver: the forward listens
// while the guest cannot answer, reports each failed connection and goes on through stops,
// starts and a restart; only what can never get better ends it, with exit code 4.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "server_process.hpp"

namespace {

using bowline::clitest::ServerProcess;
using bowline::clitest::slurp;
using bowline::clitest::wait_for_text;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

// Connects to 127.0.0.1:`port` and reads until the other end closes (bounded); false when
// nothing listens.
bool connect_and_drain(unsigned port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  timeval timeout{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  const bool connected = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  char buffer[256];
  while (connected && ::read(fd, buffer, sizeof buffer) > 0) {
  }
  ::close(fd);
  return connected;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class forward_cli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_.start();
    std::ofstream(server_.dir() / "web.yaml") << "image: tiny\nmemory: 64Mi\ncpus: 1\n"
                                                 "network:\n  mode: nat\n  bridge: default\n"
                                                 "ports: [8000]\n";
    const auto r =
        server_.run("template create " + (server_.dir() / "web.yaml").string() + " --name web");
    ASSERT_EQ(r.code, 0) << r.err;
  }
  static void TearDownTestSuite() { server_.stop(); }
  static inline ServerProcess server_;
};

// Started while the space is stopped (the guest's service cannot answer), as a user starts
// the forward before their app. What the guest's network does once it runs differs between
// hosts (no route, or something that accepts every connect): only that the forward goes on is
// asserted then.
TEST_F(forward_cli, ListensBeforeTheServiceIsUpAndSurvivesARestartUntilTheSpaceIsGone) {
  auto r = server_.run("space create web box --wait --no-ready");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  ASSERT_EQ(server_.run("space stop box --wait").code, 0);

  auto forward = server_.start_cli("forward box 0:8000", "forward");
  std::string out;
  const auto listening = wait_for_text(
      forward.out, std::regex("http://127\\.0\\.0\\.1:([0-9]+) -> box:8000"), 20s, out);
  ASSERT_TRUE(listening) << out << slurp(forward.err);
  const unsigned port = std::stoul((*listening)[1]);
  EXPECT_THAT(slurp(forward.err), HasSubstr("box:8000 is not reachable yet"));

  const std::string failed = "a connection to box:8000 failed: ";
  std::size_t expected = 0;
  auto one_fails = [&](const std::string& when) {
    ASSERT_TRUE(connect_and_drain(port)) << when << ": nothing listens locally";
    ++expected;
    std::string err;
    wait_for_text(forward.err,
                  std::regex("(" + failed + "[^\\n]*\\n[^]*){" + std::to_string(expected) + "}"),
                  20s, err);
    EXPECT_EQ(count(err, failed), expected) << when << ":\n" << err;
    EXPECT_THAT(err, HasSubstr("not running")) << when;
    EXPECT_FALSE(forward.exited()) << when << ": the forward ended:\n" << err;
  };
  auto goes_on = [&](const std::string& when) {
    ASSERT_TRUE(connect_and_drain(port)) << when << ": nothing listens locally";
    EXPECT_FALSE(forward.exited()) << when << ": the forward ended:\n" << slurp(forward.err);
  };
  one_fails("the first connection");
  one_fails("the second connection");
  ASSERT_EQ(server_.run("space start box --wait --no-ready").code, 0);
  goes_on("once the space runs");
  ASSERT_EQ(server_.run("space restart box --wait --no-ready").code, 0);
  goes_on("after a restart");
  ASSERT_EQ(server_.run("space stop box --wait").code, 0);
  expected = count(slurp(forward.err), failed);
  one_fails("stopped again");
  ASSERT_EQ(server_.run("space start box --wait --no-ready").code, 0);
  goes_on("started again");

  // The space deleted: the next connection ends the forward, which can never work again.
  ASSERT_EQ(server_.run("space delete box --wait").code, 0);
  EXPECT_TRUE(connect_and_drain(port));
  for (int i = 0; i < 200 && !forward.exited(); ++i) std::this_thread::sleep_for(50ms);
  ASSERT_TRUE(forward.exited()) << slurp(forward.err);
  EXPECT_EQ(*forward.exited(), 4) << slurp(forward.err);
  forward.stop();
}

TEST_F(forward_cli, APortTheTemplateDoesNotListOrAnUnknownSpaceEndsAtOnce) {
  auto r = server_.run("space create web other --wait --no-ready");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  r = server_.run("forward other 0:9000");
  EXPECT_EQ(r.code, 4);
  EXPECT_THAT(r.err, HasSubstr("port 9000 is not one the space's template lists"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("Forwarding")));
  r = server_.run("forward nosuch 0:8000");
  EXPECT_EQ(r.code, 4) << r.err;
  r = server_.run("forward other 0:8000", "not-a-token");
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_EQ(server_.run("space delete other --wait").code, 0);
}

}  // namespace
