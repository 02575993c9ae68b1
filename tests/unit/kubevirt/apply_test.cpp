// Apply and delete logic against a recording double of KubeClient.
#include "kubevirt/apply.hpp"

#include <gtest/gtest.h>

#include <functional>

#include "test_support.hpp"

namespace bowline::kubevirt::test {
namespace {

using Json = nlohmann::ordered_json;

struct Call {
  std::string method, target, content_type, body;
};

class RecordingClient : public KubeClient {
 public:
  std::function<HttpResponse(const Call&)> answer = [](const Call&) {
    return HttpResponse{200, "{}"};
  };
  std::vector<Call> calls;

  HttpResponse send(const std::string& method, const std::string& target,
                    const std::string& content_type, const std::string& body) override {
    calls.push_back({method, target, content_type, body});
    return answer(calls.back());
  }
};

Manifests full() {
  return render(read_file(source_path("tests/unit/kubevirt/golden/cozystack-full.template.yaml")));
}

TEST(ObjectPath, EachKindHasItsApiPath) {
  const auto m = full();
  std::vector<std::string> paths;
  for (const auto& o : m.objects) paths.push_back(object_path(o));
  EXPECT_EQ(paths,
            (std::vector<std::string>{
                "/apis/cdi.kubevirt.io/v1beta1/namespaces/tenant-test/datavolumes/alice-dev-system",
                "/api/v1/namespaces/tenant-test/secrets/alice-dev-cloud-init",
                "/apis/kubevirt.io/v1/namespaces/tenant-test/virtualmachines/alice-dev",
                "/api/v1/namespaces/tenant-test/services/alice-dev"}));
  EXPECT_THROW(object_path(Json{{"apiVersion", "apps/v1"},
                                {"kind", "Deployment"},
                                {"metadata", {{"name", "x"}, {"namespace", "y"}}}}),
               std::invalid_argument);
  EXPECT_THROW(object_path(Json{{"apiVersion", "v1"}, {"kind", "Secret"}}), std::invalid_argument);
}

TEST(Apply, ServerSideAppliesEveryObjectInOrder) {
  const auto m = full();
  RecordingClient client;
  client.answer = [](const Call& c) {
    return HttpResponse{c.target.find("secrets") != std::string::npos ? 201 : 200, c.body};
  };
  const auto lines = apply_objects(client, m.objects);
  ASSERT_EQ(client.calls.size(), m.objects.size());
  for (std::size_t i = 0; i < m.objects.size(); ++i) {
    const auto& call = client.calls[i];
    EXPECT_EQ(call.method, "PATCH");
    EXPECT_EQ(call.target, object_path(m.objects[i]) + "?fieldManager=bowline&force=true");
    EXPECT_EQ(call.content_type, "application/apply-patch+yaml");
    EXPECT_EQ(Json::parse(call.body), m.objects[i]);
  }
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "DataVolume/alice-dev-system applied", "Secret/alice-dev-cloud-init created",
                       "VirtualMachine/alice-dev applied", "Service/alice-dev applied"}));
}

TEST(Apply, StopsAtTheFirstRefusalWithTheServersMessage) {
  const auto m = full();
  RecordingClient client;
  client.answer = [](const Call& c) {
    if (c.target.find("virtualmachines") != std::string::npos)
      return HttpResponse{422,
                          R"({"kind":"Status","reason":"Invalid","message":"spec.template: bad"})"};
    return HttpResponse{200, "{}"};
  };
  try {
    apply_objects(client, m.objects);
    FAIL() << "no error";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 422);
    EXPECT_EQ(std::string(e.what()),
              "applying VirtualMachine/alice-dev: HTTP 422: Invalid: spec.template: bad");
  }
  EXPECT_EQ(client.calls.size(), 3u);  // the Service was not sent
}

TEST(Delete, RemovesInReverseOrderAndToleratesWhatIsGone) {
  const auto m = full();
  RecordingClient client;
  client.answer = [](const Call& c) {
    return HttpResponse{c.target.find("secrets") != std::string::npos ? 404 : 200, "{}"};
  };
  const auto lines = delete_objects(client, m.objects);
  ASSERT_EQ(client.calls.size(), 4u);
  EXPECT_EQ(client.calls[0].target, object_path(m.objects[3]) + "?propagationPolicy=Background");
  for (const auto& c : client.calls) {
    EXPECT_EQ(c.method, "DELETE");
    EXPECT_EQ(c.body, "");
  }
  EXPECT_EQ(lines[2], "Secret/alice-dev-cloud-init already gone");
  EXPECT_EQ(lines[3], "DataVolume/alice-dev-system deleted");
}

TEST(Delete, AnyOtherErrorStops) {
  const auto m = full();
  RecordingClient client;
  client.answer = [](const Call&) { return HttpResponse{403, "forbidden by policy"}; };
  EXPECT_THROW(delete_objects(client, m.objects), ApiError);
  EXPECT_EQ(client.calls.size(), 1u);
}

}  // namespace
}  // namespace bowline::kubevirt::test
