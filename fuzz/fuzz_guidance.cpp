// Structured output (genai/guidance): the first byte picks the constraint type (JSON schema, regex, Lark grammar),
// the rest is its text. A compiled constraint is then walked for a few tokens over a small vocabulary (masks,
// consumption, EOS), so the lexer's lazy DFA and the parser run too.
#include <memory>

#include "fuzz_util.h"
#include "genai/guidance/guidance.h"

namespace {
std::shared_ptr<const ogx::genai::guidance::TokenTrie> vocabulary() {
  static auto trie = [] {
    std::vector<std::string> t = {""};  // 0: EOS
    for (int c = 1; c < 256; c++) t.push_back(std::string(1, (char)c));
    for (const char* s : {"{\"", "\":", "\",", "\"}", "true", "null", "12", "ab", " \"", "[\"", "]}", "é"}) t.push_back(s);
    return std::make_shared<const ogx::genai::guidance::TokenTrie>(t, std::vector<int32_t>{0});
  }();
  return trie;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const char* kTypes[] = {"json_schema", "regex", "lark_grammar"};
  const std::string type = kTypes[data[0] % 3];
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  ogx::fuzz::expect_clean([&] {
    auto g = ogx::genai::guidance::compile_guidance(type, text, vocabulary());
    ogx::genai::guidance::Matcher m(g);
    std::vector<uint64_t> mask;
    for (int step = 0; step < 16 && !m.stopped(); step++) {
      m.allowed(mask);
      std::vector<int32_t> ok;
      for (size_t w = 0; w < mask.size(); w++)
        for (uint64_t bits = mask[w]; bits; bits &= bits - 1) ok.push_back((int32_t)(w * 64 + __builtin_ctzll(bits)));
      int32_t pick = ok.empty() ? -1 : ok[(size_t)(step * 7919 + size) % ok.size()];
      if (pick < 0) break;
      if (!m.consume(pick)) __builtin_trap();  // an allowed token must be consumable
    }
  });
  return 0;
}
