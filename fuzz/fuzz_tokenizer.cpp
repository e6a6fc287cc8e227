// tokenizer.json: parsing (with tokenizer_config.json after the first NUL), then encoding the text after the second
// NUL (with and without special tokens), decoding the ids, and streaming them back in both stream styles (the
// per-token style's chunks must be valid UTF-8).
#include <cstdlib>

#include "fuzz_util.h"
#include "genai/tokenizer/tokenizer.h"
#include "genai/tokenizer/unicode.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto parts = ogx::fuzz::split(data, size, std::string_view("\0", 1), 3);
  ogx::fuzz::expect_clean([&] {
    auto tok = ogx::tok::Tokenizer::from_json(parts[0], parts.size() > 1 ? parts[1] : "");
    const std::string text = parts.size() > 2 ? parts[2] : "Hello, world! 123 \xe4\xbd\xa0\xe5\xa5\xbd";
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
  return 0;
}
