#include "genai/guidance/matcher.h"

#include <algorithm>
#include <cstdint>

#include "common/error.h"

namespace ogx::genai::guidance {

namespace {
constexpr size_t kMaxCacheBytes = 256u << 20;  // walk caches beyond this are dropped and rebuilt as needed
constexpr int kMaxBoundaryDepth = 64;          // lexemes ending inside one token, nested
}  // namespace

CompiledGrammar::CompiledGrammar(std::unique_ptr<Grammar> g, std::shared_ptr<const TokenTrie> trie)
    : g_(std::move(g)), trie_(std::move(trie)) {
  initial_ = earley_initial(*g_);
  stack_.assign((size_t)trie_->max_depth() + 2, 0);
  path_.assign(stack_.size(), kRoot);
  marked_.assign(stack_.size(), kRoot - 1);
}

int32_t CompiledGrammar::lexer_start(const std::vector<int32_t>& expected, bool allow_ignore) {
  if (!allow_ignore || g_->ignore < 0) return g_->lexer.start(expected);
  std::vector<int32_t> v = expected;
  v.insert(std::upper_bound(v.begin(), v.end(), g_->ignore), g_->ignore);
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return g_->lexer.start(v);
}

void CompiledGrammar::walk(int32_t state, bool fresh, uint32_t begin, uint32_t end, Walk& w) {
  const std::vector<TokenTrie::Node>& nodes = trie_->nodes();
  Lexer& lx = g_->lexer;
  if (begin >= end) return;
  const int depth0 = nodes[begin].depth;
  stack_[depth0 - 1] = state;
  std::fill(marked_.begin(), marked_.end(), kRoot - 1);
  const bool root = !w.bits.empty();
  for (uint32_t i = begin; i < end;) {
    const TokenTrie::Node& n = nodes[i];
    const int32_t parent = stack_[n.depth - 1];
    const int32_t next = lx.next(parent, n.byte);
    if (next == Lexer::kDead) {
      // The lexeme before this byte ends here (greedy lexing) when it matched something: the parser decides, once
      // per parent node.
      if (!(fresh && n.depth == depth0) && !lx.accepts(parent).empty()) {
        const uint32_t p = n.depth == 1 ? kRoot : path_[n.depth - 1];
        if (marked_[n.depth - 1] != p) {
          marked_[n.depth - 1] = p;
          w.boundaries.push_back({p, parent});
        }
      }
      i = n.subtree_end;
      continue;
    }
    stack_[n.depth] = next;
    path_[n.depth] = i;
    if (n.token >= 0) {
      if (root) w.bits[(size_t)n.token >> 6] |= 1ull << (n.token & 63);
      else w.tokens.push_back(n.token);
    }
    i++;
  }
}

const CompiledGrammar::Walk& CompiledGrammar::root_walk(int32_t state, bool fresh) {
  uint64_t key = ((uint64_t)state << 1) | (fresh ? 1 : 0);
  auto it = walks_.find(key);
  if (it != walks_.end()) return *it->second;
  auto w = std::make_unique<Walk>();
  w->bits.assign(mask_words(), 0);
  walk(state, fresh, 0, (uint32_t)trie_->nodes().size(), *w);
  cached_bytes_ += w->bits.size() * 8 + w->boundaries.size() * 8 + 64;
  return *(walks_[key] = std::move(w));
}

const CompiledGrammar::Walk& CompiledGrammar::children_walk(int32_t start, int32_t accepting, uint32_t node) {
  // DFA states are below 2^20 (Lexer::max_states), trie nodes below 2^23.
  const uint64_t key = (1ull << 63) | ((uint64_t)start << 43) | ((uint64_t)accepting << 23) | (node & 0x7fffff);
  auto it = walks_.find(key);
  if (it != walks_.end()) return *it->second;
  const std::vector<TokenTrie::Node>& nodes = trie_->nodes();
  Lexer& lx = g_->lexer;
  auto w = std::make_unique<Walk>();
  const uint32_t begin = node == kRoot ? 0 : node + 1, end = node == kRoot ? (uint32_t)nodes.size() : nodes[node].subtree_end;
  for (uint32_t c = begin; c < end; c = nodes[c].subtree_end)
    if (lx.next(accepting, nodes[c].byte) == Lexer::kDead) walk(start, true, c, nodes[c].subtree_end, *w);
  cached_bytes_ += w->tokens.size() * 4 + w->boundaries.size() * 8 + 64;
  return *(walks_[key] = std::move(w));
}

Matcher::Matcher(std::shared_ptr<CompiledGrammar> g) : g_(std::move(g)) {
  std::lock_guard<std::mutex> lock(g_->mu_);
  st_.rows.push_back(g_->initial_);
  st_.lex = g_->lexer_start(g_->initial_->expected, true);
}

// 0: no lexeme of `accepted` fits; 1: an ignored lexeme (no row); 2: a row was pushed.
static int commit_lexeme(CompiledGrammar& cg, const Grammar& g, std::vector<std::shared_ptr<const Row>>& rows,
                         bool& after_ignore, const std::vector<int32_t>& accepted) {
  const std::vector<int32_t>& exp = rows.back()->expected;
  std::vector<int32_t> lex;
  std::set_intersection(accepted.begin(), accepted.end(), exp.begin(), exp.end(), std::back_inserter(lex));
  if (!lex.empty()) {
    auto row = earley_scan(g, rows, lex);
    if (!row) return 0;
    rows.push_back(std::move(row));
    after_ignore = false;
    return 2;
  }
  if (g.ignore >= 0 && !after_ignore && std::binary_search(accepted.begin(), accepted.end(), g.ignore)) {
    after_ignore = true;
    return 1;
  }
  (void)cg;
  return 0;
}

bool Matcher::commit(State& s, const std::vector<int32_t>& accepted) const {
  CompiledGrammar& cg = *g_;
  if (commit_lexeme(cg, *cg.g_, s.rows, s.after_ignore, accepted) == 0) return false;
  s.lex = cg.lexer_start(s.rows.back()->expected, !s.after_ignore);
  s.fresh = true;
  return true;
}

bool Matcher::step(State& s, uint8_t byte) const {
  Lexer& lx = g_->g_->lexer;
  int32_t next = lx.next(s.lex, byte);
  if (next == Lexer::kDead) {
    const std::vector<int32_t> accepted = lx.accepts(s.lex);  // a copy: commit may add DFA states
    if (s.fresh || !commit(s, accepted)) return false;
    next = lx.next(s.lex, byte);
    if (next == Lexer::kDead) return false;
  }
  s.lex = next;
  s.fresh = false;
  return true;
}

bool Matcher::accepts(const State& s) const {
  if (s.fresh) return s.rows.back()->accepting;
  const Grammar& g = *g_->g_;
  const std::vector<int32_t>& acc = g.lexer.accepts(s.lex);
  const std::vector<int32_t>& exp = s.rows.back()->expected;
  std::vector<int32_t> lex;
  std::set_intersection(acc.begin(), acc.end(), exp.begin(), exp.end(), std::back_inserter(lex));
  if (!lex.empty()) {
    auto row = earley_scan(g, s.rows, lex);
    if (row && row->accepting) return true;
  }
  return g.ignore >= 0 && !s.after_ignore && std::binary_search(acc.begin(), acc.end(), g.ignore) &&
         s.rows.back()->accepting;
}

void Matcher::add_boundaries(const State& s, const CompiledGrammar::Walk& w, std::vector<uint64_t>& mask, int depth) {
  if (w.boundaries.empty() || depth > kMaxBoundaryDepth) return;
  CompiledGrammar& cg = *g_;
  // Lexemes ending at the boundaries of one walk often accept the same lexemes: one parser scan each.
  struct Commit {
    std::vector<int32_t> accepted;
    bool ok;
    State after;
  };
  std::vector<Commit> done;
  // A walk has thousands of boundaries (a permissive regex: every prefix where the lexeme may end) but few distinct
  // accepting DFA states: each state's commit is looked up by its id, not by a copy of its accepted list.
  std::vector<std::pair<int32_t, size_t>> by_state;  // accepting DFA state -> its entry in done
  for (auto [node, accepting] : w.boundaries) {
    size_t at = SIZE_MAX;
    for (auto [state, i] : by_state)
      if (state == accepting) at = i;
    if (at == SIZE_MAX) {
      const std::vector<int32_t> acc = cg.g_->lexer.accepts(accepting);  // a copy: new DFA states move the lexer's
      for (size_t i = 0; i < done.size() && at == SIZE_MAX; i++)
        if (done[i].accepted == acc) at = i;
      if (at == SIZE_MAX) {
        State t = s;
        bool ok = commit(t, acc);
        at = done.size();
        done.push_back({acc, ok, std::move(t)});
      }
      by_state.push_back({accepting, at});
    }
    const Commit* c = &done[at];
    if (!c->ok) continue;
    const CompiledGrammar::Walk& sub = cg.children_walk(c->after.lex, accepting, node);
    for (int32_t tok : sub.tokens) mask[(size_t)tok >> 6] |= 1ull << (tok & 63);
    add_boundaries(c->after, sub, mask, depth + 1);
  }
}

void Matcher::allowed(std::vector<uint64_t>& mask) {
  CompiledGrammar& cg = *g_;
  std::lock_guard<std::mutex> lock(cg.mu_);
  mask.assign(cg.mask_words(), 0);
  if (!stopped_) {
    if (cg.cached_bytes_ > kMaxCacheBytes) {
      cg.walks_.clear();
      cg.cached_bytes_ = 0;
    }
    const CompiledGrammar::Walk& root = cg.root_walk(st_.lex, st_.fresh);
    std::copy(root.bits.begin(), root.bits.end(), mask.begin());
    add_boundaries(st_, root, mask, 0);
    for (auto [tok, dup] : cg.trie_->duplicates())
      if (mask[(size_t)tok >> 6] >> (tok & 63) & 1) mask[(size_t)dup >> 6] |= 1ull << (dup & 63);
  }
  if (stopped_ || accepts(st_))
    for (int32_t e : cg.trie_->eos())
      if (e >= 0 && (size_t)e < cg.trie_->vocab_size()) mask[(size_t)e >> 6] |= 1ull << (e & 63);
}

bool Matcher::accepting() {
  std::lock_guard<std::mutex> lock(g_->mu_);
  return stopped_ || accepts(st_);
}

bool Matcher::consume_bytes(const std::string& bytes) {
  std::lock_guard<std::mutex> lock(g_->mu_);
  State t = st_;
  for (unsigned char b : bytes)
    if (!step(t, b)) return false;
  st_ = std::move(t);
  return true;
}

bool Matcher::consume(int32_t token) {
  const TokenTrie& trie = g_->trie();
  if (trie.is_eos(token)) {
    if (!accepting()) return false;
    stopped_ = true;
    return true;
  }
  if (stopped_ || token < 0 || (size_t)token >= trie.vocab_size() || trie.bytes(token).empty()) return false;
  return consume_bytes(trie.bytes(token));
}

}  // namespace ogx::genai::guidance
