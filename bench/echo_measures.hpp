// What the access benchmarks measure through a route and straight: a TCP echo service on
// loopback (a guest's service), echo throughput and one-byte round trips over a BytePipe, and
// the statistics they print.
#pragma once

#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "byte_pipe.hpp"

namespace bowline::bench {

double median(std::vector<double> v);
double percentile(std::vector<double> v, double p);  // p in [0, 1]

// A guest's TCP service on loopback that echoes what it gets, one thread per connection.
class TcpEcho {
 public:
  TcpEcho();
  ~TcpEcho();
  TcpEcho(const TcpEcho&) = delete;
  TcpEcho& operator=(const TcpEcho&) = delete;
  unsigned short port() const { return port_; }

 private:
  int listener_ = -1;
  unsigned short port_ = 0;
  std::thread acceptor_;
  std::mutex mutex_;
  std::vector<std::thread> echoes_;
};

// Bytes/s of `total` bytes written in `chunk`-sized writes while a second thread reads the echo.
double echo_throughput(BytePipe& pipe, std::size_t total, std::size_t chunk);
// One byte out, the same byte back; milliseconds.
double round_trip(BytePipe& pipe, char byte);

}  // namespace bowline::bench
