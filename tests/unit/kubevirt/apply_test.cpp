// Apply and delete logic against a double of KubeClient that keeps objects by path (GET
// answers them, 404 otherwise) and records every request.
#include "kubevirt/apply.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "test_support.hpp"

namespace bowline::kubevirt::test {
namespace {

using Json = nlohmann::ordered_json;
using ::testing::HasSubstr;

struct Call {
  std::string method, target, content_type, body;
};

class RecordingClient : public KubeClient {
 public:
  // What the cluster has, by path; GET reads it.
  std::map<std::string, Json> cluster;
  // The answer to anything but a GET.
  std::function<HttpResponse(const Call&)> answer = [](const Call&) {
    return HttpResponse{200, "{}"};
  };
  std::vector<Call> calls;

  HttpResponse send(const std::string& method, const std::string& target,
                    const std::string& content_type, const std::string& body) override {
    calls.push_back({method, target, content_type, body});
    if (method != "GET") return answer(calls.back());
    const auto it = cluster.find(target);
    if (it == cluster.end()) return {404, R"({"kind":"Status","reason":"NotFound"})"};
    return {200, it->second.dump()};
  }
  std::vector<Call> sent(const std::string& method) const {
    std::vector<Call> out;
    for (const auto& c : calls)
      if (c.method == method) out.push_back(c);
    return out;
  }
};

Manifests full() {
  return render(read_file(source_path("tests/unit/kubevirt/golden/cozystack-full.template.yaml")));
}

// The object as the cluster keeps it after bowline applied it: its labels, and a uid.
Json on_cluster(const Json& object, const std::string& uid = "uid-1") {
  Json kept = object;
  kept["metadata"]["uid"] = uid;
  return kept;
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

TEST(Apply, ReadsThenServerSideAppliesEveryObjectInOrder) {
  const auto m = full();
  RecordingClient client;
  client.answer = [](const Call& c) {
    return HttpResponse{c.target.find("secrets") != std::string::npos ? 201 : 200, c.body};
  };
  const auto lines = apply_objects(client, m.objects);
  ASSERT_EQ(client.calls.size(), 2 * m.objects.size());
  for (std::size_t i = 0; i < m.objects.size(); ++i) {
    const auto& read = client.calls[2 * i];
    EXPECT_EQ(read.method, "GET");
    EXPECT_EQ(read.target, object_path(m.objects[i]));
    const auto& call = client.calls[2 * i + 1];
    EXPECT_EQ(call.method, "PATCH");
    // Not there yet: created without force, so nothing is taken from anyone.
    EXPECT_EQ(call.target, object_path(m.objects[i]) + "?fieldManager=bowline");
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
  EXPECT_EQ(client.sent("PATCH").size(), 3u);  // the Service was not sent
}

TEST(Apply, AReadTheClusterRefusesStopsTheApply) {
  const auto m = full();
  struct Forbidding : RecordingClient {
    HttpResponse send(const std::string& method, const std::string& target,
                      const std::string& content_type, const std::string& body) override {
      calls.push_back({method, target, content_type, body});
      return {403, R"({"kind":"Status","reason":"Forbidden","message":"no get for you"})"};
    }
  } forbidding;
  try {
    apply_objects(forbidding, m.objects);
    FAIL() << "no error";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 403);
    EXPECT_EQ(std::string(e.what()),
              "applying DataVolume/alice-dev-system: reading it first: HTTP 403: Forbidden: no get "
              "for you");
  }
  EXPECT_EQ(forbidding.calls.size(), 1u);
}

TEST(Delete, ReadsThenRemovesInReverseOrderAndToleratesWhatIsGone) {
  const auto m = full();
  RecordingClient client;
  for (std::size_t i = 0; i < m.objects.size(); ++i)
    if (m.objects[i]["kind"] != "Secret")
      client.cluster[object_path(m.objects[i])] =
          on_cluster(m.objects[i], "uid-" + std::to_string(i));
  const auto lines = delete_objects(client, m.objects);
  const auto deletes = client.sent("DELETE");
  ASSERT_EQ(deletes.size(), 3u);
  EXPECT_EQ(client.calls[0].method, "GET");
  EXPECT_EQ(client.calls[0].target, object_path(m.objects[3]));
  EXPECT_EQ(deletes[0].target, object_path(m.objects[3]) + "?propagationPolicy=Background");
  // The uid read is a precondition: an object replaced since the read is not deleted.
  EXPECT_EQ(deletes[0].content_type, "application/json");
  EXPECT_EQ(Json::parse(deletes[0].body), (Json{{"apiVersion", "v1"},
                                                {"kind", "DeleteOptions"},
                                                {"preconditions", {{"uid", "uid-3"}}}}));
  EXPECT_EQ(lines[2], "Secret/alice-dev-cloud-init already gone");
  EXPECT_EQ(lines[3], "DataVolume/alice-dev-system deleted");
}

TEST(Delete, AnyOtherErrorStops) {
  const auto m = full();
  RecordingClient client;
  for (const auto& o : m.objects) client.cluster[object_path(o)] = on_cluster(o);
  client.answer = [](const Call&) { return HttpResponse{403, "forbidden by policy"}; };
  EXPECT_THROW(delete_objects(client, m.objects), ApiError);
  EXPECT_EQ(client.sent("DELETE").size(), 1u);
}

// ---- Objects bowline did not make ---------------------------------------------------------

const Json& vm_of(const Manifests& m) {
  return find_kind(m, "VirtualMachine");
}

// The VM as another tool left it on the cluster: its own labels (or none).
Json foreign_vm(const Json& labels) {
  Json vm{{"apiVersion", "kubevirt.io/v1"},
          {"kind", "VirtualMachine"},
          {"metadata", {{"name", "alice-dev"}, {"namespace", "tenant-test"}, {"uid", "theirs"}}},
          {"spec", {{"runStrategy", "Always"}}}};
  if (!labels.is_null()) vm["metadata"]["labels"] = labels;
  return vm;
}

std::string space_label(const Manifests& m) {
  return vm_of(m)["metadata"]["labels"][kSpaceIdLabel].get<std::string>();
}

TEST(security_kubevirt, EveryObjectCarriesTheLabelsThatSayWhoseItIs) {
  const auto m = full();
  ASSERT_FALSE(m.objects.empty());
  for (const auto& o : m.objects) {
    EXPECT_EQ(o["metadata"]["labels"][kManagedByLabel], "bowline") << describe(o);
    EXPECT_EQ(o["metadata"]["labels"][kSpaceIdLabel], space_label(m)) << describe(o);
  }
  // Without a space id (the CLI without --var space.id): stable, from namespace and name.
  EXPECT_EQ(space_label(m), space_label_value("", "tenant-test", "alice-dev"));
  EXPECT_EQ(space_label(m).size(), 16u);
  auto options = default_options();
  options.space_id = "0b5c3d62-1111-4222-8333-944455556666";
  const auto with_id = render(
      read_file(source_path("tests/unit/kubevirt/golden/cozystack-full.template.yaml")), options);
  EXPECT_EQ(space_label(with_id), "0b5c3d62-1111-4222-8333-944455556666");
  // The Service still selects the pod by managed-by and instance only.
  EXPECT_FALSE(find_kind(with_id, "Service")["spec"]["selector"].contains(kSpaceIdLabel));
}

TEST(security_kubevirt, AnIdThatCannotBeALabelValueIsARenderError) {
  auto options = default_options();
  options.space_id = "tenant/dev";
  try {
    render_manifests(load("name: alice-dev\nimage: https://h/d.qcow2\nnetwork: {mode: nat}\n"),
                     options);
    FAIL() << "no error";
  } catch (const RenderError& e) {
    EXPECT_THAT(e.what(), HasSubstr("space.id: \"tenant/dev\" cannot label the objects"));
  }
}

TEST(security_kubevirt, AnHttpImageIsNotRenderedSinceCdiWouldNotCheckItsChecksum) {
  try {
    render_manifests(load("name: alice-dev\nimage: http://m/d.qcow2\nimageChecksum: sha256:" +
                          std::string(64, 'a') + "\nnetwork: {mode: nat}\n"),
                     default_options());
    FAIL() << "no error";
  } catch (const RenderError& e) {
    EXPECT_THAT(e.what(), HasSubstr("image: CDI would import \"http://m/d.qcow2\" over plain "
                                    "HTTP without checking imageChecksum"));
  }
}

TEST(security_kubevirt, AnObjectAnotherToolMadeIsRefusedNotForcedOver) {
  const auto m = full();
  const auto ours = space_label(m);
  const std::vector<std::pair<Json, std::string>> cases{
      {Json(), "another tool owns it (it has no label app.kubernetes.io/managed-by)"},
      {Json{{"app.kubernetes.io/managed-by", "Helm"}},
       "another tool owns it (app.kubernetes.io/managed-by=Helm)"},
      {Json{{"app.kubernetes.io/managed-by", "bowline"}},
       "it is labelled app.kubernetes.io/managed-by=bowline but has no bowline/space-id label, "
       "so it may be anyone's (if it is this space's, label it bowline/space-id=" +
           ours + ")"},
      {Json{{"app.kubernetes.io/managed-by", "bowline"}, {"bowline/space-id", "someone-else"}},
       "another bowline space owns it (bowline/space-id=someone-else)"},
      {Json{{"bowline/space-id", ours}},
       "another tool owns it (it has no label app.kubernetes.io/managed-by)"},
  };
  for (const auto& [labels, why] : cases) {
    SCOPED_TRACE(labels.dump());
    RecordingClient client;
    const auto path = object_path(vm_of(m));
    client.cluster[path] = foreign_vm(labels);
    try {
      apply_objects(client, m.objects);
      ADD_FAILURE() << "the foreign VirtualMachine was applied over";
    } catch (const ForeignObjectError& e) {
      EXPECT_EQ(e.status(), 409);
      EXPECT_EQ(std::string(e.what()),
                "applying VirtualMachine/alice-dev: the cluster already has it, and it is not "
                "this space's: " +
                    why +
                    ". bowline does not take it over: delete or rename it, or give the space "
                    "another name");
    }
    // Nothing was sent for it, and nothing after it.
    for (const auto& c : client.sent("PATCH")) EXPECT_EQ(c.target.find(path), std::string::npos);
    EXPECT_EQ(client.sent("PATCH").size(), 2u);  // the DataVolume and the Secret before it
  }
}

TEST(security_kubevirt, OnlyThisSpacesOwnObjectsAreAppliedWithForce) {
  const auto m = full();
  RecordingClient client;
  // The VM is there from an earlier apply; the rest is not.
  client.cluster[object_path(vm_of(m))] = on_cluster(vm_of(m));
  apply_objects(client, m.objects);
  for (const auto& c : client.sent("PATCH")) {
    const bool vm = c.target.find("/virtualmachines/") != std::string::npos;
    EXPECT_EQ(c.target.ends_with("?fieldManager=bowline&force=true"), vm) << c.target;
    if (!vm) {
      EXPECT_TRUE(c.target.ends_with("?fieldManager=bowline")) << c.target;
    }
  }
}

TEST(security_kubevirt, DeleteLeavesWhatIsNotThisSpacesAlone) {
  const auto m = full();
  RecordingClient client;
  for (const auto& o : m.objects) client.cluster[object_path(o)] = on_cluster(o);
  client.cluster[object_path(vm_of(m))] =
      foreign_vm(Json{{"app.kubernetes.io/managed-by", "argocd"}});
  const auto lines = delete_objects(client, m.objects);
  std::vector<std::string> deleted;
  for (const auto& c : client.sent("DELETE")) deleted.push_back(c.target);
  EXPECT_EQ(deleted.size(), 3u);
  for (const auto& target : deleted)
    EXPECT_EQ(target.find("/virtualmachines/"), std::string::npos) << target;
  EXPECT_EQ(lines[1],
            "VirtualMachine/alice-dev left alone: it is not this space's: another tool owns it "
            "(app.kubernetes.io/managed-by=argocd)");
}

TEST(security_kubevirt, ObjectsWithoutTheLabelsAreNotSentAtAll) {
  RecordingClient client;
  const Json bare{
      {"apiVersion", "v1"}, {"kind", "Secret"}, {"metadata", {{"name", "x"}, {"namespace", "y"}}}};
  EXPECT_THROW(apply_objects(client, {bare}), std::invalid_argument);
  EXPECT_THROW(delete_objects(client, {bare}), std::invalid_argument);
  EXPECT_TRUE(client.calls.empty());
}

}  // namespace
}  // namespace bowline::kubevirt::test
