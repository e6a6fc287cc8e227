#include "genai/guidance/grammar.h"

#include <algorithm>
#include <unordered_set>

#include "common/error.h"

namespace ogx::genai::guidance {

namespace {
inline int32_t nt_index(int32_t encoded) { return -encoded - 2; }

struct ItemHash {
  size_t operator()(const Item& i) const { return std::hash<uint64_t>()(((uint64_t)(uint32_t)i.dot << 32) | (uint32_t)i.origin); }
};

// Completes a row whose first items are given: predictions and completions until nothing changes.
std::shared_ptr<const Row> close_row(const Grammar& g, const Rows& rows, std::vector<Item> seed) {
  const int32_t k = (int32_t)rows.size();  // the new row's index
  auto row = std::make_shared<Row>();
  std::unordered_set<Item, ItemHash> seen;
  std::vector<Item>& items = row->items;
  auto add = [&](Item it) {
    if (seen.insert(it).second) {
      items.push_back(it);
      OGX_CHECK(items.size() <= g.max_row_items, "grammar parse exceeds ", g.max_row_items,
                " Earley items at one position (the grammar is too ambiguous)");
    }
  };
  for (auto& it : seed) add(it);
  std::vector<int32_t> expected;
  for (size_t i = 0; i < items.size(); i++) {
    const Item it = items[i];
    const int32_t sym = g.rhs[it.dot];
    if (sym < 0) {  // complete: advance the items of the origin row that wait for this rule's lhs
      const int32_t rule = -sym - 1, lhs = g.lhs[rule];
      if (lhs == g.start && it.origin == 0) row->accepting = true;
      const std::vector<Item>& from = it.origin == k ? items : rows[it.origin]->items;
      for (size_t j = 0; j < from.size(); j++) {
        const Item w = from[j];
        if (g.rhs[w.dot] == lhs) add({w.dot + 1, w.origin});
      }
    } else if (sym < g.nlex) {
      expected.push_back(sym);
    } else {
      const int32_t nt = sym - g.nlex;
      for (int32_t r : g.rules_of[nt]) add({g.rule_start[r], k});
      if (g.nullable[nt]) add({it.dot + 1, it.origin});  // Aycock-Horspool: a nullable symbol may be skipped
    }
  }
  std::sort(expected.begin(), expected.end());
  expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
  row->expected = std::move(expected);
  return row;
}
}  // namespace

std::shared_ptr<const Row> earley_initial(const Grammar& g) {
  std::vector<Item> seed;
  for (int32_t r : g.rules_of[g.start - g.nlex]) seed.push_back({g.rule_start[r], 0});
  return close_row(g, {}, std::move(seed));
}

std::shared_ptr<const Row> earley_scan(const Grammar& g, const Rows& rows, const std::vector<int32_t>& lexemes) {
  const Row& last = *rows.back();
  std::vector<Item> seed;
  for (const Item& it : last.items) {
    int32_t sym = g.rhs[it.dot];
    if (sym >= 0 && sym < g.nlex && std::binary_search(lexemes.begin(), lexemes.end(), sym))
      seed.push_back({it.dot + 1, it.origin});
  }
  if (seed.empty()) return nullptr;
  return close_row(g, rows, std::move(seed));
}

GrammarBuilder::GrammarBuilder() : g_(std::make_unique<Grammar>()) {}

int32_t GrammarBuilder::lexeme(const std::string& regex, const RegexOptions& opts) {
  return g_->lexer.add(regex, opts);
}

int32_t GrammarBuilder::nonterminal(const std::string& name) {
  OGX_CHECK(nt_names_.size() < max_rules, "grammar exceeds ", max_rules, " nonterminals");
  nt_names_.push_back(name);
  return -(int32_t)(nt_names_.size() - 1) - 2;
}

void GrammarBuilder::rule(int32_t lhs, std::vector<int32_t> rhs) {
  OGX_CHECK(lhs <= -2, "internal: rule for a non-nonterminal");
  OGX_CHECK(rules_.size() < max_rules, "grammar exceeds ", max_rules, " rules");
  rules_.push_back({lhs, std::move(rhs)});
}

int32_t GrammarBuilder::seq(const std::string& name, std::vector<int32_t> rhs) {
  int32_t n = nonterminal(name);
  rule(n, std::move(rhs));
  return n;
}

int32_t GrammarBuilder::alt(const std::string& name, const std::vector<std::vector<int32_t>>& alternatives) {
  int32_t n = nonterminal(name);
  for (auto& a : alternatives) rule(n, a);
  return n;
}

int32_t GrammarBuilder::optional(int32_t sym) { return alt("opt", {{sym}, {}}); }

int32_t GrammarBuilder::star(int32_t sym) {
  int32_t n = nonterminal("star");
  rule(n, {});
  rule(n, {n, sym});
  return n;
}

int32_t GrammarBuilder::plus(int32_t sym) {
  int32_t n = nonterminal("plus");
  rule(n, {sym});
  rule(n, {n, sym});
  return n;
}

void GrammarBuilder::set_ignore(const std::string& regex) {
  ignore_ = has_ignore_ ? "(?:" + ignore_ + ")|(?:" + regex + ")" : regex;
  has_ignore_ = true;
}

std::unique_ptr<Grammar> GrammarBuilder::build(int32_t user_start) {
  Grammar& g = *g_;
  if (has_ignore_) g.ignore = g.lexer.add(ignore_);
  g.nlex = (int32_t)g.lexer.lexeme_count();
  g.lexer.finish();
  int32_t aug = nonterminal("start'");
  rule(aug, {user_start});
  const size_t nnt = nt_names_.size();
  auto map = [&](int32_t s) { return s >= 0 ? s : g.nlex + nt_index(s); };
  g.start = map(aug);
  g.rules_of.assign(nnt, {});
  g.names = nt_names_;
  for (size_t r = 0; r < rules_.size(); r++) {
    g.lhs.push_back(map(rules_[r].lhs));
    g.rule_start.push_back((int32_t)g.rhs.size());
    for (int32_t s : rules_[r].rhs) g.rhs.push_back(map(s));
    g.rhs.push_back(-(int32_t)r - 1);
    g.rules_of[nt_index(rules_[r].lhs)].push_back((int32_t)r);
  }
  // Nullable and productive nonterminals (fixpoints).
  g.nullable.assign(nnt, 0);
  std::vector<uint8_t> productive(nnt, 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < rules_.size(); r++) {
      const int32_t nt = g.lhs[r] - g.nlex;
      bool nul = true, prod = true;
      for (int32_t i = g.rule_start[r]; g.rhs[i] >= 0; i++) {
        int32_t s = g.rhs[i];
        if (s < g.nlex) nul = false;
        else nul = nul && g.nullable[s - g.nlex], prod = prod && productive[s - g.nlex];
      }
      if (nul && !g.nullable[nt]) g.nullable[nt] = 1, changed = true;
      if (prod && !productive[nt]) productive[nt] = 1, changed = true;
    }
  }
  OGX_CHECK(productive[g.start - g.nlex], "the grammar derives no string (its start rule never completes)");
  // Rules through unproductive nonterminals can never complete: drop them so the parser's expected lexemes are
  // exactly the ones that can lead to a complete parse.
  for (size_t nt = 0; nt < nnt; nt++) {
    auto& rs = g.rules_of[nt];
    rs.erase(std::remove_if(rs.begin(), rs.end(),
                            [&](int32_t r) {
                              for (int32_t i = g.rule_start[r]; g.rhs[i] >= 0; i++)
                                if (g.rhs[i] >= g.nlex && !productive[g.rhs[i] - g.nlex]) return true;
                              return false;
                            }),
             rs.end());
  }
  return std::move(g_);
}

}  // namespace ogx::genai::guidance
