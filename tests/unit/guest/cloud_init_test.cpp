// The NoCloud documents: what each holds, checked by parsing them back with yaml-cpp and with
// PyYAML (cloud-init's parser); the merge with a user's #cloud-config; MIME user-data read
// with Python's email parser as cloud-init does; network-config; determinism; the seed ISO
// read back with isoinfo.
#include "guest/cloud_init.hpp"
#include "guest/environment_files.hpp"
#include "guest/owner_boot_script.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "cloud_init_test_support.hpp"
#include "guest/cloud_init_mime.hpp"
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
using test::run;
using test::sh_quote;
using test::TempDir;
using test::write_file;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::vector<std::string> strings(const YAML::Node& seq) {
  std::vector<std::string> out;
  for (const auto& n : seq) out.push_back(n.as<std::string>());
  return out;
}

// --- user-data -------------------------------------------------------------------------------

TEST(UserData, HoldsOurUserAndSettings) {
  const auto text = render_user_data(hand_plan().guest);
  ASSERT_THAT(text, StartsWith("#cloud-config\n"));
  const auto doc = YAML::Load(text);
  EXPECT_EQ(doc["hostname"].as<std::string>(), "dev");
  EXPECT_TRUE(doc["manage_etc_hosts"].as<bool>());
  EXPECT_FALSE(doc["ssh_pwauth"].as<bool>());
  EXPECT_EQ(doc["timezone"].as<std::string>(), "Europe/Berlin");
  EXPECT_FALSE(doc["packages"]) << "the packages module runs apt-get update";
  EXPECT_FALSE(doc["fqdn"]);
  ASSERT_EQ(doc["users"].size(), 1u);
  const auto user = doc["users"][0];
  EXPECT_EQ(user["name"].as<std::string>(), "alice");
  EXPECT_EQ(user["sudo"].as<std::string>(), "ALL=(ALL) NOPASSWD:ALL");
  EXPECT_EQ(user["shell"].as<std::string>(), "/bin/bash");
  EXPECT_FALSE(user["groups"]) << "a group missing on the image breaks user creation";
  EXPECT_FALSE(user["lock_passwd"].as<bool>());
  EXPECT_EQ(user["passwd"].as<std::string>(), "$6$saltsaltsaltsalt$hash");
  EXPECT_EQ(strings(user["ssh_authorized_keys"]), hand_plan().guest.ssh_keys);
  // The owner, keys, environment, time zone and resolvers at every boot, as arguments of one
  // program (the instance-id stays, so cloud-init's own modules would not apply a change).
  EXPECT_FALSE(doc["write_files"]);
  ASSERT_EQ(doc["bootcmd"].size(), 1u);
  ASSERT_EQ(doc["bootcmd"][0].size(), 14u);
  EXPECT_EQ(doc["bootcmd"][0][0].as<std::string>(), "sh");
  EXPECT_EQ(doc["bootcmd"][0][1].as<std::string>(), "-c");
  EXPECT_EQ(doc["bootcmd"][0][2].as<std::string>(), kOwnerBootScript);
  EXPECT_EQ(boot_arg(doc, BootArg::User), "alice");
  std::string keys;
  for (const auto& k : hand_plan().guest.ssh_keys) keys += k + "\n";
  EXPECT_EQ(boot_arg(doc, BootArg::Keys), keys);
  EXPECT_EQ(boot_arg(doc, BootArg::Hash), "$6$saltsaltsaltsalt$hash");
  EXPECT_EQ(boot_arg(doc, BootArg::Environment),
            "# The space's environment, written by bowline.\nexport EDITOR='vim'\n");
  EXPECT_EQ(boot_arg(doc, BootArg::Timezone), "Europe/Berlin");
  EXPECT_EQ(boot_arg(doc, BootArg::Resolv),
            "# written by bowline at boot: the space's resolvers\nnameserver 1.1.1.1\n"
            "nameserver 1.0.0.1\n");
  // The space's identity, so that a disk another space booted (a clone) gets its own
  // machine-id, while a new instance-id for a changed cloudInit keeps it.
  EXPECT_EQ(boot_arg(doc, BootArg::Identity), hand_plan().guest.identity);
  EXPECT_FALSE(hand_plan().guest.identity.empty());
  // The environment for every session (pam_env) and every service (systemd), not only
  // login shells.
  EXPECT_EQ(boot_arg(doc, BootArg::EnvironmentNames), "EDITOR");
  EXPECT_EQ(boot_arg(doc, BootArg::PamEnvironment), "EDITOR=\"vim\"\n");
  EXPECT_EQ(boot_arg(doc, BootArg::SystemdEnvironment),
            "# The space's environment for every service, written by bowline.\n[Manager]\n"
            "DefaultEnvironment=\"EDITOR=vim\"\n");
  EXPECT_EQ(strings(doc["updates"]["network"]["when"]),
            (std::vector<std::string>{"boot-new-instance", "boot"}));
  EXPECT_EQ(doc["runcmd"].size(), 2u);
}

