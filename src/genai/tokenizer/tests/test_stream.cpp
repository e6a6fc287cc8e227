// TokenizerStream: concatenated chunks equal the full decode, for every golden string on all three tokenizers.
#include <chrono>
#include <random>

#include "test_util.h"

namespace ogx::tok::test {
namespace {

std::string stream_all(const std::shared_ptr<Tokenizer>& tok, const std::vector<int32_t>& ids, bool skip) {
  TokenizerStream s(tok, skip);
  std::string out;
  for (int32_t id : ids) out += s.decode(id);
  return out + s.flush();
}

class Stream : public ::testing::TestWithParam<std::string> {};

TEST_P(Stream, ChunksConcatenateToFullDecode) {
  OGX_REQUIRE_GOLDEN(GetParam());
  auto ref = load_reference(GetParam());
  auto tok = golden_tokenizer(GetParam());
  for (const auto& e : ref["encode"]) {
    auto ids = e["ids"].get<std::vector<int32_t>>();
    // Without flush: nothing may be held back at the end of a golden string.
    TokenizerStream s(tok);
    std::string out;
    for (int32_t id : ids) out += s.decode(id);
    EXPECT_EQ(out, e["decoded_keep_special"].get<std::string>()) << e["text"];
    EXPECT_EQ(stream_all(tok, ids, true), e["decoded"].get<std::string>()) << e["text"];
  }
}

TEST_P(Stream, RandomIdsMatchFullDecodeWithFlush) {
  OGX_REQUIRE_GOLDEN(GetParam());
  auto tok = golden_tokenizer(GetParam());
  std::mt19937 rng(1234);
  std::uniform_int_distribution<int32_t> d(0, static_cast<int32_t>(tok->vocab_size()) - 1);
  for (int round = 0; round < 50; ++round) {
    std::vector<int32_t> ids(1 + round % 17);
    for (auto& id : ids) id = d(rng);
    EXPECT_EQ(stream_all(tok, ids, false), tok->decode(ids, false));
  }
}

TEST_P(Stream, OutOfRangeIdThrowsAndResetWorks) {
  OGX_REQUIRE_GOLDEN(GetParam());
  auto tok = golden_tokenizer(GetParam());
  TokenizerStream s(tok);
  auto ids = tok->encode("Hello world", false);
  std::string a = s.decode(ids[0]);
  EXPECT_THROW(s.decode(static_cast<int32_t>(tok->vocab_size()) + 5), ogx::Error);
  s.reset();
  std::string out;
  for (int32_t id : ids) out += s.decode(id);
  EXPECT_EQ(out, "Hello world");
}

// Byte tokens that never form UTF-8 (fuzz_tokenizer's regression stream-held-replacement-chars): the stream emits
// the final U+FFFDs instead of re-decoding an ever longer window (quadratic time), and still equals the full decode.
TEST(StreamLimits, InvalidByteRunStreamsInLinearTime) {
  OGX_REQUIRE_GOLDEN("llama2");
  auto tok = golden_tokenizer("llama2");
  const int32_t lead = tok->token_to_id("<0xC3>");  // a lead byte that no continuation byte follows
  ASSERT_GE(lead, 0);
  std::vector<int32_t> ids(20000, lead);
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(stream_all(tok, ids, true), tok->decode(ids, true));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, Stream, ::testing::Values("llama2", "llama3", "qwen3"));

}  // namespace
}  // namespace ogx::tok::test
