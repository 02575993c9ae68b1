// name (libvirt domain name) and hostname (RFC 1123), and hostile variable values that must
// stay data.
#include <gtest/gtest.h>

#include "spec/validators.hpp"
#include "spec_test_support.hpp"

namespace bowline::spec {
namespace {

using test::alice_dev;
using test::ErrorCount;
using test::HasError;
using test::load;
using test::Valid;

constexpr const char* kBase = "image: debian-12\nnetwork: {mode: nat}\n";

LoadResult load_with_base(const std::string& extra, const Variables& values = alice_dev()) {
  return load(std::string(kBase) + extra, values);
}

// name

TEST(Name, DefaultsToUsernameDashSpaceName) {
  const auto r = load_with_base("");
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->name, "alice-dev");
  EXPECT_EQ(r.spec->hostname, "dev");
}

TEST(Name, DefaultIsSanitised) {
  auto values = alice_dev();
  values["user.username"] = "Alice Smith";
  values["space.name"] = "web/1";
  const auto r = load_with_base("hostname: web1\n", values);
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->name, "Alice-Smith-web-1");
}

TEST(Name, WithoutValuesTheDefaultKeepsItsExpression) {
  const auto r = load(kBase);
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->name, "${{ .user.username }}-${{ .space.name }}");
  EXPECT_EQ(r.spec->hostname, "${{ .space.name }}");
}

TEST(Name, CharactersOutsideTheSetBecomeDashes) {
  const auto r = load_with_base("name: \"web server/1:a+b_c.d-e\"\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->name, "web-server-1-a+b_c.d-e");
  EXPECT_EQ(sanitize_domain_name("caf\xc3\xa9"), "caf--");
  EXPECT_EQ(sanitize_domain_name("a\tb\nc"), "a-b-c");
}

TEST(Name, TemplatedNameIsSanitisedAfterExpansion) {
  auto values = alice_dev();
  values["user.username"] = "a/../b";
  const auto r = load_with_base("name: vm-${{ .user.username }}\n", values);
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->name, "vm-a-..-b");
}

TEST(Name, DotDotIsRejected) {
  const auto r = load_with_base("name: ..\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(
      HasError(r, "name", 3, 7, "must start with a letter, a digit or '_' (it was \"..\")"));
}

TEST(Name, DotIsRejected) {
  const auto r = load_with_base("name: .\n");
  EXPECT_TRUE(HasError(r, "name", 3, 7, "must start with a letter, a digit or '_'"));
}

TEST(Name, LeadingDashIsRejected) {
  const auto r = load_with_base("name: -x\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "name", 3, 7, "(it was \"-x\")"));
}

TEST(Name, LeadingCharacterThatSanitisesToADashIsRejected) {
  const auto r = load_with_base("name: \"/etc\"\n");
  EXPECT_TRUE(HasError(r, "name", 3, 7, "(it was \"-etc\")"));
}

TEST(Name, HiddenDirectoryIsRejected) {
  const auto r = load_with_base("name: .hidden\n");
  EXPECT_TRUE(HasError(r, "name", 3, 7, "must start with a letter, a digit or '_'"));
}

TEST(Name, UnderscoreAndDigitMayLead) {
  EXPECT_TRUE(Valid(load_with_base("name: _vm\n")));
  EXPECT_TRUE(Valid(load_with_base("name: 1vm\n")));
}

TEST(Name, EmptyIsRejected) {
  const auto r = load_with_base("name: \"\"\n");
  EXPECT_TRUE(HasError(r, "name", 3, 7, "the domain name is empty"));
}

TEST(Name, LongerThan200IsRejected) {
  EXPECT_TRUE(Valid(load_with_base("name: " + std::string(200, 'a') + "\n")));
  const auto r = load_with_base("name: " + std::string(201, 'a') + "\n");
  EXPECT_TRUE(HasError(r, "name", 3, 7, "longer than 200 characters"));
}

