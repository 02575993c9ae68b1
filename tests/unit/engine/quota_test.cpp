// Quotas without a store or a node: which limits apply, what a space counts for, and the
// refusal's words.
#include "engine/quota.hpp"

#include <gtest/gtest.h>

namespace bowline::engine {
namespace {

constexpr std::int64_t kGiB = 1024LL * 1024 * 1024;

Limits limits(std::optional<std::int64_t> spaces, std::optional<std::int64_t> cpus,
              std::optional<std::int64_t> memory, std::optional<std::int64_t> disk) {
  return effective_limits(store::Quota{spaces, cpus, memory, disk}, store::Quota{});
}

TEST(QuotaLimits, TheUsersOwnWinAndUnsetOnesAreTheServersDefault) {
  const store::Quota user{3, std::nullopt, -1, std::nullopt};
  const store::Quota defaults{10, 8, 16 * kGiB, -1};
  const auto l = effective_limits(user, defaults);
  EXPECT_EQ(l.spaces.value, 3);
  EXPECT_EQ(l.spaces.source, LimitSource::User);
  EXPECT_EQ(l.cpus.value, 8);
  EXPECT_EQ(l.cpus.source, LimitSource::Default);
  // -1 set for the user: no limit, even with a default.
  EXPECT_EQ(l.memory.value, std::nullopt);
  EXPECT_EQ(l.memory.source, LimitSource::User);
  EXPECT_EQ(l.disk.value, std::nullopt);
  EXPECT_EQ(l.disk.source, LimitSource::Default);
  // No defaults at all: nothing is limited.
  const auto none = effective_limits(store::Quota{}, store::Quota{});
  EXPECT_FALSE(none.spaces.value || none.cpus.value || none.memory.value || none.disk.value);
}

TEST(QuotaUsage, ASpaceCountsItsResolvedSizingAndItsDiskSize) {
  spec::Spec spec;
  spec.sizing.sockets = 2;
  spec.sizing.cores = 3;
  spec.sizing.memory_bytes = 4 * kGiB;
  spec.disk_bytes = 20 * kGiB;
  EXPECT_EQ(usage_of(spec), (Usage{1, 6, 4 * kGiB, 20 * kGiB}));
  spec.disk_bytes.reset();  // the image's own size, unknown before the image is there
  EXPECT_EQ(usage_of(spec).disk, 0);

  Usage total;
  total += Usage{1, 2, kGiB, 0};
  total += Usage{1, 6, 4 * kGiB, 20 * kGiB};
  EXPECT_EQ(total, (Usage{2, 8, 5 * kGiB, 20 * kGiB}));
  // Sums saturate rather than wrap to a negative that would fit every limit.
  total += Usage{0, 0, std::numeric_limits<std::int64_t>::max(), 0};
  EXPECT_EQ(total.memory, std::numeric_limits<std::int64_t>::max());
}

TEST(QuotaRefusal, WhatFitsPassesUpToTheLimitItself) {
  const auto l = limits(2, 4, 8 * kGiB, 50 * kGiB);
  EXPECT_EQ(quota_refusal("alice", {1, 2, 4 * kGiB, 30 * kGiB}, {1, 2, 4 * kGiB, 20 * kGiB}, l),
            std::nullopt);
  EXPECT_EQ(quota_refusal("alice", {}, {1, 1, kGiB, 0},
                          limits(std::nullopt, std::nullopt, std::nullopt, std::nullopt)),
            std::nullopt);
}

TEST(QuotaRefusal, EachKindOfLimitSaysWhatIsUsedAskedAndAllowed) {
  const auto l = limits(2, 4, 8 * kGiB, 50 * kGiB);
  EXPECT_EQ(quota_refusal("alice", {2, 0, 0, 0}, {1, 0, 0, 0}, l),
            "quota: spaces 2 used + 1 asked exceeds alice's 2 (set by user set-quota)");
  EXPECT_EQ(quota_refusal("alice", {1, 3, 0, 0}, {1, 2, 0, 0}, l),
            "quota: vCPUs 3 used + 2 asked exceeds alice's 4 (set by user set-quota)");
  EXPECT_EQ(quota_refusal("alice", {1, 0, 6 * kGiB, 0}, {1, 0, 4 * kGiB, 0}, l),
            "quota: memory 6 GiB used + 4 GiB asked exceeds alice's 8 GiB (set by user set-quota)");
  EXPECT_EQ(
      quota_refusal("alice", {1, 0, 0, 40 * kGiB}, {1, 0, 0, 16 * kGiB}, l),
      "quota: disk 40 GiB used + 16 GiB asked exceeds alice's 50 GiB (set by user set-quota)");
}

TEST(QuotaRefusal, EveryExceededLimitIsNamedAndADefaultNamesItsSetting) {
  const auto l = effective_limits(store::Quota{}, store::Quota{1, 2, kGiB, -1});
  const auto why =
      quota_refusal("bob", {1, 2, kGiB, 100 * kGiB}, {1, 1, 512 * 1024 * 1024, kGiB}, l);
  ASSERT_TRUE(why);
  EXPECT_EQ(*why,
            "quota: spaces 1 used + 1 asked exceeds bob's 1 (the server's default, "
            "server.quota.spaces); vCPUs 2 used + 1 asked exceeds bob's 2 (the server's default, "
            "server.quota.cpus); memory 1 GiB used + 512 MiB asked exceeds bob's 1 GiB (the "
            "server's default, server.quota.memory)");
}

// A limit lowered below what the user holds refuses what adds to it, not what adds nothing.
TEST(QuotaRefusal, AnAskOfNothingPassesOverALoweredLimit) {
  const auto l = limits(std::nullopt, std::nullopt, std::nullopt, 10 * kGiB);
  EXPECT_EQ(quota_refusal("carol", {3, 3, 3 * kGiB, 60 * kGiB}, {1, 1, kGiB, 0}, l), std::nullopt);
  EXPECT_TRUE(quota_refusal("carol", {3, 3, 3 * kGiB, 60 * kGiB}, {1, 1, kGiB, 1}, l));
  // A limit of 0 refuses any.
  EXPECT_TRUE(quota_refusal("carol", {}, {1, 1, kGiB, 0},
                            limits(0, std::nullopt, std::nullopt, std::nullopt)));
}

TEST(QuotaValues, LimitsAreParsedAsPeopleWriteThem) {
  const auto value = [](const char* text, bool bytes) {
    const auto parsed = parse_limit(text, bytes);
    return std::holds_alternative<std::int64_t>(parsed) ? std::get<std::int64_t>(parsed) : -2;
  };
  EXPECT_EQ(value("unlimited", false), -1);
  EXPECT_EQ(value(" Unlimited ", true), -1);
  EXPECT_EQ(value("0", false), 0);
  EXPECT_EQ(value("12", false), 12);
  EXPECT_EQ(value("8G", true), 8 * kGiB);
  EXPECT_EQ(value("8 GiB", true), 8 * kGiB);
  EXPECT_EQ(value("1536M", true), 1536LL * 1024 * 1024);
  for (const char* bad : {"", "-1", "2.5", "4G", "many", "9999999999"})
    EXPECT_EQ(value(bad, false), -2) << bad;
  for (const char* bad : {"1.5G", "8X", "lots", "-1"}) EXPECT_EQ(value(bad, true), -2) << bad;
  const auto error = std::get<std::string>(parse_limit("4G", false));
  EXPECT_NE(error.find("not a whole number"), std::string::npos) << error;
}

TEST(QuotaValues, BytesAreShownInTheLargestUnit) {
  EXPECT_EQ(format_quota_bytes(0), "0 B");
  EXPECT_EQ(format_quota_bytes(512), "512 B");
  EXPECT_EQ(format_quota_bytes(8 * kGiB), "8 GiB");
  EXPECT_EQ(format_quota_bytes(kGiB + kGiB / 2), "1.5 GiB");
  EXPECT_EQ(format_quota_bytes(256LL * 1024 * 1024), "256 MiB");
  EXPECT_EQ(format_quota_bytes(2048 * kGiB), "2 TiB");
}

}  // namespace
}  // namespace bowline::engine
