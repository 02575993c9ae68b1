// The document as a whole: YAML syntax, the root mapping, unknown, duplicate and merge keys,
// and the bounds that keep hostile documents cheap.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "spec_test_support.hpp"

namespace bowline::spec {
namespace {

using test::ErrorCount;
using test::HasError;
using test::load;
using test::Valid;

TEST(Document, MinimalTemplateIsValid) {
  const auto r = load(R"(
image: debian-12
network: {mode: nat}
)");
  ASSERT_TRUE(Valid(r));
  EXPECT_TRUE(r.diagnostics.items().empty());
}

TEST(Document, EmptyTextIsRejected) {
  const auto r = load("");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "", 1, 1, "the template is empty"));
}

TEST(Document, OnlyACommentIsEmpty) {
  const auto r = load("# nothing here\n");
  EXPECT_TRUE(HasError(r, "", 1, 1, "the template is empty: it must be a mapping"));
}

TEST(Document, ListRootIsRejected) {
  const auto r = load(R"(
- image: debian-12
- network: {mode: nat}
)");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "", 1, 1, "the template must be a mapping of fields"));
}

TEST(Document, ScalarRootIsRejected) {
  const auto r = load(R"(

  just some text
)");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "", 2, 3, "the template must be a mapping of fields"));
}

TEST(Document, SyntaxErrorHasItsPosition) {
  const auto r = load(R"(
image: debian-12
network: {mode: nat
memory: 4G
)");
  ASSERT_TRUE(ErrorCount(r, 1));
  const auto& d = r.diagnostics.items().front();
  EXPECT_EQ(d.path, "");
  EXPECT_EQ(d.line, 3);
  EXPECT_THAT(d.message, ::testing::StartsWith("YAML syntax: "));
}

TEST(Document, TabIndentationIsASyntaxError) {
  const auto r = load("image: debian-12\nnetwork:\n\tmode: nat\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_THAT(r.diagnostics.items().front().message, ::testing::StartsWith("YAML syntax: "));
  EXPECT_EQ(r.diagnostics.items().front().line, 3);
}

TEST(Document, UnknownTopLevelKeySuggestsTheNearest) {
  const auto r = load(R"(
image: debian-12
network: {mode: nat}
memroy: 4G
)");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "memroy", 3, 1, "unknown field (did you mean memory?)"));
}

TEST(Document, UnknownKeyFarFromAnyGetsNoSuggestion) {
  const auto r = load(R"(
image: debian-12
network: {mode: nat}
volumes: [80]
)");
  ASSERT_TRUE(ErrorCount(r, 1));
  const auto found = test::at_path(r, "volumes");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].message, "unknown field");
  EXPECT_EQ(found[0].line, 3);
  EXPECT_EQ(found[0].column, 1);
}

TEST(Document, UnknownKeysInEveryNestedMapping) {
  const auto r = load(R"(
image: debian-12
network:
  mode: nat
  brige: default
resources:
  cpu: 1
  sockets: 1
  memroy: 1Gi
firmware:
  bootlader: uefi
gpus:
  - nme: nvidia.com/A10
disks:
  - name: system
    buss: virtio
networks:
  - name: a
    mtu: 9000
)");
  EXPECT_TRUE(HasError(r, "network.brige", 4, 3, "unknown field (did you mean bridge?)"));
  EXPECT_TRUE(HasError(r, "resources.memroy", 8, 3, "unknown field (did you mean memory?)"));
  EXPECT_TRUE(HasError(r, "firmware.bootlader", 10, 3, "unknown field (did you mean bootloader?)"));
  EXPECT_TRUE(HasError(r, "gpus[0].nme", 12, 5, "unknown field (did you mean name?)"));
  EXPECT_TRUE(HasError(r, "disks[0].buss", 15, 5, "unknown field (did you mean bus?)"));
  EXPECT_TRUE(HasError(r, "networks[0].mtu", 18, 5, "unknown field"));
}

