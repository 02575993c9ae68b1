// The client's pure parts: the text formatters on fixed server JSON (golden text), the SSE
// framing, server URLs and status-to-exit-code mapping.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/app.hpp"
#include "cli/client.hpp"
#include "cli/client_format.hpp"

namespace bowline::cli {
namespace {

using ::testing::HasSubstr;

const char* kSpaces = R"([
  {"id": "0b7e3c1a-5d2f-4e8a-9c3b-1f2e3d4c5b6a", "name": "dev", "owner": "alice",
   "template": "nat", "state": "running", "desiredState": "running", "error": "",
   "ip": "192.168.122.50", "domain": "alice-dev", "node": "local", "appliedRevision": 3,
   "templateRevision": 3, "redefinePending": false, "createdAt": 1714564800000,
   "updatedAt": 1714564800000},
  {"id": "1c2d3e4f-0000-4000-8000-000000000001", "name": "build-box", "owner": "bob",
   "template": "bridged", "state": "stopped", "desiredState": "stopped", "error": "",
   "ip": null, "domain": "bob-build-box", "node": "local", "appliedRevision": 1,
   "templateRevision": 2, "redefinePending": true, "createdAt": 0, "updatedAt": 0}
])";

TEST(ClientFormat, SpacesTable) {
  EXPECT_EQ(format_spaces(ojson::parse(kSpaces)),
            "NAME       STATE    IP              TEMPLATE  OWNER  NODE   ID\n"
            "dev        running  192.168.122.50  nat       alice  local  "
            "0b7e3c1a-5d2f-4e8a-9c3b-1f2e3d4c5b6a\n"
            "build-box  stopped  -               bridged   bob    local  "
            "1c2d3e4f-0000-4000-8000-000000000001\n");
  EXPECT_EQ(format_spaces(ojson::array()), "NAME  STATE  IP  TEMPLATE  OWNER  NODE  ID\n");
}

// A running NAT space has no IP of bowline's; the list's "address" (its DHCP lease) shows.
TEST(ClientFormat, SpacesTableShowsTheLeasedAddressOfANatSpace) {
  auto spaces = ojson::parse(kSpaces);
  spaces[0]["ip"] = nullptr;
  spaces[0]["address"] = "198.51.100.37";
  spaces[1]["address"] = nullptr;
  EXPECT_EQ(format_spaces(spaces),
            "NAME       STATE    IP             TEMPLATE  OWNER  NODE   ID\n"
            "dev        running  198.51.100.37  nat       alice  local  "
            "0b7e3c1a-5d2f-4e8a-9c3b-1f2e3d4c5b6a\n"
            "build-box  stopped  -              bridged   bob    local  "
            "1c2d3e4f-0000-4000-8000-000000000001\n");
}

TEST(ClientFormat, SpaceInfo) {
  auto space = ojson::parse(kSpaces)[1];
  space["state"] = "running";
  space["desiredState"] = "running";
  space["info"] = {
      {"address", "198.51.100.23"},
      {"redefinePending", true},
      {"readiness",
       {{"booted", true},
        {"ready", false},
        {"finished", false},
        {"failed", false},
        {"detail", ""}}},
      {"consoleTail", {"[  OK  ] Reached target Network.", "Cloud-init v. 22.4 running"}}};
  EXPECT_EQ(format_space_info(space),
            "name:               build-box\n"
            "id:                 1c2d3e4f-0000-4000-8000-000000000001\n"
            "owner:              bob\n"
            "state:              running\n"
            "node:               local\n"
            "domain:             bob-build-box\n"
            "ip:                 198.51.100.23\n"
            "template:           bridged, revision 2\n"
            "domain definition:  from revision 1; redefine pending: the template's change "
            "applies at the next start\n"
            "readiness:          booting (cloud-init running)\n"
            "created:            1970-01-01 00:00:00 UTC\n"
            "updated:            1970-01-01 00:00:00 UTC\n"
            "console (last 2 lines):\n"
            "  [  OK  ] Reached target Network.\n"
            "  Cloud-init v. 22.4 running\n");

  space["state"] = "error";
  space["error"] = "start failed: bridge br0 does not exist on this host";
  space["info"]["readiness"]["failed"] = true;
  space["info"]["readiness"]["detail"] = "1 module failed";
  const auto text = format_space_info(space);
  EXPECT_THAT(text, HasSubstr("state:              error (wants running)\n"));
  EXPECT_THAT(text, HasSubstr("error:              start failed: bridge br0 does not exist"));
  EXPECT_THAT(text, HasSubstr("readiness:          cloud-init failed: 1 module failed\n"));
}

