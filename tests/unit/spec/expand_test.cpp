// `${{ }}` expressions: every variable and function, the errors and where they point, and
// validation with and without values.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "spec/expand.hpp"
#include "spec_test_support.hpp"

namespace bowline::spec {
namespace {

using test::alice_dev;
using test::ErrorCount;
using test::HasError;
using test::load;
using test::Valid;

Expansion with(std::string_view text, const Variables& values) {
  return expand(text, &values);
}

std::string value_of(std::string_view text, const Variables& values) {
  const auto e = with(text, values);
  EXPECT_TRUE(e.errors.empty()) << (e.errors.empty() ? "" : e.errors.front().message);
  return e.value.value_or("<none>");
}

TEST(Expand, TextWithoutExpressionsIsItself) {
  const auto e = expand("plain: text }} {{ $ {", nullptr);
  EXPECT_FALSE(e.templated);
  ASSERT_TRUE(e.value);
  EXPECT_EQ(*e.value, "plain: text }} {{ $ {");
  EXPECT_TRUE(e.errors.empty());
}

TEST(Expand, EveryKnownVariableHasItsValue) {
  const auto values = alice_dev();
  for (const auto& [name, value] : values) {
    SCOPED_TRACE(name);
    EXPECT_EQ(value_of("${{ ." + name + " }}", values), value);
    EXPECT_EQ(value_of("<${{." + name + "}}>", values), "<" + value + ">");
  }
  // Exactly the variables docs/templates.md lists.
  EXPECT_THAT(known_variables(),
              ::testing::UnorderedElementsAre(
                  "user.username", "user.email", "user.timezone", "user.id", "space.name",
                  "space.id", "space.ip_address", "template.name", "template.id", "server.url"));
  EXPECT_EQ(values.size(), known_variables().size());
}

TEST(Expand, VarNamesTakeTheirValues) {
  const Variables values{{"var.region", "eu-West"}, {"var._x9", "y"}};
  EXPECT_EQ(value_of("${{ .var.region }}", values), "eu-West");
  EXPECT_EQ(value_of("${{ .var._x9 }}", values), "y");
}

TEST(Expand, Functions) {
  const Variables values{{"user.username", "Alice \"A\" O'Neil"}, {"var.x", "a\\b\nc"}};
  EXPECT_EQ(value_of("${{ toLower .user.username }}", values), "alice \"a\" o'neil");
  EXPECT_EQ(value_of("${{ toUpper .user.username }}", values), "ALICE \"A\" O'NEIL");
  EXPECT_EQ(value_of("${{ quote .user.username }}", values), "\"Alice \\\"A\\\" O'Neil\"");
  EXPECT_EQ(value_of("${{ quote .var.x }}", values), "\"a\\\\b\\nc\"");
  EXPECT_EQ(value_of("${{ .user.username | toLower }}", values), "alice \"a\" o'neil");
  EXPECT_EQ(value_of("${{ .user.username | toLower | quote }}", values),
            "\"alice \\\"a\\\" o'neil\"");
  EXPECT_EQ(value_of("${{ toUpper .var.x | quote }}", values), "\"A\\\\B\\nC\"");
}

TEST(Expand, QuoteMakesOneLineThatYamlReadsBack) {
  const std::string value =
      "a\tb\x01"
      "c\rd\ne \"f\" \\ \x7f ü";
  const Variables values{{"var.x", value}};
  const auto quoted = value_of("${{ .var.x | quote }}", values);
  EXPECT_EQ(quoted, "\"a\\tb\\u0001c\\rd\\ne \\\"f\\\" \\\\ \\u007f ü\"");
  EXPECT_EQ(YAML::Load("k: " + quoted)["k"].as<std::string>(), value);

  // What YAML 1.1 readers (cloud-init's PyYAML) take as line breaks, and the other C1 controls.
  const std::string unicode = "a\u0085b\u2028c\u2029d\u0090e\u00a0f\u2027g";
  const auto escaped = value_of("${{ .var.x | quote }}", {{"var.x", unicode}});
  EXPECT_EQ(escaped, "\"a\\u0085b\\u2028c\\u2029d\\u0090e\u00a0f\u2027g\"");
  EXPECT_EQ(YAML::Load("k: " + escaped)["k"].as<std::string>(), unicode);
}

TEST(Expand, QuoteComesLast) {
  const Variables values{{"var.x", "a\nb"}};
  const auto e = with("${{ .var.x | quote | toUpper }}", values);
  ASSERT_EQ(e.errors.size(), 1u);
  EXPECT_EQ(e.errors[0].offset, 21u);  // toUpper, from the `$`
  EXPECT_EQ(e.errors[0].message,
            "toUpper after quote would change its escapes: quote must be the last step");
  EXPECT_EQ(with("${{ quote .var.x | toLower }}", values).errors.size(), 1u);
  EXPECT_EQ(value_of("${{ .var.x | toUpper | quote }}", values), "\"A\\nB\"");
}

TEST(Expand, WithoutValuesTheValueIsUnknownButChecked) {
  const auto e = expand("a-${{ toLower .user.username }}-${{ .var.zone }}", nullptr);
  EXPECT_TRUE(e.templated);
  EXPECT_FALSE(e.value);
  EXPECT_TRUE(e.errors.empty());
}

TEST(Expand, ValuesAreNotExpandedAgain) {
  const Variables values{{"user.username", "${{ .space.name }}"}};
  EXPECT_EQ(value_of("${{ .user.username }}", values), "${{ .space.name }}");
}

struct ErrorCase {
  const char* text;
  std::size_t expression;
  std::size_t offset;
  const char* message;
};

class ExpandErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ExpandErrors, ArePinnedToTheOffendingToken) {
  const auto& c = GetParam();
  for (bool with_values : {false, true}) {
    SCOPED_TRACE(with_values ? "with values" : "without values");
    const auto values = alice_dev();
    const auto e = expand(c.text, with_values ? &values : nullptr);
    ASSERT_EQ(e.errors.size(), 1u);
    EXPECT_FALSE(e.value);
    EXPECT_EQ(e.errors[0].expression, c.expression);
    EXPECT_EQ(e.errors[0].offset, c.offset);
    EXPECT_THAT(e.errors[0].message, ::testing::HasSubstr(c.message));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Expand, ExpandErrors,
    ::testing::Values(
        ErrorCase{"${{ .user.usernam }}", 0, 4,
                  "unknown variable \".user.usernam\" (did you mean .user.username?)"},
        ErrorCase{"${{ .nomad.region }}", 0, 4, "unknown variable \".nomad.region\""},
        ErrorCase{"${{ .space.stack }}", 0, 4, "unknown variable \".space.stack\""},
        ErrorCase{"${{ toLowr .space.name }}", 0, 4,
                  "unknown function \"toLowr\" (did you mean toLower?)"},
        ErrorCase{"${{ json .space.name }}", 0, 4,
                  "unknown function \"json\" (known: toLower, toUpper, quote)"},
        ErrorCase{"${{ .space.name | upper }}", 0, 18, "unknown function \"upper\""},
        ErrorCase{"x ${{ .space.name }} y ${{ .space.nmae }}", 1, 4,
                  "unknown variable \".space.nmae\""},
        ErrorCase{"${{ .var.1x }}", 0, 4, "is not a valid variable name"},
        ErrorCase{"${{ .var. }}", 0, 4, "is not a valid variable name"},
        ErrorCase{"${{ .var.a-b }}", 0, 4, "is not a valid variable name"},
        ErrorCase{"${{ .var.a.b }}", 0, 4, "is not a valid variable name"},
        ErrorCase{"${{ }}", 0, 3, "empty expression"},
        ErrorCase{"${{ .space.name | }}", 0, 3, "empty pipeline step after |"},
        ErrorCase{"${{ toLower }}", 0, 4, "function toLower needs a value"},
        ErrorCase{"${{ space.name }}", 0, 4, "expected a variable such as .user.username"},
        ErrorCase{"${{ toLower toUpper .space.name }}", 0, 4, "one function at a time"},
        ErrorCase{"${{ .space.name | toLower quote }}", 0, 18,
                  "each step after | must be one function name"},
        ErrorCase{"${{ .space.name | .user.id }}", 0, 18, "only one variable per expression"},
        ErrorCase{"abc ${{ .space.name", 0, 0, "unterminated ${{: expected }}"}));

TEST(Expand, MissingValueNamesTheVarFlag) {
  const Variables values{{"user.username", "alice"}};
  const auto e = with("${{ .user.username }}-${{ .space.name }}", values);
  ASSERT_EQ(e.errors.size(), 1u);
  EXPECT_EQ(e.errors[0].expression, 1u);
  EXPECT_EQ(e.errors[0].offset, 4u);
  EXPECT_EQ(e.errors[0].message, "no value for .space.name (give one with --var space.name=...)");
  const auto v = with("${{ .var.zone }}", values);
  ASSERT_EQ(v.errors.size(), 1u);
  EXPECT_THAT(v.errors[0].message, ::testing::HasSubstr("--var var.zone=..."));
}

TEST(Expand, EveryErrorInOneValueIsReported) {
  const auto e = expand("${{ .a }} ${{ .b }}", nullptr);
  ASSERT_EQ(e.errors.size(), 2u);
  EXPECT_EQ(e.errors[0].expression, 0u);
  EXPECT_EQ(e.errors[1].expression, 1u);
}

// Through the loader: errors at the line and column of the offending token.

TEST(Variables, UnknownVariableAtItsLineAndColumn) {
  const auto r = load(R"(
image: debian-12
network: {mode: nat}
hostname: "x-${{ .space.nme }}"
)");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "hostname", 3, 18, "unknown variable \".space.nme\""));
}