TEST(UserData, PyYamlReadsTheTypesCloudInitExpects) {
  const auto doc = pyyaml_load(render_user_data(hand_plan().guest));
  EXPECT_EQ(at(doc, "manage_etc_hosts"), Json(true));
  EXPECT_EQ(at(doc, "ssh_pwauth"), Json(false));
  EXPECT_EQ(at(doc, "hostname"), Json("dev"));
  const auto& user = at(doc, "users")[0];
  EXPECT_EQ(at(user, "lock_passwd"), Json(false));
  EXPECT_EQ(at(user, "passwd"), Json("$6$saltsaltsaltsalt$hash"));
  // Every argument of the boot program a string, as shellify needs (an all-digit key or a
  // "yes" value must not become a number or a boolean).
  for (const auto& arg : at(doc, "bootcmd")[0]) EXPECT_TRUE(arg.is_string()) << arg.dump();
  EXPECT_EQ(at(at(at(doc, "updates"), "network"), "when"), Json({"boot-new-instance", "boot"}));
}

TEST(UserData, LocksThePasswordWithoutAHash) {
  auto p = hand_plan();
  p.guest.password_hash.reset();
  const auto user = YAML::Load(render_user_data(p.guest))["users"][0];
  EXPECT_TRUE(user["lock_passwd"].as<bool>());
  EXPECT_FALSE(user["passwd"]);
}

TEST(UserData, LeavesOutWhatIsNotSet) {
  auto p = hand_plan();
  p.guest.timezone.clear();
  p.guest.environment.clear();
  p.guest.ssh_keys.clear();
  const auto doc = YAML::Load(render_user_data(p.guest));
  EXPECT_FALSE(doc["timezone"]);
  EXPECT_EQ(boot_arg(doc, BootArg::Environment), "") << "no environment: the file is removed";
  EXPECT_EQ(boot_arg(doc, BootArg::Timezone), "");
  EXPECT_EQ(boot_arg(doc, BootArg::Keys), "");
  EXPECT_FALSE(doc["users"][0]["ssh_authorized_keys"]);
}

TEST(UserData, RejectsWhatCannotBeRenderedFaithfully) {
  auto p = hand_plan();
  p.guest.username.clear();
  EXPECT_THROW(render_user_data(p.guest), std::invalid_argument);
  p = hand_plan();
  p.guest.environment = {{"NOT-A-NAME", "x"}};
  EXPECT_THROW(render_user_data(p.guest), std::invalid_argument);
  p.guest.environment = {{"1X", "x"}};
  EXPECT_THROW(render_user_data(p.guest), std::invalid_argument);
  p.guest.environment = {{"X", std::string("a\0b", 3)}};
  EXPECT_THROW(render_user_data(p.guest), std::invalid_argument);
  p = hand_plan();
  p.guest.hostname = "bad\xff";
  EXPECT_THROW(render_user_data(p.guest), std::invalid_argument);
  p.guest.hostname = "overlong \xc0\xaf";
  EXPECT_THROW(render_user_data(p.guest), std::invalid_argument);
  p.guest.hostname = "noncharacter \xef\xbf\xbe";  // U+FFFE: yaml-cpp would replace it
  EXPECT_THROW(render_user_data(p.guest), std::invalid_argument);
  p.guest.hostname = "surrogate \xed\xa0\x80";
  EXPECT_THROW(render_user_data(p.guest), std::invalid_argument);
}

// The guest-agent runcmd, run as cloud-init runs runcmd (one sh script) with a PATH of stub
// tools only (and the real `timeout`), so the host's own tools play no part.
class GuestAgentScript : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::filesystem::exists("/usr/bin/qemu-ga") || std::filesystem::exists("/usr/sbin/qemu-ga"))
      GTEST_SKIP() << "this host has qemu-ga: the install branch cannot be exercised";
    const auto doc = YAML::Load(render_user_data(hand_plan().guest));
    std::string script = "#!/bin/sh\n";
    for (const auto& line : doc["runcmd"]) script += line.as<std::string>() + "\n";
    write_file(dir_.path() / "runcmd", script);
    std::filesystem::create_directory(dir_.path() / "bin");
    const auto timeout = run("command -v timeout").out;
    ASSERT_FALSE(timeout.empty());
    std::filesystem::create_symlink(timeout.substr(0, timeout.size() - 1),
                                    dir_.path() / "bin" / "timeout");
  }
  void stub(const std::string& name, int status) {
    const auto path = dir_.path() / "bin" / name;
    write_file(path, "#!/bin/sh\necho \"" + name + " $*\" >>" +
                         sh_quote((dir_.path() / "log").string()) + "\nexit " +
                         std::to_string(status) + "\n");
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  }
  test::RunResult run_script() {
    return run("PATH=" + sh_quote((dir_.path() / "bin").string()) + " /bin/sh " +
               sh_quote((dir_.path() / "runcmd").string()) + " >/dev/null 2>&1");
  }
  std::string log() {
    return std::filesystem::exists(dir_.path() / "log") ? test::read_file(dir_.path() / "log") : "";
  }
  TempDir dir_;
};

