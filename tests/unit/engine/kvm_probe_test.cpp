// The KVM probe: a throwaway transient domain on libvirt's test driver (the passing case), the
// failures QEMU really reports on hosts where KVM does not run (through a forwarding seam, with
// a stand-in for the probe program writing its markers), and the choice of domain type for
// auto, kvm and qemu with a fake probe. The program itself boots for real in
// tests/e2e/hypervisor_e2e_test.cpp.
#include "engine/kvm_probe.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <libvirt/virterror.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <pugixml.hpp>

#include "engine/kvm_probe_guest.hpp"
#include "forwarding_hypervisor.hpp"
#include "libvirt/libvirt_hypervisor.hpp"

namespace bowline::engine {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

// The test driver has no domain capabilities: this host says it offers kvm.
class KvmHost : public ForwardingHypervisor {
 public:
  explicit KvmHost(libvirt::Hypervisor& inner) : ForwardingHypervisor(inner) {}
  libvirt::DomainCapabilities domain_capabilities(const std::string& type) override {
    libvirt::DomainCapabilities caps;
    caps.domain_type = type;
    caps.supported = true;
    caps.arch = "x86_64";
    return caps;
  }
  std::vector<std::string> created;
  libvirt::DomainInfo create_transient(const std::string& xml) override {
    created.push_back(xml);
    return ForwardingHypervisor::create_transient(xml);
  }
};

KvmProbeOptions quick() {
  KvmProbeOptions options;
  options.kvm_device = "/dev/null";  // a device that exists everywhere
  options.sleep = [](std::chrono::milliseconds) {};
  return options;
}

class KvmProbeTest : public ::testing::Test {
 protected:
  libvirt::LibvirtHypervisor test_driver{{.uri = "test:///default"}};
};

TEST_F(KvmProbeTest, AGuestThatKeepsRunningProvesKvmAndIsGoneAfterwards) {
  KvmHost host(test_driver);
  const auto before = test_driver.list().size();
  LibvirtKvmProbe probe(host, quick());
  const auto verdict = probe.probe();
  EXPECT_TRUE(verdict.usable) << verdict.detail;
  EXPECT_THAT(verdict.detail, HasSubstr("ran for 1.0 s (no directory for the probe program)"));
  EXPECT_TRUE(verdict.fix.empty());
  ASSERT_EQ(host.created.size(), 1u);
  EXPECT_THAT(host.created[0], HasSubstr("<domain type=\"kvm\">"));
  EXPECT_THAT(host.created[0], HasSubstr("<cpu mode=\"host-model\""));
  EXPECT_THAT(host.created[0], HasSubstr("arch=\"x86_64\""));
  EXPECT_EQ(test_driver.list().size(), before) << "the probe domain is left behind";
}

// What libvirt 9 says when QEMU aborts at the first vCPU on these hosts.
TEST_F(KvmProbeTest, QemusAbortIsReportedInItsOwnWordsWithTheFix) {
  struct Aborts : KvmHost {
    using KvmHost::KvmHost;
    libvirt::DomainInfo create_transient(const std::string&) override {
      throw libvirt::HypervisorError(
          "domain \"bowline-kvm-probe-1\": cannot start: internal error", VIR_ERR_INTERNAL_ERROR,
          VIR_FROM_QEMU,
          "internal error: qemu unexpectedly closed the monitor: 2026-12-01T03:25:33.855771Z "
          "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69\n"
          "qemu-system-x86_64: ../../target/i386/kvm/kvm.c:3183: kvm_buf_set_msrs: Assertion "
          "`ret == cpu->kvm_msr_buf->nmsrs' failed.");
    }
  } host(test_driver);
  LibvirtKvmProbe probe(host, quick());
  const auto verdict = probe.probe();
  EXPECT_FALSE(verdict.usable);
  EXPECT_THAT(verdict.detail, HasSubstr("qemu-system-x86_64: error: failed to set MSR 0x10a"));
  EXPECT_THAT(verdict.detail, ::testing::Not(HasSubstr("2026-12-01T")));
  EXPECT_THAT(verdict.fix, HasSubstr("software emulation"));
  EXPECT_THAT(verdict.fix, HasSubstr("nested"));
}

// "KVM internal error ... emulation failure" comes after the vCPU has run a little: QEMU
// pauses the guest. The probe must not call that a success.
TEST_F(KvmProbeTest, AGuestPausedByAnInternalErrorIsAFailure) {
  struct PausesLater : KvmHost {
    using KvmHost::KvmHost;
    int calls = 0;
    libvirt::DomainStatus state(const std::string& name) override {
      auto status = KvmHost::state(name);
      if (++calls >= 3) status.state = libvirt::DomainState::Paused;
      return status;
    }
  } host(test_driver);
  const auto before = test_driver.list().size();
  LibvirtKvmProbe probe(host, quick());
  const auto verdict = probe.probe();
  EXPECT_FALSE(verdict.usable);
  EXPECT_THAT(verdict.detail, HasSubstr("KVM internal error"));
  EXPECT_THAT(verdict.detail, HasSubstr("paused"));
  EXPECT_THAT(verdict.fix, HasSubstr("software emulation"));
  EXPECT_EQ(test_driver.list().size(), before) << "the paused probe domain is left behind";
}

TEST_F(KvmProbeTest, NoDeviceOrNoKvmInLibvirtNeedsNoQemu) {
  KvmHost host(test_driver);
  auto options = quick();
  options.kvm_device = "/nonexistent/kvm";
  auto verdict = LibvirtKvmProbe(host, options).probe();
  EXPECT_FALSE(verdict.usable);
  EXPECT_THAT(verdict.detail, HasSubstr("/nonexistent/kvm does not exist"));
  EXPECT_THAT(verdict.fix, HasSubstr("VT-x/AMD-V"));
  EXPECT_TRUE(host.created.empty());

  // The test driver's own answer: no domain capabilities at all.
  verdict = LibvirtKvmProbe(test_driver, quick()).probe();
  EXPECT_FALSE(verdict.usable);
  EXPECT_THAT(verdict.detail, HasSubstr("libvirt offers no domain type kvm"));
}

// The probe program's stand-in: what the guest would write on COM1 (the serial log the domain
// names), and what QEMU would write in its log, when the domain is created.
class BootingHost : public KvmHost {
 public:
  BootingHost(libvirt::Hypervisor& inner, std::size_t steps, std::string log_dir = {})
      : KvmHost(inner), steps_(steps), log_dir_(std::move(log_dir)) {}
  libvirt::DomainInfo create_transient(const std::string& xml) override {
    auto info = KvmHost::create_transient(xml);
    pugi::xml_document doc;
    doc.load_string(xml.c_str());
    const auto devices = doc.child("domain").child("devices");
    disk_path = devices.child("disk").child("source").attribute("file").value();
    std::ifstream in(disk_path, std::ios::binary);
    disk.assign(std::istreambuf_iterator<char>(in), {});
    std::ofstream serial(devices.child("serial").child("source").attribute("path").value());
    for (std::size_t i = 0; i < steps_; ++i)
      serial << "bowline-probe:" << kvm_probe_steps()[i].marker << "\n";
    if (!log_dir_.empty())
      std::ofstream(log_dir_ + "/" + doc.child("domain").child_value("name") + ".log")
          << "-msg timestamp=on\nKVM internal error. Suberror: 1\nextra data[0]: "
             "0x0000000000000000\nemulation failure\nEAX=00103592 EBX=50ffffc0\n"
             "2026-12-02T14:39:59.407708Z qemu-system-x86_64: terminating on signal 15\n";
    return info;
  }
  libvirt::DomainStatus state(const std::string& name) override {
    auto status = KvmHost::state(name);
    if (pause) status.state = libvirt::DomainState::Paused;
    return status;
  }
  bool pause = false;
  std::string disk_path;
  std::string disk;

