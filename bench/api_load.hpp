// The store and API under numbers (on libvirt's test driver, so no guest is involved): create
// throughput, GET /api/v1/spaces latency at 10,000 spaces idle and while creates run, and the
// server's memory.
#pragma once

#include <string>

namespace bowline::bench {

struct ApiLoadOptions {
  std::string server;
  std::string token;  // an admin's
  std::string template_name;
  int server_pid = 0;
  int creates = 1000;  // started spaces, timed
  int total = 10000;   // spaces in the store for the list (the rest made with start=false)
  int clients = 8;
  int samples = 200;
};

// Prints one JSON line of figures; returns the exit code.
int api_load(const ApiLoadOptions& options);

}  // namespace bowline::bench
