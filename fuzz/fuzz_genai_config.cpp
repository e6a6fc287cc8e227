// genai_config.json parsing: the file, then (after a NUL) an overlay applied on top, as Config::overlay does.
#include "fuzz_util.h"
#include "genai/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto parts = ogx::fuzz::split(data, size, std::string_view("\0", 1), 2);
  ogx::fuzz::expect_clean([&] {
    ogx::genai::Config c = ogx::genai::Config::parse(parts[0], ".");
    if (parts.size() > 1) c.overlay(parts[1]);
  });
  return 0;
}