TEST_F(GuestAgentScript, OfflineInstallFailsWithoutFailingTheBoot) {
  stub("apt-get", 100);
  stub("systemctl", 1);
  EXPECT_EQ(run_script().status, 0);
  EXPECT_EQ(log(),
            "apt-get install -y qemu-guest-agent\n"
            "apt-get update\n"
            "systemctl enable --now qemu-guest-agent\n"
            "systemctl start qemu-guest-agent\n");
}

TEST_F(GuestAgentScript, InstallsWithTheListsTheImageHasFirst) {
  stub("apt-get", 0);
  stub("systemctl", 0);
  EXPECT_EQ(run_script().status, 0);
  EXPECT_EQ(log(),
            "apt-get install -y qemu-guest-agent\nsystemctl enable --now qemu-guest-agent\n");
}

TEST_F(GuestAgentScript, InstallsNothingWhenTheImageHasTheAgent) {
  stub("qemu-ga", 0);
  stub("apt-get", 0);
  stub("dnf", 0);
  stub("systemctl", 0);
  EXPECT_EQ(run_script().status, 0);
  EXPECT_EQ(log(), "systemctl enable --now qemu-guest-agent\n");
}

TEST_F(GuestAgentScript, UsesWhicheverPackageManagerThereIs) {
  for (const std::string tool : {"dnf", "yum", "zypper", "apk", "pacman"}) {
    stub(tool, 1);
    EXPECT_EQ(run_script().status, 0);
    EXPECT_THAT(log(), StartsWith(tool + " ")) << tool;
    std::filesystem::remove(dir_.path() / "bin" / tool);
    std::filesystem::remove(dir_.path() / "log");
  }
}

TEST_F(GuestAgentScript, NoPackageManagerNoInitSystemStillBoots) {
  EXPECT_EQ(run_script().status, 0);
  EXPECT_EQ(log(), "");
  stub("rc-service", 1);
  stub("rc-update", 1);
  EXPECT_EQ(run_script().status, 0);
  EXPECT_EQ(log(), "rc-update add qemu-guest-agent default\nrc-service qemu-guest-agent start\n");
}

// --- the user's #cloud-config, merged ----------------------------------------------------------

const char* kTheirCloudConfig = R"(#cloud-config
hostname: theirs
ssh_pwauth: true
timezone:
runcmd:
  - echo theirs
  - [touch, /tmp/x]
users:
  - default
  - name: bob
    groups: [wheel]
write_files:
  - path: /etc/theirs
    content: hi
package_upgrade: yes
mode: 0755
hex: 0x1F
big: 1_000
sexagesimal: 1:30
day: 2024-01-01
stamp: 2001-12-14t21:59:43.10-05:00
infinity: .inf
nothing: ~
quoted: 'yes'
tagged: !!str 0755
float: !!float 1
binary: !!binary aGVsbG8=
on: true
2: two
flow: {a: [1, 2], b: {c: d}}
anchored: &anchor {x: 1, y: [a, b]}
aliased: *anchor
derived:
  <<: *anchor
  z: 3
unicode: "h\u00e9llo \U0001F680"
multiline: |
  line one
    line two
folded: >
  folded
  text
)";

