// bowline_fake_sshd MODE ADDRESS:PORT=HOST_KEY_FILE...: stand-ins for guests' sshd (the unit
// tests' FakeSshd) on each address, each with its own host key (OpenSSH private key file).
// MODE stall: the shell never reads what it is sent. Prints "ready" once every one listens;
// runs until SIGTERM or SIGINT.
#include <signal.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "../unit/common/fake_sshd.hpp"

int main(int argc, char** argv) {
  if (argc < 3 || (std::string(argv[1]) != "stall" && std::string(argv[1]) != "echo")) {
    std::cerr << "usage: bowline_fake_sshd stall|echo ADDRESS:PORT=HOST_KEY_FILE...\n";
    return 2;
  }
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  const auto mode = std::string(argv[1]) == "stall" ? bowline::testing::SshdMode::Stall
                                                    : bowline::testing::SshdMode::Echo;
  std::vector<std::unique_ptr<bowline::testing::FakeSshd>> guests;
  try {
    for (int i = 2; i < argc; ++i) {
      const std::string arg = argv[i];
      const auto eq = arg.find('='), colon = arg.rfind(':', eq);
      if (eq == std::string::npos || colon == std::string::npos)
        throw std::runtime_error("expected ADDRESS:PORT=HOST_KEY_FILE, got " + arg);
      std::ifstream file(arg.substr(eq + 1));
      std::stringstream key;
      key << file.rdbuf();
      guests.push_back(std::make_unique<bowline::testing::FakeSshd>(
          arg.substr(0, colon),
          static_cast<unsigned short>(std::stoul(arg.substr(colon + 1, eq - colon - 1))),
          key.str(), mode));
    }
  } catch (const std::exception& e) {
    std::cerr << "bowline_fake_sshd: " << e.what() << "\n";
    return 1;
  }
  std::cout << "ready" << std::endl;
  int signal_number = 0;
  sigwait(&stop, &signal_number);
  return 0;
}