TEST(Name, BadDefaultIsReportedAsTheDefault) {
  auto values = alice_dev();
  values["user.username"] = "-bob";
  const auto r = load_with_base("", values);
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "name", 1, 1, "the default name <username>-<space name>: "));
}

TEST(Name, NotAScalar) {
  const auto r = load_with_base("name: [a]\n");
  EXPECT_TRUE(HasError(r, "name", 3, 7, "expected a single value, got a list"));
}

// hostname

TEST(Hostname, ValidNames) {
  for (const char* h : {"dev", "web-01", "web-01.example.com", "123", "a", "A-B.C-D", "x1.y2"}) {
    SCOPED_TRACE(h);
    const auto r = load_with_base(std::string("hostname: ") + h + "\n");
    ASSERT_TRUE(Valid(r));
    EXPECT_EQ(r.spec->hostname, h);
  }
}

TEST(Hostname, LabelOf63IsTheLimit) {
  EXPECT_TRUE(Valid(load_with_base("hostname: " + std::string(63, 'a') + ".example\n")));
  const auto label = std::string(64, 'a');
  const auto r = load_with_base("hostname: " + label + ".example\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(
      HasError(r, "hostname", 3, 11, "the label \"" + label + "\" is longer than 63 characters"));
}

TEST(Hostname, TotalOf253IsTheLimit) {
  // 4 labels of 63 + 3 dots = 255; trim to exactly 253 and 254.
  std::string h = std::string(63, 'a') + "." + std::string(63, 'b') + "." + std::string(63, 'c') +
                  "." + std::string(61, 'd');
  ASSERT_EQ(h.size(), 253u);
  EXPECT_TRUE(Valid(load_with_base("hostname: " + h + "\n")));
  h += "d";
  const auto r = load_with_base("hostname: " + h + "\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "hostname", 3, 11, "the host name is longer than 253 characters"));
}

TEST(Hostname, LabelMustNotStartOrEndWithADash) {
  auto r = load_with_base("hostname: -web\n");
  EXPECT_TRUE(HasError(r, "hostname", 3, 11, "the label \"-web\" must not start or end with '-'"));
  r = load_with_base("hostname: web-.example.com\n");
  EXPECT_TRUE(HasError(r, "hostname", 3, 11, "the label \"web-\" must not start or end with '-'"));
}

TEST(Hostname, EmptyLabels) {
  for (const char* h : {"a..b", "a.", ".a"}) {
    SCOPED_TRACE(h);
    const auto r = load_with_base(std::string("hostname: \"") + h + "\"\n");
    EXPECT_TRUE(HasError(r, "hostname", 3, 11, "has an empty label"));
  }
}

TEST(Hostname, OnlyLettersDigitsDashAndDot) {
  for (const char* h : {"my_host", "host name", "h\xc3\xa9", "a:b", "a/b"}) {
    SCOPED_TRACE(h);
    const auto r = load_with_base(std::string("hostname: \"") + h + "\"\n");
    EXPECT_TRUE(HasError(r, "hostname", 3, 11, "only letters, digits, '-' and '.' are allowed"));
  }
}

TEST(Hostname, EmptyIsRejected) {
  const auto r = load_with_base("hostname: ''\n");
  EXPECT_TRUE(HasError(r, "hostname", 3, 11, "the host name is empty"));
}

TEST(Hostname, DefaultFromAnInvalidSpaceNameSaysSetHostname) {
  auto values = alice_dev();
  values["space.name"] = "my_dev";
  const auto r = load_with_base("", values);
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "hostname", 1, 1,
                       "the default host name is the space name, which is not a valid host name"));
  EXPECT_TRUE(HasError(r, "hostname", 1, 1, "set hostname"));
  EXPECT_EQ(test::at_path(r, "name").size(), 0u);  // my_dev is a fine domain name
}