TEST(Merge, BothTakeEffectAsPyYamlReadsThem) {
  auto p = hand_plan();
  p.guest.user_cloud_init = kTheirCloudConfig;
  const auto text = render_user_data(p.guest);
  ASSERT_THAT(text, StartsWith("#cloud-config\n"));
  const auto merged = pyyaml_load(text);
  const auto theirs = pyyaml_load(std::string(kTheirCloudConfig));
  auto plain = hand_plan();
  const auto ours = pyyaml_load(render_user_data(plain.guest));

  // Scalars: theirs win; a null of theirs erases nothing.
  EXPECT_EQ(at(merged, "hostname"), Json("theirs"));
  EXPECT_EQ(at(merged, "ssh_pwauth"), Json(true));
  EXPECT_EQ(at(merged, "timezone"), Json("Europe/Berlin"));
  EXPECT_EQ(at(merged, "manage_etc_hosts"), Json(true));
  // Lists: ours first.
  Json runcmd = at(ours, "runcmd");
  for (const auto& item : at(theirs, "runcmd")) runcmd.push_back(item);
  EXPECT_EQ(at(merged, "runcmd"), runcmd);
  EXPECT_EQ(at(merged, "write_files"), at(theirs, "write_files"));
  EXPECT_EQ(at(merged, "bootcmd"), at(ours, "bootcmd"));
  // users: ours first, then theirs.
  Json users = at(ours, "users");
  for (const auto& item : at(theirs, "users")) users.push_back(item);
  EXPECT_EQ(at(merged, "users"), users);
  // Every other key of theirs reads exactly as in their own text: types, tags, aliases, the
  // merge key, non-string keys.
  const std::vector<std::string> ours_keys = {"hostname", "ssh_pwauth", "timezone",
                                              "runcmd",   "users",      "write_files"};
  std::size_t checked = 0;
  for (const auto& entry : theirs.at("map")) {
    if (entry[0].is_string() && std::find(ours_keys.begin(), ours_keys.end(),
                                          entry[0].get<std::string>()) != ours_keys.end())
      continue;
    bool found = false;
    for (const auto& m : merged.at("map"))
      if (m[0] == entry[0]) {
        found = true;
        EXPECT_EQ(m[1], entry[1]) << "key " << entry[0].dump();
      }
    EXPECT_TRUE(found) << "key " << entry[0].dump() << " is lost";
    ++checked;
  }
  EXPECT_EQ(checked, 22u);
  // Spot checks of what that comparison covers.
  EXPECT_EQ(at(merged, "mode"), Json(493)) << "0755 is octal in YAML 1.1";
  EXPECT_EQ(at(merged, "sexagesimal"), Json(90));
  EXPECT_EQ(at(merged, "day"), Json({{"date", "2024-01-01"}}));
  EXPECT_EQ(at(merged, "quoted"), Json("yes"));
  EXPECT_EQ(at(merged, "tagged"), Json("0755"));
  EXPECT_EQ(at(merged, "binary"), Json({{"bytes", "68656c6c6f"}}));
  EXPECT_EQ(at(merged, "package_upgrade"), Json(true));
}

TEST(Merge, UsersInEveryFormCloudInitAccepts) {
  const auto users_after = [](const std::string& theirs) {
    auto p = hand_plan();
    p.guest.user_cloud_init = "#cloud-config\n" + theirs;
    return at(pyyaml_load(render_user_data(p.guest)), "users");
  };
  const auto ours = at(pyyaml_load(render_user_data(hand_plan().guest)), "users")[0];
  EXPECT_EQ(users_after("users: default\n"), Json({ours, "default"}));
  EXPECT_EQ(users_after("users: [default, {name: bob}]\n"),
            Json({ours, "default", pyyaml_load(std::string("name: bob\n"))}));
  EXPECT_EQ(users_after("users:\n"), Json({ours}));
  // The mapping form: a mapping value is that user's config, true a default user, false none.
  const auto mapped = users_after("users: {bob: {shell: /bin/zsh}, carol: true, dave: false}\n");
  ASSERT_EQ(mapped.size(), 3u);
  EXPECT_EQ(mapped[0], ours);
  EXPECT_EQ(mapped[1], pyyaml_load(std::string("name: bob\nshell: /bin/zsh\n")));
  EXPECT_EQ(mapped[2], Json("carol"));
  // Their entry for our user comes after ours: cloud-init keeps the first one's settings.
  const auto same = users_after("users: [{name: alice, shell: /bin/sh}]\n");
  ASSERT_EQ(same.size(), 2u);
  EXPECT_EQ(same[0], ours);
}

TEST(Merge, OfDuplicateKeysTheLastWinsAsInPyYaml) {
  auto p = hand_plan();
  p.guest.user_cloud_init = "#cloud-config\nruncmd: [first]\nruncmd: [second]\n";
  const auto runcmd = at(pyyaml_load(render_user_data(p.guest)), "runcmd");
  ASSERT_EQ(runcmd.size(), 3u);
  EXPECT_EQ(runcmd[2], Json("second"));
}

TEST(Merge, IsRecognisedAsCloudInitDoes) {
  for (const std::string text :
       {"  #Cloud-Config\nruncmd: [x]\n", "\n#CLOUD-CONFIG\nruncmd: [x]\n"}) {
    auto p = hand_plan();
    p.guest.user_cloud_init = text;
    const auto out = render_user_data(p.guest);
    EXPECT_THAT(out, StartsWith("#cloud-config\n")) << text;
    EXPECT_EQ(at(pyyaml_load(out), "runcmd").back(), Json("x"));
  }
}

TEST(Merge, AnEmptyCloudConfigChangesNothing) {
  auto p = hand_plan();
  p.guest.user_cloud_init = "#cloud-config\n";
  EXPECT_EQ(render_user_data(p.guest), render_user_data(hand_plan().guest));
  p.guest.user_cloud_init = "";
  EXPECT_EQ(render_user_data(p.guest), render_user_data(hand_plan().guest));
  p.guest.user_cloud_init = " \n";
  EXPECT_EQ(render_user_data(p.guest), render_user_data(hand_plan().guest));
}

