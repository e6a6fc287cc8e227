// Hand-checkable unit tests: normalizers, pre-tokenizers, decoders, Unigram, WordPiece, BPE options,
// added-token flags and tokenizer_config.json handling, on tiny hand-written tokenizer.json fixtures.
#include "genai/tokenizer/components.h"
#include "test_util.h"

namespace ogx::tok::test {
namespace {

using nlohmann::json;

std::string norm(const std::string& spec, const std::string& s) {
  auto n = make_normalizer(json::parse(spec), "normalizer");
  std::string t = s;
  n->normalize(t);
  return t;
}

std::vector<std::string> pre(const std::string& spec, const std::string& s) {
  auto p = make_pre_tokenizer(json::parse(spec), "pre_tokenizer");
  std::vector<std::string> out;
  p->split(s, true, [&](std::string_view t, bool) { out.emplace_back(t); });
  return out;
}

std::vector<std::string> dec(const std::string& spec, std::vector<std::string> tokens) {
  make_decoder(json::parse(spec), "decoder")->decode_chain(tokens);
  return tokens;
}

using V = std::vector<std::string>;

TEST(Normalizers, UnicodeForms) {
  EXPECT_EQ(norm(R"({"type":"NFC"})", "e\xCC\x81"), "\xC3\xA9");
  EXPECT_EQ(norm(R"({"type":"NFD"})", "\xC3\xA9"), "e\xCC\x81");
  EXPECT_EQ(norm(R"({"type":"NFKC"})", "\xEF\xAC\x81"), "fi");  // U+FB01 ligature
  EXPECT_EQ(norm(R"({"type":"NFKD"})", "\xE2\x84\xAB"), "A\xCC\x8A");  // angstrom sign
}

TEST(Normalizers, LowercaseStripReplacePrependSequence) {
  EXPECT_EQ(norm(R"({"type":"Lowercase"})", "HeLLo \xC3\x89T\xC3\x89 \xCE\xA3"), "hello \xC3\xA9t\xC3\xA9 \xCF\x83");
  EXPECT_EQ(norm(R"({"type":"Strip","strip_left":true,"strip_right":true})", " \t a b \n"), "a b");
  EXPECT_EQ(norm(R"({"type":"Strip","strip_left":false,"strip_right":true})", "  a  "), "  a");
  EXPECT_EQ(norm(R"({"type":"Replace","pattern":{"Regex":" {2,}"},"content":" "})", "a   b  c d"), "a b c d");
  EXPECT_EQ(norm(R"({"type":"Replace","pattern":{"String":"ab"},"content":"X"})", "abcab"), "XcX");
  EXPECT_EQ(norm(R"({"type":"Prepend","prepend":"_"})", "x"), "_x");
  EXPECT_EQ(norm(R"({"type":"Prepend","prepend":"_"})", ""), "");
  EXPECT_EQ(norm(R"({"type":"Sequence","normalizers":[{"type":"NFD"},{"type":"StripAccents"},{"type":"Lowercase"}]})",
                 "H\xC3\xA9llo"), "hello");
}

TEST(Normalizers, Bert) {
  EXPECT_EQ(norm(R"({"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":null,"lowercase":true})",
                 "H\xC3\xA9\tllo\xE4\xB8\xADx\x01"), "he llo \xE4\xB8\xAD x");
  EXPECT_EQ(norm(R"({"type":"BertNormalizer","lowercase":false})", "H\xC3\xA9"), "H\xC3\xA9");
}

TEST(PreTokenizers, SplitBehaviors) {
  auto split = [](const std::string& behavior) {
    return pre(R"({"type":"Split","pattern":{"String":"-"},"behavior":")" + behavior + R"(","invert":false})",
               "the-final--countdown");
  };
  EXPECT_EQ(split("Removed"), (V{"the", "final", "countdown"}));
  EXPECT_EQ(split("Isolated"), (V{"the", "-", "final", "-", "-", "countdown"}));
  EXPECT_EQ(split("MergedWithPrevious"), (V{"the-", "final-", "-", "countdown"}));
  EXPECT_EQ(split("MergedWithNext"), (V{"the", "-final", "-", "-countdown"}));
  EXPECT_EQ(split("Contiguous"), (V{"the", "-", "final", "--", "countdown"}));
  EXPECT_EQ(pre(R"({"type":"Split","pattern":{"Regex":"\\w+"},"behavior":"Removed","invert":true})", "ab  cd!"),
            (V{"ab", "cd"}));
  EXPECT_THROW(pre(R"({"type":"Split","pattern":{"String":"-"},"behavior":"Sideways","invert":false})", "x"), ogx::Error);
}

TEST(PreTokenizers, ByteLevelMetaspaceDigitsWhitespacePunctuation) {
  EXPECT_EQ(pre(R"({"type":"ByteLevel","add_prefix_space":true,"use_regex":true})", "Hello world!"),
            (V{"\xC4\xA0Hello", "\xC4\xA0world", "!"}));
  EXPECT_EQ(pre(R"({"type":"ByteLevel","add_prefix_space":false,"use_regex":false})", "a b\n"), (V{"a\xC4\xA0" "b\xC4\x8A"}));
  EXPECT_EQ(pre(R"({"type":"Metaspace","replacement":"\u2581","prepend_scheme":"always","split":true})", "hello world"),
            (V{"\xE2\x96\x81hello", "\xE2\x96\x81world"}));
  EXPECT_EQ(pre(R"({"type":"Metaspace","replacement":"\u2581","prepend_scheme":"never","split":false})", "a b"),
            (V{"a\xE2\x96\x81" "b"}));
  EXPECT_EQ(pre(R"({"type":"Digits","individual_digits":true})", "a123b"), (V{"a", "1", "2", "3", "b"}));
  EXPECT_EQ(pre(R"({"type":"Digits","individual_digits":false})", "a123b"), (V{"a", "123", "b"}));
  EXPECT_EQ(pre(R"({"type":"Whitespace"})", "Hey friend!  How?"), (V{"Hey", "friend", "!", "How", "?"}));
  EXPECT_EQ(pre(R"({"type":"WhitespaceSplit"})", "Hey friend!  How?"), (V{"Hey", "friend!", "How?"}));
  EXPECT_EQ(pre(R"({"type":"Punctuation","behavior":"Isolated"})", "Hey, you!!"), (V{"Hey", ",", " you", "!", "!"}));
  EXPECT_EQ(pre(R"({"type":"Sequence","pretokenizers":[{"type":"WhitespaceSplit"},{"type":"Digits","individual_digits":true}]})",
                "x12 y"), (V{"x", "1", "2", "y"}));
}

TEST(Decoders, Basic) {
  EXPECT_EQ(dec(R"({"type":"ByteFallback"})", {"<0xE4>", "<0xBD>", "<0xA0>", "a"}), (V{"\xE4\xBD\xA0", "a"}));
  EXPECT_EQ(dec(R"({"type":"ByteFallback"})", {"<0xE4>", "<0xBD>", "b"}), (V{"\xEF\xBF\xBD", "\xEF\xBF\xBD", "b"}));
  EXPECT_EQ(dec(R"({"type":"Fuse"})", {"a", "b", "c"}), (V{"abc"}));
  EXPECT_EQ(dec(R"({"type":"Strip","content":" ","start":1,"stop":1})", {"  a  ", "b"}), (V{" a ", "b"}));
  EXPECT_EQ(dec(R"({"type":"Replace","pattern":{"String":"\u2581"},"content":" "})", {"\xE2\x96\x81" "a"}), (V{" a"}));
  EXPECT_EQ(dec(R"({"type":"Metaspace","replacement":"\u2581","prepend_scheme":"always"})",
                {"\xE2\x96\x81Hey", "\xE2\x96\x81you"}), (V{"Hey", " you"}));
  EXPECT_EQ(dec(R"({"type":"ByteLevel"})", {"\xC4\xA0Hello", "\xC4\xA0world"}), (V{" Hello world"}));
  EXPECT_EQ(dec(R"({"type":"WordPiece","prefix":"##","cleanup":true})", {"un", "##aff", "##able", ",", "ok"}),
            (V{"un", "aff", "able", ",", " ok"}));
}

const char* kWordPiece = R"({
  "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": null, "lowercase": true},
  "pre_tokenizer": {"type": "BertPreTokenizer"},
  "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 6], "cls": ["[CLS]", 5]},
  "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
  "added_tokens": [{"id": 0, "content": "[UNK]", "special": true}, {"id": 5, "content": "[CLS]", "special": true},
                   {"id": 6, "content": "[SEP]", "special": true}],
  "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
            "vocab": {"[UNK]": 0, "un": 1, "##aff": 2, "##able": 3, "hello": 4, "[CLS]": 5, "[SEP]": 6, ",": 7}}})";