TEST(Variables, UnknownFunctionAtItsLineAndColumn) {
  const auto r = load(R"(
image: debian-12
network: {mode: nat}
name: ${{ toLowr .user.username }}-x
)");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "name", 3, 11, "unknown function \"toLowr\" (did you mean toLower?)"));
}

TEST(Variables, SecondExpressionInAValue) {
  const auto r = load(R"(
image: debian-12
network: {mode: nat}
name: ${{ .user.username }}-${{ .space.nam }}
)");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "name", 3, 33, "unknown variable \".space.nam\""));
}

TEST(Variables, InAFlowListEntry) {
  const auto r = load(R"(
image: debian-12
network: {mode: nat}
environment: [A=1, "B=${{ .usr.id }}"]
)");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "environment[1]", 3, 27, "unknown variable \".usr.id\""));
}

TEST(Variables, InsideABlockScalar) {
  const auto r = load(R"(
image: debian-12
network: {mode: nat}
cloudInit: |
  #cloud-config
  fqdn: ${{ .space.name }}.example.com
  timezone: ${{ .user.tz }}
)");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "cloudInit", 6, 17, "unknown variable \".user.tz\""));
}

TEST(Variables, PlainScalarFoldedOverLines) {
  const auto r = load(R"(
image: debian-12
network: {mode: nat}
cloudInitSeed: first part
  ${{ .spce.id }}
)");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "cloudInitSeed", 4, 7, "unknown variable \".spce.id\""));
}

