#include <csignal>

#include "cli/app.hpp"

int main(int argc, char** argv) {
  // A peer that goes away (a libvirtd connection, an HTTP client) must surface as an error
  // from write(), not kill the process: libvirt asks its users to ignore SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  return bowline::cli::run(argc, argv);
}
