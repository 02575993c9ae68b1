// CurlKubeClient against a real HTTPS endpoint: a small Python server with a self-signed
// certificate made here by openssl, which records what it received.
#include <gtest/gtest.h>

#include "kubevirt/apply.hpp"
#include "kubevirt/base64.hpp"
#include "kubevirt/curl_client.hpp"
#include "kubevirt/kubeconfig.hpp"
#include "test_support.hpp"

namespace bowline::kubevirt::test {
namespace {

using Json = nlohmann::ordered_json;

void make_certificate(const TempDir& dir, const std::string& name, const std::string& cn) {
  const auto result =
      run({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
           "-nodes", "-days", "2", "-subj", "/CN=" + cn, "-addext", "subjectAltName=IP:127.0.0.1",
           "-keyout", dir.file(name + ".key"), "-out", dir.file(name + ".crt")});
  ASSERT_EQ(result.exit_code, 0) << result.err;
}

std::vector<Json> requests(const TempDir& dir, const std::string& method = "") {
  std::vector<Json> out;
  for (auto& r : logged_requests(dir))
    if (method.empty() || r["method"] == method) out.push_back(std::move(r));
  return out;
}

class Https : public ::testing::Test {
 protected:
  // Certificates once for the suite (key generation is the slow part); a fresh server and
  // request log for each test.
  static void SetUpTestSuite() {
    certs_ = new TempDir;
    make_certificate(*certs_, "server", "127.0.0.1");
    make_certificate(*certs_, "client", "bowline-test-client");
    make_certificate(*certs_, "stranger", "127.0.0.1");
  }
  static void TearDownTestSuite() {
    delete certs_;
    certs_ = nullptr;
  }

  void SetUp() override {
    for (const char* name : {"server", "client", "stranger"})
      for (const char* ext : {".crt", ".key"})
        write_file(dir_.file(std::string(name) + ext),
                   read_file(certs_->file(std::string(name) + ext)));
    server_ = std::make_unique<Server>(std::vector<std::string>{
        "python3", source_path("tests/unit/kubevirt/https_server.py"), dir_.file("server.crt"),
        dir_.file("server.key"), dir_.file("requests.log"), dir_.file("client.crt")});
    ASSERT_FALSE(server_->first_line().empty()) << "the test server did not start";
    url_ = "https://127.0.0.1:" + server_->first_line();
  }

  // A kubeconfig for the test server, with `user` as the user's body.
  std::string kubeconfig(const std::string& user, const std::string& ca_name = "server") const {
    return "current-context: test\n"
           "clusters:\n- name: local\n  cluster:\n    server: " +
           url_ +
           "\n"
           "    certificate-authority-data: " +
           base64_encode(read_file(dir_.file(ca_name + ".crt"))) +
           "\ncontexts:\n- name: test\n  context: {cluster: local, user: me}\n"
           "users:\n- name: me\n  user: " +
           user + "\n";
  }