TEST(Document, DuplicateTopLevelKeyIsAnError) {
  const auto r = load(R"(
image: debian-12
memory: 2G
network: {mode: nat}
memory: 4G
)");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "memory", 4, 1, "duplicate key (first at line 2)"));
  EXPECT_TRUE(HasError(r, "memory", 4, 1, "YAML readers disagree on which one wins"));
}

TEST(Document, DuplicateNestedKeyIsAnError) {
  const auto r = load(R"(
image: debian-12
network:
  mode: bridged
  cidr: 198.51.100.0/24
  cidr: 203.0.113.0/24
)");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "network.cidr", 5, 3, "duplicate key (first at line 4)"));
}

TEST(Document, DuplicateKeyQuotedAndPlainIsTheSameKey) {
  const auto r = load(R"(
image: debian-12
"image": debian-11
network: {mode: nat}
)");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "image", 2, 1, "duplicate key (first at line 1)"));
}

TEST(Document, DuplicateKeyInsideAListEntry) {
  const auto r = load(R"(
image: debian-12
network: {mode: nat}
disks:
  - name: a
    name: b
)");
  EXPECT_TRUE(HasError(r, "disks[0].name", 5, 5, "duplicate key (first at line 4)"));
}

TEST(Document, MergeKeyIsRejected) {
  const auto r = load(R"(
image: debian-12
network: &net {mode: nat}
firmware:
  <<: {bootloader: uefi}
)");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "firmware.<<", 4, 3, "YAML merge keys (<<) are not supported"));
}

TEST(Document, MergeKeyAtTopLevelWithAnAlias) {
  const auto r = load(R"(
network: {mode: nat}
common: &common
  image: debian-12
<<: *common
)");
  EXPECT_TRUE(HasError(r, "<<", 4, 1, "write the fields out"));
  EXPECT_TRUE(HasError(r, "common", 2, 1, "unknown field"));
  // The merge is not applied: image is still missing.
  EXPECT_TRUE(HasError(r, "image", 1, 1, "image must be set"));
}

TEST(Document, QuotedDoubleLessThanIsAnOrdinaryUnknownKey) {
  const auto r = load(R"(
image: debian-12
network: {mode: nat}
"<<": {memory: 4G}
)");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "<<", 3, 1, "unknown field"));
}

TEST(Document, NonScalarKeyIsRejected) {
  const auto r = load(R"(
image: debian-12
network: {mode: nat}
? [a, b]
: c
)");
  EXPECT_TRUE(HasError(r, "", 3, 3, "keys must be plain strings"));
}

TEST(Document, ASecondDocumentIsAnError) {
  const auto r = load(R"(
image: debian-12
network: {mode: nat}
---
memory: 4G
)");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "", 4, 1, "a second YAML document starts here"));
}