 private:
  std::size_t steps_;
  std::string log_dir_;
};

class KvmProbeProgramTest : public KvmProbeTest {
 protected:
  void SetUp() override {
    work = fs::temp_directory_path() / ("bowline-kvm-probe-test-" + std::to_string(::getpid()));
    fs::create_directories(work);
    fs::create_directories(work / "log");
  }
  void TearDown() override { fs::remove_all(work); }
  KvmProbeOptions options() {
    auto o = quick();
    o.work_dir = work.string();
    o.qemu_log_dir = (work / "log").string();
    return o;
  }
  // What is left in the work directory besides the log directory.
  std::size_t left_behind() {
    std::size_t n = 0;
    for (const auto& entry : fs::directory_iterator(work))
      if (entry.path().filename() != "log") ++n;
    return n;
  }
  fs::path work;
};

TEST_F(KvmProbeProgramTest, KvmIsProvedOnlyByTheProgramReachingLongMode) {
  const auto all = kvm_probe_steps().size();
  BootingHost host(test_driver, all);
  const auto verdict = LibvirtKvmProbe(host, options()).probe();
  EXPECT_TRUE(verdict.usable) << verdict.detail;
  EXPECT_THAT(verdict.detail, HasSubstr("booted bowline's probe program to long mode in 0.0 s"));
  ASSERT_EQ(host.created.size(), 1u);
  const auto& xml = host.created[0];
  EXPECT_THAT(xml, HasSubstr("<domain type=\"kvm\">"));
  EXPECT_THAT(xml, HasSubstr("<cpu mode=\"host-model\""));
  EXPECT_THAT(xml, HasSubstr("machine=\"q35\""));
  EXPECT_THAT(xml, HasSubstr("<boot dev=\"hd\""));
  EXPECT_THAT(xml, HasSubstr("<readonly />"));
  EXPECT_THAT(xml, HasSubstr("<serial type=\"file\">"));
  // The disk QEMU was given: the program, its boot signature, padded to 1 MiB.
  EXPECT_THAT(host.disk_path, HasSubstr(work.string() + "/.kvm-probe."));
  ASSERT_EQ(host.disk.size(), 1u << 20);
  EXPECT_EQ(static_cast<unsigned char>(host.disk[510]), 0x55);
  EXPECT_EQ(static_cast<unsigned char>(host.disk[511]), 0xaa);
  const auto image = kvm_probe_guest_image();
  EXPECT_EQ(std::memcmp(image.data(), host.disk.data(), image.size()), 0);
  EXPECT_EQ(left_behind(), 0u) << "the probe's directory is left behind";
}

// The CI host's case: the vCPU runs on, and a boot has stopped (here after big real mode).
TEST_F(KvmProbeProgramTest, AVcpuThatRunsOnWithoutBootingIsAFailureNamingTheStep) {
  BootingHost host(test_driver, 3);
  const auto before = test_driver.list().size();
  const auto verdict = LibvirtKvmProbe(host, options()).probe();
  EXPECT_FALSE(verdict.usable);
  EXPECT_THAT(verdict.detail,
              HasSubstr("its boot stopped before interrupts in 32-bit protected mode (after big "
                        "real mode): no progress in 15.0 s"));
  EXPECT_THAT(verdict.fix, HasSubstr("software emulation"));
  EXPECT_EQ(test_driver.list().size(), before) << "the probe domain is left behind";
  EXPECT_EQ(left_behind(), 0u);
}

TEST_F(KvmProbeProgramTest, APausedVcpuIsReportedInQemusWordsAndItsLogGoes) {
  BootingHost host(test_driver, 3, (work / "log").string());
  host.pause = true;
  const auto verdict = LibvirtKvmProbe(host, options()).probe();
  EXPECT_FALSE(verdict.usable);
  EXPECT_THAT(verdict.detail, HasSubstr("state paused) during its boot, before interrupts"));
  EXPECT_THAT(verdict.detail,
              HasSubstr("QEMU said: KVM internal error. Suberror: 1; emulation failure"));
  EXPECT_THAT(verdict.detail, ::testing::Not(HasSubstr("EAX=")));
  EXPECT_THAT(verdict.detail, ::testing::Not(HasSubstr("terminating")));
  EXPECT_TRUE(fs::is_empty(work / "log")) << "the throwaway domain's QEMU log is left behind";
}

// A work directory the probe cannot write in: the weaker check, saying so.
TEST_F(KvmProbeProgramTest, NoPlaceForTheProgramFallsBackToTheRunningCheckAndSaysSo) {
  KvmHost host(test_driver);
  auto o = options();
  o.work_dir = "/nonexistent/images";
  const auto verdict = LibvirtKvmProbe(host, o).probe();
  EXPECT_TRUE(verdict.usable) << verdict.detail;
  EXPECT_THAT(verdict.detail,
              HasSubstr("ran for 1.0 s (cannot write the probe program in /nonexistent/images"));
  EXPECT_THAT(host.created.at(0), ::testing::Not(HasSubstr("<disk")));
}

TEST(KvmProbeGuest, TheImageIsABootSectorAndWhatItLoads) {
  const auto image = kvm_probe_guest_image();
  ASSERT_GE(image.size(), 1024u);
  EXPECT_EQ(image.size() % 512, 0u);
  EXPECT_EQ(image[510], 0x55);
  EXPECT_EQ(image[511], 0xaa);
  const std::string text(image.begin(), image.end());
  for (const auto& step : kvm_probe_steps())
    EXPECT_THAT(text, HasSubstr("bowline-probe:" + std::string(step.marker) + "\n"));
}

TEST(KvmProbeGuest, StepsCountOnlyInOrder) {
  EXPECT_EQ(kvm_probe_steps_done(""), 0u);
  EXPECT_EQ(kvm_probe_steps_done("SeaBIOS\nbowline-probe:boot\nbowline-probe:real\n"), 2u);
  EXPECT_EQ(kvm_probe_steps_done("bowline-probe:real\n"), 0u) << "boot came first";
  EXPECT_EQ(kvm_probe_steps_done("bowline-probe:boot\nbowline-probe:big-real\n"), 1u);
  EXPECT_EQ(kvm_probe_steps_done("bowline-probe:boot\nbowline-probe:rea"), 1u) << "half a line";
  std::string all;
  for (const auto& step : kvm_probe_steps())
    all += "bowline-probe:" + std::string(step.marker) + "\n";
  EXPECT_EQ(kvm_probe_steps_done(all), kvm_probe_steps().size());
}

class FakeProbe final : public KvmProbe {
 public:
  explicit FakeProbe(KvmVerdict verdict) : verdict_(std::move(verdict)) {}
  KvmVerdict probe() override {
    ++calls;
    return verdict_;
  }
  int calls = 0;

