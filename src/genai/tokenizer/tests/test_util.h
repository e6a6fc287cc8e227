#pragma once
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "genai/tokenizer/tokenizer.h"

namespace ogx::tok::test {

inline std::string golden_dir(const std::string& name) {
  return std::string(OGX_SHARED_DIR) + "/golden/tokenizers/" + name;
}

inline bool have_golden(const std::string& name) {
  std::ifstream f(golden_dir(name) + "/reference.json");
  return f.good();
}

inline nlohmann::json load_reference(const std::string& name) {
  std::ifstream f(golden_dir(name) + "/reference.json");
  std::stringstream ss;
  ss << f.rdbuf();
  return nlohmann::json::parse(ss.str());
}

// Tokenizers are big: load each golden once per test binary.
inline std::shared_ptr<Tokenizer> golden_tokenizer(const std::string& name) {
  static std::map<std::string, std::shared_ptr<Tokenizer>> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  auto t = Tokenizer::load(golden_dir(name));
  cache[name] = t;
  return t;
}

#define OGX_REQUIRE_GOLDEN(name)                                                                     \
  do {                                                                                               \
    if (!::ogx::tok::test::have_golden(name))                                                        \
      GTEST_SKIP() << "golden tokenizer " << name << " not found under " << OGX_SHARED_DIR           \
                   << "/golden/tokenizers (reference material ../shared absent)";                   \
  } while (0)

}  // namespace ogx::tok::test
