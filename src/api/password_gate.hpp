// The password checks that run at once: argon2id takes 64 MiB and tens of milliseconds each,
// so at most `slots` run, and the others wait their turn in the order they came, for a bounded
// time. One client (an address, by address_prefix) has at most one check running or waiting:
// a guesser looping from a few addresses slows only itself, and cannot turn every other
// login into "come back later".
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>

namespace bowline::api {

class PasswordGate {
 public:
  PasswordGate(int slots, std::size_t max_waiting, std::chrono::milliseconds patience)
      : slots_(slots), max_waiting_(max_waiting), patience_(patience) {}

  // A place in the line for `client`, held until the last copy goes. HttpError 429 (Retry-After
  // 1) when the client holds one already, or when max_waiting others wait.
  class Ticket;
  std::shared_ptr<Ticket> enter(const std::string& client);
  // Waits for the ticket's turn (at most `patience`, then HttpError 429) and runs the check
  // with one of the slots.
  template <class Check>
  auto run(Ticket& ticket, Check check) {
    wait_turn(ticket);
    return check();  // the slot goes with the ticket
  }

  std::size_t waiting() const;

 private:
  friend class Ticket;
  void wait_turn(Ticket& ticket);
  void leave(Ticket& ticket);

  const int slots_;
  const std::size_t max_waiting_;
  const std::chrono::milliseconds patience_;
  mutable std::mutex mutex_;
  std::condition_variable turn_;
  int running_ = 0;
  std::uint64_t next_ = 1;
  std::deque<std::uint64_t> line_;  // tickets waiting, oldest first
  std::set<std::string> clients_;   // with a ticket
};

class PasswordGate::Ticket {
 public:
  Ticket(PasswordGate& gate, std::uint64_t number, std::string client)
      : gate_(gate), number_(number), client_(std::move(client)) {}
  ~Ticket() { gate_.leave(*this); }
  Ticket(const Ticket&) = delete;
  Ticket& operator=(const Ticket&) = delete;

 private:
  friend class PasswordGate;
  PasswordGate& gate_;
  const std::uint64_t number_;
  const std::string client_;
  bool running_ = false;
};

}  // namespace bowline::api
