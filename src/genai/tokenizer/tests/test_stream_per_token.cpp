// TokenizerStream's per_token style against what ONNX Runtime Extensions' streaming detokenizer (onnxruntime_genai's
// TokenizerStream) returns, as its source (bpe_streaming.hpp at fe4e13f) and its own tests (test_tokenizer_impl.cc
// OrtxTokenizerStreamTest.Llama2Tokenizer, onnxruntime-genai's test_stream) say.
#include <random>

#include "genai/tokenizer/unicode.h"
#include "test_util.h"

namespace ogx::tok::test {
namespace {

using Style = TokenizerStream::Style;

std::string stream_text(TokenizerStream& s, const std::vector<int32_t>& ids) {
  std::string out;
  for (int32_t id : ids) out += s.decode(id);
  return out;
}

std::string per_token(const std::shared_ptr<Tokenizer>& tok, const std::vector<int32_t>& ids, bool skip = true) {
  TokenizerStream s(tok, skip, Style::per_token);
  return stream_text(s, ids);
}

std::string without(std::string s, const std::vector<std::string>& drop) {
  for (const auto& d : drop)
    for (size_t at = s.find(d); at != std::string::npos; at = s.find(d, at)) s.erase(at, d.size());
  return s;
}

TEST(StreamPerToken, PieceRulesOfTheGoldenTokenizers) {
  OGX_REQUIRE_GOLDEN("llama2");
  OGX_REQUIRE_GOLDEN("llama3");
  auto l2 = golden_tokenizer("llama2")->piece_rules();
  EXPECT_EQ(l2.kind, PieceRules::Kind::sentencepiece);  // Replace U+2581 -> ' ' in its decoder Sequence
  EXPECT_TRUE(l2.add_dummy_prefix);                     // Strip of one leading space
  EXPECT_EQ(golden_tokenizer("llama3")->piece_rules().kind, PieceRules::Kind::byte_level);
  EXPECT_TRUE(golden_tokenizer("llama3")->clean_up_tokenization_spaces());
  EXPECT_FALSE(golden_tokenizer("llama2")->clean_up_tokenization_spaces());
}

// SentencePiece: after BOS (a special token) the first word's space is dropped, so a BOS-prefixed prompt streams to
// its text; a fresh stream without BOS keeps the space (the full decode drops it: the one difference).
TEST(StreamPerToken, SentencePieceDropsTheSpaceOnlyAfterASpecialToken) {
  OGX_REQUIRE_GOLDEN("llama2");
  auto tok = golden_tokenizer("llama2");
  const auto ref = load_reference("llama2");  // kept: a range-for over a temporary's member would dangle
  ASSERT_GE(ref["encode"].size(), 5u);
  for (const auto& e : ref["encode"]) {
    auto ids = e["ids"].get<std::vector<int32_t>>();
    ASSERT_EQ(ids[0], tok->bos_token_id());
    // A special token inside the text ("text<s>inside"): the full decode keeps the next word's space, the stream
    // drops it (Extensions' SpmId2Token); elsewhere the two agree.
    std::string want = e["decoded"].get<std::string>();
    for (size_t i = 1; i + 1 < ids.size(); ++i)
      if (tok->is_special(ids[i]) && tok->id_to_token(ids[i + 1]).rfind("\xE2\x96\x81", 0) == 0) {
        const std::string space_word = " " + tok->id_to_token(ids[i + 1]).substr(3);
        const size_t at = want.find(space_word);
        ASSERT_NE(at, std::string::npos) << e["text"];
        want.erase(at, 1);
      }
    EXPECT_EQ(per_token(tok, ids), want) << e["text"];
    EXPECT_EQ(per_token(tok, ids, false), want) << "specials are always skipped";
  }
  EXPECT_EQ(per_token(tok, tok->encode("text<s>inside")), "textinside");
  EXPECT_EQ(per_token(tok, tok->encode("Hello world", false)), " Hello world");
  EXPECT_EQ(per_token(tok, {tok->bos_token_id(), tok->bos_token_id()}), "");
  // Extensions' Llama2Tokenizer stream test: the byte piece <0x20> at the end is a space.
  auto ids = tok->encode("This is a test and the second one is in German. Ich liebe München!");
  ids.push_back(tok->token_to_id("<0x20>"));
  EXPECT_EQ(per_token(tok, ids), "This is a test and the second one is in German. Ich liebe München! ");
}

// onnxruntime-genai's test_stream: one stream reused for several prompts gives each prompt's text (with a BOS
// before each; the full-decode style kept the space of the word after the second BOS).
TEST(StreamPerToken, OneStreamForSeveralPrompts) {
  OGX_REQUIRE_GOLDEN("llama2");
  OGX_REQUIRE_GOLDEN("qwen3");
  for (const char* name : {"llama2", "qwen3"}) {
    auto tok = golden_tokenizer(name);
    TokenizerStream s(tok, true, Style::per_token);
    for (std::string prompt : {"This is a test.", "Rats are awesome pets!", "The quick brown fox jumps over the lazy dog."})
      EXPECT_EQ(stream_text(s, tok->encode(prompt)), prompt) << name;
  }
}

// Byte-level BPE: bytes of each token; special tokens skipped unless skip_special_tokens is off; with
// clean_up_tokenization_spaces (Llama 3's tokenizer_config) a special token adds a space after it unless it is the
// eos token, and one before it when it is the first token of a fresh stream — so Llama 3's BOS streams as two spaces,
// as Extensions' code does.
TEST(StreamPerToken, ByteLevelSpecialTokensAndCleanUpSpaces) {
  OGX_REQUIRE_GOLDEN("llama3");
  OGX_REQUIRE_GOLDEN("qwen3");
  auto l3 = golden_tokenizer("llama3");
  auto ids = l3->encode("Hello world", false);
  ids.insert(ids.begin(), l3->token_to_id("<|begin_of_text|>"));
  EXPECT_EQ(per_token(l3, ids), "  Hello world");
  EXPECT_EQ(per_token(l3, ids, false), " <|begin_of_text|> Hello world");
  const int32_t eos = l3->token_to_id(l3->eos_token());
  EXPECT_EQ(per_token(l3, {ids[1], eos, ids[2]}), "Hello world");  // the eos token: no space after it
  auto qwen = golden_tokenizer("qwen3");  // clean_up_tokenization_spaces false
  const auto qref = load_reference("qwen3");
  ASSERT_GE(qref["encode"].size(), 5u);
  for (const auto& e : qref["encode"]) {
    auto q = e["ids"].get<std::vector<int32_t>>();
    EXPECT_EQ(per_token(qwen, q), e["decoded"].get<std::string>()) << e["text"];
    EXPECT_EQ(per_token(qwen, q, false), e["decoded_keep_special"].get<std::string>()) << e["text"];
  }
}

// The UTF-8 helpers the stream uses: the tail of a character still arriving (a valid lead and its continuations so far;
// a byte no character starts with is invalid, not incomplete), and invalid subparts dropped instead of replaced.
TEST(StreamPerToken, Utf8TailAndDroppingSanitize) {
  EXPECT_EQ(incomplete_utf8_tail("a\xE2"), 1u);
  EXPECT_EQ(incomplete_utf8_tail("a\xE2\x82"), 2u);
  EXPECT_EQ(incomplete_utf8_tail("\xE2\x82\xAC"), 0u);
  EXPECT_EQ(incomplete_utf8_tail("a\xFF"), 0u);
  EXPECT_EQ(incomplete_utf8_tail("a\xC0"), 0u);
  EXPECT_EQ(incomplete_utf8_tail("\xE0\x80"), 0u);  // E0 80 can never complete (overlong)
  EXPECT_EQ(sanitize_utf8("x\xC3" "A\xFFy\xED\xA0\x80z", ""), "xAyz");
  EXPECT_EQ(sanitize_utf8("x\xFFy"), "x\xEF\xBF\xBDy");
}

// A character's bytes across byte tokens arrive whole; invalid bytes are dropped, and only they (Extensions also drops
// the bytes after an invalid lead byte that its length promised, valid ones included).
TEST(StreamPerToken, Utf8HeldBackAndInvalidBytesDropped) {
  OGX_REQUIRE_GOLDEN("llama2");
  auto tok = golden_tokenizer("llama2");
  auto byte = [&](const char* piece) { return tok->token_to_id(piece); };
  TokenizerStream s(tok, true, Style::per_token);
  EXPECT_EQ(s.decode(byte("<0xE2>")), "");
  EXPECT_EQ(s.decode(byte("<0x82>")), "");
  EXPECT_EQ(s.decode(byte("<0xAC>")), "\xE2\x82\xAC");  // U+20AC
  EXPECT_EQ(s.decode(byte("<0xC3>")), "");
  EXPECT_EQ(s.decode(byte("<0x41>")), "A");  // the lead byte C3 is dropped, A kept
  EXPECT_EQ(s.decode(byte("<0xFF>")), "");
  EXPECT_EQ(s.decode(byte("<0xF0>")), "");
  EXPECT_EQ(s.flush(), "");  // an unfinished character is dropped; the stream is fresh again
  EXPECT_EQ(s.decode(tok->encode("Hi", false)[0]), " Hi");
}

// Any ids: valid UTF-8 text that is, but for spaces and U+FFFD, the full decode's; out-of-range ids throw and leave
// the stream usable.
TEST(StreamPerToken, RandomIdsAndOutOfRange) {
  for (const char* name : {"llama2", "llama3", "qwen3"}) {
    OGX_REQUIRE_GOLDEN(name);
    auto tok = golden_tokenizer(name);
    std::mt19937 rng(99);
    std::uniform_int_distribution<int32_t> d(0, static_cast<int32_t>(tok->vocab_size()) - 1);
    for (int round = 0; round < 40; ++round) {
      std::vector<int32_t> ids(1 + round % 23);
      for (auto& id : ids) id = d(rng);
      std::vector<int32_t> plain;  // special tokens aside: clean-up spaces come with them
      for (int32_t id : ids)
        if (!tok->is_special(id)) plain.push_back(id);
      const std::string got = per_token(tok, plain);
      EXPECT_EQ(without(got, {" "}), without(tok->decode(plain, true), {" ", "\xEF\xBF\xBD"})) << name;
      EXPECT_NO_THROW(per_token(tok, ids)) << name;
    }
    TokenizerStream s(tok, true, Style::per_token);
    EXPECT_THROW(s.decode(static_cast<int32_t>(tok->vocab_size()) + 5), ogx::Error);
    EXPECT_EQ(stream_text(s, tok->encode("Hello world", false)).substr(0, 6).find("Hello") != std::string::npos, true);
  }
}

}  // namespace
}  // namespace ogx::tok::test
