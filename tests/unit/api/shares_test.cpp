// A space shared with a colleague: what each role may do through the API, the colleague's
// list and event stream, their sockets closed within a second of an unshare, and a viewer's
// display that passes no keys or pointer to the guest.
#include <gtest/gtest.h>

#include "access_fixture.hpp"
#include "ws_test_client.hpp"

namespace bowline::api::testing {
namespace {

class SharesTest : public AccessTest {
 protected:
  // granted_ owns granted_space_; other_ is the colleague; plain_ a bystander.
  int share(const std::string& role, const std::string& token = {}) {
    return client_
        .request("PUT", space_path() + "/shares/" + other_.username,
                 token.empty() ? granted_.token : token, json{{"role", role}}.dump())
        .status;
  }
  int unshare(const std::string& token = {}) {
    return client_
        .request("DELETE", space_path() + "/shares/" + other_.username,
                 token.empty() ? granted_.token : token)
        .status;
  }
  std::string space_path() const { return "/api/v1/spaces/" + granted_space_; }
  int as_other(const std::string& method, const std::string& suffix, const json& body = {}) {
    return client_
        .request(method, space_path() + suffix, other_.token, body.is_null() ? "" : body.dump())
        .status;
  }
  HttpClient client_{port()};
};

TEST_F(SharesTest, EachRoleAllowsItsOwnAndRefusesTheRestByName) {
  EXPECT_EQ(as_other("GET", ""), 404);  // not shared: as if it did not exist
  EXPECT_EQ(share("viewer"), 200);
  const auto seen = client_.get(space_path(), other_.token);
  ASSERT_EQ(seen.status, 200) << seen.body;
  EXPECT_EQ(seen.parsed()["access"], "shared-viewer");
  EXPECT_EQ(seen.parsed()["shares"],
            json::parse(R"([{"user":")" + other_.username + R"(","role":"viewer"}])"));
  EXPECT_EQ(client_.get(space_path(), granted_.token).parsed()["access"], "owner");
  EXPECT_EQ(as_other("GET", "/snapshots"), 200);
  EXPECT_EQ(as_other("GET", "/stats"), 200);
  const auto refused = client_.request("POST", space_path() + "/stop", other_.token, "{}");
  EXPECT_EQ(refused.status, 403);
  EXPECT_NE(refused.body.find("shared with you as viewer; this needs the user role"),
            std::string::npos)
      << refused.body;
  // The colleague's list has it; a bystander's does not, nor may they see it.
  const auto listed = client_.get("/api/v1/spaces", other_.token).parsed();
  ASSERT_EQ(listed.size(), 1u) << listed;
  EXPECT_EQ(listed[0]["id"], granted_space_);
  EXPECT_EQ(listed[0]["owner"], granted_.username);
  EXPECT_TRUE(client_.get("/api/v1/spaces", plain_.token).parsed().size() == 1u);
  EXPECT_EQ(client_.get(space_path(), plain_.token).status, 404);
  const auto mine = client_.get("/api/v1/shares", other_.token).parsed();
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0]["role"], "viewer");
  EXPECT_EQ(mine[0]["owner"], granted_.username);

  EXPECT_EQ(share("user"), 200);  // a second PUT changes the role
  const auto stop = client_.request("POST", space_path() + "/stop", other_.token, "{}");
  ASSERT_EQ(stop.status, 202) << stop.body;
  // The colleague follows the operation they started.
  const auto op = stack_.wait_operation(stop.parsed()["operation"]["id"], other_.token);
  EXPECT_EQ(op["state"], "succeeded") << op;
  EXPECT_EQ(as_other("PUT", "/ip", {{"ip", "198.51.100.60"}}), 403);
  EXPECT_EQ(as_other("POST", "/snapshots", {{"name", "s1"}}), 403);
  EXPECT_EQ(as_other("GET", "/export"), 403);
  EXPECT_EQ(as_other("DELETE", ""), 403);
  // Sharing stays with the owner: no role passes the space on.
  EXPECT_EQ(share("admin"), 200);
  EXPECT_EQ(client_
                .request("PUT", space_path() + "/shares/" + plain_.username, other_.token,
                         R"({"role": "viewer"})")
                .status,
            403);
  const auto snap = client_.request("POST", space_path() + "/snapshots", other_.token,
                                    R"({"name": "by-colleague"})");
  EXPECT_EQ(snap.status, 202) << snap.body;
}

