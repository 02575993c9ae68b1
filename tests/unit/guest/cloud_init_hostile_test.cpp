// Hostile values stay data: every value that reaches a document is read back unchanged by
// yaml-cpp and by PyYAML (cloud-init's parser), and the environment file gives every value back
// exactly when sh and bash source it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "cloud_init_test_support.hpp"
#include "guest/cloud_init.hpp"
#include "guest/cloud_init_yaml.hpp"

namespace bowline::guest {
namespace {

using test::at;
using test::boot_arg;
using test::BootArg;
using test::hand_plan;
using test::has;
using test::Json;
using test::pyyaml_load;

const std::vector<std::string>& hostile() {
  static const std::vector<std::string> values = {
      "plain",
      "",
      " ",
      "  leading blanks",
      "trailing blank ",
      "multi\nline",
      "final newline\n",
      "\n",
      "\n\nleading newlines",
      "two final newlines\n\n",
      "trailing blank \nline\n",
      "crlf\r\nline",
      "cr\ronly",
      "tab\there",
      "\t",
      "it's",
      "'",
      "''",
      "'\\''",
      "say \"hi\"",
      "\"",
      "back\\slash",
      "ends with backslash\\",
      "key: value",
      "colon:no-space",
      "ends with colon:",
      ":",
      "a # comment",
      "#start",
      "{flow: map}",
      "[flow, seq]",
      "}",
      "*alias",
      "&anchor",
      "!tag",
      "!!str x",
      "!<tag:yaml.org,2002:str> x",
      "%YAML 1.2",
      "@at",
      "`backtick`",
      "$HOME",
      "$(reboot)",
      "${IFS}",
      "- dash item",
      "-",
      "--",
      "?",
      "? key",
      "|",
      "|-\n  x",
      ">",
      "---",
      "...",
      "--- doc\nother: x",
      "key: value\nother: value",
      "- item\n- item",
      "yes",
      "No",
      "on",
      "OFF",
      "y",
      "true",
      "False",
      "null",
      "Null",
      "~",
      "0755",
      "0x1F",
      "0b101",
      "0o17",
      "1e3",
      "1_000",
      "1:30",
      "190:20:30.15",
      "52:54:00:12:34:56",
      "2024-01-01",
      "2001-12-14t21:59:43.10-05:00",
      ".inf",
      "-.Inf",
      ".NaN",
      "=",
      "<<",
      "0",
      "-1",
      "+1",
      "3.14",
      "1.2.3.4",
      "1.2.3.4/24",
      "1.2.3.4/24\n",
      "1.2",
      "h\xc3\xa9llo w\xc3\xb6rld",
      "\xe4\xb8\xad\xe6\x96\x87",
      "\xf0\x9f\x9a\x80 rocket",
      "line\xe2\x80\xa8separator",
      "para\xe2\x80\xa9separator",
      "next\xc2\x85line",
      "nbsp\xc2\xa0",
      "\xef\xbb\xbf bom",
      "zero\xe2\x80\x8bwidth",
      "del\x7f",
      "ctrl\x01\x02\x1f",
      "\x1b[31mred\x1b[0m",
      "bell\x07",
      "\x08\x0b\x0c",
      "C1\xc2\x80\xc2\x9f",
      "private\xee\x80\x80",
      "max\xf4\x8f\xbf\xbd",
      "export X='y'; rm -rf /",
      "'; reboot; '",
      "\\n not a newline",
      "http://example.com/#frag?x=1&y=2",
      "a, b",
      "(parens)",
      "ALL=(ALL) NOPASSWD:ALL",
      std::string(3000, 'x'),
      std::string(1500, 'y') + ": " + std::string(1500, 'z'),
      std::string(200, '\n'),
  };
  return values;
}

// Random strings built from the fragments YAML, shells and MIME care about.
std::vector<std::string> random_values(std::size_t count) {
  static const std::vector<std::string> fragments = {"a",
                                                     "Z",
                                                     "0",
                                                     "9",
                                                     " ",
                                                     "\n",
                                                     "\t",
                                                     "\r",
                                                     "'",
                                                     "\"",
                                                     "\\",
                                                     ":",
                                                     ": ",
                                                     "#",
                                                     " #",
                                                     "-",
                                                     "- ",
                                                     "?",
                                                     "*",
                                                     "&",
                                                     "!",
                                                     "%",
                                                     "@",
                                                     "`",
                                                     "$",
                                                     "{",
                                                     "}",
                                                     "[",
                                                     "]",
                                                     ",",
                                                     "|",
                                                     ">",
                                                     "~",
                                                     "=",
                                                     "<<",
                                                     "...",
                                                     "---",
                                                     "yes",
                                                     "null",
                                                     "0755",
                                                     "1:30",
                                                     ".inf",
                                                     "\xc3\xa9",
                                                     "\xe4\xb8\xad",
                                                     "\xf0\x9f\x9a\x80",
                                                     "\xe2\x80\xa8",
                                                     "\xc2\x85",
                                                     "\xef\xbb\xbf",
                                                     "\x7f",
                                                     "\x01",
                                                     "\x1b",
                                                     "/",
                                                     ".",
                                                     "e"};
  std::mt19937 rng(20240611);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < count; ++i) {
    std::string s;
    const auto n = rng() % 14;
    for (std::size_t k = 0; k < n; ++k) s += fragments[rng() % fragments.size()];
    out.push_back(s);
  }
  return out;
}

void expect_string(const Json& py, const std::string& expected, const std::string& where) {
  ASSERT_TRUE(py.is_string()) << where << ": PyYAML read " << py.dump() << " for "
                              << Json(expected).dump();
  EXPECT_EQ(py.get<std::string>(), expected) << where;
}

// Puts `v` in every string field of a plan and checks every document.
void check_everywhere(const std::string& v) {
  SCOPED_TRACE(Json(v).dump());
  auto p = hand_plan();
  p.guest.hostname = v;
  p.guest.instance_id = v;
  p.guest.username = v.empty() ? "alice" : v;
  p.guest.timezone = v;
  p.guest.password_hash = v.empty() ? "x" : v;
  p.guest.ssh_keys = {v, "second key"};
  p.guest.resolvers = {v};
  p.guest.environment = {{"V", v}, {"W", "after"}};

  const auto docs = render_seed(p.guest);
  const std::string env =
      "# The space's environment, written by bowline.\nexport V=" + test::sh_quote(v) +
      "\nexport W='after'\n";

  // yaml-cpp
  const auto ud = YAML::Load(docs.user_data);
  if (v.empty())
    EXPECT_FALSE(ud["hostname"]);
  else
    EXPECT_EQ(ud["hostname"].as<std::string>(), v);
  EXPECT_EQ(ud["users"][0]["name"].as<std::string>(), p.guest.username);
  EXPECT_EQ(ud["users"][0]["passwd"].as<std::string>(), *p.guest.password_hash);
  EXPECT_EQ(ud["users"][0]["ssh_authorized_keys"][0].as<std::string>(), v);
  EXPECT_EQ(ud["users"][0]["ssh_authorized_keys"][1].as<std::string>(), "second key");
  EXPECT_EQ(boot_arg(ud, BootArg::Environment), env);
  const auto md = YAML::Load(docs.meta_data);
  EXPECT_EQ(md["instance-id"].as<std::string>(), v);
  const auto nc = YAML::Load(*docs.network_config);
  EXPECT_EQ(nc["ethernets"]["eth0"]["nameservers"]["addresses"][0].as<std::string>(), v);

  // PyYAML
  const auto py = pyyaml_load(docs.user_data);
  if (v.empty()) {
    EXPECT_FALSE(has(py, "hostname"));
    EXPECT_FALSE(has(py, "timezone"));
  } else {
    expect_string(at(py, "hostname"), v, "hostname");
    expect_string(at(py, "timezone"), v, "timezone");
  }
  const auto& user = at(py, "users")[0];
  expect_string(at(user, "name"), p.guest.username, "name");
  expect_string(at(user, "passwd"), *p.guest.password_hash, "passwd");
  expect_string(at(user, "ssh_authorized_keys")[0], v, "key");
  expect_string(boot_arg(py, BootArg::Environment), env, "environment");
  const auto pm = pyyaml_load(docs.meta_data);
  expect_string(at(pm, "instance-id"), v, "instance-id");
  if (v.empty())
    EXPECT_FALSE(has(pm, "local-hostname"));
  else
    expect_string(at(pm, "local-hostname"), v, "local-hostname");
  const auto pn = pyyaml_load(*docs.network_config);
  expect_string(at(at(at(at(pn, "ethernets"), "eth0"), "nameservers"), "addresses")[0], v,
                "nameserver");
}

TEST(Hostile, ValuesStayDataInEveryDocument) {
  for (const auto& v : hostile()) check_everywhere(v);
}

TEST(Hostile, RandomValuesStayDataInEveryDocument) {
  for (const auto& v : random_values(150)) check_everywhere(v);
}

// Their #cloud-config, written with hostile keys and values (double-quoted, as any YAML writer
// may), merged into ours: PyYAML reads their values back unchanged.
TEST(Hostile, TheirValuesAndKeysSurviveTheMerge) {
  std::vector<std::string> values = hostile();
  for (auto& v : random_values(100)) values.push_back(v);
  YAML::Emitter e;
  e.SetOutputCharset(YAML::EscapeNonAscii);
  e << YAML::BeginMap << YAML::Key << "runcmd" << YAML::Value << YAML::BeginSeq;
  for (const auto& v : values) e << YAML::DoubleQuoted << v;
  e << YAML::EndSeq << YAML::Key << "their_keys" << YAML::Value << YAML::BeginMap;
  for (std::size_t i = 0; i < values.size(); ++i)
    e << YAML::Key << YAML::DoubleQuoted << values[i] << YAML::Value << YAML::DoubleQuoted
      << std::to_string(i);
  e << YAML::EndMap << YAML::EndMap;
  ASSERT_TRUE(e.good()) << e.GetLastError();
  auto p = hand_plan();
  p.guest.user_cloud_init = "#cloud-config\n" + std::string(e.c_str()) + "\n";

  const auto text = render_user_data(p.guest);
  const auto merged = pyyaml_load(text);
  const auto& runcmd = at(merged, "runcmd");
  ASSERT_EQ(runcmd.size(), values.size() + 2);
  for (std::size_t i = 0; i < values.size(); ++i)
    expect_string(runcmd[i + 2], values[i], "runcmd item " + std::to_string(i));
  // Their keys: the last of duplicates wins (none here but PyYAML's rules apply either way).
  const auto& keys = at(merged, "their_keys");
  std::map<std::string, std::string> expected;
  for (std::size_t i = 0; i < values.size(); ++i) expected[values[i]] = std::to_string(i);
  std::map<std::string, std::string> got;
  for (const auto& entry : keys.at("map")) {
    ASSERT_TRUE(entry[0].is_string()) << entry[0].dump();
    got[entry[0].get<std::string>()] = entry[1].get<std::string>();
  }
  EXPECT_EQ(got, expected);

  const auto doc = YAML::Load(text);
  for (std::size_t i = 0; i < values.size(); ++i)
    EXPECT_EQ(doc["runcmd"][i + 2].as<std::string>(), values[i]);
}

// The environment file, sourced by sh (dash) and bash, gives back every value byte for byte.
TEST(Hostile, EnvironmentFileIsExactForShells) {
  std::vector<std::string> values = hostile();
  for (auto& v : random_values(200)) values.push_back(v);
  auto p = hand_plan();
  p.guest.environment.clear();
  std::string names;
  for (std::size_t i = 0; i < values.size(); ++i) {
    p.guest.environment.push_back({"V" + std::to_string(i), values[i]});
    names += " \"$V" + std::to_string(i) + "\"";
  }
  const auto py = pyyaml_load(render_user_data(p.guest));
  const auto content = boot_arg(py, BootArg::Environment).get<std::string>();
  EXPECT_EQ(boot_arg(YAML::Load(render_user_data(p.guest)), BootArg::Environment), content);
  test::TempDir dir;
  const auto file = dir.path() / "bowline-environment.sh";
  test::write_file(file, content);
  for (const std::string shell : {"/bin/sh", "/bin/bash"}) {
    const auto r = test::run(shell + " -c '. \"$1\"; printf \"%s\\0\"" + names + "' sh " +
                             test::sh_quote(file.string()));
    ASSERT_EQ(r.status, 0) << shell;
    std::vector<std::string> got;
    std::size_t start = 0;
    for (std::size_t i = 0; i < r.out.size(); ++i)
      if (r.out[i] == '\0') {
        got.push_back(r.out.substr(start, i - start));
        start = i + 1;
      }
    ASSERT_EQ(got.size(), values.size()) << shell;
    for (std::size_t i = 0; i < values.size(); ++i)
      EXPECT_EQ(got[i], values[i]) << shell << " V" << i << " " << Json(values[i]).dump();
  }
}

// --- the emitter, property-based ---------------------------------------------------------------

rc::Gen<std::string> fragment_string() {
  return rc::gen::map(
      rc::gen::container<std::vector<std::string>>(rc::gen::element<std::string>(
          "a", "Z", "0", " ", "\n", "\t", "\r", "'", "\"", "\\", ":", ": ", "#", " #", "-", "- ",
          "?", "*", "&", "!", "%", "@", "`", "{", "}", "[", "]", ",", "|", ">", "~", "=", "<<",
          "...", "---", "yes", "null", "0755", "1:30", ".inf", "\xc3\xa9", "\xf0\x9f\x9a\x80",
          "\xe2\x80\xa8", "\xc2\x85", "\xef\xbb\xbf", "\x7f", "\x01", "/", ".", "1.2.3.4")),
      [](const std::vector<std::string>& parts) {
        std::string s;
        for (const auto& part : parts) s += part;
        return s;
      });
}

void check_round_trip(const std::string& value) {
  using detail::Yaml;
  Yaml doc = Yaml::map();
  doc.add("value", Yaml::str(value)).add("list", Yaml::seq({Yaml::str(value)}));
  doc.entries.emplace_back(Yaml::str(value), Yaml::str("as a key"));
  const auto text = detail::emit(doc);
  const auto back = YAML::Load(text);
  RC_ASSERT(back["value"].as<std::string>() == value);
  RC_ASSERT(back["list"][0].as<std::string>() == value);
  const auto py = pyyaml_load(text);
  RC_ASSERT(at(py, "value") == Json(value));
  RC_ASSERT(at(py, "list")[0] == Json(value));
  RC_ASSERT(py["map"].size() == 3u);
  RC_ASSERT(py["map"][2][0] == Json(value));
  // Plain only when safe; a literal block only when exact.
  if (detail::plain_safe(value)) RC_ASSERT(text.starts_with("value: " + value + "\n"));
  for (unsigned char c : text) RC_ASSERT(c < 0x80);
}

RC_GTEST_PROP(Emitter, FragmentStringsRoundTripThroughYamlCppAndPyYaml, ()) {
  check_round_trip(*fragment_string());
}

// Valid UTF-8 from any Unicode scalar value but the noncharacters, weighted to the ranges
// that matter: ASCII (controls included), C1 and Latin-1, the BMP (line separators, BOM),
// astral planes.
rc::Gen<std::string> utf8_string() {
  const auto code_point = rc::gen::suchThat(
      rc::gen::oneOf(rc::gen::inRange<std::uint32_t>(0, 0x80),
                     rc::gen::inRange<std::uint32_t>(0x80, 0x800),
                     rc::gen::inRange<std::uint32_t>(0x800, 0x10000),
                     rc::gen::inRange<std::uint32_t>(0x10000, 0x110000),
                     rc::gen::element<std::uint32_t>(0x85, 0xa0, 0x2028, 0x2029, 0xfeff, 0xfffd)),
      [](std::uint32_t cp) {
        return !(cp >= 0xd800 && cp <= 0xdfff) && !(cp >= 0xfdd0 && cp <= 0xfdef) &&
               (cp & 0xfffe) != 0xfffe;
      });
  return rc::gen::map(rc::gen::container<std::vector<std::uint32_t>>(code_point),
                      [](const std::vector<std::uint32_t>& cps) {
                        std::string s;
                        for (auto cp : cps) {
                          if (cp < 0x80) {
                            s += static_cast<char>(cp);
                          } else if (cp < 0x800) {
                            s += static_cast<char>(0xc0 | (cp >> 6));
                            s += static_cast<char>(0x80 | (cp & 0x3f));
                          } else if (cp < 0x10000) {
                            s += static_cast<char>(0xe0 | (cp >> 12));
                            s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
                            s += static_cast<char>(0x80 | (cp & 0x3f));
                          } else {
                            s += static_cast<char>(0xf0 | (cp >> 18));
                            s += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
                            s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
                            s += static_cast<char>(0x80 | (cp & 0x3f));
                          }
                        }
                        return s;
                      });
}

RC_GTEST_PROP(Emitter, AnyUnicodeTextRoundTrips, ()) {
  const auto s = *utf8_string();
  RC_ASSERT(detail::valid_utf8(s));
  check_round_trip(s);
}

RC_GTEST_PROP(Emitter, ArbitraryBytesRoundTripOrAreRefused, (const std::string& raw)) {
  if (detail::valid_utf8(raw)) {
    check_round_trip(raw);
  } else {
    RC_ASSERT_THROWS_AS(detail::emit(detail::Yaml::str(raw)), std::invalid_argument);
  }
}

RC_GTEST_PROP(Emitter, PrintableMultiLineTextRoundTrips, ()) {
  const auto lines = *rc::gen::container<std::vector<std::string>>(
      rc::gen::container<std::string>(rc::gen::inRange<char>(0x20, 0x7f)));
  std::string text;
  for (const auto& line : lines) text += line + "\n";
  check_round_trip(text);
}

TEST(Emitter, StylesAreChosenAsDocumented) {
  using detail::Yaml;
  const auto one = [](const std::string& v) {
    return detail::emit(Yaml::map().add("k", Yaml::str(v)));
  };
  EXPECT_EQ(one("/bin/bash"), "k: /bin/bash\n");
  EXPECT_EQ(one("198.51.100.10/24"), "k: 198.51.100.10/24\n");
  EXPECT_EQ(one("0644"), "k: \"0644\"\n");
  EXPECT_EQ(one("yes"), "k: \"yes\"\n");
  EXPECT_EQ(one("52:54:00:12:34:56"), "k: \"52:54:00:12:34:56\"\n");
  EXPECT_EQ(one("a\nb\n"), "k: |\n  a\n  b\n");
  EXPECT_EQ(one("a\nb"), "k: \"a\\nb\"\n");
  EXPECT_EQ(one("h\xc3\xa9"), "k: \"h\\xe9\"\n");
  EXPECT_EQ(detail::emit(Yaml::map().add("k", Yaml::str("plain", true))), "k: \"plain\"\n");
  EXPECT_EQ(detail::emit(Yaml::map().add("k", Yaml::seq())), "k: []\n");
}

}  // namespace
}  // namespace bowline::guest
