#include "api/password_gate.hpp"

#include <algorithm>

#include "api/http.hpp"

namespace bowline::api {

std::shared_ptr<PasswordGate::Ticket> PasswordGate::enter(const std::string& client) {
  std::lock_guard lock(mutex_);
  if (clients_.count(client))
    throw HttpError(429, "a password from your address is being checked: try again in 1 s",
                    {{"retryAfter", 1}});
  if (line_.size() >= max_waiting_)
    throw HttpError(429, "the server is checking other logins: try again in 1 s",
                    {{"retryAfter", 1}});
  clients_.insert(client);
  const auto number = next_++;
  line_.push_back(number);
  return std::make_shared<Ticket>(*this, number, client);
}

void PasswordGate::wait_turn(Ticket& ticket) {
  std::unique_lock lock(mutex_);
  const auto mine = [&] { return running_ < slots_ && line_.front() == ticket.number_; };
  if (!turn_.wait_for(lock, patience_, mine))
    throw HttpError(429, "the server is checking other logins: try again in 1 s",
                    {{"retryAfter", 1}});
  line_.pop_front();
  ++running_;
  ticket.running_ = true;
  turn_.notify_all();  // the next in line may have a slot too
}

void PasswordGate::leave(Ticket& ticket) {
  {
    std::lock_guard lock(mutex_);
    if (ticket.running_)
      --running_;
    else
      line_.erase(std::remove(line_.begin(), line_.end(), ticket.number_), line_.end());
    clients_.erase(ticket.client_);
  }
  turn_.notify_all();
}

std::size_t PasswordGate::waiting() const {
  std::lock_guard lock(mutex_);
  return line_.size();
}

}  // namespace bowline::api
