#include "genai/guidance/lexer.h"

#include <algorithm>

#include "common/error.h"

namespace ogx::genai::guidance {

namespace {
std::string key_of(const std::vector<int32_t>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(int32_t));
}
}  // namespace

int32_t Lexer::add(const std::string& regex, const RegexOptions& opts) {
  std::string key = (opts.json_string ? "j:" : "r:") + regex;
  auto it = by_text_.find(key);
  if (it != by_text_.end()) return it->second;
  OGX_CHECK(dfa_.empty(), "internal: lexeme added after the lexer was finished");
  int32_t id = (int32_t)starts_.size();
  starts_.push_back(compile_regex(nfa_, regex, id, opts));
  patterns_.push_back(regex);
  by_text_.emplace(std::move(key), id);
  return id;
}

void Lexer::finish() {
  bool boundary[257] = {};
  boundary[0] = boundary[256] = true;
  for (auto& s : nfa_.states)
    if (s.kind == Nfa::kRange && s.lo <= s.hi) boundary[s.lo] = boundary[s.hi + 1] = true;
  int c = -1;
  for (int b = 0; b < 256; b++) {
    if (boundary[b]) c++;
    classes_[b] = (uint8_t)c;
  }
  nclasses_ = c + 1;
  mark_.assign(nfa_.states.size(), 0);
  dfa_.clear();
  trans_.clear();
  intern({});  // kDead
}

void Lexer::closure(std::vector<int32_t>& set) {
  // Follows splits; keeps byte-range and match states (the ones that tell states apart).
  epoch_++;
  std::vector<int32_t> stack(set.begin(), set.end()), out;
  set.clear();
  while (!stack.empty()) {
    int32_t s = stack.back();
    stack.pop_back();
    if (s < 0 || mark_[s] == epoch_) continue;
    mark_[s] = epoch_;
    const Nfa::State& st = nfa_.states[s];
    if (st.kind == Nfa::kSplit) {
      stack.push_back(st.out2);
      stack.push_back(st.out);
    } else {
      set.push_back(s);
    }
  }
  std::sort(set.begin(), set.end());
}

int32_t Lexer::intern(std::vector<int32_t> set) {
  std::string key = key_of(set);
  auto it = by_set_.find(key);
  if (it != by_set_.end()) return it->second;
  OGX_CHECK(dfa_.size() < max_states, "grammar lexer exceeds ", max_states,
            " DFA states (lexemes too large or too many; e.g. long bounded repetitions)");
  work_ += set.size() + 1;
  OGX_CHECK(work_ <= max_work, "grammar lexer exceeds its work budget (", max_work,
            " automaton states visited: a regex whose DFA grows exponentially)");
  DState d;
  for (int32_t s : set)
    if (nfa_.states[s].kind == Nfa::kMatch) d.accepts.push_back(nfa_.states[s].lexeme);
  std::sort(d.accepts.begin(), d.accepts.end());
  d.accepts.erase(std::unique(d.accepts.begin(), d.accepts.end()), d.accepts.end());
  d.nfa = std::move(set);
  int32_t id = (int32_t)dfa_.size();
  dfa_.push_back(std::move(d));
  trans_.resize(dfa_.size() * (size_t)nclasses_, -1);
  if (id == kDead) std::fill(trans_.begin(), trans_.end(), kDead);
  by_set_.emplace(std::move(key), id);
  return id;
}

int32_t Lexer::start(const std::vector<int32_t>& allowed) {
  std::string key = key_of(allowed);
  auto it = start_of_.find(key);
  if (it != start_of_.end()) return it->second;
  std::vector<int32_t> seeds;
  for (int32_t l : allowed) seeds.push_back(starts_[l]);
  closure(seeds);
  int32_t s = intern(std::move(seeds));
  start_of_.emplace(std::move(key), s);
  return s;
}

int32_t Lexer::compute(int32_t state, uint8_t byte) {
  std::vector<int32_t> next;
  for (int32_t s : dfa_[state].nfa) {
    const Nfa::State& st = nfa_.states[s];
    if (st.kind == Nfa::kRange && byte >= st.lo && byte <= st.hi) next.push_back(st.out);
  }
  closure(next);
  int32_t t = intern(std::move(next));
  trans_[(size_t)state * nclasses_ + classes_[byte]] = t;
  return t;
}

}  // namespace ogx::genai::guidance
