// Stand-alone `ogx-build` (same as `ogx build`), for benchmarks before the main binary links the builder.
#include <string>
#include <vector>

#include "builder/cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return ogx::builder::cmd_build(args);
}
