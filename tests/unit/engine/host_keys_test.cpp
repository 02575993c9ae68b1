// bowline's own host keys against the real ssh-keygen: it reads the private key, derives the
// same public key, and prints the same fingerprint.
#include "engine/host_keys.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "util/process.hpp"

namespace bowline::engine {
namespace {

namespace fs = std::filesystem;

TEST(HostKeys, SshKeygenReadsTheKeyAndAgreesOnTheFingerprint) {
  char pattern[] = "/tmp/bowline-host-keys.XXXXXX";
  const fs::path dir = mkdtemp(pattern);
  const auto key = make_host_key("dev-alice");
  EXPECT_EQ(key.public_line.rfind("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI", 0), 0u)
      << key.public_line;
  EXPECT_NE(key.private_key.find("-----BEGIN OPENSSH PRIVATE KEY-----\n"), std::string::npos);
  const auto file = dir / "key";
  std::ofstream(file) << key.private_key;
  ::chmod(file.c_str(), 0600);
  util::SystemProcessRunner runner;
  const auto derived =
      runner.run({"ssh-keygen", "-y", "-f", file.string()}, std::chrono::seconds(10));
  ASSERT_EQ(derived.exit_code, 0) << derived.err;
  // ssh-keygen -y prints the key and its comment.
  EXPECT_EQ(derived.out, key.public_line + "\n");
  std::ofstream(dir / "key.pub") << key.public_line << "\n";
  const auto listed =
      runner.run({"ssh-keygen", "-l", "-f", (dir / "key.pub").string()}, std::chrono::seconds(10));
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_EQ(listed.out, "256 " + fingerprint(key.public_line) + " dev-alice (ED25519)\n");
  fs::remove_all(dir);
}

TEST(HostKeys, EveryKeyIsNew) {
  EXPECT_NE(make_host_key("a").public_line, make_host_key("a").public_line);
}

TEST(HostKeys, AFingerprintNeedsAKey) {
  EXPECT_EQ(fingerprint("ssh-ed25519"), "");
  EXPECT_EQ(fingerprint("ssh-ed25519 !!!notbase64"), "");
}

// A key pair from an imported archive reaches clients' known_hosts files: it must be one
// key, whose private half is that key's.
TEST(security_host_key_imports, OnlyAMatchingEd25519PairOnOneLineIsTaken) {
  const auto key = make_host_key("dev-alice");
  EXPECT_EQ(host_key_problem(key), "");
  const auto other = make_host_key("x");
  EXPECT_NE(host_key_problem({key.private_key, other.public_line}).find("does not belong"),
            std::string::npos);
  EXPECT_NE(host_key_problem({key.private_key, key.public_line + "\n* ssh-ed25519 AAAA"})
                .find("one line"),
            std::string::npos);
  EXPECT_NE(host_key_problem({key.private_key, "ssh-rsa AAAA"}).find("not an ssh-ed25519"),
            std::string::npos);
  EXPECT_NE(host_key_problem({"-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH "
                              "PRIVATE KEY-----\n",
                              key.public_line})
                .find("not an unencrypted OpenSSH ed25519 key"),
            std::string::npos);
  // A private key whose secret half was swapped for another's: the seed decides, not the label.
  auto tampered = key;
  tampered.private_key = other.private_key;
  EXPECT_NE(host_key_problem(tampered), "");
}

TEST(security_host_key_imports, AKeyMadeBySshKeygenIsTakenToo) {
  char pattern[] = "/tmp/bowline-host-keys.XXXXXX";
  const fs::path dir = mkdtemp(pattern);
  util::SystemProcessRunner runner;
  const auto made = runner.run({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "made here",
                                "-f", (dir / "k").string()},
                               std::chrono::seconds(10));
  ASSERT_EQ(made.exit_code, 0) << made.err;
  std::ifstream priv(dir / "k"), pub(dir / "k.pub");
  std::string private_key((std::istreambuf_iterator<char>(priv)), {}), public_line;
  std::getline(pub, public_line);
  EXPECT_EQ(host_key_problem({private_key, public_line}), "");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace bowline::engine