TEST(Models, WordPiece) {
  auto tok = Tokenizer::from_json(kWordPiece);
  auto ids = tok->encode("Unaffable, HELLO xyz");
  EXPECT_EQ(ids, (std::vector<int32_t>{5, 1, 2, 3, 7, 4, 0, 6}));
  EXPECT_EQ(tok->decode(ids, true), "unaffable, hello");  // [UNK] is special
  EXPECT_EQ(tok->decode(ids, false), "[CLS] unaffable, hello [UNK] [SEP]");
  EXPECT_EQ(tok->encode("Unaffable", false), (std::vector<int32_t>{1, 2, 3}));
}

const char* kUnigram = R"({
  "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": true},
  "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": true},
  "added_tokens": [{"id": 0, "content": "<unk>", "special": true}],
  "model": {"type": "Unigram", "unk_id": 0, "byte_fallback": false,
            "vocab": [["<unk>", 0], ["a", -1], ["b", -2], ["ab", -1.5], ["\u2581", -1], ["c", -3], ["\u2581ab", -5]]}})";

TEST(Models, Unigram) {
  auto tok = Tokenizer::from_json(kUnigram);
  EXPECT_EQ(tok->encode("ab"), (std::vector<int32_t>{4, 3}));        // ▁ + ab (-2.5) beats ▁ab (-5)
  EXPECT_EQ(tok->encode("abzz c"), (std::vector<int32_t>{4, 3, 0, 4, 5}));  // zz fused into one unk
  EXPECT_EQ(tok->encode("ba"), (std::vector<int32_t>{4, 2, 1}));
  EXPECT_EQ(tok->decode(std::vector<int32_t>{4, 3, 4, 5}), "ab c");
}