TEST(Merge, RejectsWhatCannotBeMerged) {
  auto p = hand_plan();
  for (const std::string bad :
       {"#cloud-config\n- a list\n", "#cloud-config\njust text\n", "#cloud-config\na: [unclosed\n",
        "#cloud-config\na: 1\n---\nb: 2\n"}) {
    p.guest.user_cloud_init = bad;
    EXPECT_THROW(render_user_data(p.guest), std::invalid_argument) << bad;
  }
  // An alias bomb stops at the node limit.
  std::string bomb = "#cloud-config\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 8; ++i) {
    bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) bomb += (k ? ", *a" : "*a") + std::to_string(i - 1);
    bomb += "]\n";
  }
  p.guest.user_cloud_init = bomb;
  EXPECT_THROW(render_user_data(p.guest), std::invalid_argument);
}

TEST(MergeTree, MappingsRecurseSequencesConcatenateScalarsAreTheirs) {
  using detail::Yaml;
  Yaml ours = Yaml::map();
  ours.add("a", Yaml::map().add("x", Yaml::str("1")).add("y", Yaml::seq({Yaml::str("o")})))
      .add("s", Yaml::str("ours"))
      .add("l", Yaml::seq({Yaml::str("o")}));
  Yaml theirs = Yaml::map();
  theirs.add("a", Yaml::map().add("y", Yaml::seq({Yaml::str("t")})).add("z", Yaml::str("3")))
      .add("s", Yaml::str("theirs"))
      .add("l", Yaml::str("scalar now"))
      .add("new", Yaml::str("n"));
  const auto m = detail::merge(ours, theirs);
  const auto doc = YAML::Load(detail::emit(m));
  EXPECT_EQ(doc["a"]["x"].as<std::string>(), "1");
  EXPECT_EQ(strings(doc["a"]["y"]), (std::vector<std::string>{"o", "t"}));
  EXPECT_EQ(doc["a"]["z"].as<std::string>(), "3");
  EXPECT_EQ(doc["s"].as<std::string>(), "theirs");
  EXPECT_EQ(doc["l"].as<std::string>(), "scalar now");
  EXPECT_EQ(doc["new"].as<std::string>(), "n");
  // A tagged collection is a value of its own: theirs win.
  Yaml tagged = Yaml::map();
  Yaml set = Yaml::map().add("k", Yaml::null());
  set.tag = "tag:yaml.org,2002:set";
  tagged.add("a", set);
  const auto t = detail::merge(ours, tagged);
  EXPECT_EQ(t.find("a")->tag, "tag:yaml.org,2002:set");
  EXPECT_EQ(t.find("a")->entries.size(), 1u);
}

// --- MIME user-data ----------------------------------------------------------------------------

std::string ours_alone() {
  return render_user_data(hand_plan().guest);
}

TEST(Mime, ScriptBecomesASecondPart) {
  auto p = hand_plan();
  const std::string script = "#!/bin/sh\necho \"TEST: hello\" > /dev/console\n";
  p.guest.user_cloud_init = script;
  const auto text = render_user_data(p.guest);
  EXPECT_THAT(text, StartsWith("Content-Type: multipart/mixed; boundary=\""));
  const auto mime = test::mime_parts(text);
  EXPECT_EQ(mime["top"], "multipart/mixed");
  ASSERT_EQ(mime["parts"].size(), 2u);
  EXPECT_EQ(mime["parts"][0]["type"], "text/cloud-config");
  EXPECT_EQ(mime["parts"][0]["body"], ours_alone());
  EXPECT_EQ(mime["parts"][1]["type"], "text/x-shellscript");
  EXPECT_EQ(mime["parts"][1]["body"], script);
}

TEST(Mime, PartsKeepTheirExactBytes) {
  for (const std::string& script :
       {std::string("#!/bin/sh\necho no final newline"), std::string("#!/bin/sh\n\n\n"),
        std::string("#!/bin/bash\necho 'h\xc3\xa9llo \xf0\x9f\x9a\x80'\n"),
        std::string("#!/bin/sh\r\necho crlf\r\n"), std::string("#!/bin/sh\n--\n--x--\n"),
        "#!/bin/sh\n" + std::string(2000, 'x') + "\n"}) {
    auto p = hand_plan();
    p.guest.user_cloud_init = script;
    const auto text = render_user_data(p.guest);
    const auto mime = test::mime_parts(text);
    ASSERT_EQ(mime["parts"].size(), 2u);
    EXPECT_EQ(mime["parts"][1]["body"], script);
    EXPECT_EQ(mime["parts"][1]["type"], "text/x-shellscript");
  }
}

TEST(Mime, NonAsciiIsBase64Encoded) {
  auto p = hand_plan();
  p.guest.user_cloud_init = "#!/bin/sh\necho h\xc3\xa9llo\n";
  const auto text = render_user_data(p.guest);
  EXPECT_THAT(text, HasSubstr("Content-Transfer-Encoding: base64"));
  for (unsigned char c : text) EXPECT_LT(c, 0x80);
}

