// /api/v1/spaces through the engine on libvirt's test driver: accepted operations, states,
// addresses, failures that stay on the space, and 200 parallel creates on a 91-address range.
#include <gtest/gtest.h>

#include <latch>
#include <set>

#include "api_test_support.hpp"

namespace bowline::api::testing {
namespace {

class SpacesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto r = client_.post("/api/v1/templates", stack_.admin_token(),
                                {{"name", "dev"}, {"yaml", bridged_template()}});
    ASSERT_EQ(r.status, 201) << r.body;
  }
  ApiStack stack_;
  HttpClient client_{stack_.port()};
};

TEST_F(SpacesTest, CreateIsAcceptedAndTheOperationFinishes) {
  const auto name = unique("alice");
  const auto alice = stack_.make_user(name);
  auto r = client_.post("/api/v1/spaces", alice,
                        {{"template", "dev"}, {"name", "box"}, {"start", false}});
  ASSERT_EQ(r.status, 202) << r.body;
  const auto accepted = r.parsed();
  const auto id = accepted["space"]["id"].get<std::string>();
  EXPECT_EQ(r.header("location"), "/api/v1/spaces/" + id);
  EXPECT_EQ(accepted["space"]["name"], "box");
  EXPECT_EQ(accepted["space"]["owner"], name);
  EXPECT_EQ(accepted["space"]["template"], "dev");
  EXPECT_EQ(accepted["space"]["domain"], name + "-box");
  EXPECT_EQ(accepted["space"]["ip"], "198.51.100.10");
  EXPECT_EQ(accepted["space"]["desiredState"], "stopped");
  EXPECT_EQ(accepted["operation"]["kind"], "create");
  EXPECT_EQ(accepted["operation"]["spaceId"], id);

  const auto op = stack_.wait_operation(accepted["operation"]["id"], alice);
  EXPECT_EQ(op["state"], "succeeded") << op;
  EXPECT_EQ(op["progress"], 100);

  r = client_.get("/api/v1/spaces/" + id, alice);
  ASSERT_EQ(r.status, 200) << r.body;
  const auto space = r.parsed();
  EXPECT_EQ(space["state"], "stopped");
  EXPECT_EQ(space["error"], "");
  EXPECT_EQ(space["templateRevision"], 1);
  EXPECT_EQ(space["appliedRevision"], 0);
  EXPECT_EQ(space["redefinePending"], false);
  EXPECT_EQ(space["info"]["address"], "198.51.100.10");
  EXPECT_EQ(space["info"]["readiness"]["booted"], false);
  EXPECT_TRUE(space["info"]["consoleTail"].is_array());

  const auto list = client_.get("/api/v1/spaces", alice).parsed();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["id"], id);
  EXPECT_EQ(list[0]["state"], "stopped");

  // The same name again: 409; a bad name: 422; an unknown template: 404.
  EXPECT_EQ(client_.post("/api/v1/spaces", alice, {{"template", "dev"}, {"name", "box"}}).status,
            409);
  EXPECT_EQ(
      client_.post("/api/v1/spaces", alice, {{"template", "dev"}, {"name", "Not_DNS"}}).status,
      422);
  EXPECT_EQ(client_.post("/api/v1/spaces", alice, {{"template", "nope"}, {"name", "x"}}).status,
            404);
  EXPECT_EQ(client_.post("/api/v1/spaces", alice, {{"name", "x"}}).status, 400);
}

