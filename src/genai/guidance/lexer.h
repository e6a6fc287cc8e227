// The lexer of a grammar: every lexeme (terminal) is a regex in one byte NFA; a DFA over it is built lazily, one
// state per set of live NFA states, with transitions on byte classes cached as they are first taken. Which lexemes
// may start depends on the parser (start(allowed)), so the lexer only ever follows lexemes the grammar can use
// next. Lexing is greedy (maximal munch, as llguidance and Lark's contextual lexer): a lexeme ends when the next
// byte cannot extend any live lexeme. Bounded: at most max_states DFA states (an error beyond, naming the limit).
// Not thread-safe: the owner (CompiledGrammar) serializes access.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "genai/guidance/regex.h"

namespace ogx::genai::guidance {

class Lexer {
 public:
  static constexpr int32_t kDead = 0;  // the DFA state of no live lexeme

  // Adds a lexeme (regex text); the same text gives the same id. Throws for an invalid regex.
  int32_t add(const std::string& regex, const RegexOptions& opts = {});
  void finish();  // after the last add: byte classes and the dead state
  size_t lexeme_count() const { return starts_.size(); }
  const std::string& pattern(int32_t lexeme) const { return patterns_[lexeme]; }

  // The DFA state where the lexemes `allowed` (sorted ids) may start.
  int32_t start(const std::vector<int32_t>& allowed);
  int32_t next(int32_t state, uint8_t byte) {
    int32_t t = trans_[(size_t)state * nclasses_ + classes_[byte]];
    return t >= 0 ? t : compute(state, byte);
  }
  // Lexemes that end in this state (sorted ids); the reference lasts until the next new state (start / next).
  const std::vector<int32_t>& accepts(int32_t state) const { return dfa_[state].accepts; }
  size_t state_count() const { return dfa_.size(); }
  size_t max_states = 200000;
  size_t max_work = 50000000;  // NFA states summed over the DFA states built (a regex with exponential DFA blowup)

 private:
  struct DState {
    std::vector<int32_t> nfa;      // sorted NFA states (byte ranges and matches) after epsilon closure
    std::vector<int32_t> accepts;  // lexemes matched here
  };
  int32_t intern(std::vector<int32_t> set);
  void closure(std::vector<int32_t>& seeds);
  int32_t compute(int32_t state, uint8_t byte);

  Nfa nfa_;
  std::vector<int32_t> starts_;        // [lexemes]: NFA start state
  std::vector<std::string> patterns_;  // [lexemes]
  std::unordered_map<std::string, int32_t> by_text_;
  uint8_t classes_[256] = {};
  int nclasses_ = 1;
  std::vector<DState> dfa_;
  std::vector<int32_t> trans_;  // [states x classes]: next state, -1 not computed yet
  std::unordered_map<std::string, int32_t> by_set_;    // NFA set (bytes) -> DFA state
  std::unordered_map<std::string, int32_t> start_of_;  // allowed set (bytes) -> DFA state
  std::vector<uint32_t> mark_;  // closure scratch
  size_t work_ = 0;
  uint32_t epoch_ = 0;
};

}  // namespace ogx::genai::guidance