TEST(Mime, TheirMimeIsNestedWithItsOwnTypes) {
  const std::string theirs =
      "Content-Type: multipart/mixed; boundary=\"XYZ\"\n"
      "MIME-Version: 1.0\n\n"
      "--XYZ\n"
      "Content-Type: text/cloud-config\n\n"
      "#cloud-config\nruncmd: [echo theirs]\n"
      "--XYZ\n"
      "Content-Type: text/x-shellscript\n\n"
      "#!/bin/sh\necho script\n"
      "--XYZ--\n";
  auto p = hand_plan();
  p.guest.user_cloud_init = theirs;
  const auto mime = test::mime_parts(render_user_data(p.guest));
  ASSERT_EQ(mime["parts"].size(), 3u);
  EXPECT_EQ(mime["parts"][0]["body"], ours_alone());
  EXPECT_EQ(mime["parts"][1]["type"], "text/cloud-config");
  EXPECT_EQ(mime["parts"][1]["body"], "#cloud-config\nruncmd: [echo theirs]");
  EXPECT_EQ(mime["parts"][2]["type"], "text/x-shellscript");
  EXPECT_EQ(mime["parts"][2]["body"], "#!/bin/sh\necho script");
}

TEST(Mime, SinglePartMimeKeepsItsContentType) {
  const std::string theirs =
      "MIME-Version: 1.0\nContent-Type: text/cloud-boothook\n\n#cloud-boothook\necho hi\n";
  auto p = hand_plan();
  p.guest.user_cloud_init = theirs;
  const auto mime = test::mime_parts(render_user_data(p.guest));
  ASSERT_EQ(mime["parts"].size(), 2u);
  EXPECT_EQ(mime["parts"][1]["type"], "text/cloud-boothook");
  EXPECT_EQ(mime["parts"][1]["body"], "#cloud-boothook\necho hi\n");
}

TEST(Mime, OtherContentIsTextPlainForCloudInitToType) {
  for (const std::string theirs : {"#cloud-boothook\necho hi\n", "#include\nhttps://x/y\n",
                                   "#cloud-config-archive\n- type: text/x-shellscript\n",
                                   "## template: jinja\n#cloud-config\n", "just words\n"}) {
    auto p = hand_plan();
    p.guest.user_cloud_init = theirs;
    const auto mime = test::mime_parts(render_user_data(p.guest));
    ASSERT_EQ(mime["parts"].size(), 2u) << theirs;
    EXPECT_EQ(mime["parts"][1]["type"], "text/plain");
    EXPECT_EQ(mime["parts"][1]["body"], theirs);
  }
}

TEST(Mime, TheBoundaryOccursInNoPart) {
  auto p = hand_plan();
  p.guest.user_cloud_init = "#!/bin/sh\necho --bowline-\n";
  const auto text = render_user_data(p.guest);
  const auto start = text.find("boundary=\"") + 10;
  const auto boundary = text.substr(start, text.find('"', start) - start);
  EXPECT_THAT(boundary, StartsWith("bowline-"));
  // Exactly the delimiters: two opening ones and the closing one.
  std::size_t count = 0;
  for (auto at = text.find(boundary); at != std::string::npos; at = text.find(boundary, at + 1))
    ++count;
  EXPECT_EQ(count, 4u);  // the header parameter, two delimiters, the close delimiter
}

TEST(Mime, PickBoundarySkipsCandidatesFoundInAPart) {
  const std::string a = "text with b0 and b1 inside", b = "and b2 here";
  const auto chosen =
      detail::pick_boundary({a, b}, [](unsigned attempt) { return "b" + std::to_string(attempt); });
  EXPECT_EQ(chosen, "b3");
}

TEST(Mime, Base64MatchesTheReference) {
  EXPECT_EQ(detail::base64(""), "");
  EXPECT_EQ(detail::base64("f"), "Zg==\n");
  EXPECT_EQ(detail::base64("fo"), "Zm8=\n");
  EXPECT_EQ(detail::base64("foo"), "Zm9v\n");
  EXPECT_EQ(detail::base64(std::string(57, 'a')).size(), 77u);  // one full line of 76
  std::string line;
  for (int i = 0; i < 19; ++i) line += "YWFh";
  EXPECT_EQ(detail::base64(std::string(58, 'a')), line + "\nYQ==\n");
}

// --- meta-data and keys-only user-data ---------------------------------------------------------

TEST(MetaData, HoldsInstanceIdAndHostname) {
  EXPECT_EQ(render_meta_data(hand_plan().guest),
            "instance-id: iid-0123456789abcdef\nlocal-hostname: dev\n");
}

TEST(KeysOnly, IsCozystacksShape) {
  const std::string key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnk a@b";
  EXPECT_EQ(render_keys_only_user_data({key, "ssh-rsa AAAB x"}),
            "#cloud-config\nssh_authorized_keys:\n  - \"" + key + "\"\n  - \"ssh-rsa AAAB x\"\n");
  const auto hostile = std::string("ssh-ed25519 AAAA \"q\" \n#x: y");
  const auto doc = YAML::Load(render_keys_only_user_data({hostile}));
  EXPECT_EQ(doc["ssh_authorized_keys"][0].as<std::string>(), hostile);
  EXPECT_EQ(at(pyyaml_load(render_keys_only_user_data({hostile})), "ssh_authorized_keys")[0],
            Json(hostile));
}