// connect.sshPort: "open" only when the guest's sshd sent its identification line; a
// connection that brought no SSH banner says so.
TEST(ssh_banner_check, SpaceInfoSaysSshdAnswersOnlyForAnSshBanner) {
  auto space = ojson::parse(kSpaces)[0];
  space["info"] = {{"connect", {{"ssh", "bowline ssh dev"}, {"sshPort", "open"}}}};
  EXPECT_THAT(format_space_info(space), HasSubstr("port 22:            open (sshd answers)\n"));
  space["info"]["connect"]["sshPort"] = "no banner";
  const auto text = format_space_info(space);
  EXPECT_THAT(text, HasSubstr("port 22:            open (no SSH banner: "));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("sshd answers")));
  space["info"]["connect"]["sshPort"] = "closed";
  EXPECT_THAT(format_space_info(space), HasSubstr("port 22:            closed\n"));
}

TEST(ClientFormat, ReadinessWithoutInfoIsUnknown) {
  const auto space = ojson::parse(kSpaces)[0];
  EXPECT_FALSE(readiness_of(space).known);
  EXPECT_EQ(readiness_summary(readiness_of(space)), "unknown");
  EXPECT_THAT(format_space_info(space), HasSubstr("readiness:          unknown\n"));
  EXPECT_THAT(format_space_info(space), HasSubstr("domain definition:  from revision 3\n"));
}

// A running space's "stats" as GET /spaces and GET /spaces/{id} carry it.
ojson with_stats(ojson space) {
  space["stats"] = ojson::parse(R"({"time": 1714564800000, "cpuPercent": 87.25, "vcpus": 2,
    "memoryUsedBytes": 42153984, "memoryAvailableBytes": 240648192, "memoryRssBytes": 188743680,
    "diskReadBytesPerSecond": 1536, "diskWriteBytesPerSecond": 0, "diskReadsPerSecond": 0.3,
    "diskWritesPerSecond": 0, "networkReceiveBytesPerSecond": 120,
    "networkTransmitBytesPerSecond": null})");
  return space;
}

TEST(ClientFormat, stats_SpaceInfoLines) {
  const auto text = format_space_info(with_stats(ojson::parse(kSpaces)[0]));
  EXPECT_THAT(text, HasSubstr("cpu:                87.2% of 2 vCPUs\n"));
  EXPECT_THAT(text,
              HasSubstr("memory:             40.2 MiB used of 229.5 MiB (host: 180.0 MiB)\n"));
  EXPECT_THAT(text,
              HasSubstr("disk:               read 1.5 KiB/s (0.3 IOPS), write 0 B/s (0.0 IOPS)\n"));
  EXPECT_THAT(text, HasSubstr("network:            in 120 B/s, out -\n"));
  // Nothing known (a node that reports no counters): one line that says so.
  auto blank = ojson::parse(kSpaces)[0];
  blank["stats"] = {{"time", 1}, {"cpuPercent", nullptr}, {"vcpus", nullptr}};
  EXPECT_THAT(format_space_info(blank),
              HasSubstr("usage:              not reported by its node\n"));
  // A stopped space has no stats at all: no lines.
  EXPECT_THAT(format_space_info(ojson::parse(kSpaces)[1]), ::testing::Not(HasSubstr("cpu:")));
}

TEST(ClientFormat, stats_TopTableBusiestFirst) {
  auto spaces = ojson::parse(kSpaces);
  auto idle = with_stats(spaces[0]);
  idle["name"] = "idle";
  idle["stats"]["cpuPercent"] = 1.0;
  spaces = ojson::array({spaces[1], idle, with_stats(spaces[0])});
  EXPECT_EQ(format_top(spaces),
            "NAME       OWNER  NODE   STATE    CPU%  MEMORY                DISK READ  DISK WRITE  "
            "NET IN   NET OUT\n"
            "dev        alice  local  running  87.2  40.2 MiB / 229.5 MiB  1.5 KiB/s  0 B/s       "
            "120 B/s  -\n"
            "idle       alice  local  running  1.0   40.2 MiB / 229.5 MiB  1.5 KiB/s  0 B/s       "
            "120 B/s  -\n"
            "build-box  bob    local  stopped  -     -                     -          -           "
            "-        -\n");
}

