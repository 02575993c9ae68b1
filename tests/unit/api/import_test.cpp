// What an import must not do on its own: add a template to the server (only an admin, only
// with createTemplate / --create-template), or take an instance id that has a history here
// (keepIdentity / --keep-identity). Archives are made by the test (ArchiveWriter, a small
// standalone qcow2) and sent over the import WebSocket; a refusal leaves nothing behind.
#include <gtest/gtest.h>

#include <set>

#include "api_test_support.hpp"
#include "engine/host_keys.hpp"
#include "engine/identifiers.hpp"
#include "engine/space_archive.hpp"
#include "ws_test_client.hpp"

namespace bowline::api::testing {
namespace {

namespace fs = std::filesystem;

struct Identity {
  std::string id, uuid, host_key, host_key_public;
};

Identity fresh_identity() {
  const auto key = engine::make_host_key("imported");
  return {engine::random_uuid(), engine::random_uuid(), key.private_key, key.public_line};
}

// The answer to an import: the refusal before the upgrade (status, body), or the frame the
// server sent at the end ('Z' made, 'E' refused, with the status in the body).
struct Imported {
  int status = 0;
  char kind = 0;
  json body;
  std::string error() const { return body.is_object() ? body.value("error", "") : ""; }
};

class security_import : public ::testing::Test {
 protected:
  security_import() {
    const auto file = stack_.dir() / "disk.qcow2";
    util::SystemProcessRunner runner;
    const auto made = runner.run({"qemu-img", "create", "-q", "-f", "qcow2", file.string(), "16M"},
                                 std::chrono::seconds(30));
    if (made.exit_code != 0) throw std::runtime_error("qemu-img create failed: " + made.err);
    std::ifstream in(file, std::ios::binary);
    disk_.assign(std::istreambuf_iterator<char>(in), {});
    fs::remove(file);
  }

  // An archive as `space export` writes one, of a space of `tmpl` with `identity`.
  std::string archive(const std::string& tmpl, const Identity& identity,
                      const std::string& yaml = bridged_template()) const {
    const json facts = {{"format", engine::archive::kFormat},
                        {"version", 1},
                        {"name", "original"},
                        {"template", {{"name", tmpl}, {"revision", 1}}},
                        {"identity",
                         {{"id", identity.id},
                          {"uuid", identity.uuid},
                          {"hostKey", identity.host_key},
                          {"hostKeyPublic", identity.host_key_public}}}};
    std::string out;
    engine::archive::ArchiveWriter writer([&](std::string_view bytes) { out.append(bytes); },
                                          1700000000);
    writer.add(engine::archive::kSpaceMember, facts.dump());
    writer.add(engine::archive::kTemplateMember, yaml);
    writer.add(engine::archive::kDiskMember, disk_);
    writer.finish();
    return out;
  }

  Imported import(const std::string& token, const std::string& query, const std::string& bytes) {
    WsClient ws(stack_.port(), "/api/v1/spaces/import?" + query,
                {"Authorization: Bearer " + token});
    if (ws.status() != 101) return {ws.status(), 0, json::parse(ws.body(), nullptr, false)};
    constexpr std::size_t kFrame = 1024 * 1024;
    for (std::size_t at = 0; at < bytes.size(); at += kFrame)
      ws.send("D" + bytes.substr(at, kFrame));
    ws.send("Z");
    const auto answer = ws.receive(30s);
    if (!answer || answer->empty()) return {101, 0, json()};
    return {101, (*answer)[0], json::parse(answer->substr(1), nullptr, false)};
  }

  bool template_exists(const std::string& name) {
    return stack_.store().templates().find_by_name(name).has_value();
  }
  void add_template(const std::string& name, const std::string& yaml = bridged_template()) {
    const auto r =
        client_.post("/api/v1/templates", stack_.admin_token(), {{"name", name}, {"yaml", yaml}});
    ASSERT_EQ(r.status, 201) << r.body;
  }
  // A space of `tmpl` made by the admin, through the API; its id.
  std::string make_space(const std::string& tmpl) {
    const auto r = client_.post("/api/v1/spaces", stack_.admin_token(),
                                {{"template", tmpl}, {"name", unique("orig")}, {"start", false}});
    EXPECT_EQ(r.status, 202) << r.body;
    stack_.wait_operation(r.parsed()["operation"]["id"].get<std::int64_t>(), stack_.admin_token());
    return r.parsed()["space"]["id"].get<std::string>();
  }
  Identity identity_of(const std::string& space_id) {
    const auto space = stack_.store().spaces().get(space_id);
    EXPECT_TRUE(space.has_value());
    return {space->id, space->uuid, space->host_key, space->host_key_public};
  }
  std::int64_t admin_id() { return stack_.store().users().find_by_username("admin")->id; }

