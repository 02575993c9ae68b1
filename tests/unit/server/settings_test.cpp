// Server settings: flag > environment > config file > default, relative paths against the
// start directory, derived image paths, and errors that name the setting and its source.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "../common/scratch_files.hpp"
#include "server/settings.hpp"

namespace bowline::server::testing {
namespace {

namespace fs = std::filesystem;
using test_support::TempDir;

class SettingsTest : public ::testing::Test {
 protected:
  fs::path write_config(const std::string& text, const std::string& name = "bowline.yaml") {
    const auto file = dir_.path() / name;
    std::ofstream(file) << text;
    return file;
  }
  SettingsInput input() {
    SettingsInput in;
    in.cwd = "/start/here";
    return in;
  }
  TempDir dir_;
};

TEST_F(SettingsTest, DefaultsWithoutAnything) {
  const auto s = resolve_settings(input());
  EXPECT_EQ(s.listen, "127.0.0.1:7470");
  EXPECT_EQ(s.data_dir, "/var/lib/bowline");
  EXPECT_EQ(s.libvirt_uri, "qemu:///system");
  EXPECT_EQ(s.domain_type, engine::DomainTypeSetting::Auto);
  EXPECT_EQ(s.stop_timeout, std::chrono::seconds(60));
  EXPECT_EQ(s.images_path, "/var/lib/libvirt/images/bowline");
  EXPECT_EQ(s.cloud_image_path, "/var/lib/libvirt/images/bowline/cloud-images");
  EXPECT_EQ(s.base_image_path, "/var/lib/libvirt/images/bowline/base");
  EXPECT_EQ(s.resolvers, (std::vector<std::string>{"1.1.1.1", "1.0.0.1"}));
  EXPECT_FALSE(s.config_file);
  for (const auto& k : setting_table())
    EXPECT_EQ(s.sources.at(k.key), SettingSource::Default) << k.key;
}

TEST_F(SettingsTest, FlagBeatsEnvBeatsFileBeatsDefault) {
  const auto file = write_config(
      "server:\n"
      "  listen: 127.0.0.1:1001\n"
      "  data_dir: /file/data\n"
      "  libvirt_uri: test:///file\n"
      "  domain_type: qemu\n"
      "  stop_timeout: 2m\n"
      "  kvm:\n"
      "    images_path: /file/images\n"
      "    resolvers: [9.9.9.9, 149.112.112.112]\n");
  auto in = input();
  in.config_file = file;
  in.env = {{"BOWLINE_LISTEN", "127.0.0.1:2002"},
            {"BOWLINE_DATA_DIR", "/env/data"},
            {"BOWLINE_LIBVIRT_URI", "test:///env"},
            {"BOWLINE_KVM_CLOUD_IMAGE_PATH", "/env/cloud"},
            {"HOME", "/root"}};
  in.flags = {{"server.listen", "127.0.0.1:3003"}, {"server.kvm.base_image_path", "/flag/base"}};
  const auto s = resolve_settings(in);

  EXPECT_EQ(s.listen, "127.0.0.1:3003");  // flag over env over file
  EXPECT_EQ(s.sources.at("server.listen"), SettingSource::Flag);
  EXPECT_EQ(s.data_dir, "/env/data");  // env over file
  EXPECT_EQ(s.sources.at("server.data_dir"), SettingSource::Env);
  EXPECT_EQ(s.libvirt_uri, "test:///env");
  EXPECT_EQ(s.domain_type, engine::DomainTypeSetting::Qemu);  // file over default
  EXPECT_EQ(s.sources.at("server.domain_type"), SettingSource::File);
  EXPECT_EQ(s.stop_timeout, std::chrono::seconds(120));
  EXPECT_EQ(s.images_path, "/file/images");
  EXPECT_EQ(s.cloud_image_path, "/env/cloud");
  EXPECT_EQ(s.base_image_path, "/flag/base");
  EXPECT_EQ(s.resolvers, (std::vector<std::string>{"9.9.9.9", "149.112.112.112"}));
  EXPECT_EQ(s.config_file, file);

  const auto text = describe_settings(s);
  EXPECT_NE(text.find("config file: " + file.string() + " (--config)"), std::string::npos) << text;
  auto line_of = [&](const std::string& key) {
    const auto at = text.find(key + " ");
    return text.substr(at, text.find('\n', at) - at);
  };
  EXPECT_NE(line_of("server.listen").find("127.0.0.1:3003"), std::string::npos);
  EXPECT_NE(line_of("server.listen").find("flag (--listen)"), std::string::npos) << text;
  EXPECT_NE(line_of("server.data_dir").find("env (BOWLINE_DATA_DIR)"), std::string::npos) << text;
  EXPECT_NE(line_of("server.domain_type").find("file (" + file.string() + ":5)"), std::string::npos)
      << text;
  EXPECT_NE(line_of("server.stop_timeout").find("120s"), std::string::npos) << text;
  EXPECT_NE(line_of("server.kvm.resolvers").find("9.9.9.9,149.112.112.112"), std::string::npos);
  EXPECT_NE(line_of("server.kvm.base_image_path").find("flag (--base-image-path)"),
            std::string::npos);
}

TEST_F(SettingsTest, EachKeyFollowsThePrecedence) {
  // For every key: the default; then a file value wins; then env over it; then a flag.
  const std::map<std::string, std::vector<std::string>> values{
      {"server.listen", {"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"}},
      {"server.data_dir", {"/f", "/e", "/g"}},
      {"server.libvirt_uri", {"test:///f", "test:///e", "test:///g"}},
      {"server.domain_type", {"qemu", "kvm", "qemu"}},
      {"server.stop_timeout", {"5", "6s", "7"}},
      {"server.reconcile_interval", {"0", "30s", "1m"}},
      {"server.kvm.images_path", {"/f", "/e", "/g"}},
      {"server.kvm.cloud_image_path", {"/f", "/e", "/g"}},
      {"server.kvm.base_image_path", {"/f", "/e", "/g"}},
      {"server.kvm.max_image_size", {"1G", "2GiB", "512M"}},
      {"server.kvm.import_paths", {"/f", "/e", "/g,/h"}},
      {"server.kvm.resolvers", {"8.8.8.8", "8.8.4.4", "::1"}},
      {"server.nodes",
       {"{name: a, uri: 'qemu+ssh://a/system'}", "{name: b, uri: 'qemu+tls://b/system'}",
        "{name: c, uri: 'qemu+ssh://c/system', pool: p}"}},
      {"server.kvm.dedicated_cpus", {"1", "2-3", "4,6"}},
      {"server.external_ports", {"1000-1999", "2000-2999", "3000-3000"}},
      {"server.external_address", {"198.51.100.9", "any", "198.51.100.10"}},
      {"server.web_root", {"/f", "/e", "/g"}},
      {"server.url", {"https://a.example", "https://b.example:8443", "http://c.example"}},
      {"server.preview.domain", {"p.example", "q.example.org", "r.example"}},
      {"server.preview.cert", {"/f", "/e", "/g"}},
      {"server.preview.key", {"/f", "/e", "/g"}},
      {"server.sso.issuer",
       {"https://a.example", "https://b.example/realms/x", "http://127.0.0.1:9"}},
      {"server.sso.client_id", {"a", "b", "c"}},
      {"server.sso.client_secret_file", {"/f", "/e", "/g"}},
      {"server.sso.ca_file", {"/f", "/e", "/g"}},
      {"server.sso.username_claim", {"a", "b", "c"}},
      {"server.sso.groups_claim", {"a", "b", "c"}},
      {"server.sso.admin_groups", {"a", "b", "c,d"}},
      {"server.sso.group_permissions", {"a=admin", "b=use-ssh", "c=use-ssh+use-ports"}},
      {"server.secure_cookies", {"true", "false", "auto"}},
      {"server.pools.wait", {"suspended", "running", "suspended"}},
      {"server.trusted_proxies", {"10.0.0.1", "10.0.0.0/8", "198.51.100.0/24,10.1.2.3"}},
      {"server.limits.connections", {"100", "200", "300"}},
      {"server.limits.sockets_per_user", {"1", "2", "3"}},
      {"server.limits.streams_per_user", {"4", "5", "6"}},
      {"server.limits.slow_requests_per_user", {"1", "2", "8"}},
      {"server.limits.connections_per_address", {"10", "20", "4096"}},
      {"server.retention.events", {"1d", "48h", "7d"}},
      {"server.retention.operations", {"30d", "2d", "3d"}},
      {"server.audit.retention", {"30d", "2d", "3d"}},
      {"server.audit.file", {"/f.jsonl", "/e.jsonl", "/g.jsonl"}},
      {"server.stats.interval", {"5s", "0", "20s"}},
      {"server.stats.history", {"30m", "2h", "1d"}},
      {"server.idle.suspend_after", {"30m", "0", "2h"}},
      {"server.idle.cpu_percent", {"5", "10", "1"}},
      {"server.idle.trim_guest_cache", {"true", "false", "true"}},
      {"server.kvm.guest_filter", {"guard", "nwfilter", "auto"}},
      {"server.tls.cert", {"/f", "/e", "/g"}},
      {"server.tls.key", {"/f", "/e", "/g"}},
      {"server.tls.mode", {"off", "self-signed", "auto"}},
      {"server.kubevirt.name", {"c1", "c2", "c3"}},
      {"server.kubevirt.kubeconfig", {"/f", "/e", "/g"}},
      {"server.kubevirt.context", {"a", "b", "c"}},
      {"server.kubevirt.namespace", {"ns-f", "ns-e", "ns-g"}},
      {"server.quota.spaces", {"1", "2", "unlimited"}},
      {"server.quota.cpus", {"4", "unlimited", "8"}},
      {"server.quota.memory", {"8G", "16Gi", "0"}},
      {"server.quota.disk", {"100G", "unlimited", "1T"}},
  };
  for (const auto& key : setting_table()) {
    const auto& v = values.at(key.key);
    std::string k = key.key;
    const auto dot = k.rfind('.');
    const auto leaf = k.substr(dot + 1);
    // server.SECTION.LEAF sits under SECTION: in the file, server.LEAF right under server:.
    const auto section = k.substr(7, dot > 7 ? dot - 7 : 0);
    const auto file = write_config(std::string("server:\n") +
                                   (section.empty() ? "  " : "  " + section + ":\n    ") + leaf +
                                   ": \"" + v[0] + "\"\n");
    auto in = input();
    // A certificate needs its key and the other way round (from the environment, which this
    // key's flag still beats).
    if (k == "server.tls.cert") in.env["BOWLINE_TLS_KEY"] = "/k";
    if (k == "server.tls.key") in.env["BOWLINE_TLS_CERT"] = "/c";
    in.config_file = file;
    EXPECT_EQ(resolve_settings(in).sources.at(k), SettingSource::File) << k;
    in.env[key.env] = v[1];
    EXPECT_EQ(resolve_settings(in).sources.at(k), SettingSource::Env) << k;
    in.flags[k] = v[2];
    const auto s = resolve_settings(in);
    EXPECT_EQ(s.sources.at(k), SettingSource::Flag) << k;
    const auto text = describe_settings(s);
    EXPECT_NE(text.find(std::string("flag (") + key.flag + ")"), std::string::npos) << text;
  }
}

TEST_F(SettingsTest, ASuspendDropsTheGuestsPageCacheUnlessToldNotTo) {
  auto in = input();
  EXPECT_TRUE(resolve_settings(in).idle_trim_guest_cache);
  in.flags = {{"server.idle.trim_guest_cache", "false"}};
  EXPECT_FALSE(resolve_settings(in).idle_trim_guest_cache);
  in.flags = {{"server.idle.trim_guest_cache", "sometimes"}};
  try {
    resolve_settings(in);
    FAIL() << "accepted sometimes";
  } catch (const SettingsError& e) {
    EXPECT_NE(std::string(e.what()).find("server.idle.trim_guest_cache"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("neither true nor false"), std::string::npos);
  }
}

TEST_F(SettingsTest, IdleSuspendIsOffByDefaultAndTakesADurationAndAPercent) {
  auto in = input();
  auto s = resolve_settings(in);
  EXPECT_EQ(s.idle_suspend_after, std::chrono::seconds(0));
  EXPECT_EQ(s.idle_cpu_percent, 5u);
  in.flags = {{"server.idle.suspend_after", "45m"}, {"server.idle.cpu_percent", "12"}};
  s = resolve_settings(in);
  EXPECT_EQ(s.idle_suspend_after, std::chrono::minutes(45));
  EXPECT_EQ(s.idle_cpu_percent, 12u);
  in.flags = {{"server.idle.cpu_percent", "101"}};
  EXPECT_THROW(resolve_settings(in), SettingsError);
  in.flags = {{"server.idle.suspend_after", "soon"}};
  EXPECT_THROW(resolve_settings(in), SettingsError);
}

TEST_F(SettingsTest, stats_interval_and_history) {
  auto in = input();
  auto s = resolve_settings(in);
  EXPECT_EQ(s.stats_interval, std::chrono::seconds(10));
  EXPECT_EQ(s.stats_history, std::chrono::hours(1));
  in.flags = {{"server.stats.interval", "0"}};
  EXPECT_EQ(resolve_settings(in).stats_interval, std::chrono::seconds(0));  // off
  in.flags = {{"server.stats.history", "2d"}};
  EXPECT_THROW(resolve_settings(in), SettingsError);  // a ring of 17,280 points a space
  in.flags = {{"server.stats.interval", "2m"}, {"server.stats.history", "1m"}};
  try {
    resolve_settings(in);
    ADD_FAILURE() << "a history shorter than the interval was taken";
  } catch (const SettingsError& e) {
    EXPECT_NE(std::string(e.what()).find("shorter than server.stats.interval"), std::string::npos)
        << e.what();
  }
}

TEST_F(SettingsTest, RelativePathsResolveAgainstTheStartDirectory) {
  const auto file = write_config(
      "server:\n"
      "  data_dir: data\n"
      "  kvm:\n"
      "    images_path: ./img\n");
  auto in = input();
  in.config_file = file;
  auto s = resolve_settings(in);
  EXPECT_EQ(s.data_dir, "/start/here/data");  // not relative to the file's directory
  EXPECT_EQ(s.images_path, "/start/here/img");
  EXPECT_EQ(s.cloud_image_path, "/start/here/img/cloud-images");  // derived from it
  EXPECT_EQ(s.base_image_path, "/start/here/img/base");

  in.env = {{"BOWLINE_KVM_BASE_IMAGE_PATH", "../cache"}};
  in.flags = {{"server.kvm.cloud_image_path", "lib/../library"}};
  s = resolve_settings(in);
  EXPECT_EQ(s.base_image_path, "/start/cache");
  EXPECT_EQ(s.cloud_image_path, "/start/here/library");

  // A relative config file is found from the start directory too.
  auto relative = input();
  relative.cwd = dir_.path();
  relative.env = {{"BOWLINE_CONFIG", "bowline.yaml"}};
  s = resolve_settings(relative);
  EXPECT_EQ(s.config_file, file);
  EXPECT_EQ(s.config_file_source, "BOWLINE_CONFIG");
  EXPECT_EQ(s.data_dir, dir_.path() / "data");
  // --config wins over BOWLINE_CONFIG.
  const auto other = write_config("server:\n  data_dir: /other\n", "other.yaml");
  relative.config_file = other;
  EXPECT_EQ(resolve_settings(relative).data_dir, "/other");
}

TEST_F(SettingsTest, ListsAndEmptyEnvironmentVariables) {
  auto in = input();
  in.env = {{"BOWLINE_KVM_RESOLVERS", " 9.9.9.9 , 2620:fe::fe "}, {"BOWLINE_LISTEN", ""}};
  const auto s = resolve_settings(in);
  EXPECT_EQ(s.resolvers, (std::vector<std::string>{"9.9.9.9", "2620:fe::fe"}));
  EXPECT_EQ(s.listen, "127.0.0.1:7470");  // an empty variable counts as unset
  EXPECT_EQ(s.sources.at("server.listen"), SettingSource::Default);
}

TEST_F(SettingsTest, ErrorsNameTheSettingAndItsSource) {
  auto expect_error = [&](SettingsInput in, const std::string& part) {
    try {
      resolve_settings(in);
      ADD_FAILURE() << "no error; expected one containing: " << part;
    } catch (const SettingsError& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  auto in = input();
  in.flags = {{"server.domain_type", "xen"}};
  expect_error(in,
               "server.domain_type (flag --domain-type): \"xen\" is none of auto, kvm and qemu");
  in = input();
  in.env = {{"BOWLINE_STOP_TIMEOUT", "soon"}};
  expect_error(in, "server.stop_timeout (environment variable BOWLINE_STOP_TIMEOUT)");
  in = input();
  in.env = {{"BOWLINE_LISTEN", "localhost"}};
  expect_error(in, "server.listen");
  in = input();
  in.flags = {{"server.kvm.resolvers", "1.1.1.1,dns.example"}};
  expect_error(in, "\"dns.example\" is not an IP address");
  in = input();
  in.config_file = write_config("server:\n  kvm:\n    image_path: /x\n");
  expect_error(in,
               ":3: unknown setting server.kvm.image_path (did you mean server.kvm.images_path?)");
  in.config_file = write_config("server:\n  listen: [1, 2\n");
  expect_error(in, "bowline.yaml:");
  in.config_file = dir_.path() / "missing.yaml";
  expect_error(in, "cannot read the config file");
  in.config_file = write_config("server:\n  data_dir: [a, b]\n");
  expect_error(in, "expected a single value");
  in = input();
  in.flags = {{"server.kubevirt.name", "local"}};
  expect_error(in, "server.kubevirt.name (flag --kubevirt-node): \"local\" is the libvirt node's");
  in.flags = {{"server.kubevirt.name", "My_Cluster"}};
  expect_error(in, "\"My_Cluster\" is not a node name");
  in = input();
  in.env = {{"BOWLINE_KUBEVIRT_NAMESPACE", "Tenant.A"}};
  expect_error(in,
               "server.kubevirt.namespace (environment variable BOWLINE_KUBEVIRT_NAMESPACE): "
               "\"Tenant.A\" is not a namespace name");
}

// The size limit of image downloads.
using security_settings = SettingsTest;

TEST_F(security_settings, MaxImageSizeIs64GiBUnlessSetAsASize) {
  auto s = resolve_settings(input());
  EXPECT_EQ(s.max_image_size, std::uint64_t{64} << 30);
  EXPECT_TRUE(std::regex_search(describe_settings(s),
                                std::regex("\nserver\\.kvm\\.max_image_size +64Gi +default\n")))
      << describe_settings(s);
  for (const auto& [text, bytes] :
       std::vector<std::pair<std::string, std::uint64_t>>{{"512M", 512ull << 20},
                                                          {"8GiB", 8ull << 30},
                                                          {"2t", 2ull << 40},
                                                          {"1048576", 1 << 20}}) {
    auto in = input();
    in.flags = {{"server.kvm.max_image_size", text}};
    EXPECT_EQ(resolve_settings(in).max_image_size, bytes) << text;
  }
  auto in = input();
  in.config_file = write_config("server:\n  kvm:\n    max_image_size: 20G\n");
  s = resolve_settings(in);
  EXPECT_EQ(s.max_image_size, 20ull << 30);
  EXPECT_EQ(s.sources.at("server.kvm.max_image_size"), SettingSource::File);
  in = input();
  in.env = {{"BOWLINE_KVM_MAX_IMAGE_SIZE", "1.5G"}};
  try {
    resolve_settings(in);
    ADD_FAILURE() << "1.5G was accepted";
  } catch (const SettingsError& e) {
    EXPECT_NE(std::string(e.what()).find("server.kvm.max_image_size (environment variable "
                                         "BOWLINE_KVM_MAX_IMAGE_SIZE): \"1.5G\" has a fraction"),
              std::string::npos)
        << e.what();
  }
  in.env = {{"BOWLINE_KVM_MAX_IMAGE_SIZE", "0"}};
  EXPECT_THROW(resolve_settings(in), SettingsError);
}

// Finite unless set otherwise: a user of a shared server holds 10 spaces, 16 vCPUs, 32 GiB of
// memory and 500 GiB of disk at most.
TEST_F(SettingsTest, DefaultQuotasAreFiniteUntilSetOtherwise) {
  constexpr std::int64_t kGiB = 1024LL * 1024 * 1024;
  auto s = resolve_settings(input());
  EXPECT_EQ(s.default_quota, (store::Quota{10, 16, 32 * kGiB, 500 * kGiB}));
  auto in = input();
  in.config_file = write_config(
      "server:\n  quota:\n    spaces: 5\n    cpus: 8\n    memory: 16G\n    disk: unlimited\n");
  in.env["BOWLINE_QUOTA_DISK"] = "200 GiB";
  s = resolve_settings(in);
  EXPECT_EQ(s.default_quota, (store::Quota{5, 8, 16 * kGiB, 200 * kGiB}));
  const auto text = describe_settings(s);
  EXPECT_NE(text.find("server.quota.memory"), std::string::npos) << text;
  EXPECT_NE(text.find("16Gi"), std::string::npos) << text;
  EXPECT_NE(text.find("200Gi"), std::string::npos) << text;

  for (const auto& [key, value] :
       std::map<std::string, std::string>{{"server.quota.spaces", "lots"},
                                          {"server.quota.cpus", "-1"},
                                          {"server.quota.memory", "1.5G"},
                                          {"server.quota.disk", "8X"}}) {
    auto bad = input();
    bad.flags[key] = value;
    try {
      resolve_settings(bad);
      ADD_FAILURE() << key << " " << value << " was taken";
    } catch (const SettingsError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
  auto typo = input();
  typo.config_file = write_config("server:\n  quota:\n    memroy: 8G\n");
  EXPECT_THROW(resolve_settings(typo), SettingsError);
}

// security: guests' ports are published on an address the operator sets aside, never the
// web UI's own (a browser sends the UI's cookies to every port of its host).
class security_external_address_setting : public SettingsTest {};
TEST_F(security_external_address_setting, UnsetByDefaultAndNeverTheUisAddress) {
  EXPECT_EQ(resolve_settings(input()).external_address, "");
  auto in = input();
  in.flags["server.external_address"] = "198.51.100.9";
  EXPECT_EQ(resolve_settings(in).external_address, "198.51.100.9");
  in.flags["server.external_address"] = "any";
  EXPECT_EQ(resolve_settings(in).external_address, "any");
  for (const auto& value : {"ui.example.com", "127.0.0.1", "0.0.0.0", "198.51.100.9; flush"}) {
    auto bad = input();
    bad.flags["server.external_address"] = value;
    try {
      resolve_settings(bad);
      ADD_FAILURE() << value << " was taken";
    } catch (const SettingsError& e) {
      EXPECT_NE(std::string(e.what()).find("server.external_address"), std::string::npos)
          << e.what();
    }
  }
  auto same = input();
  same.flags["server.listen"] = "198.51.100.9:8443";
  same.flags["server.external_address"] = "198.51.100.9";
  try {
    resolve_settings(same);
    ADD_FAILURE() << "the UI's address was taken for guests' ports";
  } catch (const SettingsError& e) {
    EXPECT_NE(std::string(e.what()).find("is the web UI's address"), std::string::npos) << e.what();
  }
}

TEST_F(SettingsTest, TheKubevirtNodeIsOffUntilNamed) {
  auto s = resolve_settings(input());
  EXPECT_EQ(s.kubevirt_name, "");
  EXPECT_EQ(s.kubevirt_namespace, "default");
  auto in = input();
  in.config_file = write_config(
      "server:\n  kubevirt:\n    name: cluster\n    kubeconfig: kube/config\n"
      "    namespace: tenant-a\n");
  s = resolve_settings(in);
  EXPECT_EQ(s.kubevirt_name, "cluster");
  EXPECT_EQ(s.kubevirt_namespace, "tenant-a");
  EXPECT_EQ(s.kubevirt_kubeconfig, "/start/here/kube/config");  // against the start directory
  const auto text = describe_settings(s);
  EXPECT_NE(text.find("server.kubevirt.name"), std::string::npos) << text;
  EXPECT_NE(text.find("tenant-a"), std::string::npos) << text;
}

TEST_F(SettingsTest, DomainTypeIsAutoUnlessSet) {
  auto in = input();
  EXPECT_EQ(resolve_settings(in).domain_type, engine::DomainTypeSetting::Auto);
  for (const auto& [text, expected] :
       std::vector<std::pair<std::string, engine::DomainTypeSetting>>{
           {"auto", engine::DomainTypeSetting::Auto},
           {"KVM", engine::DomainTypeSetting::Kvm},
           {" qemu ", engine::DomainTypeSetting::Qemu}}) {
    in.env = {{"BOWLINE_DOMAIN_TYPE", text}};
    EXPECT_EQ(resolve_settings(in).domain_type, expected) << text;
  }
  const auto text = describe_settings(resolve_settings(input()));
  EXPECT_TRUE(std::regex_search(text, std::regex("server.domain_type +auto +default"))) << text;
}

// knot's names for its KVM settings (seed 001) work beside bowline's: flags through the CLI
// (flag_spellings), environment variables here. bowline's variable wins over knot's.
TEST_F(SettingsTest, KnotsEnvironmentVariablesAndFlagSpellings) {
  auto in = input();
  in.env = {{"KNOT_KVM_IMAGES_PATH", "/knot/images"},
            {"KNOT_KVM_CLOUD_IMAGE_PATH", "/knot/library"},
            {"KNOT_KVM_BASE_IMAGE_PATH", "/knot/base"},
            {"KNOT_KVM_RESOLVERS", "192.168.1.1, 9.9.9.9"}};
  auto s = resolve_settings(in);
  EXPECT_EQ(s.images_path, "/knot/images");
  EXPECT_EQ(s.cloud_image_path, "/knot/library");
  EXPECT_EQ(s.base_image_path, "/knot/base");
  EXPECT_EQ(s.resolvers, (std::vector<std::string>{"192.168.1.1", "9.9.9.9"}));
  auto text = describe_settings(s);
  for (const char* variable : {"KNOT_KVM_IMAGES_PATH", "KNOT_KVM_CLOUD_IMAGE_PATH",
                               "KNOT_KVM_BASE_IMAGE_PATH", "KNOT_KVM_RESOLVERS"})
    EXPECT_NE(text.find(std::string("env (") + variable + ")"), std::string::npos) << text;

  // Only the images path from knot: the library and the cache follow it, as in knot.
  in.env = {{"KNOT_KVM_IMAGES_PATH", "relative/images"}};
  s = resolve_settings(in);
  EXPECT_EQ(s.images_path, "/start/here/relative/images");
  EXPECT_EQ(s.cloud_image_path, "/start/here/relative/images/cloud-images");
  EXPECT_EQ(s.base_image_path, "/start/here/relative/images/base");

  // Both spellings set: bowline's wins, and --print-config says the other was ignored.
  in.env = {{"KNOT_KVM_IMAGES_PATH", "/knot"}, {"BOWLINE_KVM_IMAGES_PATH", "/bowline"}};
  s = resolve_settings(in);
  EXPECT_EQ(s.images_path, "/bowline");
  text = describe_settings(s);
  EXPECT_NE(text.find("env (BOWLINE_KVM_IMAGES_PATH; KNOT_KVM_IMAGES_PATH also set, ignored)"),
            std::string::npos)
      << text;

  // A flag beats both; knot's flag spelling is named as given.
  in.flags = {{"server.kvm.images_path", "/flag"}};
  in.flag_spellings = {{"server.kvm.images_path", "--kvm-images-path"}};
  s = resolve_settings(in);
  EXPECT_EQ(s.images_path, "/flag");
  EXPECT_NE(describe_settings(s).find("flag (--kvm-images-path)"), std::string::npos);

  // A bad value names knot's variable.
  in = input();
  in.env = {{"KNOT_KVM_RESOLVERS", "router.lan"}};
  try {
    resolve_settings(in);
    ADD_FAILURE() << "a host name was accepted as a resolver";
  } catch (const SettingsError& e) {
    EXPECT_NE(std::string(e.what()).find("environment variable KNOT_KVM_RESOLVERS"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(SettingsTest, EveryKnotSpellingIsKnown) {
  std::map<std::string, std::string> flags, envs;
  for (const auto& k : setting_table()) {
    if (k.knot_flag) flags[k.knot_flag] = k.key;
    if (k.knot_env) envs[k.knot_env] = k.key;
  }
  EXPECT_EQ(flags, (std::map<std::string, std::string>{
                       {"--kvm-base-image-path", "server.kvm.base_image_path"},
                       {"--kvm-cloud-image-path", "server.kvm.cloud_image_path"},
                       {"--kvm-images-path", "server.kvm.images_path"},
                       {"--kvm-resolvers", "server.kvm.resolvers"}}));
  EXPECT_EQ(envs, (std::map<std::string, std::string>{
                      {"KNOT_KVM_BASE_IMAGE_PATH", "server.kvm.base_image_path"},
                      {"KNOT_KVM_CLOUD_IMAGE_PATH", "server.kvm.cloud_image_path"},
                      {"KNOT_KVM_IMAGES_PATH", "server.kvm.images_path"},
                      {"KNOT_KVM_RESOLVERS", "server.kvm.resolvers"}}));
}

TEST(SecureCookieSetting, AutoByDefaultTrueFalseOrARefusal) {
  SettingsInput in;
  EXPECT_EQ(resolve_settings(in).secure_cookies, std::nullopt);
  EXPECT_NE(describe_settings(resolve_settings(in)).find("server.secure_cookies"),
            std::string::npos);
  for (const auto& [text, expected] : std::vector<std::pair<std::string, std::optional<bool>>>{
           {"auto", std::nullopt}, {"true", true}, {"FALSE", false}, {" true ", true}}) {
    in.flags = {{"server.secure_cookies", text}};
    EXPECT_EQ(resolve_settings(in).secure_cookies, expected) << text;
  }
  in.flags = {};
  in.env = {{"BOWLINE_SECURE_COOKIES", "true"}};
  EXPECT_EQ(resolve_settings(in).secure_cookies, true);
  in.env = {{"BOWLINE_SECURE_COOKIES", "sometimes"}};
  try {
    resolve_settings(in);
    ADD_FAILURE() << "\"sometimes\" was accepted";
  } catch (const SettingsError& e) {
    EXPECT_NE(std::string(e.what()).find("none of auto, true and false"), std::string::npos)
        << e.what();
  }
}

TEST(WebRootSetting, TheSourceTreesWebDirectoryByDefaultAndAFlagOverrides) {
  SettingsInput input;
  input.cwd = "/tmp";
  EXPECT_EQ(resolve_settings(input).web_root, fs::path(BOWLINE_SOURCE_DIR) / "web");
  input.flags["server.web_root"] = "site";
  const auto s = resolve_settings(input);
  EXPECT_EQ(s.web_root, fs::path("/tmp/site"));
  EXPECT_NE(describe_settings(s).find("server.web_root"), std::string::npos);
}

}  // namespace
}  // namespace bowline::server::testing
