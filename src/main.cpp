#include "cli/app.hpp"

int main(int argc, char** argv) {
  return bowline::cli::run(argc, argv);
}