// yaml-cpp reads a stray top-level ',' as an empty document without consuming it: Load drops
// everything after it silently, and LoadAll never returns.
TEST(Document, StrayCommaIsASyntaxErrorNotAHang) {
  auto r = load(",b\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "", 1, 1, "YAML syntax: unexpected ','"));
  r = load("[image, network],\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "", 1, 17, "YAML syntax: unexpected ','"));
  r = load("image: debian-12\nnetwork: {mode: nat}\n---\n, x\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "", 4, 1, "YAML syntax: unexpected ','"));
  r = load("image: debian-12\nnetwork: {mode: nat}\n...\n,\n");
  EXPECT_TRUE(HasError(r, "", 4, 1, "YAML syntax: unexpected ','"));
}

TEST(Document, SyntaxErrorInASecondDocumentIsReported) {
  const auto r = load("image: debian-12\nnetwork: {mode: nat}\n---\n[a\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_THAT(r.diagnostics.items().front().message, ::testing::StartsWith("YAML syntax: "));
}

TEST(Document, NestingBeyondYamlCppsGuardSaysSo) {
  const auto r = load_spec(std::string(600, '[') + std::string(600, ']'), nullptr);
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_THAT(r.diagnostics.items().front().message,
              ::testing::HasSubstr("nested more than 500 levels deep"));
}

TEST(Document, ATrailingDocumentMarkerIsHarmless) {
  EXPECT_TRUE(Valid(load("---\nimage: debian-12\nnetwork: {mode: nat}\n---\n")));
  EXPECT_TRUE(Valid(load("image: debian-12\nnetwork: {mode: nat}\n...\n")));
}

TEST(Document, InvalidUtf8IsRejectedAtItsPosition) {
  const auto r = load_spec("image: debian-12\nnetwork: {mode: nat}\nname: ab\xff\n", nullptr);
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "", 3, 9, "the template is not valid UTF-8 (byte 0xFF)"));
  // Overlong, surrogate and beyond U+10FFFF forms are invalid too; a BOM and 4-byte forms not.
  for (const char* bad : {"\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82", "\x80"}) {
    SCOPED_TRACE(bad);
    EXPECT_TRUE(
        HasError(load_spec(std::string("# ") + bad + "\n", nullptr), "", 1, 3, "not valid UTF-8"));
  }
  EXPECT_TRUE(
      Valid(load("\xef\xbb\xbfimage: debian-12\nnetwork: {mode: nat}\n"
                 "environment: [\"A=\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"]\n")));
}

TEST(Document, InvalidUtf8InAValueIsAnError) {
  const Variables values{{"user.username", "a"}, {"space.name", "b"}, {"var.x", "\xff"}};
  const auto r =
      load("image: debian-12\nnetwork: {mode: nat}\nenvironment:\n  - A=${{ .var.x }}\n", values);
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "environment[0]", 4, 11, "the value of .var.x is not valid UTF-8"));
}

TEST(Document, LargerThanOneMebibyteIsRejected) {
  std::string text = "image: debian-12\nnetwork: {mode: nat}\n";
  text += "# " + std::string(1 << 20, 'x') + "\n";
  const auto r = load_spec(text, nullptr);
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "", 0, 0, "larger than 1 MiB"));
}

TEST(Document, AliasBombIsCutShort) {
  std::string text = "image: debian-12\nnetwork: {mode: nat}\nx0: &a0 [a, a, a, a, a, a, a, a]\n";
  for (int i = 1; i < 12; ++i) {
    const auto prev = "*a" + std::to_string(i - 1);
    text += "x" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 8; ++k) text += (k ? ", " : "") + prev;
    text += "]\n";
  }
  text += "environment: *a11\n";
  const auto r = load_spec(text, nullptr);
  // Only this error: the fields are not read, which is where the cost would explode.
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_THAT(r.diagnostics.items().front().message,
              ::testing::HasSubstr("more than 100000 values, counting every use of an alias"));
}

TEST(Document, AliasedLongScalarIsCutShort) {
  // 64 KiB quoted 100 times is 6.4 MiB; each device error would quote it again.
  std::string text = "image: debian-12\nnetwork: {mode: nat}\nx: &a " + std::string(64 << 10, 'b') +
                     "\ndevices: [";
  for (int i = 0; i < 100; ++i) text += i ? ", *a" : "*a";
  text += "]\n";
  const auto r = load_spec(text, nullptr);
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_THAT(r.diagnostics.items().front().message,
              ::testing::HasSubstr("aliases repeat more than 4 MiB of text"));
  EXPECT_EQ(r.diagnostics.items().front().path, "devices[62]");  // x itself counts once
}