TEST(Hostname, TemplatedHostnameIsCheckedOnlyWithValues) {
  EXPECT_TRUE(Valid(load(std::string(kBase) + "hostname: ${{ .user.username }}_x\n")));
  const auto r = load_with_base("hostname: ${{ .user.username }}_x\n");
  EXPECT_TRUE(HasError(r, "hostname", 3, 11, "\"alice_x\" is not a valid host name"));
}

// Hostile values: expansion happens after parsing, so a value never changes the document.

const std::string kHostile = "a\nb: c {d} [e] #f \"g' h\\i ${{ .user.email }}";

TEST(HostileValues, NameIsSanitisedText) {
  auto values = alice_dev();
  values["user.username"] = kHostile;
  const auto r = load_with_base("hostname: dev\n", values);
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->name, "a-b--c--d---e---f--g--h-i-----.user.email----dev");
}

TEST(HostileValues, HostnameIsAnErrorNotAStructureChange) {
  auto values = alice_dev();
  values["space.name"] = "dev\nimage: evil\nmemory: 1T";
  const auto r = load_with_base("name: vm\n", values);
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "hostname", 1, 1, "is not a valid host name"));
  EXPECT_EQ(r.diagnostics.items().size(), 1u) << test::describe(r);
}

TEST(HostileValues, ExplicitHostnameErrorAtTheField) {
  auto values = alice_dev();
  values["var.h"] = "x: {y}";
  const auto r = load_with_base("hostname: \"${{ .var.h }}\"\n", values);
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "hostname", 3, 11, "\"x: {y}\" is not a valid host name"));
}

TEST(HostileValues, EnvironmentValuesAreExactlyTheText) {
  auto values = alice_dev();
  values["var.note"] = kHostile;
  values["var.quoted"] = "'single' \"double\" `back`";
  const auto r = load_with_base(R"(environment:
  - NOTE=${{ .var.note }}
  - "Q=${{ .var.quoted }}"
  - 'R=${{ .var.quoted | quote }}'
  - EMAIL=${{ .user.email }}
)",
                                values);
  ASSERT_TRUE(Valid(r));
  ASSERT_EQ(r.spec->environment.size(), 4u);
  EXPECT_EQ(r.spec->environment[0].name, "NOTE");
  EXPECT_EQ(r.spec->environment[0].value, kHostile);
  EXPECT_EQ(r.spec->environment[1].value, "'single' \"double\" `back`");
  EXPECT_EQ(r.spec->environment[2].value, "\"'single' \\\"double\\\" `back`\"");
  EXPECT_EQ(r.spec->environment[3].value, "alice@example.com");
}

TEST(HostileValues, AValueCannotAddFields) {
  auto values = alice_dev();
  values["var.img"] = "debian-12\nmemory: 2048\nbogus: 1";
  const auto r = load(std::string("image: ${{ .var.img }}\nnetwork: {mode: nat}\n"), values);
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "image", 1, 8, "must not contain spaces or control characters"));
}

TEST(HostileValues, SizesAndCountsFromValuesAreStillStrict) {
  auto values = alice_dev();
  values["var.m"] = "4G\ncpus: 64";
  values["var.c"] = "2 # comment";
  const auto r = load(std::string(kBase) + "memory: ${{ .var.m }}\ncpus: ${{ .var.c }}\n", values);
  ASSERT_TRUE(ErrorCount(r, 2));
  EXPECT_TRUE(HasError(r, "memory", 3, 9, "has an unknown unit"));
  EXPECT_TRUE(HasError(r, "cpus", 4, 7, "is not a whole number"));
}

TEST(HostileValues, CloudInitSeedKeepsTheText) {
  auto values = alice_dev();
  values["var.seed"] = kHostile;
  const auto r = load_with_base("cloudInitSeed: ${{ .var.seed }}\n", values);
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->cloud_init_seed, kHostile);
}

}  // namespace
}  // namespace bowline::spec
