// Token-level constraint: which tokens of the vocabulary may come next, and consuming the token picked.
// A Matcher is one sequence's state: the parser rows and the lexer's DFA state (the bytes of the lexeme under
// way). allowed() walks the token trie against it: tokens whose bytes stay inside the current lexeme depend on the
// lexer state only and are cached per DFA state as a bit mask, with the trie nodes where a lexeme ends inside a
// token (boundaries); at those the parser scans the lexeme and the walk continues from the next lexer state
// (cached per (state, trie node)). EOS is allowed exactly where the grammar accepts. Copying a Matcher is cheap
// (rows are shared), for beams.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "genai/guidance/grammar.h"
#include "genai/guidance/token_trie.h"

namespace ogx::genai::guidance {

// A grammar and a vocabulary, with the walk caches every matcher of it shares (guarded by a mutex).
class CompiledGrammar {
 public:
  CompiledGrammar(std::unique_ptr<Grammar> g, std::shared_ptr<const TokenTrie> trie);
  const Grammar& grammar() const { return *g_; }
  const TokenTrie& trie() const { return *trie_; }
  size_t mask_words() const { return (trie_->vocab_size() + 63) / 64; }

 private:
  friend class Matcher;
  struct Walk {
    std::vector<uint64_t> bits;     // root walks: [mask_words] tokens inside the lexeme
    std::vector<int32_t> tokens;    // subtree walks: the same, as a list
    // (trie node, its accepting DFA state) where the lexeme ends before some child's byte (kRoot: before the
    // first byte of a token); the children whose byte cannot extend the lexeme start the next one.
    std::vector<std::pair<uint32_t, int32_t>> boundaries;
  };
  static constexpr uint32_t kRoot = 0xffffffffu;
  const Walk& root_walk(int32_t state, bool fresh);
  // The children of `node` that end the lexeme in `accepting`, walked from the next lexeme's start state.
  const Walk& children_walk(int32_t start, int32_t accepting, uint32_t node);
  void walk(int32_t state, bool fresh, uint32_t begin, uint32_t end, Walk& w);
  int32_t lexer_start(const std::vector<int32_t>& expected, bool allow_ignore);

  std::unique_ptr<Grammar> g_;
  std::shared_ptr<const TokenTrie> trie_;
  std::shared_ptr<const Row> initial_;
  std::mutex mu_;
  std::unordered_map<uint64_t, std::unique_ptr<Walk>> walks_;
  size_t cached_bytes_ = 0;
  std::vector<int32_t> stack_;     // [trie depth + 1] walk scratch: DFA state after each depth
  std::vector<uint32_t> path_;     // [trie depth + 1]: node at each depth
  std::vector<uint32_t> marked_;   // [trie depth + 1]: the node whose boundary was recorded at that depth
};

class Matcher {
 public:
  explicit Matcher(std::shared_ptr<CompiledGrammar> g);
  // Bit mask over the vocabulary ([mask_words] 64-bit words, bit t of word t/64): the tokens that may come next.
  void allowed(std::vector<uint64_t>& mask);
  bool accepting();                  // EOS allowed now
  // Consumes a token (EOS: the grammar must accept; the matcher is then stopped). False: the token is not allowed
  // (the state is unchanged).
  bool consume(int32_t token);
  bool consume_bytes(const std::string& bytes);
  bool stopped() const { return stopped_; }
  const CompiledGrammar& compiled() const { return *g_; }

 private:
  struct State {
    Rows rows;
    int32_t lex = 0;         // DFA state of the lexeme under way
    bool fresh = true;       // no byte of it consumed yet
    bool after_ignore = false;
  };
  bool step(State& s, uint8_t byte) const;  // caller holds the mutex
  bool commit(State& s, const std::vector<int32_t>& accepted) const;
  bool accepts(const State& s) const;
  void add_boundaries(const State& s, const CompiledGrammar::Walk& w, std::vector<uint64_t>& mask, int depth);

  std::shared_ptr<CompiledGrammar> g_;
  State st_;
  bool stopped_ = false;
};

}  // namespace ogx::genai::guidance