// --- network-config ----------------------------------------------------------------------------

TEST(NetworkConfig, StaticAddressOnThePrimaryNicByMac) {
  const auto text = render_network_config(hand_plan().guest);
  ASSERT_TRUE(text);
  const auto doc = pyyaml_load(*text);
  EXPECT_EQ(at(doc, "version"), Json(2));
  const auto& ethernets = at(doc, "ethernets");
  ASSERT_EQ(ethernets["map"].size(), 1u);
  const auto& eth0 = at(ethernets, "eth0");
  // An all-digit MAC is a sexagesimal integer to YAML 1.1 unless quoted.
  EXPECT_EQ(at(at(eth0, "match"), "macaddress"), Json("52:54:00:12:34:56"));
  EXPECT_EQ(at(eth0, "set-name"), Json("eth0"));
  EXPECT_EQ(at(eth0, "addresses"), Json({"198.51.100.10/24"}));
  // gateway4: the form Debian 12's cloud-init (ifupdown) turns into a default route; a routes
  // entry needs net-tools there, and "to: default" fails its network stage.
  EXPECT_EQ(at(eth0, "gateway4"), Json("198.51.100.1"));
  EXPECT_FALSE(has(eth0, "routes"));
  EXPECT_EQ(at(at(eth0, "nameservers"), "addresses"), Json({"1.1.1.1", "1.0.0.1"}));
  EXPECT_FALSE(has(eth0, "dhcp4"));
}

TEST(NetworkConfig, ExtraNicsGetOptionalDhcpByMac) {
  auto p = hand_plan();
  p.guest.extra_macs = {"52:54:00:AA:00:01", "52:54:00:00:00:02"};
  const auto doc = pyyaml_load(*render_network_config(p.guest));
  const auto& ethernets = at(doc, "ethernets");
  ASSERT_EQ(ethernets["map"].size(), 3u);
  EXPECT_EQ(at(ethernets, "eth0"),
            at(at(pyyaml_load(*render_network_config(hand_plan().guest)), "ethernets"), "eth0"))
      << "the primary is unchanged";
  const auto& eth1 = at(ethernets, "eth1");
  EXPECT_EQ(at(at(eth1, "match"), "macaddress"), Json("52:54:00:aa:00:01"));
  EXPECT_EQ(at(eth1, "set-name"), Json("eth1"));
  EXPECT_EQ(at(eth1, "dhcp4"), Json(true));
  EXPECT_EQ(at(eth1, "optional"), Json(true));
  EXPECT_EQ(at(at(at(ethernets, "eth2"), "match"), "macaddress"), Json("52:54:00:00:00:02"));
}

TEST(NetworkConfig, NoResolversNoNameservers) {
  auto p = hand_plan();
  p.guest.resolvers.clear();
  const auto doc = pyyaml_load(*render_network_config(p.guest));
  EXPECT_FALSE(has(at(at(doc, "ethernets"), "eth0"), "nameservers"));
}

TEST(NetworkConfig, DhcpEverywhereMatchesEnAndEthKeepingSearchDomains) {
  auto p = hand_plan();
  p.guest.network.reset();
  p.guest.address.reset();
  p.guest.gateway.reset();
  p.guest.resolvers.clear();
  p.guest.dhcp_everywhere = true;
  p.guest.extra_macs.push_back("52:54:00:aa:00:01");
  const auto doc = pyyaml_load(*render_network_config(p.guest));
  EXPECT_EQ(at(doc, "version"), Json(2));
  const auto& ethernets = at(doc, "ethernets");
  ASSERT_EQ(ethernets["map"].size(), 2u) << "the globs cover the extra NICs";
  std::vector<std::string> globs;
  for (const auto& entry : ethernets["map"]) {
    const auto& e = entry[1];
    globs.push_back(at(at(e, "match"), "name").get<std::string>());
    EXPECT_EQ(at(e, "dhcp4"), Json(true));
    EXPECT_EQ(at(at(e, "dhcp4-overrides"), "use-domains"), Json(true));
    EXPECT_FALSE(has(e, "set-name"));
  }
  EXPECT_EQ(globs, (std::vector<std::string>{"en*", "eth*"}));
}

TEST(NetworkConfig, AStaticAddressWinsOverDhcpEverywhere) {
  auto p = hand_plan();
  p.guest.dhcp_everywhere = true;
  EXPECT_EQ(render_network_config(p.guest), render_network_config(hand_plan().guest));
}

