// Preview URLs' names and passes: hosts read back into every (space, owner) split, labels kept
// to DNS's 63 characters, and one-use codes that only their host and their browser's state
// can trade for a pass of that host alone.
#include <gtest/gtest.h>

#include "api/preview_names.hpp"
#include "api/preview_passes.hpp"
#include "api/redirect.hpp"

namespace bowline::api {
namespace {

PreviewOptions options() {
  PreviewOptions o;
  o.domain = "preview.example.com";
  o.port = 7470;
  return o;
}

TEST(PreviewNames, UrlsAndTheirLimit) {
  EXPECT_EQ(preview_url(options(), 8000, "dev", "dana"),
            "https://8000--dev--dana.preview.example.com:7470/");
  auto standard = options();
  standard.port = 443;
  EXPECT_EQ(preview_url(standard, 3000, "dev", "dana"),
            "https://3000--dev--dana.preview.example.com/");
  EXPECT_EQ(preview_url(options(), 8000, std::string(40, 'a'), std::string(20, 'b')), std::nullopt);
  EXPECT_EQ(preview_url(PreviewOptions{}, 8000, "dev", "dana"), std::nullopt);  // off
}

TEST(PreviewNames, HostsReadBackIntoEverySplit) {
  const auto t = preview_targets(options(), "8000--my--app--dana.preview.example.com");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].port, 8000);
  EXPECT_EQ(t[0].space, "my");
  EXPECT_EQ(t[0].owner, "app--dana");
  EXPECT_EQ(t[1].space, "my--app");
  EXPECT_EQ(t[1].owner, "dana");
}

TEST(PreviewNames, OtherHostsMeanNothing) {
  for (const char* host :
       {"preview.example.com", "x.preview.example.com", "8000--dev.preview.example.com",
        "0--dev--dana.preview.example.com", "70000--dev--dana.preview.example.com",
        "8000--dev--dana.evilpreview.example.com", "a.8000--dev--dana.preview.example.com",
        "8000----dana.preview.example.com", "80a0--dev--dana.preview.example.com",
        "8000--dev--dana.preview.example.com.evil"})
    EXPECT_TRUE(preview_targets(options(), host).empty()) << host;
  EXPECT_FALSE(is_preview_host(options(), "evilpreview.example.com"));
}

// Where a login lands: never off the origin (an open redirect), whatever the query says.
TEST(PreviewNames, LandingPathsStayOnTheOrigin) {
  EXPECT_EQ(local_path("/app?x=1#y"), "/app?x=1#y");
  EXPECT_EQ(local_path("/"), "/");
  for (const char* away : {"//evil.example/", "https://evil.example/", "/\\evil.example", "",
                           "evil", "/a\nLocation: x", "\\\\evil"})
    EXPECT_EQ(local_path(away), "/") << away;
}

TEST(PreviewPasses, ACodeIsGoodOnceForItsHostAndState) {
  util::ManualClock clock;
  PreviewPasses passes(clock);
  const PreviewPasses::Grant grant{7, "8000--dev--dana.p.test", "session-hash"};
  const auto code = passes.issue(grant, "state-1");
  EXPECT_EQ(passes.redeem(code, "8001--dev--dana.p.test", "state-1"), std::nullopt);
  // Used up by the wrong try: a code is never tried twice.
  EXPECT_EQ(passes.redeem(code, grant.host, "state-1"), std::nullopt);
  const auto again = passes.issue(grant, "state-1");
  EXPECT_EQ(passes.redeem(again, grant.host, "state-2"), std::nullopt);
  const auto good = passes.issue(grant, "state-1");
  const auto pass = passes.redeem(good, grant.host, "state-1");
  ASSERT_TRUE(pass);
  EXPECT_EQ(passes.find(*pass, grant.host)->user_id, 7);
  EXPECT_EQ(passes.find(*pass, "8001--dev--dana.p.test"), std::nullopt);
  EXPECT_EQ(passes.find("", grant.host), std::nullopt);
}

TEST(PreviewPasses, CodesAndPassesExpireAndGoWithTheirSession) {
  util::ManualClock clock;
  PreviewPasses passes(clock, std::chrono::minutes(1), std::chrono::hours(1));
  const PreviewPasses::Grant grant{7, "h.p.test", "session-hash"};
  const auto late = passes.issue(grant, "s");
  clock.advance(61'000);
  EXPECT_EQ(passes.redeem(late, grant.host, "s"), std::nullopt);
  const auto pass = passes.redeem(passes.issue(grant, "s"), grant.host, "s");
  ASSERT_TRUE(pass);
  clock.advance(3'599'000);
  EXPECT_TRUE(passes.find(*pass, grant.host));
  passes.forget_session("session-hash");
  EXPECT_EQ(passes.find(*pass, grant.host), std::nullopt);
  const auto other = passes.redeem(passes.issue(grant, "s"), grant.host, "s");
  clock.advance(3'600'001);
  EXPECT_EQ(passes.find(*other, grant.host), std::nullopt);
}

}  // namespace
}  // namespace bowline::api
