// Token masks against a brute force (a token is allowed exactly when consuming it succeeds), random walks through
// JSON schemas, regexes and Lark grammars over a small synthetic vocabulary, and adversarial inputs.
#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <random>
#include <regex>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "genai/guidance/guidance.h"
#include "genai/guidance/logit_mask.h"

using namespace ogx::genai::guidance;

namespace {

// Every printable ASCII byte, some multi-byte UTF-8, and multi-character tokens that cross lexeme boundaries.
std::shared_ptr<const TokenTrie> synthetic_vocab() {
  std::vector<std::string> t;
  t.push_back("<eos>");
  for (int c = 32; c < 127; c++) t.push_back(std::string(1, (char)c));
  for (const char* s : {"\n", "\t", "é", "😀", "{\"", "\":", "\",", "\"}", "\": \"", "\", \"", "true", "false", "null",
                        "12", "-1", "0.", ".5", "e+", "ab", "abc", " \"", "\"]", "[\"", "}]", "]}", "},", "{}", "[]",
                        "name", "\"name\"", "age", "\":\"", ", ", ": ", "  ", "2023", "-0", "01", "T1", ":00", "Z\"",
                        "@", ".com", "\\\"", "\\n", "\\u00", "\"\"", "yes", "no", "+", "1e", "]]", "[[", "a\"", "xyz"})
    t.push_back(s);
  t.push_back("<eos>");  // a special token with text: never matched as text (it is removed below)
  t.back().clear();
  return std::make_shared<TokenTrie>(t, std::vector<int32_t>{0});
}

bool bit(const std::vector<uint64_t>& m, int32_t t) { return m[(size_t)t >> 6] >> (t & 63) & 1; }

// Random walk: checks each step's mask against consume() on copies; returns the text when EOS was reached.
std::optional<std::string> walk(std::shared_ptr<CompiledGrammar> g, std::mt19937& rng, int max_steps, bool prefer_end) {
  Matcher m(g);
  const TokenTrie& vocab = g->trie();
  std::string text;
  std::vector<uint64_t> mask;
  for (int step = 0; step < max_steps; step++) {
    m.allowed(mask);
    std::vector<int32_t> ok;
    for (int32_t t = 0; t < (int32_t)vocab.vocab_size(); t++) {
      Matcher copy = m;
      bool consumed = copy.consume(t);
      EXPECT_EQ(bit(mask, t), consumed) << "token " << t << " '" << vocab.bytes(t) << "' after '" << text << "'";
      if (bit(mask, t) != consumed) return std::nullopt;
      if (consumed) ok.push_back(t);
    }
    EXPECT_FALSE(ok.empty()) << "dead end after '" << text << "'";
    if (ok.empty()) return std::nullopt;
    int32_t pick = ok[rng() % ok.size()];
    if (prefer_end && step > max_steps / 2 && bit(mask, 0)) pick = 0;
    if (vocab.is_eos(pick)) return text;
    EXPECT_TRUE(m.consume(pick));
    text += vocab.bytes(pick);
  }
  return std::nullopt;
}

}  // namespace

TEST(GuidanceMatcher, JsonSchemaMasksEqualBruteForce) {
  auto vocab = synthetic_vocab();
  const char* schemas[] = {
      R"({"type":"object","properties":{"name":{"type":"string","maxLength":4},"age":{"type":"integer","minimum":0,"maximum":120}},"required":["name","age"],"additionalProperties":false})",
      R"({"type":"array","items":{"enum":["yes","no",1,null]},"minItems":1,"maxItems":3})",
      R"({"anyOf":[{"type":"boolean"},{"type":"number","minimum":-1.5,"maximum":2.25},{"type":"null"}]})",
      R"({"type":"object","properties":{"a":{"type":"string","format":"date"}},"required":["a"],"x-guidance":{"whitespace_flexible":false}})",
      R"({"type":"object","properties":{"k":{"const":"v"}},"additionalProperties":{"type":"integer","maximum":9,"minimum":0},"maxProperties":3,"x-guidance":{"lenient":true}})",
      R"({"$defs":{"n":{"type":"object","properties":{"v":{"type":"integer","minimum":0,"maximum":9},"next":{"anyOf":[{"$ref":"#/$defs/n"},{"type":"null"}]}},"required":["v","next"],"additionalProperties":false}},"$ref":"#/$defs/n"})",
      R"({"type":"string","pattern":"^a[bc]+\"?$"})",
      "",  // JSON mode
  };
  std::mt19937 rng(1);
  for (const char* s : schemas) {
    auto g = compile_guidance(s[0] ? "json_schema" : "json_object", s, vocab);
    int completed = 0;
    for (int run = 0; run < 12; run++) {
      auto text = walk(g, rng, 60, true);
      if (!text) continue;
      completed++;
      EXPECT_TRUE(nlohmann::json::accept(*text)) << *text << " for " << s;
    }
    if (s[0]) {
      EXPECT_GT(completed, 0) << s;
    }  // JSON mode: strings of any length may not end in 60 steps
  }
}

