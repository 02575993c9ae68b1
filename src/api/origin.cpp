#include "api/origin.hpp"

#include "util/strings.hpp"

namespace bowline::api {

bool same_origin(const Request& request) {
  const auto origin = util::to_lower(request.header("origin"));
  const auto host = util::to_lower(request.header("host"));
  if (host.empty()) return false;
  return origin == "http://" + host || origin == "https://" + host;
}

void check_origin(const Caller& caller, const Request& request) {
  if (request.header("origin").empty()) {
    if (caller.by_session)
      throw HttpError(403, "a request from a browser session needs this server's Origin");
  } else if (!same_origin(request)) {
    throw HttpError(403, "the Origin " + request.header("origin") + " is not this server's");
  }
}

void check_origin_if_sent(const Request& request) {
  if (!request.header("origin").empty() && !same_origin(request))
    throw HttpError(403, "the Origin " + request.header("origin") + " is not this server's");
}

}  // namespace bowline::api
