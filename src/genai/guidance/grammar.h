// A context-free grammar over lexemes, and the Earley parser that runs it one lexeme at a time.
// Symbols: ids below the lexeme count are terminals (lexer lexemes), the rest nonterminals. The parser keeps one
// row (Earley set) per lexeme scanned; rows are immutable and shared, so a parser state is copied by copying
// pointers (beams, speculative walks over the token trie). Bounded: a row of more than max_row_items items is an
// error (an ambiguous grammar blowing up), as is a grammar of more than max_rules rules.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "genai/guidance/lexer.h"

namespace ogx::genai::guidance {

class GrammarBuilder;

struct Grammar {
  Lexer lexer;
  int32_t ignore = -1;  // the lexeme skipped between lexemes (Lark %ignore), -1 none
  int32_t start = -1;   // the augmented start nonterminal (one rule: start -> user start)
  int32_t nlex = 0;     // terminals are [0, nlex)
  std::vector<int32_t> lhs;          // [rules]
  std::vector<int32_t> rhs;          // dotted rules: each rule's symbols then -(rule + 1)
  std::vector<int32_t> rule_start;   // [rules]: index of the rule's first dotted position in rhs
  std::vector<std::vector<int32_t>> rules_of;  // [nonterminals]: rules with that lhs (index nt - nlex)
  std::vector<uint8_t> nullable;     // [nonterminals]
  std::vector<std::string> names;    // [nonterminals]: for messages
  size_t max_row_items = 200000;
};

struct Item {
  int32_t dot;     // index into Grammar::rhs
  int32_t origin;  // row where the rule started
  bool operator==(const Item& o) const { return dot == o.dot && origin == o.origin; }
};

struct Row {
  std::vector<Item> items;
  std::vector<int32_t> expected;  // sorted lexemes some item expects next
  bool accepting = false;         // the start rule is complete from row 0
};

using Rows = std::vector<std::shared_ptr<const Row>>;

// The first row (before any lexeme).
std::shared_ptr<const Row> earley_initial(const Grammar& g);
// The row after scanning one of `lexemes` (sorted) at the end of rows; null when none is expected.
std::shared_ptr<const Row> earley_scan(const Grammar& g, const Rows& rows, const std::vector<int32_t>& lexemes);

// Builds grammars: lexemes by regex, nonterminals, rules, and the usual sugar.
class GrammarBuilder {
 public:
  GrammarBuilder();
  int32_t lexeme(const std::string& regex, const RegexOptions& opts = {});
  int32_t nonterminal(const std::string& name);
  void rule(int32_t lhs, std::vector<int32_t> rhs);
  int32_t seq(const std::string& name, std::vector<int32_t> rhs);  // a new nonterminal with one rule
  int32_t alt(const std::string& name, const std::vector<std::vector<int32_t>>& alternatives);
  int32_t optional(int32_t sym);
  int32_t star(int32_t sym);
  int32_t plus(int32_t sym);
  void set_ignore(const std::string& regex);
  // Checks the grammar (every nonterminal has a rule, the start symbol derives something) and finishes it.
  std::unique_ptr<Grammar> build(int32_t start);
  size_t max_rules = 500000;

 private:
  struct PendingRule {
    int32_t lhs;
    std::vector<int32_t> rhs;
  };
  std::unique_ptr<Grammar> g_;
  std::vector<std::string> nt_names_;
  std::vector<PendingRule> rules_;
  std::string ignore_;
  bool has_ignore_ = false;
  // Nonterminal ids are assigned before the lexeme count is known: they are encoded as -(index + 2) until build.
};

}  // namespace ogx::genai::guidance