TEST_F(SpacesTest, AddressesChangeOnlyWhileStopped) {
  const auto alice = stack_.make_user(unique("alice"));
  auto a =
      client_.post("/api/v1/spaces", alice, {{"template", "dev"}, {"name", "a"}, {"start", false}});
  auto b =
      client_.post("/api/v1/spaces", alice,
                   {{"template", "dev"}, {"name", "b"}, {"start", false}, {"ip", "198.51.100.77"}});
  ASSERT_EQ(a.status, 202) << a.body;
  ASSERT_EQ(b.status, 202) << b.body;
  EXPECT_EQ(b.parsed()["space"]["ip"], "198.51.100.77");
  stack_.wait_operation(a.parsed()["operation"]["id"], alice);
  stack_.wait_operation(b.parsed()["operation"]["id"], alice);
  const auto path = "/api/v1/spaces/" + a.parsed()["space"]["id"].get<std::string>() + "/ip";

  auto r = client_.request("PUT", path, alice, R"({"ip": "198.51.100.50"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.parsed()["ip"], "198.51.100.50");
  r = client_.request("PUT", path, alice, R"({"ip": "198.51.100.77"})");  // b's
  EXPECT_EQ(r.status, 409) << r.body;
  r = client_.request("PUT", path, alice, R"({"ip": "198.51.100.255"})");  // broadcast
  EXPECT_EQ(r.status, 422) << r.body;
  r = client_.request("PUT", path, alice, R"({"ip": "10.0.0.1"})");
  EXPECT_EQ(r.status, 422) << r.body;
  // An address someone holds cannot be asked for at creation either.
  r = client_.post("/api/v1/spaces", alice,
                   {{"template", "dev"}, {"name", "c"}, {"start", false}, {"ip", "198.51.100.77"}});
  EXPECT_EQ(r.status, 409) << r.body;
}

TEST_F(SpacesTest, StartStopRestartDelete) {
  const auto alice = stack_.make_user(unique("alice"));
  auto r = client_.post("/api/v1/spaces", alice, {{"template", "dev"}, {"name", "box"}});
  ASSERT_EQ(r.status, 202) << r.body;
  const auto id = r.parsed()["space"]["id"].get<std::string>();
  const auto path = "/api/v1/spaces/" + id;
  // The test driver defines and "runs" the domain: image -> overlay -> seed -> define -> start.
  auto op = stack_.wait_operation(r.parsed()["operation"]["id"], alice);
  ASSERT_EQ(op["state"], "succeeded") << op;
  auto space = client_.get(path, alice).parsed();
  EXPECT_EQ(space["state"], "running") << space;
  EXPECT_EQ(space["appliedRevision"], 1);
  const auto dir = stack_.images() / space["domain"].get<std::string>();
  EXPECT_TRUE(std::filesystem::exists(dir / "seed.iso"));

  // The address changes only while stopped.
  r = client_.request("PUT", path + "/ip", alice, R"({"ip": "198.51.100.50"})");
  EXPECT_EQ(r.status, 409) << r.body;

  r = client_.post(path + "/stop", alice, json::object());
  ASSERT_EQ(r.status, 202) << r.body;
  EXPECT_EQ(r.parsed()["operation"]["kind"], "stop");
  op = stack_.wait_operation(r.parsed()["operation"]["id"], alice);
  EXPECT_EQ(op["state"], "succeeded") << op;
  EXPECT_EQ(client_.get(path, alice).parsed()["state"], "stopped");
  EXPECT_EQ(client_.request("PUT", path + "/ip", alice, R"({"ip": "198.51.100.50"})").status, 200);

  r = client_.post(path + "/start", alice, json::object());
  ASSERT_EQ(r.status, 202) << r.body;
  stack_.wait_operation(r.parsed()["operation"]["id"], alice);
  r = client_.post(path + "/restart", alice, json::object());
  ASSERT_EQ(r.status, 202) << r.body;
  op = stack_.wait_operation(r.parsed()["operation"]["id"], alice);
  EXPECT_EQ(op["state"], "succeeded") << op;
  // The restart's own shutdown event reaches the engine after the operation (see the
  // engine's on_lifecycle): let it settle.
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  do {
    stack_.engine().wait_idle();
    space = client_.get(path, alice).parsed();
  } while (space["state"] != "running" && std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(space["state"], "running") << space;
  EXPECT_EQ(space["ip"], "198.51.100.50");

  // A template change shows as a pending redefine until the next start.
  ASSERT_EQ(client_
                .request("PUT", "/api/v1/templates/dev", stack_.admin_token(),
                         json{{"yaml", bridged_template() + "environment:\n  - A=1\n"}}.dump())
                .status,
            200);
  space = client_.get(path, alice).parsed();
  EXPECT_EQ(space["redefinePending"], true) << space;
  EXPECT_EQ(space["templateRevision"], 2);

  r = client_.request("DELETE", path, alice);
  ASSERT_EQ(r.status, 202) << r.body;
  op = stack_.wait_operation(r.parsed()["operation"]["id"], alice);
  EXPECT_EQ(op["state"], "succeeded") << op;  // the owner still follows it after the delete
  EXPECT_EQ(client_.get(path, alice).status, 404);
  EXPECT_FALSE(std::filesystem::exists(dir));
  EXPECT_TRUE(stack_.store().leases().leases_of(id).empty());
}

TEST_F(SpacesTest, AFailedCreateStaysOnTheSpaceAndLeavesNothing) {
  const auto alice = stack_.make_user(unique("alice"));
  auto yaml = bridged_template();
  yaml.replace(yaml.find("image: base"), 11, "image: no-such-image");
  ASSERT_EQ(
      client_.post("/api/v1/templates", stack_.admin_token(), {{"name", "missing"}, {"yaml", yaml}})
          .status,
      201);
  auto r = client_.post("/api/v1/spaces", alice, {{"template", "missing"}, {"name", "box"}});
  ASSERT_EQ(r.status, 202) << r.body;
  const auto id = r.parsed()["space"]["id"].get<std::string>();
  const auto op = stack_.wait_operation(r.parsed()["operation"]["id"], alice);
  EXPECT_EQ(op["state"], "failed") << op;
  EXPECT_NE(op["error"].get<std::string>().find("no-such-image"), std::string::npos) << op;
  const auto space = client_.get("/api/v1/spaces/" + id, alice).parsed();
  EXPECT_EQ(space["state"], "error") << space;
  EXPECT_NE(space["error"].get<std::string>().find("create failed"), std::string::npos) << space;
  EXPECT_NE(space["error"].get<std::string>().find("no-such-image"), std::string::npos) << space;
  // Nothing left behind: no directory, no address.
  EXPECT_FALSE(std::filesystem::exists(stack_.images() / space["domain"].get<std::string>()));
  EXPECT_TRUE(space["ip"].is_null()) << space;
  EXPECT_TRUE(stack_.store().leases().leases_of(id).empty());
}

// The list of every space is kept while nothing was committed, and never outlives a change
// (SpacesListCache): each write below must show in the very next list.
TEST_F(SpacesTest, TheListOfEverySpaceIsNeverStale) {
  const auto admin = stack_.admin_token();
  const auto all = [&] {
    const auto r = client_.get("/api/v1/spaces?all=1", admin);
    EXPECT_EQ(r.status, 200) << r.body;
    return r.parsed();
  };
  const auto before = all().size();
  const auto r = client_.post("/api/v1/spaces", admin,
                              {{"template", "dev"}, {"name", "cached"}, {"start", false}});
  ASSERT_EQ(r.status, 202) << r.body;
  const auto id = r.parsed()["space"]["id"].get<std::string>();
  stack_.engine().wait_idle();
  auto list = all();
  ASSERT_EQ(list.size(), before + 1);
  EXPECT_EQ(all(), list);  // unchanged: the same answer
  stack_.store().spaces().set_state(id, store::SpaceState::Error, "changed behind the API");
  list = all();
  ASSERT_EQ(list.size(), before + 1);
  EXPECT_EQ(list.back()["error"], "changed behind the API");
  stack_.store().spaces().set_state(id, store::SpaceState::Stopped, "");
  EXPECT_EQ(all().back()["state"], "stopped");
}

// Every list, everyone's or a user's own, is cut from SpacesListCache; after each kind of
// change it must equal the same list built from scratch by one query.
TEST_F(SpacesTest, TheCachedListsEqualListsBuiltFromScratch) {
  const auto admin = stack_.admin_token();
  const auto alice_name = unique("alice");
  const auto alice = stack_.make_user(alice_name);
  const auto bob_name = unique("bob");
  const auto bob = stack_.make_user(bob_name);
  const auto carol_name = unique("carol");
  const auto carol = stack_.make_user(carol_name);
  auto& users = stack_.store().users();
  auto alice_user = *users.find_by_username(alice_name);
  const std::vector<std::pair<std::string, std::int64_t>> callers{
      {alice, alice_user.id},
      {bob, users.find_by_username(bob_name)->id},
      {carol, users.find_by_username(carol_name)->id}};
  const auto ids = [&](const std::string& token) {
    std::vector<std::string> out;
    for (const auto& space : client_.get("/api/v1/spaces", token).parsed())
      out.push_back(space["id"]);
    return out;
  };
  const auto create = [&](const std::string& token, const std::string& name) {
    const auto r = client_.post("/api/v1/spaces", token,
                                {{"template", "dev"}, {"name", name}, {"start", false}});
    EXPECT_EQ(r.status, 202) << r.body;
    stack_.engine().wait_idle();
    return r.parsed()["space"]["id"].get<std::string>();
  };
  const auto same = [&](const char* after) {
    SCOPED_TRACE(after);
    const auto scratch = [&](std::optional<std::int64_t> owner) {
      return json::parse(spaces_list_json(stack_.store(), owner));
    };
    EXPECT_EQ(client_.get("/api/v1/spaces?all=1", admin).parsed(), scratch(std::nullopt));
    for (const auto& [token, id] : callers)
      EXPECT_EQ(client_.get("/api/v1/spaces", token).parsed(), scratch(id));
  };
  same("nothing yet");
  const auto a1 = create(alice, "a1");
  same("a first space");
  const auto b1 = create(bob, "b1");
  const auto a2 = create(alice, "a2");
  same("three spaces");
  EXPECT_EQ(ids(alice), (std::vector<std::string>{a1, a2})) << "creation order";
  EXPECT_EQ(ids(bob), (std::vector<std::string>{b1}));
  EXPECT_TRUE(ids(carol).empty());

  stack_.store().spaces().set_state(a1, store::SpaceState::Error, "changed behind the API");
  same("a state written behind the API");
  alice_user.username = unique("alicia");
  users.update(alice_user);
  same("the owner renamed");
  EXPECT_EQ(client_.get("/api/v1/spaces", alice).parsed()[0]["owner"], alice_user.username);
  stack_.store().spaces().set_applied_template_revision(b1, 1);
  ASSERT_EQ(client_
                .request("PUT", "/api/v1/templates/dev", admin,
                         json{{"yaml", bridged_template() + "environment:\n  - B=2\n"}}.dump())
                .status,
            200);
  same("a new template revision");
  EXPECT_EQ(client_.get("/api/v1/spaces", bob).parsed()[0]["redefinePending"], true);
  const auto r = client_.request("DELETE", "/api/v1/spaces/" + a1, alice);
  ASSERT_EQ(r.status, 202) << r.body;
  stack_.wait_operation(r.parsed()["operation"]["id"], alice);
  same("a space deleted");
  EXPECT_EQ(ids(alice), (std::vector<std::string>{a2}));
  const auto a3 = create(alice, "a3");
  same("a space made after a delete");
  EXPECT_EQ(ids(alice), (std::vector<std::string>{a2, a3}));
}

TEST_F(SpacesTest, TheListHasTheSameObjectsAsASingleGet) {
  const auto alice = stack_.make_user(unique("alice"));
  std::vector<std::string> ids;
  for (const auto* name : {"a", "b", "c"}) {
    const auto r = client_.post("/api/v1/spaces", alice,
                                {{"template", "dev"}, {"name", name}, {"start", false}});
    ASSERT_EQ(r.status, 202) << r.body;
    ids.push_back(r.parsed()["space"]["id"]);
  }
  stack_.engine().wait_idle();
  // Text that needs escaping, and bytes that are not UTF-8.
  stack_.store().spaces().set_state(ids[1], store::SpaceState::Error,
                                    "bad \"quote\" \\ \n\t\x01 \xff\xfe caf\xc3\xa9 \xe2\x82\xac");
  stack_.store().spaces().set_applied_template_revision(ids[2], 7);  // a redefine pending
  const auto list = client_.get("/api/v1/spaces", alice);
  ASSERT_EQ(list.status, 200);
  const auto spaces = list.parsed();
  ASSERT_EQ(spaces.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    auto one = client_.get("/api/v1/spaces/" + ids[i], alice).parsed();
    one.erase("info");
    one.erase("access");  // the caller's, and whom it is shared with: GET /spaces/{id} alone
    one.erase("shares");
    EXPECT_EQ(spaces[i], one) << i;
  }
  EXPECT_EQ(spaces[1]["error"],
            "bad \"quote\" \\ \n\t\x01 \xef\xbf\xbd\xef\xbf\xbd caf\xc3\xa9 \xe2\x82\xac");
  EXPECT_EQ(spaces[2]["redefinePending"], true);
  // An admin's ?all=1 has everyone's, here only alice's.
  const auto all = client_.get("/api/v1/spaces?all=1", stack_.admin_token()).parsed();
  EXPECT_EQ(all, spaces);
}

// Each listed space's "address": bowline's IP (bridged), else while the space runs what the
// nodes' leases say (the engine's learned_addresses), else null. The list of every space is
// kept while the addresses are the same map and rebuilt when they change.
TEST_F(SpacesTest, TheListedAddressIsTheIpOrWhileRunningTheLearnedOne) {
  const auto alice = stack_.make_user(unique("alice"));
  std::vector<std::string> ids;
  for (const auto* name : {"bridged", "nat"}) {
    const auto r = client_.post("/api/v1/spaces", alice,
                                {{"template", "dev"}, {"name", name}, {"start", false}});
    ASSERT_EQ(r.status, 202) << r.body;
    ids.push_back(r.parsed()["space"]["id"]);
  }
  stack_.engine().wait_idle();
  auto& spaces = stack_.store().spaces();
  const auto bridged_ip = *spaces.get(ids[0])->ip;
  spaces.set_ip(ids[1], std::nullopt);  // as a NAT space has none
  spaces.set_state(ids[1], store::SpaceState::Running);
  using Addresses = SpacesListCache::Addresses;
  const auto learned = std::make_shared<const Addresses>(
      Addresses{{ids[0], "198.51.100.99"}, {ids[1], "198.51.100.77"}});
  SpacesListCache cache;
  const auto first = cache.list(stack_.store(), std::nullopt, learned);
  auto list = json::parse(*first);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["address"], bridged_ip) << "the learned address beat bowline's own";
  EXPECT_EQ(list[1]["address"], "198.51.100.77");
  EXPECT_EQ(list, json::parse(spaces_list_json(stack_.store(), std::nullopt, *learned)));
  EXPECT_EQ(cache.list(stack_.store(), std::nullopt, learned), first) << "rebuilt needlessly";
  const auto moved = std::make_shared<const Addresses>(Addresses{{ids[1], "198.51.100.78"}});
  EXPECT_EQ(json::parse(*cache.list(stack_.store(), std::nullopt, moved))[1]["address"],
            "198.51.100.78");
  const auto alices = stack_.store().users().list().back().id;
  EXPECT_EQ(json::parse(*cache.list(stack_.store(), alices, moved))[1]["address"], "198.51.100.78");
  spaces.set_state(ids[1], store::SpaceState::Stopped);
  EXPECT_TRUE(json::parse(*cache.list(stack_.store(), std::nullopt, moved))[1]["address"].is_null())
      << "a stopped space has no address from a lease";
  EXPECT_TRUE(json::parse(*cache.list(stack_.store(), std::nullopt))[1]["address"].is_null());
  // Through the API (no leases on the test driver): the IP, or null.
  list = client_.get("/api/v1/spaces", alice).parsed();
  EXPECT_EQ(list[0]["address"], bridged_ip);
  EXPECT_TRUE(list[1]["address"].is_null()) << list[1];
}

// docs: 200 concurrent creates on a bridged range of 91 addresses give 91 distinct addresses
// and 109 clear "range exhausted" errors, never a duplicate.
TEST_F(SpacesTest, TwoHundredConcurrentCreatesOnNinetyOneAddresses) {
  const auto alice = stack_.make_user(unique("alice"));
  constexpr int kCreates = 200;
  std::vector<HttpResponse> answers(kCreates);
  std::latch ready(kCreates);
  {
    std::vector<std::thread> threads;
    for (int i = 0; i < kCreates; ++i)
      threads.emplace_back([&, i] {
        HttpClient client(stack_.port());
        const auto body =
            json{{"template", "dev"}, {"name", "s" + std::to_string(i)}, {"start", false}}.dump();
        ready.arrive_and_wait();  // all at once
        answers[i] = client.request("POST", "/api/v1/spaces", alice, body);
      });
    for (auto& t : threads) t.join();
  }
  std::set<std::string> addresses;
  int accepted = 0, exhausted = 0;
  for (const auto& r : answers) {
    if (r.status == 202) {
      ++accepted;
      const auto ip = r.parsed()["space"]["ip"].get<std::string>();
      EXPECT_TRUE(addresses.insert(ip).second) << "duplicate address " << ip;
    } else {
      EXPECT_EQ(r.status, 409) << r.body;
      EXPECT_NE(r.parsed()["error"].get<std::string>().find(
                    "the address range 198.51.100.10-198.51.100.100 is exhausted"),
                std::string::npos)
          << r.body;
      ++exhausted;
    }
  }
  EXPECT_EQ(accepted, 91);
  EXPECT_EQ(exhausted, 109);
  EXPECT_EQ(addresses.size(), 91u);
  EXPECT_EQ(*addresses.begin(), "198.51.100.10");
  stack_.engine().wait_idle();

  // The store agrees: 91 spaces, 91 leases, all distinct, all stopped.
  const auto list = client_.get("/api/v1/spaces", alice).parsed();
  ASSERT_EQ(list.size(), 91u);
  std::set<std::string> listed;
  for (const auto& s : list) {
    listed.insert(s["ip"].get<std::string>());
    EXPECT_EQ(s["state"], "stopped");
  }
  EXPECT_EQ(listed, addresses);
  EXPECT_EQ(stack_.store().leases().list("bridge:br-test").size(), 91u);
}

}  // namespace
}  // namespace bowline::api::testing
