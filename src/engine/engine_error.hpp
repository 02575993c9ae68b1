// What the engine and its nodes refuse, by kind, so the API maps each to a status code.
#pragma once

#include <stdexcept>
#include <string>

namespace bowline::engine {

class EngineError : public std::runtime_error {
 public:
  // Forbidden: not for this user, whatever the state (a quota it would go over).
  enum class Kind { NotFound, Conflict, Invalid, Forbidden };
  EngineError(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

}  // namespace bowline::engine