TEST(Document, AliasedLongKeyIsCutShort) {
  std::string text =
      "image: debian-12\nnetwork: {mode: nat}\nx: &k " + std::string(64 << 10, 'k') + "\ny:\n";
  for (int i = 0; i < 100; ++i) text += "  ? *k\n  : 1\n";
  const auto r = load_spec(text, nullptr);
  // Duplicate keys are reported (each quoting the key in its path) until the budget stops it.
  // An alias node carries its anchor's position.
  const auto found = test::at_path(r, "y");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].message, "aliases repeat more than 4 MiB of text: write it out plainly");
  EXPECT_EQ(found[0].line, 3);
  EXPECT_EQ(test::count(r, Severity::Error), 62u);
  EXPECT_FALSE(r.spec);
}

TEST(Document, DeepNestingIsReported) {
  std::string text = "image: debian-12\nnetwork: {mode: nat}\ndisks: ";
  for (int i = 0; i < 100; ++i) text += "[";
  for (int i = 0; i < 100; ++i) text += "]";
  text += "\n";
  const auto r = load_spec(text, nullptr);
  EXPECT_TRUE(HasError(
      r,
      std::string("disks") +
          [] {
            std::string p;
            for (int i = 0; i < 64; ++i) p += "[0]";
            return p;
          }(),
      3, 72, "the document is nested more than 64 levels deep"));
}

TEST(Document, EveryProblemIsReportedNotJustTheFirst) {
  const auto r = load(R"(
image: debian-12
memory: 2048
cpus: 1.5
network: {mode: nat, cidr: 10.0.0.0/24}
runStrategy: Sometimes
)");
  EXPECT_TRUE(ErrorCount(r, 4));
}

TEST(Document, DiagnosticsSortByPosition) {
  const auto r = load(R"(
runStrategy: Sometimes
image: debian-12
cpus: 0
network: {mode: nat}
)");
  const auto sorted = r.diagnostics.sorted();
  ASSERT_EQ(sorted.size(), 2u);
  EXPECT_EQ(sorted[0].path, "runStrategy");
  EXPECT_EQ(sorted[1].path, "cpus");
}

TEST(Document, FormatPrintsFileLineColumnPathAndMessage) {
  EXPECT_EQ(format({Severity::Error, 3, 7, "network.cidr", "bad"}, "t.yaml"),
            "t.yaml:3:7: error: network.cidr: bad");
  EXPECT_EQ(format({Severity::Warning, 2, 1, "subnets", "old"}, "t.yaml"),
            "t.yaml:2:1: warning: subnets: old");
  EXPECT_EQ(format({Severity::Error, 0, 0, "", "too big"}, "t.yaml"), "t.yaml: error: too big");
}

}  // namespace
}  // namespace bowline::spec

namespace bowline::spec {
namespace {

// ---- security: hostile templates stay cheap (ctest -L security) -----------------------------

// Thousands of bad expressions in one scalar, on many lines: the first 100 problems are listed
// with their exact positions, the rest counted, and the work stays linear: positions come from
// tables made once (the quadratic walk before took 4.3 s for this template, now 0.2 s).
TEST(security_templates, ManyBadExpressionsListAHundredProblemsAndCountTheRest) {
  std::string yaml = "image: debian-12\nnetwork: {mode: nat}\nhostname: |\n";
  for (int i = 0; i < 20000; ++i) yaml += "  ${{ .nope" + std::to_string(i) + " }}\n";
  const auto r = test::load(yaml);
  EXPECT_FALSE(r.spec);
  EXPECT_TRUE(r.diagnostics.has_errors());
  EXPECT_EQ(r.diagnostics.items().size(), Diagnostics::kKept);
  EXPECT_EQ(r.diagnostics.dropped(), 20000u - Diagnostics::kKept);
  EXPECT_EQ(more_problems(r.diagnostics),
            "and 19900 more problems (only the first 100 are listed)");
  // The 100th problem is on the 100th expression's line, at its `.nope` (column 7).
  const auto sorted = r.diagnostics.sorted();
  EXPECT_EQ(sorted.back().line, 4 + 99);
  EXPECT_EQ(sorted.back().column, 7) << sorted.back().message;
}

}  // namespace
}  // namespace bowline::spec