const char* kBpe = R"({
  "added_tokens": [{"id": 10, "content": "<m>", "special": true, "lstrip": true, "rstrip": false, "normalized": false},
                   {"id": 11, "content": "<r>", "special": false, "rstrip": true, "normalized": false},
                   {"id": 12, "content": "ab", "special": false, "single_word": true, "normalized": true}],
  "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<m>", "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}}], "pair": [],
                     "special_tokens": {"<m>": {"id": "<m>", "ids": [10], "tokens": ["<m>"]}}},
  "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": true, "byte_fallback": false,
            "vocab": {"<unk>": 0, "a": 1, "b": 2, " ": 3, "c": 4, "bc": 5, "abc": 6},
            "merges": ["b c", "a bc"]}})";

TEST(Models, BpeAddedTokenFlags) {
  auto tok = Tokenizer::from_json(kBpe);
  EXPECT_EQ(tok->encode("abc", false), (std::vector<int32_t>{6}));
  EXPECT_EQ(tok->encode("abc"), (std::vector<int32_t>{10, 6}));
  EXPECT_EQ(tok->encode("a <m> b", false), (std::vector<int32_t>{1, 10, 3, 2}));   // lstrip eats the space before
  EXPECT_EQ(tok->encode("a <r> b", false), (std::vector<int32_t>{1, 3, 11, 2}));   // rstrip eats the space after
  EXPECT_EQ(tok->encode("c ab c", false), (std::vector<int32_t>{4, 3, 12, 3, 4}));  // single word: matched
  EXPECT_EQ(tok->encode("cab", false), (std::vector<int32_t>{4, 1, 2}));            // inside a word: not matched
  EXPECT_EQ(tok->encode("xyz a", false), (std::vector<int32_t>{0, 3, 1}));          // unknown chars fused
  EXPECT_TRUE(tok->is_special(10));
  EXPECT_FALSE(tok->is_special(11));
  EXPECT_EQ(tok->decode(std::vector<int32_t>{10, 6, 11}, true), "abc <r>");
}

