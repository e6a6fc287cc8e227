// Regular expressions (the Rust `regex` syntax subset llguidance accepts, no lookaround or backreferences) compiled
// to a byte-level NFA: character classes over Unicode code points become UTF-8 byte sequences, so one automaton
// lexes the bytes tokens are made of. Syntax: literals, escapes (\d \w \s \D \W \S \n \r \t \f \v \xHH \u{H..}
// \uHHHH and escaped punctuation), classes [..] with ranges, negation and escapes, `.` (any code point but \n;
// (?s) any), groups ( ), (?: ), (?P<name> ), (?<name> ), flags (?i) (?s) (?i: ), alternation, quantifiers * + ?
// {n} {n,} {n,m} (lazy suffix `?` accepted: the language is the same), ^ and $ at the ends (matching is whole).
// json_string mode: the pattern describes a decoded JSON string, the automaton matches its JSON text, quotes
// included: `"`, `\` and control characters inside become their escapes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ogx::genai::guidance {

// Thompson NFA over bytes. States: a byte range (lo..hi) to `out`, a split (out, out2), or a match of a lexeme.
struct Nfa {
  enum Kind : uint8_t { kRange, kSplit, kMatch };
  struct State {
    Kind kind;
    uint8_t lo = 0, hi = 0;
    int32_t out = -1, out2 = -1;  // kSplit: two epsilon edges (out2 may be -1); kRange: the target
    int32_t lexeme = -1;          // kMatch
  };
  std::vector<State> states;  // [n]
  size_t max_states = 1u << 21;  // compile budget (a huge enum or repetition count is an error, not a hang)

  int32_t add(State s);
};

struct RegexOptions {
  bool json_string = false;  // see above
};

// Compiles `pattern` into `nfa` as lexeme `lexeme`; returns its start state. Throws ogx::Error naming the pattern
// and the problem (syntax, unsupported feature, automaton too large).
int32_t compile_regex(Nfa& nfa, const std::string& pattern, int32_t lexeme, const RegexOptions& opts = {});

// `text` as a regex that matches exactly it.
std::string regex_escape(const std::string& text);

}  // namespace ogx::genai::guidance
