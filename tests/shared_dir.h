// Locates ../shared (reference material); tests that need it skip with a message when it is absent.
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace ogx::test {

inline std::string shared_dir() {
  const char* compiled = OGX_SHARED_DIR;
  return std::filesystem::exists(compiled) ? std::string(compiled) : std::string();
}

#define OGX_REQUIRE_SHARED()                                                           \
  do {                                                                                 \
    if (::ogx::test::shared_dir().empty())                                             \
      GTEST_SKIP() << "../shared is absent (reference material): test skipped";        \
  } while (0)

// The same for one piece of it (a copy of ../shared may hold only some golden models, as on the GPU machine).
#define OGX_REQUIRE_SHARED_PATH(path)                                                  \
  do {                                                                                 \
    OGX_REQUIRE_SHARED();                                                              \
    if (!std::filesystem::exists(path))                                                \
      GTEST_SKIP() << (path) << " is absent from ../shared: test skipped";             \
  } while (0)

}  // namespace ogx::test