  // Every file under the images directory (disks, the staging directory, spaces' files).
  std::set<fs::path> files() const {
    std::set<fs::path> out;
    for (const auto& entry : fs::recursive_directory_iterator(stack_.images()))
      if (entry.is_regular_file()) out.insert(entry.path());
    return out;
  }
  // No space named `name` of the admin's, no disk row and no file that was not there before.
  void expect_nothing_left(const std::string& name, const std::set<fs::path>& before,
                           std::size_t disks_before) {
    EXPECT_FALSE(stack_.store().spaces().find_by_name(admin_id(), name).has_value());
    EXPECT_EQ(stack_.store().disks().list().size(), disks_before);
    for (const auto& file : files()) EXPECT_TRUE(before.count(file)) << "left behind: " << file;
  }

  ApiStack stack_;
  HttpClient client_{stack_.port()};
  std::string disk_;  // a standalone 16 MiB qcow2, as an export's disk.qcow2 is
};

TEST_F(security_import, WithoutCreateTemplateAMissingTemplateIsRefusedAndNoneIsAdded) {
  const auto tmpl = unique("archived");
  const auto name = unique("copy");
  const auto before = files();
  const auto disks = stack_.store().disks().list().size();
  const auto r = import(stack_.admin_token(), "name=" + name, archive(tmpl, fresh_identity()));
  ASSERT_EQ(r.kind, 'E') << r.body;
  EXPECT_EQ(r.body.value("status", 0), 422);
  EXPECT_EQ(r.error(), "no template named " + tmpl +
                           " on this server: give --template NAME, or an admin adds the "
                           "archive's template with --create-template");
  EXPECT_FALSE(template_exists(tmpl)) << "an import added a template without being asked to";
  expect_nothing_left(name, before, disks);
}

TEST_F(security_import, CreateTemplateAddsTheArchivesTemplateForAnAdmin) {
  const auto tmpl = unique("archived");
  const auto name = unique("copy");
  const auto r = import(stack_.admin_token(), "name=" + name + "&createTemplate=1",
                        archive(tmpl, fresh_identity()));
  ASSERT_EQ(r.kind, 'Z') << r.body;
  EXPECT_EQ(r.body["template"], tmpl);
  const auto made = stack_.store().templates().find_by_name(tmpl);
  ASSERT_TRUE(made.has_value());
  EXPECT_EQ(made->yaml, bridged_template());
  EXPECT_TRUE(stack_.store().spaces().find_by_name(admin_id(), name).has_value());
  stack_.wait_operation(r.body["operation"]["id"].get<std::int64_t>(), stack_.admin_token());
}

TEST_F(security_import, CreateTemplateNeverChangesATemplateThatHasTheName) {
  const auto tmpl = unique("archived");
  add_template(tmpl);
  const auto name = unique("copy");
  auto other_yaml = bridged_template();
  other_yaml.replace(other_yaml.find("memory: 256M"), 12, "memory: 512M");
  const auto r = import(stack_.admin_token(), "name=" + name + "&createTemplate=1",
                        archive(tmpl, fresh_identity(), other_yaml));
  ASSERT_EQ(r.kind, 'Z') << r.body;
  const auto kept = stack_.store().templates().find_by_name(tmpl);
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->yaml, bridged_template());
  EXPECT_EQ(kept->revision, 1);
  stack_.wait_operation(r.body["operation"]["id"].get<std::int64_t>(), stack_.admin_token());
}

TEST_F(security_import, AUserWhoMayNotAddTemplatesIsRefusedCreateTemplateAndGetsNoneImplicitly) {
  const auto user = stack_.make_user(unique("user"));
  const auto tmpl = unique("archived");
  const auto bytes = archive(tmpl, fresh_identity());
  const auto asked = import(user, "name=" + unique("copy") + "&createTemplate=1", bytes);
  EXPECT_EQ(asked.status, 403) << asked.body;
  EXPECT_EQ(asked.error(), "only admins add templates (createTemplate)");
  EXPECT_FALSE(template_exists(tmpl));

  const auto unasked = import(user, "name=" + unique("copy"), bytes);
  ASSERT_EQ(unasked.kind, 'E') << unasked.body;
  EXPECT_EQ(unasked.body.value("status", 0), 422);
  EXPECT_FALSE(template_exists(tmpl));
}

TEST_F(security_import, AFailedImportTakesTheTemplateItAddedAway) {
  const auto base = unique("base");
  add_template(base);
  const auto in_use = identity_of(make_space(base));
  const auto tmpl = unique("archived");
  const auto r =
      import(stack_.admin_token(), "name=" + unique("copy") + "&createTemplate=1&keepIdentity=1",
             archive(tmpl, in_use));
  ASSERT_EQ(r.kind, 'E') << r.body;
  EXPECT_FALSE(template_exists(tmpl)) << "a refused import left its template behind";
}

TEST_F(security_import, KeepIdentityRefusesTheIdOfADeletedSpaceAndLeavesNothingBehind) {
  const auto tmpl = unique("base");
  add_template(tmpl);
  const auto id = make_space(tmpl);
  const auto deleted = identity_of(id);
  const auto gone = client_.request("DELETE", "/api/v1/spaces/" + id, stack_.admin_token());
  ASSERT_EQ(gone.status, 202) << gone.body;
  stack_.wait_operation(gone.parsed()["operation"]["id"].get<std::int64_t>(), stack_.admin_token());
  ASSERT_FALSE(stack_.store().spaces().get(id).has_value());

  const auto name = unique("copy");
  const auto before = files();
  const auto disks = stack_.store().disks().list().size();
  const auto history = stack_.store().operations().list_for_space(id).size();
  const auto r =
      import(stack_.admin_token(), "name=" + name + "&keepIdentity=1", archive(tmpl, deleted));
  ASSERT_EQ(r.kind, 'E') << r.body;
  EXPECT_EQ(r.body.value("status", 0), 409);
  EXPECT_EQ(r.error(), "--keep-identity: the archive's instance id " + id +
                           " was a space's on this server, whose history is kept; import it "
                           "without --keep-identity to get a new one");
  expect_nothing_left(name, before, disks);
  // The deleted space's history is still only its own.
  EXPECT_EQ(stack_.store().operations().list_for_space(id).size(), history);
}

TEST_F(security_import, KeepIdentityRefusesTheIdOfASpaceInUseAndLeavesNothingBehind) {
  const auto tmpl = unique("base");
  add_template(tmpl);
  const auto id = make_space(tmpl);
  const auto name = unique("copy");
  const auto before = files();
  const auto disks = stack_.store().disks().list().size();
  const auto r = import(stack_.admin_token(), "name=" + name + "&keepIdentity=1",
                        archive(tmpl, identity_of(id)));
  ASSERT_EQ(r.kind, 'E') << r.body;
  EXPECT_EQ(r.body.value("status", 0), 409);
  EXPECT_NE(r.error().find("--keep-identity: the archive's identity (instance id " + id +
                           ") is in use by the space "),
            std::string::npos)
      << r.error();
  expect_nothing_left(name, before, disks);
  EXPECT_TRUE(stack_.store().spaces().get(id).has_value());
}

// The refusals above are about the id's history: an identity new to this server is kept.
TEST_F(security_import, KeepIdentityKeepsAnIdentityNewToThisServer) {
  const auto tmpl = unique("base");
  add_template(tmpl);
  const auto identity = fresh_identity();
  const auto name = unique("copy");
  const auto r =
      import(stack_.admin_token(), "name=" + name + "&keepIdentity=1", archive(tmpl, identity));
  ASSERT_EQ(r.kind, 'Z') << r.body;
  EXPECT_EQ(r.body["space"]["id"], identity.id);
  const auto made = stack_.store().spaces().get(identity.id);
  ASSERT_TRUE(made.has_value());
  EXPECT_EQ(made->uuid, identity.uuid);
  EXPECT_EQ(made->host_key_public, identity.host_key_public);
  stack_.wait_operation(r.body["operation"]["id"].get<std::int64_t>(), stack_.admin_token());
}

}  // namespace
}  // namespace bowline::api::testing
