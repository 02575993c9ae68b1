// LibvirtHypervisor against the real daemon (qemu:///system, domain type `qemu`): a tiny
// domain with no disk (SeaBIOS finds nothing to boot) is defined with our metadata, started
// paused, its serial console attached, resumed, destroyed and undefined, with every lifecycle
// event observed through a subscription. Whatever happens, the domain is removed at the end.
// The KVM probe's program boots to long mode under software emulation. Needs libvirtd and
// virtlogd running: scripts/prepare-host. BOWLINE_LIBVIRT_URI overrides the URI.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <csignal>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <thread>

#include "engine/kvm_probe.hpp"
#include "libvirt/libvirt_hypervisor.hpp"

namespace bowline::libvirt {
namespace {

// libvirt asks its users to ignore SIGPIPE; the reconnect test drops our connection, and a
// keepalive written into the dead socket must not kill the test process.
const bool kSigpipeIgnored = [] {
  std::signal(SIGPIPE, SIG_IGN);
  return true;
}();

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string uri() {
  const char* env = std::getenv("BOWLINE_LIBVIRT_URI");
  return env && *env ? env : "qemu:///system";
}

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

class Events {
 public:
  explicit Events(std::string domain) : domain_(std::move(domain)) {}

  LifecycleCallback callback() {
    return [this](const LifecycleEvent& e) {
      if (e.domain != domain_) return;
      std::lock_guard lock(mutex_);
      seen_.push_back(e);
      changed_.notify_all();
    };
  }

  // Waits for an event of `type` (after the `skip` first events of that type).
  std::optional<LifecycleEvent> wait_for(LifecycleEventType type, std::size_t skip = 0,
                                         std::chrono::milliseconds timeout = 20s) {
    std::unique_lock lock(mutex_);
    std::optional<LifecycleEvent> found;
    changed_.wait_for(lock, timeout, [&] {
      std::size_t n = 0;
      for (const auto& e : seen_)
        if (e.type == type && n++ == skip) {
          found = e;
          return true;
        }
      return false;
    });
    return found;
  }

  std::string summary() const {
    std::lock_guard lock(mutex_);
    std::string out;
    for (const auto& e : seen_) out += (out.empty() ? "" : ", ") + describe(e);
    return out;
  }

