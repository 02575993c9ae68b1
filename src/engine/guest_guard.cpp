#include "engine/guest_guard.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <stdexcept>

#include "engine/guest_address.hpp"
#include "util/files.hpp"
#include "util/strings.hpp"

namespace bowline::engine {

namespace {

constexpr const char* kRegistry = "guest-guard.json";
constexpr const char* kBootScript = "guest-guard.nft";

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

bool learns(const GuardedNic& nic) {
  return !nic.ip && !nic.network.empty();
}

nlohmann::json to_json(const GuardedNic& nic) {
  nlohmann::json j{{"tap", nic.tap}, {"mac", nic.mac}, {"network", nic.network}};
  j["ip"] = nic.ip ? nlohmann::json(nic.ip->to_string()) : nlohmann::json(nullptr);
  return j;
}

GuardedNic nic_from_json(const nlohmann::json& j, const GuardScripts& scripts) {
  GuardedNic nic;
  nic.tap = j.at("tap").get<std::string>();
  nic.mac = j.at("mac").get<std::string>();
  nic.network = j.value("network", std::string());
  if (j.contains("ip") && j["ip"].is_string()) {
    nic.ip = spec::Ipv4Address::parse(j["ip"].get<std::string>());
    if (!nic.ip) throw std::invalid_argument("the address of " + nic.tap + " is not IPv4");
  }
  scripts.check(nic);
  return nic;
}

// Written beside, then renamed over: a crash never leaves half a file.
void write_file(const std::filesystem::path& path, const std::string& text) {
  const auto part = path.string() + ".part";
  {
    std::ofstream out(part, std::ios::trunc);
    out << text;
    if (!out.flush()) throw std::runtime_error("cannot write " + part);
  }
  std::filesystem::permissions(
      part, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  std::filesystem::rename(part, path);
}

}  // namespace

std::string guard_tag_in(const std::filesystem::path& dir, util::ProcessRunner& runner) {
  const auto path = dir / "guest-guard.tag";
  if (const auto kept = util::read_file(path.string())) {
    auto tag = *kept;
    while (!tag.empty() && (tag.back() == '\n' || tag.back() == ' ')) tag.pop_back();
    GuardScripts check(tag);  // throws on a file that does not hold a tag
    return tag;
  }
  // Tags other bowline servers on this host use (their tables outlive them); never 000, the
  // offline renderer's.
  const auto listed = runner.run({"nft", "list", "tables", "bridge"}, std::chrono::seconds(10));
  std::vector<std::string> free;
  for (unsigned t = 1; t <= 0xfff; ++t) {
    char text[8];
    std::snprintf(text, sizeof text, "%03x", t);
    if (listed.out.find("bowline_" + std::string(text) + "\n") == std::string::npos &&
        !listed.out.ends_with("bowline_" + std::string(text)))
      free.emplace_back(text);
  }
  if (free.empty()) throw std::runtime_error("every guest guard tag is taken on this host");
  std::random_device random;
  const auto tag = free[random() % free.size()];
  write_file(path, tag + "\n");
  return tag;
}

GuestGuard::GuestGuard(util::ProcessRunner& runner, const util::Clock& clock, Leases leases,
                       GuestGuardOptions options)
    : runner_(runner),
      clock_(clock),
      leases_(std::move(leases)),
      o_(std::move(options)),
      scripts_(o_.tag) {}

GuestGuard::~GuestGuard() {
  stop();
}

void GuestGuard::apply(const std::string& script, const std::string& what) {
  static std::atomic<unsigned> counter{0};
  const auto file = o_.dir / ("guest-guard." + std::to_string(::getpid()) + "." +
                              std::to_string(counter++) + ".nft");
  write_file(file, script);
  const auto result = runner_.run({"nft", "-f", file.string()}, std::chrono::seconds(20));
  std::error_code ec;
  std::filesystem::remove(file, ec);
  if (result.exit_code != 0)
    throw std::runtime_error("nft: cannot " + what + ": " +
                             first_line(result.err.empty() ? result.out : result.err) +
                             " (bowline node check says what the host needs)");
}

std::vector<spec::Ipv4Address> GuestGuard::allowed(const GuardedNic& nic) const {
  if (nic.ip) return {*nic.ip};
  const auto it = learnt_.find(nic.tap);
  return it == learnt_.end() ? std::vector<spec::Ipv4Address>{} : it->second;
}

std::map<std::string, std::vector<spec::Ipv4Address>> GuestGuard::learnt_from(
    const std::vector<libvirt::DhcpLease>& leases) const {
  const auto now = clock_.now_unix_ms() / 1000;
  // network -> mac -> addresses it holds a lease for now
  std::map<std::string, std::map<std::string, std::set<spec::Ipv4Address>>> held;
  for (const auto& lease : leases) {
    if (lease.ipv6 || (lease.expiry != 0 && lease.expiry <= now)) continue;
    if (const auto a = spec::Ipv4Address::parse(lease.address))
      held[lease.network][util::to_lower(lease.mac)].insert(*a);
  }
  std::map<std::string, std::vector<spec::Ipv4Address>> out;
  for (const auto& [domain, nics] : domains_)
    for (const auto& nic : nics) {
      if (!learns(nic)) continue;
      const auto& by_mac = held[nic.network];
      // One address per NIC: a guest that asked again with other client ids and holds several
      // leases may send from the one that lasts longest only, the address bowline connects to.
      if (const auto own = lease_of(leases, nic.network, nic.mac, now)) {
        out[nic.tap] = {*spec::Ipv4Address::parse(own->address)};
        continue;
      }
      // No lease now: what it had stays, unless someone else was leased it since.
      const auto before = learnt_.find(nic.tap);
      if (before == learnt_.end()) continue;
      for (const auto& a : before->second) {
        bool taken = false;
        for (const auto& [mac, addresses] : by_mac) taken = taken || addresses.contains(a);
        if (!taken) out[nic.tap].push_back(a);
      }
    }
  return out;
}

void GuestGuard::rebuild() {
  std::string script = scripts_.create();
  for (const auto& [domain, nics] : domains_)
    for (const auto& nic : nics) script += scripts_.put(nic, allowed(nic));
  try {
    apply(script, "write the guest guard's table");
  } catch (...) {
    healthy_ = false;
    throw;
  }
  healthy_ = true;
}

std::string GuestGuard::damage_locked() {
  const auto& table = scripts_.table();
  const auto listed =
      runner_.run({"nft", "list", "table", "bridge", table}, std::chrono::seconds(10));
  if (listed.exit_code != 0) return "table bridge " + table + " is gone";
  std::vector<std::string> chains{"prerouting", "postrouting"};
  for (const auto& [domain, nics] : domains_)
    for (const auto& nic : nics) {
      chains.push_back(guard_out_chain(nic.tap));
      chains.push_back(guard_in_chain(nic.tap));
    }
  for (const auto& chain : chains)
    if (listed.out.find("chain " + chain + " {") == std::string::npos)
      return "table bridge " + table + " lacks its chain " + chain;
  return {};
}

std::string GuestGuard::restore_locked() {
  const auto damage = damage_locked();
  if (healthy_ && damage.empty()) return {};
  rebuild();
  return (damage.empty() ? "the guest guard's table was not written whole" : damage) +
         ": written again";
}

bool GuestGuard::check_table() {
  std::string restored;
  {
    std::lock_guard lock(mutex_);
    try {
      restored = restore_locked();
    } catch (const std::exception&) {
      return false;  // tried again at the next poll; starts fail meanwhile (ensure)
    }
  }
  if (!restored.empty() && o_.on_restored) o_.on_restored(restored);
  return true;
}

void GuestGuard::ensure(const std::string& domain) {
  std::string restored;
  {
    std::lock_guard lock(mutex_);
    if (!domains_.contains(domain))
      throw std::runtime_error("the guest guard holds no rules for " + domain +
                               ", so it does not run unguarded: stop the space and start it "
                               "again (its rules are written when it starts)");
    try {
      restored = restore_locked();
    } catch (const std::exception& e) {
      throw std::runtime_error("the guest guard is not in place, so " + domain +
                               " does not run unguarded: " + e.what());
    }
  }
  if (!restored.empty() && o_.on_restored) o_.on_restored(restored);
}

void GuestGuard::save() {
  nlohmann::json registry{{"domains", nlohmann::json::object()}};
  std::string boot =
      "# bowline's guest guard as the server last wrote it, for loading at boot\n"
      "# before libvirt starts a domain (addresses learnt from DHCP come back\n"
      "# once the server runs). Written by bowline: edits are lost.\n";
  boot += scripts_.create();
  for (const auto& [domain, nics] : domains_) {
    auto& list = registry["domains"][domain] = nlohmann::json::array();
    for (const auto& nic : nics) {
      list.push_back(to_json(nic));
      boot += scripts_.put(nic, nic.ip ? std::vector{*nic.ip} : std::vector<spec::Ipv4Address>{});
    }
  }
  write_file(o_.dir / kRegistry, registry.dump(2) + "\n");
  write_file(o_.dir / kBootScript, boot);
}

void GuestGuard::load(const std::set<std::string>& domains) {
  std::vector<libvirt::DhcpLease> leases;
  try {
    leases = leases_();
  } catch (const std::exception&) {
    // Learnt again at the next read; until then such guests may only ask DHCP.
  }
  std::lock_guard lock(mutex_);
  domains_.clear();
  const auto path = o_.dir / kRegistry;
  if (std::filesystem::exists(path)) {
    try {
      const auto text = util::read_file(path.string());
      if (!text) throw std::runtime_error("cannot read it");
      const auto registry = nlohmann::json::parse(*text);
      for (const auto& [domain, nics] : registry.at("domains").items()) {
        if (!domains.contains(domain)) continue;  // undefined while the server was away
        auto& list = domains_[domain];
        for (const auto& nic : nics) list.push_back(nic_from_json(nic, scripts_));
      }
    } catch (const std::exception& e) {
      // The table anyway, with no NIC: the guests it named are cut off (their devices have no
      // rules) until their next start, never let through.
      domains_.clear();
      learnt_.clear();
      rebuild();
      throw std::runtime_error(path.string() + " cannot be read (" + e.what() +
                               "): the spaces it guarded reach nothing until they start again");
    }
  }
  learnt_ = learnt_from(leases);
  rebuild();
  save();
}

void GuestGuard::put(const std::string& domain, const std::vector<GuardedNic>& nics) {
  for (const auto& nic : nics) scripts_.check(nic);
  std::lock_guard lock(mutex_);
  // Device names come from a hash of the domain's name: two names that share one would share
  // rules, so the second is refused.
  for (const auto& [other, their] : domains_)
    for (const auto& nic : nics)
      if (other != domain &&
          std::any_of(their.begin(), their.end(), [&](const auto& n) { return n.tap == nic.tap; }))
        throw std::runtime_error("the device " + nic.tap + " of " + domain + " is " + other +
                                 "'s already (their names hash alike): rename the space");
  const auto before = domains_.find(domain);
  // Unchanged and written whole: nothing to do. A table that was not (nft failed when the
  // server started) is written now, or the start fails.
  if (before != domains_.end() && before->second == nics) {
    if (!healthy_) rebuild();
    return;
  }
  std::string script;
  if (before != domains_.end())
    for (const auto& old : before->second)
      if (std::none_of(nics.begin(), nics.end(), [&](const auto& n) { return n.tap == old.tap; }))
        script += scripts_.remove(old.tap);
  for (const auto& nic : nics) {
    const bool unchanged =
        before != domains_.end() &&
        std::find(before->second.begin(), before->second.end(), nic) != before->second.end();
    if (!unchanged) script += scripts_.put(nic, allowed(nic));
  }
  const auto previous = before == domains_.end()
                            ? std::nullopt
                            : std::optional<std::vector<GuardedNic>>(before->second);
  domains_[domain] = nics;
  try {
    apply(script, "guard the NICs of " + domain);
  } catch (const std::exception&) {
    // The table was changed behind our back (a flushed ruleset): write it whole.
    try {
      rebuild();
    } catch (...) {
      if (previous)
        domains_[domain] = *previous;
      else
        domains_.erase(domain);
      throw;
    }
  }
  save();
}

void GuestGuard::remove(const std::string& domain) {
  std::lock_guard lock(mutex_);
  const auto it = domains_.find(domain);
  if (it == domains_.end()) return;
  std::string script;
  for (const auto& nic : it->second) {
    script += scripts_.remove(nic.tap);
    learnt_.erase(nic.tap);
  }
  domains_.erase(it);
  try {
    apply(script, "remove the guard of " + domain);
  } catch (const std::exception&) {
    try {
      rebuild();
    } catch (const std::exception&) {
      // The domain is gone already; what is left in the table guards a device that no longer
      // exists, and the next write of the table drops it.
    }
  }
  save();
}

void GuestGuard::learn() {
  std::vector<libvirt::DhcpLease> leases;
  try {
    leases = leases_();
  } catch (const std::exception&) {
    return;  // libvirt is away: what was learnt stays
  }
  std::lock_guard lock(mutex_);
  auto fresh = learnt_from(leases);
  std::string script;
  for (const auto& [domain, nics] : domains_)
    for (const auto& nic : nics) {
      if (!learns(nic)) continue;
      const auto now = fresh.find(nic.tap);
      const auto was = learnt_.find(nic.tap);
      const auto& now_list = now == fresh.end() ? std::vector<spec::Ipv4Address>{} : now->second;
      const auto& was_list = was == learnt_.end() ? std::vector<spec::Ipv4Address>{} : was->second;
      if (now_list != was_list) script += scripts_.addresses(nic.tap, now_list);
    }
  if (script.empty()) return;
  learnt_ = std::move(fresh);
  try {
    apply(script, "update the addresses guests learnt from DHCP");
  } catch (const std::exception&) {
    try {
      rebuild();
    } catch (const std::exception&) {
      // Tried again at the next change or poll.
    }
  }
}

void GuestGuard::watch_leases() {
  if (watcher_.joinable()) return;
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) throw std::runtime_error("guest guard: eventfd failed");
  // Watching before the thread starts: a lease written meanwhile is not missed.
  int watch = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (watch >= 0 && ::inotify_add_watch(watch, o_.lease_dir.c_str(),
                                        IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE) < 0) {
    ::close(watch);
    watch = -1;  // no such directory (yet): reading every poll interval will do
  }
  watcher_ = std::thread([this, watch] {
    while (!stopping_) {
      pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {watch, POLLIN, 0}};
      const int n = ::poll(fds, watch >= 0 ? 2 : 1, static_cast<int>(o_.lease_poll.count()));
      if (stopping_) break;
      if (n > 0 && watch >= 0 && (fds[1].revents & POLLIN)) {
        char buffer[4096];
        while (::read(watch, buffer, sizeof buffer) > 0) {
        }
      }
      learn();
      check_table();
    }
    if (watch >= 0) ::close(watch);
  });
}

void GuestGuard::stop() {
  stopping_ = true;
  if (wake_fd_ >= 0) {
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto n = ::write(wake_fd_, &one, sizeof one);
  }
  if (watcher_.joinable()) watcher_.join();
  if (wake_fd_ >= 0) ::close(wake_fd_);
  wake_fd_ = -1;
}

std::map<std::string, std::vector<GuardedNic>> GuestGuard::domains() const {
  std::lock_guard lock(mutex_);
  return domains_;
}

std::vector<spec::Ipv4Address> GuestGuard::addresses(const std::string& tap) const {
  std::lock_guard lock(mutex_);
  for (const auto& [domain, nics] : domains_)
    for (const auto& nic : nics)
      if (nic.tap == tap) return allowed(nic);
  return {};
}

bool GuestGuard::guards(const std::string& tap) const {
  std::lock_guard lock(mutex_);
  for (const auto& [domain, nics] : domains_)
    for (const auto& nic : nics)
      if (nic.tap == tap) return true;
  return false;
}

}  // namespace bowline::engine
