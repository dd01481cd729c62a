// apiary: the command. `apiary run [options]` runs one cycle test, prints the summary and
// writes the JSON report; `apiary workload` saves a seeded workload and `apiary replay`
// pushes one through the writer on one thread. See commands/cli.hpp
// for the subcommands and the exit status.
#include <cstdio>
#include <exception>

#include "commands/cli.hpp"

int main(int argc, char** argv) {
  try {
    return apiary::harness::run_apiary(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "apiary: %s\n", e.what());
    return apiary::harness::exit_failed;
  }
}
