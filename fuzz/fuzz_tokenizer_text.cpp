// Tokenizer use with real vocabularies: the golden tokenizers (llama2 SentencePiece-BPE with byte fallback, llama3
// and qwen3 byte-level BPE; OGX_FUZZ_TOKENIZERS, a colon-separated list of directories, to choose others) are loaded
// once per process; each input's first byte picks one and the rest is the text: encoding with and without special
// tokens, decoding the ids, streaming them back (both stream styles; the per-token style's chunks must be valid
// UTF-8), and decoding the input's bytes read as ids. fuzz_tokenizer fuzzes
// loading (tokenizer.json itself); this target reaches the encode and decode paths thousands of times faster.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "genai/tokenizer/tokenizer.h"
#include "genai/tokenizer/unicode.h"

namespace {
std::vector<std::shared_ptr<ogx::tok::Tokenizer>> g_tokenizers;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* env = std::getenv("OGX_FUZZ_TOKENIZERS");
  std::string dirs;
  if (env && *env) {
    dirs = env;
  } else {
    const std::string base = std::string(OGX_SHARED_DIR) + "/golden/tokenizers/";
    dirs = base + "llama2:" + base + "llama3:" + base + "qwen3";
  }
  std::stringstream ss(dirs);
  for (std::string d; std::getline(ss, d, ':');) {
    try {
      g_tokenizers.push_back(ogx::tok::Tokenizer::load(d));
    } catch (const ogx::Error&) {  // absent (no ../shared): the target then has nothing to do
    }
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (g_tokenizers.empty() || size == 0) return 0;
  const auto& tok = g_tokenizers[data[0] % g_tokenizers.size()];
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  ogx::fuzz::expect_clean([&] {
    for (bool special : {true, false}) {
      std::vector<int32_t> ids = tok->encode(text, special);
      tok->decode(ids);
      ogx::tok::TokenizerStream stream(tok, true);
      for (int32_t id : ids) stream.decode(id);
      stream.flush();
      ogx::tok::TokenizerStream per_token(tok, special, ogx::tok::TokenizerStream::Style::per_token);
      for (int32_t id : ids)
        if (!ogx::tok::is_valid_utf8(per_token.decode(id))) std::abort();
    }
  });
  ogx::fuzz::expect_clean([&] {  // arbitrary ids, out-of-range ones included: a clean error or text
    std::vector<int32_t> ids(text.size() / 4);
    if (!ids.empty()) std::memcpy(ids.data(), text.data(), ids.size() * 4);
    tok->decode(ids);
    ogx::tok::TokenizerStream stream(tok, false);
    for (int32_t id : ids) stream.decode(id);
    ogx::tok::TokenizerStream per_token(tok, false, ogx::tok::TokenizerStream::Style::per_token);
    for (int32_t id : ids)
      if (!ogx::tok::is_valid_utf8(per_token.decode(id))) std::abort();
  });
  return 0;
}