 private:
  const std::string domain_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<LifecycleEvent> seen_;
};

std::string tiny_domain_xml(const std::string& name, const std::string& uuid,
                            const DomainMetadata& m) {
  return "<domain type='qemu'>\n"
         "  <name>" +
         name + "</name>\n  <uuid>" + uuid +
         "</uuid>\n"
         "  <memory unit='MiB'>32</memory>\n"
         "  <vcpu>1</vcpu>\n"
         "  <os><type arch='x86_64' machine='pc'>hvm</type><bios useserial='yes'/></os>\n"
         "  <metadata>\n"
         "    <bowline:space xmlns:bowline='" +
         std::string(kMetadataNamespace) + "'><bowline:id>" + m.space_id +
         "</bowline:id><bowline:owner id='" + m.owner_id + "'>" + m.owner +
         "</bowline:owner></bowline:space>\n"
         "  </metadata>\n"
         "  <on_poweroff>destroy</on_poweroff>\n"
         "  <devices>\n"
         "    <serial type='pty'><target port='0'/></serial>\n"
         "    <console type='pty'><target type='serial' port='0'/></console>\n"
         "    <memballoon model='none'/>\n"
         "  </devices>\n"
         "</domain>\n";
}

// Destroys and undefines the domain when the test ends, however it ends.
struct Cleanup {
  Hypervisor& hv;
  std::string name;
  ~Cleanup() {
    try {
      if (hv.lookup(name)) {
        hv.destroy(name);
        hv.undefine(name);
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cleanup of %s failed: %s\n", name.c_str(), e.what());
    }
  }
};

std::unique_ptr<LibvirtHypervisor> connect_or_explain() {
  try {
    return std::make_unique<LibvirtHypervisor>(LibvirtOptions{.uri = uri()});
  } catch (const HypervisorError& e) {
    ADD_FAILURE() << e.what() << "\n(is libvirtd running? scripts/prepare-host starts it)";
    return nullptr;
  }
}

TEST(LibvirtE2E, TinyDomainLifecycleEventsAndConsole) {
  auto hv = connect_or_explain();
  ASSERT_TRUE(hv);
  const auto pid = static_cast<unsigned>(::getpid());
  const std::string name = "bowline-e2e-hv-" + std::to_string(pid);
  char uuid[37];
  std::snprintf(uuid, sizeof uuid, "b0771e00-e2e0-4000-8000-%012u", pid);
  DomainMetadata metadata;
  metadata.space_id = "sp-e2e";
  metadata.owner = "alice";
  metadata.owner_id = "u-1";

  Events events(name);
  const auto subscription = hv->subscribe(events.callback());
  Cleanup cleanup{*hv, name};

  // Define: ours, recognisable in the listing.
  auto t = Clock::now();
  const auto defined = hv->define(tiny_domain_xml(name, uuid, metadata));
  const double define_ms = ms_since(t);
  EXPECT_EQ(defined.uuid, uuid);
  ASSERT_TRUE(defined.metadata);
  EXPECT_EQ(defined.metadata->space_id, "sp-e2e");
  EXPECT_EQ(defined.metadata->owner, "alice");
  bool listed = false;
  for (const auto& d : hv->list())
    if (d.name == name) listed = d.metadata && d.metadata->space_id == "sp-e2e";
  EXPECT_TRUE(listed);
  ASSERT_TRUE(events.wait_for(LifecycleEventType::Defined));

  // Start paused, attach the console so no byte is lost, then resume.
  t = Clock::now();
  hv->start(name, {.paused = true});
  const double start_ms = ms_since(t);
  ASSERT_TRUE(events.wait_for(LifecycleEventType::Started)) << events.summary();
  const double started_event_ms = ms_since(t);
  EXPECT_EQ(hv->state(name).state, DomainState::Paused);

  auto console = hv->open_console(name);
  ASSERT_TRUE(console);
  hv->resume(name);
  ASSERT_TRUE(events.wait_for(LifecycleEventType::Resumed)) << events.summary();
  EXPECT_EQ(hv->state(name).state, DomainState::Running);

  // QEMU's own errors come through typed.
  const auto again = [&]() -> std::optional<HypervisorError> {
    try {
      hv->start(name);
    } catch (const HypervisorError& e) {
      return e;
    }
    return std::nullopt;
  }();
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->is_operation_invalid()) << again->what();
  EXPECT_THAT(again->what(), StartsWith("domain \"" + name + "\": cannot start: "));

  // SeaBIOS writes to the serial port (useserial); read until it has said something.
  t = Clock::now();
  std::string output;
  while (ms_since(t) < 15000 && output.find("SeaBIOS") == std::string::npos)
    output += console->read(500ms);
  const double console_ms = ms_since(t);
  EXPECT_THAT(output, HasSubstr("SeaBIOS")) << "console bytes: " << output.size();
  EXPECT_NO_THROW(console->write("\r"));

  EXPECT_TRUE(hv->interface_addresses(name, AddressSource::Lease).empty()) << "no NIC";
  try {
    hv->agent_command(name, R"({"execute":"guest-ping"})", 1s);
    ADD_FAILURE() << "no agent channel, yet the agent answered";
  } catch (const HypervisorError& e) {
    EXPECT_THAT(e.what(), StartsWith("domain \"" + name + "\": cannot talk to the guest agent: "));
  }
  EXPECT_NO_THROW(hv->shutdown(name)) << "ACPI power button (nothing in the guest listens)";

  // Destroy: the Stopped event, and the console ends.
  t = Clock::now();
  EXPECT_TRUE(hv->destroy(name));
  const auto stopped = events.wait_for(LifecycleEventType::Stopped);
  const double stopped_event_ms = ms_since(t);
  ASSERT_TRUE(stopped) << events.summary();
  EXPECT_EQ(describe(*stopped), "stopped (destroyed)");
  EXPECT_EQ(hv->state(name).state, DomainState::Shutoff);
  EXPECT_FALSE(hv->destroy(name));
  const auto eof_start = Clock::now();
  while (!console->eof() && ms_since(eof_start) < 5000) console->read(200ms);
  EXPECT_TRUE(console->eof()) << "the console stream ends with the domain";
  console.reset();