TEST(Models, BpeByteFallbackIgnoreMergesAndSubwordPrefix) {
  auto tok = Tokenizer::from_json(R"({"model": {"type": "BPE", "byte_fallback": true, "ignore_merges": true,
      "vocab": {"<0xC3>": 0, "<0xA9>": 1, "x": 2, "y": 3, "xy": 4, "xyx": 5}, "merges": ["x y"]},
      "decoder": {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Fuse"}]}})");
  EXPECT_EQ(tok->encode("\xC3\xA9x"), (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(tok->encode("xyx"), (std::vector<int32_t>{5}));  // whole word in vocab: merges ignored
  EXPECT_EQ(tok->encode("xyy"), (std::vector<int32_t>{4, 3}));
  EXPECT_EQ(tok->decode(std::vector<int32_t>{0, 1, 2}), "\xC3\xA9x");
  auto sub = Tokenizer::from_json(R"({"model": {"type": "BPE", "continuing_subword_prefix": "##", "end_of_word_suffix": "</w>",
      "vocab": {"a": 0, "##b": 1, "##c</w>": 2, "a##b": 3, "ab": 4}, "merges": ["a ##b"]}})");
  EXPECT_EQ(sub->encode("abc"), (std::vector<int32_t>{4, 2}));
}

TEST(Config, TokensAddBosAndChatTemplates) {
  std::string cfg = R"({"bos_token": {"content": "<m>", "lstrip": false}, "eos_token": "<r>", "add_bos_token": true,
      "add_eos_token": true, "chat_template": [{"name": "default", "template": "D"}, {"name": "tool_use", "template": "T"}]})";
  std::string no_post = json::parse(kBpe).dump();
  auto j = json::parse(kBpe);
  j.erase("post_processor");
  auto tok = Tokenizer::from_json(j.dump(), cfg);
  EXPECT_EQ(tok->bos_token_id(), 10);
  EXPECT_EQ(tok->eos_token_ids(), std::vector<int32_t>{11});
  EXPECT_EQ(tok->encode("abc"), (std::vector<int32_t>{10, 6, 11}));
  EXPECT_EQ(tok->encode("abc", false), (std::vector<int32_t>{6}));
  EXPECT_EQ(tok->chat_template(), "D");
  EXPECT_EQ(tok->chat_template("tool_use"), "T");
  EXPECT_EQ(tok->chat_template("nope"), "");
  // With a template post-processor, the template decides (no double BOS).
  auto tok2 = Tokenizer::from_json(no_post, R"({"bos_token": "<m>", "add_bos_token": true, "chat_template": "S"})");
  EXPECT_EQ(tok2->encode("abc"), (std::vector<int32_t>{10, 6}));
  EXPECT_EQ(tok2->chat_template(), "S");
  EXPECT_THROW(Tokenizer::from_json(no_post, R"({"chat_template": 5})"), ogx::Error);
  EXPECT_THROW(tok2->apply_chat_template("not json", true), ogx::Error);
}

}  // namespace
}  // namespace ogx::tok::test
