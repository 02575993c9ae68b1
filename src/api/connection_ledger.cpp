#include "api/connection_ledger.hpp"

#include <algorithm>

#include "api/address_prefix.hpp"

namespace bowline::api {

ConnectionLimits connection_limits(std::size_t max_connections, std::size_t descriptors) {
  ConnectionLimits limits;
  const auto kept = std::max<std::size_t>(64, descriptors / 4);
  const auto usable = descriptors > kept + 16 ? descriptors - kept : 16;
  limits.max_connections = std::max<std::size_t>(1, std::min(max_connections, usable));
  limits.authenticated_reserve = std::max<std::size_t>(1, limits.max_connections / 8);
  limits.max_per_address = std::min(limits.max_per_address, limits.max_connections);
  return limits;
}

ConnectionLedger::Admission ConnectionLedger::admit(const std::string& address) {
  std::lock_guard lock(mutex_);
  const auto key = address_prefix(address);
  Admission out;
  // Counted from the start, so that shedding this address's last other connection never
  // erases the entry held here.
  auto& mine = addresses_[key];
  ++mine.all;
  const auto refuse = [&] {
    if (--mine.all == 0 && mine.strangers.empty()) addresses_.erase(key);
    return out;
  };
  if (mine.strangers.size() >= limits_.max_strangers_per_address && !mine.strangers.empty())
    shed(*mine.strangers.begin(), out);
  if (mine.all > limits_.max_per_address) {
    if (mine.strangers.empty()) return refuse();  // its authenticated connections fill it
    shed(*mine.strangers.begin(), out);
  }
  const auto stranger_room = limits_.max_connections > limits_.authenticated_reserve
                                 ? limits_.max_connections - limits_.authenticated_reserve
                                 : 1;
  if (strangers_.size() + busy_strangers_ >= stranger_room && !strangers_.empty())
    shed(*strangers_.begin(), out);
  if (entries_.size() >= limits_.max_connections) {
    // Full of authenticated clients: they go on being served, the new one is not.
    if (strangers_.empty()) return refuse();
    shed(*strangers_.begin(), out);
  }
  out.id = next_++;
  entries_.emplace(out.id, Entry{key, false});
  strangers_.insert(out.id);
  mine.strangers.insert(out.id);
  return out;
}

void ConnectionLedger::authenticated(Id id) {
  std::lock_guard lock(mutex_);
  const auto it = entries_.find(id);
  if (it == entries_.end() || it->second.authenticated) return;
  it->second.authenticated = true;
  if (it->second.busy) --busy_strangers_;
  it->second.busy = false;
  strangers_.erase(id);
  addresses_[it->second.key].strangers.erase(id);
}

void ConnectionLedger::busy(Id id) {
  std::lock_guard lock(mutex_);
  const auto it = entries_.find(id);
  if (it == entries_.end() || it->second.authenticated || it->second.busy) return;
  it->second.busy = true;
  ++busy_strangers_;
  strangers_.erase(id);
  addresses_[it->second.key].strangers.erase(id);
}

void ConnectionLedger::waiting(Id id) {
  std::lock_guard lock(mutex_);
  const auto it = entries_.find(id);
  if (it == entries_.end() || !it->second.busy) return;
  it->second.busy = false;
  --busy_strangers_;
  strangers_.insert(id);
  addresses_[it->second.key].strangers.insert(id);
}

void ConnectionLedger::release(Id id) {
  std::lock_guard lock(mutex_);
  drop(id);
}

std::optional<ConnectionLedger::Id> ConnectionLedger::shed_oldest_stranger() {
  std::lock_guard lock(mutex_);
  if (strangers_.empty()) return std::nullopt;
  const auto id = *strangers_.begin();
  drop(id);
  return id;
}

std::size_t ConnectionLedger::open() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

std::size_t ConnectionLedger::strangers() const {
  std::lock_guard lock(mutex_);
  return strangers_.size();
}

void ConnectionLedger::shed(Id id, Admission& out) {
  out.shed.push_back(id);
  drop(id);
}

void ConnectionLedger::drop(Id id) {
  const auto it = entries_.find(id);
  if (it == entries_.end()) return;
  if (it->second.busy) --busy_strangers_;
  strangers_.erase(id);
  const auto address = addresses_.find(it->second.key);
  if (address != addresses_.end()) {
    address->second.strangers.erase(id);
    if (--address->second.all == 0 && address->second.strangers.empty()) addresses_.erase(address);
  }
  entries_.erase(it);
}

}  // namespace bowline::api