TEST(ClientFormat, Progress) {
  EXPECT_EQ(format_progress("create", "downloading image", 41, 126877696ull, 314572800ull),
            "create: downloading image 41% (121.0 MiB of 300.0 MiB)");
  EXPECT_EQ(format_progress("start", "defining", 80), "start: defining 80%");
  EXPECT_EQ(format_progress("stop", "", 0), "stop: waiting");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(3ull << 30), "3.0 GiB");
}

TEST(ClientFormat, Diagnostics) {
  const auto d = ojson::parse(
      R"([{"line":2,"column":9,"path":"memory","severity":"error","message":"below 1 MiB"},
          {"line":0,"column":0,"path":"","severity":"warning","message":"no image checksum"}])");
  EXPECT_EQ(format_diagnostics(d, "t.yaml"),
            "t.yaml:2:9: error: memory: below 1 MiB\nt.yaml: warning: no image checksum\n");
}

// GET /users/{username}'s quota and usage: one line a limit, the user's own or the default's.
TEST(ClientFormat, UseAgainstQuota) {
  const auto user = ojson::parse(R"({
    "username": "alice", "email": "", "timezone": "", "permissions": [], "sshKeys": [],
    "quota": {"spaces": {"limit": 5, "source": "user"},
              "cpus": {"limit": null, "source": "default"},
              "memory": {"limit": 8589934592, "source": "user"},
              "disk": {"limit": 107374182400, "source": "default"}},
    "usage": {"spaces": 2, "cpus": 3, "memory": 6442450944, "disk": 42949672960}})");
  EXPECT_EQ(format_quota(user),
            "quota:\n"
            "  spaces  2 of 5\n"
            "  vCPUs   3, no limit (server default)\n"
            "  memory  6 GiB of 8 GiB\n"
            "  disk    40 GiB of 100 GiB (server default)\n");
  EXPECT_THAT(format_user(user), HasSubstr("ssh keys: none\nquota:\n  spaces  2 of 5\n"));
  // An older server sends none: no quota lines.
  EXPECT_EQ(format_quota(ojson::parse(R"({"username": "alice"})")), "");
}

TEST(SseParser, FramesFieldsCommentsAndLineEnds) {
  SseParser parser;
  auto events = parser.feed("retry: 2000\n\n: keep-alive\n\nid: 7\nevent: space.state\nda");
  EXPECT_TRUE(events.empty()) << "retry alone and comments are no events";
  events = parser.feed("ta: {\"a\":1}\n\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].id, "7");
  EXPECT_EQ(events[0].event, "space.state");
  EXPECT_EQ(events[0].data, "{\"a\":1}");

  events = parser.feed("data: one\r\ndata:two\r\n\r\ndata: three\r\r");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].data, "one\ntwo");
  EXPECT_EQ(events[0].event, "message");
  EXPECT_EQ(events[0].id, "7") << "the last event id carries over";
  EXPECT_EQ(events[1].data, "three");

  // A \r\n split between two reads is one line end, not two.
  events = parser.feed("data: x\r");
  EXPECT_TRUE(events.empty());
  events = parser.feed("\n\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "x");
}

TEST(ClientUrls, NormalizeServer) {
  EXPECT_EQ(normalize_server("http://h:7470/"), "http://h:7470");
  EXPECT_EQ(normalize_server("h:7470"), "http://h:7470");
  EXPECT_EQ(normalize_server("https://bowline.example.org//"), "https://bowline.example.org");
  EXPECT_EQ(escape_segment("a b/c"), "a%20b%2Fc");
  EXPECT_EQ(escape_segment("web-1.x_y~"), "web-1.x_y~");
}

TEST(ClientExitCodes, FromStatus) {
  EXPECT_EQ(exit_code_for_status(200), kExitOk);
  EXPECT_EQ(exit_code_for_status(202), kExitOk);
  EXPECT_EQ(exit_code_for_status(400), kExitInvalid);
  EXPECT_EQ(exit_code_for_status(401), kExitNotFound);
  EXPECT_EQ(exit_code_for_status(403), kExitNotFound);
  EXPECT_EQ(exit_code_for_status(404), kExitNotFound);
  EXPECT_EQ(exit_code_for_status(409), kExitInvalid);
  EXPECT_EQ(exit_code_for_status(422), kExitInvalid);
  EXPECT_EQ(exit_code_for_status(500), kExitInvalid);
}

}  // namespace
}  // namespace bowline::cli
