#include "kubevirt/kubeconfig.hpp"

#include <gtest/gtest.h>

#include "kubevirt/base64.hpp"
#include "test_support.hpp"

namespace bowline::kubevirt::test {
namespace {

const char* kTwoContexts = R"(
apiVersion: v1
kind: Config
current-context: prod
clusters:
- name: prod-cluster
  cluster:
    server: https://prod.example:6443/
    certificate-authority-data: Q0EgUEVN
- name: lab-cluster
  cluster:
    server: https://lab.example:6443
    certificate-authority: certs/lab-ca.pem
    insecure-skip-tls-verify: true
contexts:
- name: prod
  context: {cluster: prod-cluster, user: robot}
- name: lab
  context: {cluster: lab-cluster, user: admin}
users:
- name: robot
  user: {token: abc.def}
- name: admin
  user:
    client-certificate: certs/admin.crt
    client-key: /etc/keys/admin.key
)";

TEST(Kubeconfig, TheCurrentContextWithItsDataDecoded) {
  const auto c = parse_kubeconfig(kTwoContexts, "/home/alice/.kube");
  EXPECT_EQ(c.context, "prod");
  EXPECT_EQ(c.server, "https://prod.example:6443");  // trailing '/' dropped
  EXPECT_EQ(c.ca_pem, "CA PEM");
  EXPECT_EQ(c.token, "abc.def");
  EXPECT_FALSE(c.insecure_skip_tls_verify);
}

TEST(Kubeconfig, AnotherContextWithFilesRelativeToTheKubeconfig) {
  const auto c = parse_kubeconfig(kTwoContexts, "/home/alice/.kube", "lab");
  EXPECT_EQ(c.ca_file, "/home/alice/.kube/certs/lab-ca.pem");
  EXPECT_EQ(c.client_cert_file, "/home/alice/.kube/certs/admin.crt");
  EXPECT_EQ(c.client_key_file, "/etc/keys/admin.key");
  EXPECT_TRUE(c.insecure_skip_tls_verify);
  EXPECT_TRUE(c.token.empty());
}

TEST(Kubeconfig, WhatCannotBeUsedIsSaid) {
  auto message = [](const std::string& text, const std::string& context = "") {
    try {
      parse_kubeconfig(text, "/", context);
    } catch (const KubeconfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message(kTwoContexts, "staging").find("no context named \"staging\""),
            std::string::npos);
  EXPECT_NE(message("clusters: []\n").find("current-context"), std::string::npos);
  EXPECT_NE(message("[1, 2]").find("not a kubeconfig"), std::string::npos);
  const std::string exec_user = R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://k"}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users: [{name: u, user: {exec: {command: aws}}}]
)";
  EXPECT_NE(message(exec_user).find("credential plugin"), std::string::npos);
  const std::string half_cert = R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://k"}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users: [{name: u, user: {client-certificate-data: Q0EgUEVN}}]
)";
  EXPECT_NE(message(half_cert).find("without its key"), std::string::npos);
  const std::string bad_data = R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://k", certificate-authority-data: "%%%"}}]
contexts: [{name: c, context: {cluster: k}}]
)";
  EXPECT_NE(message(bad_data).find("not base64"), std::string::npos);
}

TEST(Kubeconfig, ATokenFileIsReadAtLoad) {
  TempDir dir;
  write_file(dir.file("token"), "s3cr3t-token\n");
  write_file(dir.file("config"), R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://k"}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users: [{name: u, user: {tokenFile: token}}]
)");
  EXPECT_EQ(load_kubeconfig(dir.file("config")).token, "s3cr3t-token");
  EXPECT_THROW(load_kubeconfig(dir.file("missing")), KubeconfigError);
}

TEST(Base64, RoundTripsAndRefusesGarbage) {
  for (const std::string& text :
       std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\0\xff\x10", 3)})
    EXPECT_EQ(base64_decode(base64_encode(text)), text);
  EXPECT_EQ(base64_encode("hello"), "aGVsbG8=");
  EXPECT_EQ(base64_decode("aGVs\nbG8="), "hello");
  EXPECT_FALSE(base64_decode("aGVsbG8").has_value());
  EXPECT_FALSE(base64_decode("aG=sbG8=").has_value());
  EXPECT_FALSE(base64_decode("aGVs*G8=").has_value());
}

}  // namespace
}  // namespace bowline::kubevirt::test