  static TempDir* certs_;
  TempDir dir_;
  std::unique_ptr<Server> server_;
  std::string url_;
};

TempDir* Https::certs_ = nullptr;

Manifests manifests() {
  return render(read_file(source_path("tests/unit/kubevirt/golden/cozystack-full.template.yaml")));
}

TEST_F(Https, ApplySendsEachObjectAsAnAuthenticatedServerSideApply) {
  CurlKubeClient client(parse_kubeconfig(kubeconfig("{token: test-token-123}"), dir_.path()));
  const auto m = manifests();
  const auto lines = apply_objects(client, m.objects);
  EXPECT_EQ(requests(dir_, "GET").size(), m.objects.size());  // each is read first
  const auto seen = requests(dir_, "PATCH");
  ASSERT_EQ(seen.size(), m.objects.size());
  for (std::size_t i = 0; i < seen.size(); ++i) {
    const auto& r = seen[i];
    EXPECT_EQ(r["path"], object_path(m.objects[i]));
    EXPECT_EQ(r["query"], (Json{{"fieldManager", {"bowline"}}}));  // new: no force
    EXPECT_EQ(r["content_type"], "application/apply-patch+yaml");
    EXPECT_EQ(r["authorization"], "Bearer test-token-123");
    EXPECT_EQ(r["accept"], "application/json");
    EXPECT_EQ(Json::parse(r["body"].get<std::string>()), m.objects[i]);
    EXPECT_EQ(r["client_cn"], "");
  }
  EXPECT_EQ(lines.front(), "DataVolume/alice-dev-system created");

  // Applying again: now over this space's own objects, with force, answered 200.
  EXPECT_EQ(apply_objects(client, m.objects).front(), "DataVolume/alice-dev-system applied");
  const auto again = requests(dir_, "PATCH");
  ASSERT_EQ(again.size(), 2 * m.objects.size());
  EXPECT_EQ(again.back()["query"], (Json{{"fieldManager", {"bowline"}}, {"force", {"true"}}}));
}

TEST_F(Https, DeleteSendsDeletesInReverseOrder) {
  CurlKubeClient client(parse_kubeconfig(kubeconfig("{token: t}"), dir_.path()));
  const auto m = manifests();
  apply_objects(client, m.objects);
  delete_objects(client, m.objects);
  const auto seen = requests(dir_, "DELETE");
  ASSERT_EQ(seen.size(), m.objects.size());
  for (std::size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i]["path"], object_path(m.objects[m.objects.size() - 1 - i]));
    EXPECT_EQ(seen[i]["query"], (Json{{"propagationPolicy", {"Background"}}}));
    EXPECT_EQ(seen[i]["authorization"], "Bearer t");
    EXPECT_EQ(seen[i]["content_type"], "application/json");
    // Only the object that was read: its uid is the precondition.
    EXPECT_EQ(Json::parse(seen[i]["body"].get<std::string>())["preconditions"]["uid"],
              "uid-" + std::to_string(m.objects.size() - i));
  }
}

TEST_F(Https, AClientCertificateIdentifiesUsInlineOrFromFiles) {
  const auto cert = base64_encode(read_file(dir_.file("client.crt")));
  const auto key = base64_encode(read_file(dir_.file("client.key")));
  CurlKubeClient inline_client(parse_kubeconfig(
      kubeconfig("{client-certificate-data: " + cert + ", client-key-data: " + key + "}"),
      dir_.path()));
  apply_objects(inline_client, {manifests().objects.front()});

  // Files named relative to the kubeconfig, as kubectl resolves them.
  write_file(dir_.file("config"),
             kubeconfig("{client-certificate: client.crt, client-key: client.key}"));
  CurlKubeClient file_client(load_kubeconfig(dir_.file("config")));
  apply_objects(file_client, {manifests().objects.front()});

  const auto seen = requests(dir_);
  ASSERT_EQ(seen.size(), 4u);  // a read and an apply each
  for (const auto& r : seen) {
    EXPECT_EQ(r["client_cn"], "bowline-test-client");
    EXPECT_EQ(r["authorization"], "");
  }
}

TEST_F(Https, AServerTheCaDoesNotVouchForIsRefused) {
  CurlKubeClient client(parse_kubeconfig(kubeconfig("{token: t}", "stranger"), dir_.path()));
  EXPECT_THROW(apply_objects(client, manifests().objects), TransportError);
  EXPECT_TRUE(requests(dir_).empty());  // nothing, not even the token, was sent
}

TEST_F(Https, TheApiServersRefusalAndAMissingObjectAreReported) {
  CurlKubeClient client(parse_kubeconfig(kubeconfig("{token: t}"), dir_.path()));
  auto invalid = manifests().objects.front();
  invalid["metadata"]["name"] = "disk-invalid";
  try {
    apply_objects(client, {invalid});
    FAIL() << "no error";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 422);
    EXPECT_NE(std::string(e.what()).find("Invalid: the object is invalid"), std::string::npos);
  }
  auto gone = invalid;
  gone["metadata"]["name"] = "disk-gone";
  EXPECT_EQ(delete_objects(client, {gone}),
            (std::vector<std::string>{"DataVolume/disk-gone already gone"}));
}

TEST(HttpsUnreachable, ANoListeningPortIsATransportError) {
  Connection c;
  c.server = "https://127.0.0.1:1";
  CurlKubeClient client(c);
  EXPECT_THROW(client.send("GET", "/version", "", ""), TransportError);
}

}  // namespace
}  // namespace bowline::kubevirt::test
