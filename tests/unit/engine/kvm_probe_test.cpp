// The KVM probe: a throwaway transient domain on libvirt's test driver (the passing case), the
// failures QEMU really reports on hosts where KVM does not run (through a forwarding seam), and
// the choice of domain type for auto, kvm and qemu with a fake probe.
#include "engine/kvm_probe.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <libvirt/virterror.h>

#include "forwarding_hypervisor.hpp"
#include "libvirt/libvirt_hypervisor.hpp"

namespace bowline::engine {
namespace {

using ::testing::HasSubstr;

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
  EXPECT_THAT(verdict.detail, HasSubstr("ran for 1.0 s"));
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