TEST(Variables, ErrorsInSeveralFieldsAreAllReported) {
  const auto r = load(R"(
image: ${{ .var.image | lower }}
network: {mode: nat}
hostname: ${{ .space.nam }}
environment:
  - TZ=${{ .user.tz }}
)");
  ASSERT_TRUE(ErrorCount(r, 3));
  EXPECT_TRUE(HasError(r, "image", 1, 25, "unknown function \"lower\""));
  EXPECT_TRUE(HasError(r, "hostname", 3, 15, "unknown variable"));
  EXPECT_TRUE(HasError(r, "environment[0]", 5, 12, "unknown variable \".user.tz\""));
}

// Validation without values checks what does not depend on them; with values, the rest.

constexpr const char* kTemplated = R"(
name: ${{ .user.username }}-${{ .space.name }}
hostname: ${{ toLower .space.name }}
image: ${{ .var.image }}
memory: ${{ .var.memory }}
cpus: ${{ .var.cpus }}
disk: ${{ .var.disk }}
network: {mode: nat}
environment:
  - OWNER=${{ .user.email }}
)";

TEST(Variables, WithoutValuesTemplatedFieldsAreNotChecked) {
  const auto r = load(kTemplated);
  ASSERT_TRUE(Valid(r));
  EXPECT_TRUE(r.diagnostics.items().empty()) << test::describe(r);
  EXPECT_EQ(r.spec->name, "${{ .user.username }}-${{ .space.name }}");
  EXPECT_EQ(r.spec->hostname, "${{ toLower .space.name }}");
  EXPECT_EQ(r.spec->image.reference, "${{ .var.image }}");
  EXPECT_FALSE(r.spec->memory_bytes);
}

TEST(Variables, WithValuesEverythingIsChecked) {
  auto values = alice_dev();
  values["var.image"] = "debian-12";
  values["var.memory"] = "4G";
  values["var.cpus"] = "2";
  values["var.disk"] = "20G";
  values["space.name"] = "Dev";
  const auto r = load(kTemplated, values);
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->name, "alice-Dev");
  EXPECT_EQ(r.spec->hostname, "dev");
  EXPECT_EQ(r.spec->image.reference, "debian-12");
  EXPECT_EQ(r.spec->memory_bytes, 4ull << 30);
  EXPECT_EQ(r.spec->cpus, 2u);
  EXPECT_EQ(r.spec->disk_bytes, 20ull << 30);
  ASSERT_EQ(r.spec->environment.size(), 1u);
  EXPECT_EQ(r.spec->environment[0].value, "alice@example.com");
}

TEST(Variables, WithValuesAMissingVarIsAnErrorAtItsPosition) {
  auto values = alice_dev();
  values["var.image"] = "debian-12";
  values["var.cpus"] = "2";
  values["var.disk"] = "20G";
  const auto r = load(kTemplated, values);
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "memory", 4, 13,
                       "no value for .var.memory (give one with --var var.memory=...)"));
}

TEST(Variables, WithValuesAVariableValueIsValidatedLikeLiteralText) {
  auto values = alice_dev();
  values["var.image"] = "ftp://host/x.qcow2";
  values["var.memory"] = "2048";
  values["var.cpus"] = "1.5";
  values["var.disk"] = "20G";
  values["space.name"] = "-dev";
  const auto r = load(kTemplated, values);
  ASSERT_TRUE(ErrorCount(r, 4));
  EXPECT_TRUE(HasError(r, "image", 3, 8, "the scheme ftp:// is not supported"));
  EXPECT_TRUE(HasError(r, "memory", 4, 9, "\"memory: 2048\" asks for 2048 bytes"));
  EXPECT_TRUE(HasError(r, "cpus", 5, 7, "\"1.5\" is a fraction"));
  EXPECT_TRUE(HasError(r, "hostname", 2, 11, "must not start or end with '-'"));
}

TEST(Variables, DefaultNameNeedsUsernameAndSpaceName) {
  const auto r = load("image: debian-12\nnetwork: {mode: nat}\n", Variables{{"space.name", "dev"}});
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "name", 0, 0, "no value for .user.username"));
}

}  // namespace
}  // namespace bowline::spec
