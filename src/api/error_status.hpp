// The HTTP status of each kind of engine refusal: one table for the JSON API and for the
// framed export and import sockets, so a refusal reads the same whichever way it came.
#pragma once

#include "engine/engine_error.hpp"

namespace bowline::api {

constexpr int http_status(engine::EngineError::Kind kind) {
  switch (kind) {
    case engine::EngineError::Kind::NotFound:
      return 404;
    case engine::EngineError::Kind::Conflict:
      return 409;
    case engine::EngineError::Kind::Invalid:
      return 422;
    case engine::EngineError::Kind::Forbidden:
      return 403;
  }
  return 500;  // a kind added without a status: a bug of ours, never the caller's
}

}  // namespace bowline::api
