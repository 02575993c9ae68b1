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

}  // namespace
}  // namespace bowline::engine