TEST(GuidanceMatcher, RegexAndLarkMasksEqualBruteForce) {
  auto vocab = synthetic_vocab();
  std::mt19937 rng(2);
  auto rx = compile_guidance("regex", "(?:ab|xyz){1,3}-?[0-9]{2}", vocab);
  std::regex ref("(?:ab|xyz){1,3}-?[0-9]{2}");
  for (int run = 0; run < 20; run++) {
    auto text = walk(rx, rng, 40, true);
    if (text) {
      EXPECT_TRUE(std::regex_match(*text, ref)) << *text;
    }
  }
  const char* lark = R"(
start: greeting " " NAME ("," NAME)* "!"?
greeting: "hi" | "yes"i
NAME: /[a-c]+/ | "xyz"
)";
  auto lk = compile_guidance("lark_grammar", lark, vocab);
  std::regex lref("(?:hi|[yY][eE][sS]) (?:[a-c]+|xyz)(?:,(?:[a-c]+|xyz))*!?");
  int done = 0;
  for (int run = 0; run < 20; run++) {
    auto text = walk(lk, rng, 40, true);
    if (!text) continue;
    done++;
    EXPECT_TRUE(std::regex_match(*text, lref)) << *text;
  }
  EXPECT_GT(done, 0);
  const char* ignore = R"(
start: "[" (INT ("," INT)*)? "]"
%import common.INT
%ignore " "
)";
  auto ig = compile_guidance("lark_grammar", ignore, vocab);
  for (int run = 0; run < 10; run++) (void)walk(ig, rng, 30, true);
  const char* json_in_lark = "start: \"a\" %json {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 3}\n";
  auto jl = compile_guidance("lark_grammar", json_in_lark, vocab);
  // A \x / \u escape with non-hex digits is a clean error (std::stoul threw std::invalid_argument: a fuzzer crash).
  EXPECT_THROW(compile_guidance("lark_grammar", "start: \"\\x\"0\"\n", vocab), ogx::Error);
  EXPECT_THROW(compile_guidance("lark_grammar", "start: \"\\uZZZZ\"\n", vocab), ogx::Error);
  EXPECT_NE(compile_guidance("lark_grammar", "start: \"\\x41\\u00e9\"\n", vocab), nullptr);
  for (int run = 0; run < 10; run++) {
    auto text = walk(jl, rng, 10, true);
    if (text) {
      EXPECT_TRUE(*text == "a1" || *text == "a2" || *text == "a3") << *text;
    }
  }
}

TEST(GuidanceMatcher, EosOnlyWhereTheGrammarAccepts) {
  auto vocab = synthetic_vocab();
  auto g = compile_guidance("json_schema", R"({"type":"object","properties":{"a":{"type":"boolean"}},"required":["a"]})", vocab);
  Matcher m(g);
  EXPECT_FALSE(m.accepting());
  EXPECT_TRUE(m.consume_bytes("{\"a\":true"));
  EXPECT_FALSE(m.accepting());
  EXPECT_FALSE(m.consume_bytes("]"));
  EXPECT_TRUE(m.consume_bytes("}"));
  EXPECT_TRUE(m.accepting());
  EXPECT_FALSE(m.consume_bytes(" "));  // no whitespace after the value
  EXPECT_TRUE(m.consume(0));           // EOS
  EXPECT_TRUE(m.stopped());
}

