// "HOST:PORT" as `server.listen` and --listen take it (http_server.hpp); no sockets here.
#include <arpa/inet.h>

#include <stdexcept>
#include <string>

#include "api/http_server.hpp"

namespace bowline::api {

namespace {

bool is_ip_address(const std::string& host) {
  unsigned char bytes[sizeof(in6_addr)];
  const auto bare = host.substr(0, host.find('%'));  // an IPv6 scope (fe80::1%eth0)
  return inet_pton(AF_INET, host.c_str(), bytes) == 1 ||
         inet_pton(AF_INET6, bare.c_str(), bytes) == 1;
}

}  // namespace

std::pair<std::string, unsigned short> split_listen_address(const std::string& listen) {
  std::string host, port;
  if (!listen.empty() && listen.front() == '[') {
    const auto close = listen.find(']');
    if (close == std::string::npos || close + 1 >= listen.size() || listen[close + 1] != ':')
      throw std::invalid_argument("listen address \"" + listen + "\": expected [ADDRESS]:PORT");
    host = listen.substr(1, close - 1);
    port = listen.substr(close + 2);
  } else {
    const auto colon = listen.rfind(':');
    if (colon == std::string::npos || listen.find(':') != colon)
      throw std::invalid_argument("listen address \"" + listen + "\": expected ADDRESS:PORT");
    host = listen.substr(0, colon);
    port = listen.substr(colon + 1);
  }
  if (host.empty())
    throw std::invalid_argument("listen address \"" + listen + "\": the address is missing");
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoul(port) > 65535)
    throw std::invalid_argument("listen address \"" + listen +
                                "\": the port must be a number from 0 to 65535");
  if (!is_ip_address(host))
    throw std::invalid_argument("listen address \"" + listen + "\": \"" + host +
                                "\" is not an IP address");
  return {host, static_cast<unsigned short>(std::stoul(port))};
}

}  // namespace bowline::api