 private:
  KvmVerdict verdict_;
};

TEST(ChooseDomainType, AutoTakesKvmWhenTheProbePassesElseQemuWithAWarning) {
  FakeProbe works({true, "a KVM guest ran for 1.0 s", ""});
  auto choice = choose_domain_type(DomainTypeSetting::Auto, works);
  EXPECT_EQ(choice.type, plan::DomainType::Kvm);
  EXPECT_TRUE(choice.probed);
  EXPECT_TRUE(choice.warning.empty());

  FakeProbe broken({false, "QEMU could not start a KVM guest: failed to set MSR 0x10a", "fix"});
  choice = choose_domain_type(DomainTypeSetting::Auto, broken);
  EXPECT_EQ(choice.type, plan::DomainType::Qemu);
  EXPECT_THAT(choice.warning, HasSubstr("software emulation"));
  EXPECT_THAT(choice.warning, HasSubstr("several times slower"));
  EXPECT_THAT(choice.warning, HasSubstr("failed to set MSR 0x10a"));
}

TEST(ChooseDomainType, AnExplicitKvmThatDoesNotRunIsRefusedWithTheReason) {
  FakeProbe broken({false, "QEMU could not start a KVM guest: failed to set MSR 0x10a",
                    "run spaces under software emulation"});
  try {
    choose_domain_type(DomainTypeSetting::Kvm, broken);
    ADD_FAILURE() << "kvm was accepted where it does not run";
  } catch (const KvmUnusable& e) {
    EXPECT_THAT(e.what(), HasSubstr("server.domain_type is kvm"));
    EXPECT_THAT(e.what(), HasSubstr("failed to set MSR 0x10a"));
    EXPECT_THAT(e.what(), HasSubstr("Fix: run spaces under software emulation"));
  }
  FakeProbe works({true, "ran", ""});
  EXPECT_EQ(choose_domain_type(DomainTypeSetting::Kvm, works).type, plan::DomainType::Kvm);
}

TEST(ChooseDomainType, QemuStartsNothing) {
  FakeProbe probe({true, "", ""});
  const auto choice = choose_domain_type(DomainTypeSetting::Qemu, probe);
  EXPECT_EQ(choice.type, plan::DomainType::Qemu);
  EXPECT_FALSE(choice.probed);
  EXPECT_EQ(probe.calls, 0);
}

}  // namespace
}  // namespace bowline::engine