  t = Clock::now();
  EXPECT_TRUE(hv->undefine(name));
  ASSERT_TRUE(events.wait_for(LifecycleEventType::Undefined)) << events.summary();
  const double undefine_ms = ms_since(t);
  EXPECT_FALSE(hv->lookup(name));
  EXPECT_FALSE(hv->undefine(name));

  std::printf(
      "timings: define %.1f ms, start(paused) %.1f ms, Started event after %.1f ms, first "
      "SeaBIOS bytes after %.1f ms, Stopped event %.1f ms after destroy, undefine+event "
      "%.1f ms\nevents: %s\n",
      define_ms, start_ms, started_event_ms, console_ms, stopped_event_ms, undefine_ms,
      events.summary().c_str());
}

// Has the daemon drop every connection this process has to it (tests/e2e/
// drop_libvirt_clients.cpp), as a daemon restart or a network failure would. Returns how many
// it dropped; -1 when the helper failed. Other processes' connections are left alone.
int drop_our_connections() {
  const std::string command = std::string(DROP_LIBVIRT_CLIENTS) + " " + std::to_string(::getpid());
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return -1;
  int dropped = -1;
  if (std::fscanf(pipe, "%d", &dropped) != 1) dropped = -1;
  return ::pclose(pipe) == 0 ? dropped : -1;
}

TEST(LibvirtE2E, ADroppedConnectionIsReplacedAndEventsFlowAgain) {
  auto hv = connect_or_explain();
  ASSERT_TRUE(hv);
  const std::string name = "bowline-e2e-hv-rc-" + std::to_string(::getpid());
  Events events(name);
  const auto subscription = hv->subscribe(events.callback());
  Cleanup cleanup{*hv, name};
  ASSERT_EQ(hv->connection_count(), 1u);

  ASSERT_GE(drop_our_connections(), 1) << "libvirt's admin API could not drop our connection";
  // The close callback fires on the event thread; the next call after it reconnects. A call
  // in the gap may fail with the dead connection's error.
  const auto t = Clock::now();
  while (hv->connection_count() < 2 && ms_since(t) < 10000) {
    try {
      hv->list();
    } catch (const HypervisorError&) {
    }
    std::this_thread::sleep_for(20ms);
  }
  const double reconnect_ms = ms_since(t);
  ASSERT_EQ(hv->connection_count(), 2u);

  DomainMetadata metadata;
  metadata.space_id = "sp-rc";
  hv->define(tiny_domain_xml(name, "b0771e00-e2e0-4000-8000-00000000a11c", metadata));
  ASSERT_TRUE(events.wait_for(LifecycleEventType::Defined)) << "events after the reconnect";
  EXPECT_TRUE(hv->undefine(name));
  ASSERT_TRUE(events.wait_for(LifecycleEventType::Undefined));
  std::printf("reconnected %.1f ms after the daemon dropped the connection\n", reconnect_ms);
}

// libvirtd sends a console stream no event when it drops the connection under it: the stream
// must still end (so the web console's hub reopens it), and a new one opens on the new
// connection.
TEST(LibvirtE2E, AConsoleEndsWhenLibvirtdDropsTheConnection) {
  auto hv = connect_or_explain();
  ASSERT_TRUE(hv);
  const std::string name = "bowline-e2e-hv-cd-" + std::to_string(::getpid());
  Cleanup cleanup{*hv, name};
  DomainMetadata metadata;
  metadata.space_id = "sp-cd";
  hv->define(tiny_domain_xml(name, "b0771e00-e2e0-4000-8000-00000000c0d0", metadata));
  hv->start(name);
  auto console = hv->open_console(name);
  ASSERT_TRUE(console);
  EXPECT_NO_THROW(console->read(200ms)) << "a live console reads (or times out) normally";
  EXPECT_FALSE(console->eof());

  ASSERT_GE(drop_our_connections(), 1) << "libvirt's admin API could not drop our connection";
  bool ended = false;
  for (int i = 0; i < 100 && !ended; ++i) {
    try {
      console->read(100ms);
    } catch (const HypervisorError& e) {
      EXPECT_THAT(e.what(), HasSubstr("the connection to libvirtd was lost"));
    }
    ended = console->eof();
  }
  EXPECT_TRUE(ended) << "the console did not end with its connection";
  EXPECT_THROW(console->write("x"), HypervisorError);
  console.reset();

  // The next call reconnects; the domain's console opens again there.
  std::unique_ptr<util::ByteStream> again;
  for (int i = 0; i < 50 && !again; ++i) {
    try {
      again = hv->open_console(name);
    } catch (const HypervisorError&) {
      std::this_thread::sleep_for(100ms);  // the close callback has not run yet
    }
  }
  ASSERT_TRUE(again) << "no console on the new connection";
  EXPECT_NO_THROW(again->write("\r"));
  EXPECT_FALSE(again->eof());
  EXPECT_GE(hv->connection_count(), 2u);
  again.reset();
  EXPECT_TRUE(hv->destroy(name));
}

TEST(LibvirtE2E, HostProbe) {
  auto hv = connect_or_explain();
  ASSERT_TRUE(hv);
  const auto qemu = hv->domain_capabilities("qemu");
  EXPECT_TRUE(qemu.supported) << qemu.reason;
  EXPECT_FALSE(qemu.requires_kvm);
  EXPECT_EQ(qemu.domain_type, "qemu");
  EXPECT_FALSE(qemu.emulator.empty());
  EXPECT_GT(qemu.max_vcpus, 0u);

  const auto kvm = hv->domain_capabilities("kvm");
  EXPECT_TRUE(kvm.requires_kvm);
  if (!std::filesystem::exists("/dev/kvm")) {
    EXPECT_FALSE(kvm.supported);
    EXPECT_FALSE(kvm.reason.empty());
  }
  std::printf("kvm: %s\n", kvm.supported ? "supported" : kvm.reason.c_str());

  const auto devices = hv->node_devices();  // whatever this host has; must not throw
  std::size_t capable = 0;
  for (const auto& d : devices) capable += passthrough_capable(d) ? 1 : 0;
  std::printf("node devices: %zu PCI/USB, %zu passthrough-capable\n", devices.size(), capable);

  for (const auto& n : hv->list_networks()) {
    EXPECT_TRUE(hv->network_exists(n.name));
    EXPECT_EQ(hv->network_active(n.name), n.active);
  }
  EXPECT_FALSE(hv->network_exists("bowline-no-such-network"));
}

// The KVM probe's own program, booted for real: the firmware reads it from its disk (labelled
// for QEMU by libvirt), and it reaches long mode and says so on its serial port. Under software
// emulation, since these hosts' KVM cannot be relied on; node_check_test.sh compares the KVM
// verdict with a real guest's boot.
TEST(LibvirtE2E, TheKvmProbeProgramBootsToLongMode) {
  auto hv = connect_or_explain();
  ASSERT_TRUE(hv);
  char dir[] = "/var/lib/libvirt/images/bowline-e2e-probe.XXXXXX";
  ASSERT_TRUE(::mkdtemp(dir)) << "mkdtemp under /var/lib/libvirt/images";
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all |
                                        std::filesystem::perms::group_exec |
                                        std::filesystem::perms::others_exec);
  engine::KvmProbeOptions options;
  options.work_dir = dir;
  options.domain_type = "qemu";
  options.boot_within = 60s;
  const auto start = Clock::now();
  const auto verdict = engine::LibvirtKvmProbe(*hv, options).probe();
  std::printf("probe program under software emulation: %s (%.0f ms)\n", verdict.detail.c_str(),
              ms_since(start));
  EXPECT_TRUE(verdict.usable) << verdict.detail;
  EXPECT_THAT(verdict.detail, HasSubstr("booted bowline's probe program to long mode"));
  EXPECT_TRUE(std::filesystem::is_empty(dir)) << "the probe left files in " << dir;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace bowline::libvirt