TEST(NetworkConfig, NothingToSayNoFile) {
  auto p = hand_plan();
  p.guest.network.reset();
  p.guest.address.reset();
  p.guest.gateway.reset();
  EXPECT_EQ(render_network_config(p.guest), std::nullopt);
  EXPECT_EQ(render_seed(p.guest).network_config, std::nullopt);
}

TEST(NetworkConfig, RejectsAnIncompleteStaticPlan) {
  auto p = hand_plan();
  p.guest.network.reset();
  EXPECT_THROW(render_network_config(p.guest), std::invalid_argument);
  p = hand_plan();
  p.guest.primary_mac.clear();
  EXPECT_THROW(render_network_config(p.guest), std::invalid_argument);
}

// --- determinism and the ISO -------------------------------------------------------------------

TEST(Seed, IsByteIdenticalForTheSamePlan) {
  auto a = hand_plan();
  a.guest.user_cloud_init = "#!/bin/sh\necho hi\n";
  auto b = hand_plan();
  b.guest.user_cloud_init = "#!/bin/sh\necho hi\n";
  const auto da = render_seed(a.guest), db = render_seed(b.guest);
  EXPECT_EQ(da.user_data, db.user_data);
  EXPECT_EQ(da.meta_data, db.meta_data);
  EXPECT_EQ(da.network_config, db.network_config);
  EXPECT_EQ(seed_iso(a.guest), seed_iso(b.guest));

  const char* yaml =
      "image: debian-12\nnetwork: {cidr: 198.51.100.0/24, bridge: br0}\n"
      "environment: [A=1]\ncloudInit: \"#cloud-config\\nruncmd: [x]\\n\"\n";
  const auto p1 = test::template_plan(yaml, true), p2 = test::template_plan(yaml, true);
  EXPECT_EQ(seed_iso(p1.guest), seed_iso(p2.guest));
  EXPECT_EQ(render_seed(p1.guest).user_data, render_seed(p2.guest).user_data);
}

TEST(Seed, DocumentsChangeWithThePlan) {
  auto p = hand_plan();
  p.guest.hostname = "other";
  EXPECT_NE(seed_iso(p.guest), seed_iso(hand_plan().guest));
}

std::string isoinfo(const std::string& args) {
  const auto r = run("isoinfo " + args + " 2>/dev/null");
  EXPECT_EQ(r.status, 0) << "isoinfo " << args;
  return r.out;
}

TEST(Seed, IsoHoldsTheDocumentsUnderTheirNames) {
  TempDir dir;
  for (bool with_network : {true, false}) {
    auto p = hand_plan();
    if (!with_network) {
      p.guest.address.reset();
      p.guest.network.reset();
    }
    const auto docs = render_seed(p.guest);
    const auto image = (dir.path() / "seed.iso").string();
    write_file(image, seed_iso(p.guest));
    EXPECT_THAT(isoinfo("-d -i " + sh_quote(image)), HasSubstr("Volume id: cidata"));
    const auto listing = isoinfo("-J -f -i " + sh_quote(image));
    EXPECT_EQ(listing, with_network ? "/meta-data\n/network-config\n/user-data\n"
                                    : "/meta-data\n/user-data\n");
    EXPECT_EQ(isoinfo("-J -i " + sh_quote(image) + " -x /user-data"), docs.user_data);
    EXPECT_EQ(isoinfo("-J -i " + sh_quote(image) + " -x /meta-data"), docs.meta_data);
    if (with_network) {
      EXPECT_EQ(isoinfo("-J -i " + sh_quote(image) + " -x /network-config"), *docs.network_config);
    }
  }
}

// Values pam_env and systemd read literally or with their own escapes: each form says the same.
TEST(EnvironmentFiles, EachReaderGetsTheValueAsWritten) {
  const std::vector<spec::EnvVar> env{
      {"QUOTED", "say \"hi\" $HOME"}, {"LINES", "one\ntwo"}, {"SLASH", "C:\\"}, {"TAB", "a\tb"}};
  EXPECT_EQ(environment_names(env), "QUOTED LINES SLASH TAB");
  // pam_env strips one pair of quotes and cannot carry a newline or a trailing backslash.
  EXPECT_EQ(pam_environment(env), "QUOTED=\"say \"hi\" $HOME\"\nTAB=\"a\tb\"\n");
  EXPECT_EQ(systemd_dropin(env),
            "# The space's environment for every service, written by bowline.\n[Manager]\n"
            "DefaultEnvironment=\"QUOTED=say \\\"hi\\\" $HOME\"\n"
            "DefaultEnvironment=\"LINES=one\\ntwo\"\n"
            "DefaultEnvironment=\"SLASH=C:\\\\\"\n"
            "DefaultEnvironment=\"TAB=a\\x09b\"\n");
  EXPECT_THROW(pam_environment({{"1BAD", "x"}}), std::invalid_argument);
  EXPECT_THROW(systemd_dropin({{"OK", std::string("a\0b", 3)}}), std::invalid_argument);
}

}  // namespace
}  // namespace bowline::guest