TEST_F(SharesTest, BadSharesAreRefusedWithTheReason) {
  const auto bad_role = client_.request("PUT", space_path() + "/shares/" + other_.username,
                                        granted_.token, R"({"role": "owner"})");
  EXPECT_EQ(bad_role.status, 422);
  EXPECT_NE(bad_role.body.find("is not viewer, user or admin"), std::string::npos);
  EXPECT_EQ(client_
                .request("PUT", space_path() + "/shares/nobody-here", granted_.token,
                         R"({"role": "user"})")
                .status,
            404);
  EXPECT_EQ(client_
                .request("PUT", space_path() + "/shares/" + granted_.username, granted_.token,
                         R"({"role": "user"})")
                .status,
            422);
  // A stranger cannot even learn the space is there.
  EXPECT_EQ(share("viewer", plain_.token), 404);
  EXPECT_EQ(unshare(), 404);  // nothing to end
  // An admin may share anyone's; the colleague may leave a share on their own.
  EXPECT_EQ(share("viewer", stack_.admin_token()), 200);
  EXPECT_EQ(unshare(other_.token), 204);
  EXPECT_EQ(as_other("GET", ""), 404);
}

// Within a second of the unshare, every socket the colleague had open into the space closes,
// and their event stream says their share ended and then says nothing more of the space.
TEST_F(SharesTest, AnUnshareClosesTheColleaguesSocketsAndStream) {
  ASSERT_EQ(share("user"), 200);
  SseStream events(port(), other_.token, "/api/v1/events");
  ASSERT_EQ(events.status(), 200);
  WsClient display(port(), space_path() + "/vnc", {"Authorization: Bearer " + other_.token});
  ASSERT_EQ(display.status(), 101) << display.body();
  EXPECT_EQ(display.receive_until("\n"), "RFB 003.008\n");
  ASSERT_EQ(unshare(), 204);
  const auto asked = std::chrono::steady_clock::now();
  while (!display.closed() && std::chrono::steady_clock::now() - asked < 3s) display.receive(100ms);
  EXPECT_TRUE(display.closed());
  EXPECT_LT(std::chrono::steady_clock::now() - asked, 1500ms);
  bool told = false;
  while (auto e = events.next(2s))
    if (e->kind == "space.unshared") {
      told = true;
      break;
    }
  EXPECT_TRUE(told);
  ASSERT_EQ(client_.request("POST", space_path() + "/stop", granted_.token, "{}").status, 202);
  for (const auto& e : events.drain(1500ms))
    EXPECT_NE(e.kind, "space.state") << "an event of a space no longer shared";
  EXPECT_EQ(as_other("GET", ""), 404);
}

// The fake display echoes what reaches it: a viewer's keys and pointer never do, a request
// for pictures does, and the owner's keys do.
TEST_F(SharesTest, AViewersDisplayPassesPicturesButNoInput) {
  ASSERT_EQ(share("viewer"), 200);
  const std::string key_event("\x04\x01\x00\x00\x00\x00\x00\x61", 8);
  const std::string update_request("\x03\x00\x00\x00\x00\x00\x02\x80\x01\xe0", 10);
  const auto handshake = [](WsClient& ws) {
    EXPECT_EQ(ws.receive_until("\n"), "RFB 003.008\n");
    ws.send("RFB 003.008\n");
    EXPECT_EQ(ws.receive_until("\n"), "echo:RFB 003.008\n");
    ws.send(std::string("\x01", 1));  // security: none
    ws.receive_until(std::string("\x01", 1));
    ws.send(std::string("\x00", 1));  // ClientInit, exclusive
  };
  WsClient viewer(port(), space_path() + "/vnc", {"Authorization: Bearer " + other_.token});
  ASSERT_EQ(viewer.status(), 101) << viewer.body();
  handshake(viewer);
  EXPECT_EQ(viewer.receive_until(std::string("\x01", 1)), "echo:\x01");  // made shared
  viewer.send(key_event + update_request);
  EXPECT_EQ(viewer.receive_until(update_request), "echo:" + update_request);

  WsClient owner(port(), space_path() + "/vnc", {"Authorization: Bearer " + granted_.token});
  ASSERT_EQ(owner.status(), 101) << owner.body();
  handshake(owner);
  EXPECT_EQ(owner.receive_until(std::string("\x00", 1)), std::string("echo:\x00", 6));
  owner.send(key_event);
  EXPECT_EQ(owner.receive_until(key_event), "echo:" + key_event);
}

}  // namespace
}  // namespace bowline::api::testing