TEST(GuidanceMatcher, AdversarialInputsFailCleanly) {
  auto vocab = synthetic_vocab();
  std::string deep = "{\"type\":\"array\",\"items\":";
  std::string nested;
  for (int i = 0; i < 300; i++) nested += deep;
  nested += "true";
  for (int i = 0; i < 300; i++) nested += "}";
  std::string huge_enum = "{\"enum\":[";
  for (int i = 0; i < 300000; i++) huge_enum += (i ? ",\"" : "\"") + std::string(8, (char)('a' + i % 26)) + std::to_string(i) + "\"";
  huge_enum += "]}";
  const std::pair<const char*, std::string> bad[] = {
      {"json_schema", "{"},
      {"json_schema", "[1,2]"},
      {"json_schema", R"({"type":"strin"})"},
      {"json_schema", R"({"$ref":"#/$defs/missing"})"},
      {"json_schema", R"({"type":"integer","minimum":5,"maximum":1})"},
      {"json_schema", R"({"type":"string","format":"color"})"},
      {"json_schema", R"({"not":{"type":"string"}})"},
      {"json_schema", R"({"type":"array","minItems":100000})"},
      {"json_schema", R"x({"type":"string","pattern":"(?=x)"})x"},
      {"json_schema", R"({"$defs":{"a":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"})"},
      {"json_schema", nested},
      {"json_schema", huge_enum},
      {"regex", "(ab"},
      {"regex", "a{99999}{99999}"},
      {"lark_grammar", "start: foo\n"},
      {"lark_grammar", "rule: \"a\"\n"},
      {"lark_grammar", "start: A\nA: B\nB: A\n"},
      {"lark_grammar", "start: start\n"},
      {"grammar", "start: \"a\""},
  };
  for (auto& [type, data] : bad) {
    try {
      auto g = compile_guidance(type, data, vocab);
      ADD_FAILURE() << type << " " << data.substr(0, 80) << " compiled";
    } catch (const ogx::Error& e) {
      EXPECT_GT(std::string(e.what()).size(), 10u);
    }
  }
  // Deep recursion in a valid schema is fine: the parser follows it without compile-time expansion.
  auto rec = compile_guidance("json_schema", R"({"type":"array","items":{"$ref":"#"},"maxItems":2})", vocab);
  Matcher m(rec);
  std::string deep_value(200, '[');
  EXPECT_TRUE(m.consume_bytes(deep_value));
  EXPECT_TRUE(m.consume_bytes(std::string(200, ']')));
  EXPECT_TRUE(m.accepting());
}

// LogitMask::apply_row (host logits) bans exactly the tokens packed() leaves out: a vocabulary of the synthetic tokens
// repeated to 1,000 entries (full 64-token words, mixed, and a partial last word; logits wider than the vocabulary are
// banned past it), along a random walk of a permissive regex and a JSON schema.
TEST(LogitMask, ApplyRowBansWhatPackedLeavesOut) {
  std::vector<std::string> t{"<eos>"};
  auto base = synthetic_vocab();
  while (t.size() < 1000) t.push_back(base->bytes((int32_t)(1 + t.size() % (base->vocab_size() - 2))));
  auto vocab = std::make_shared<TokenTrie>(t, std::vector<int32_t>{0});
  std::mt19937 rng(5);
  for (auto [kind, spec] : {std::pair<const char*, const char*>{"regex", "[a-z ]+"},
                            {"json_schema", R"({"type":"object","properties":{"name":{"type":"string"}}})"}}) {
    LogitMask mask(compile_guidance(kind, spec, vocab), 1);
    for (int step = 0; step < 12; step++) {
      const int64_t V = 1000 + 40;  // logits past the vocabulary (a padded lm_head)
      std::vector<float> logits(V);
      for (float& x : logits) x = (float)(rng() % 1000) * 0.01f - 5.0f;
      std::vector<float> got = logits;
      mask.apply_row(0, got.data(), V);
      std::vector<uint32_t> bits;
      mask.packed(0, 1000, bits);
      std::vector<int32_t> ok;
      for (int64_t i = 0; i < V; i++) {
        const bool allowed = i < 1000 && (bits[i / 32] >> (i % 32) & 1);
        EXPECT_EQ(got[i], allowed ? logits[i] : std::numeric_limits<float>::lowest()) << kind << " token " << i;
        if (allowed && i > 0) ok.push_back((int32_t)i);
      }
      if (ok.empty()) break;
      mask.consume({ok[rng() % ok.size()]}, {false});
    }
  }
}
