#include "genai/tokenizer/added_tokens.h"

#include <algorithm>

#include "genai/tokenizer/unicode.h"

namespace ogx::tok {

void AddedTokenMatcher::add(const AddedToken& t, std::string match_text) {
  if (match_text.empty()) return;
  owned_.push_back(std::make_unique<AddedToken>(t));
  auto& v = by_first_[static_cast<unsigned char>(match_text[0])];
  v.push_back({std::move(match_text), owned_.back().get()});
  std::stable_sort(v.begin(), v.end(), [](const Entry& a, const Entry& b) { return a.text.size() > b.text.size(); });
  ++count_;
}

namespace {
// Code point ending at byte `end` (exclusive), or 0 at the start.
char32_t cp_before(std::string_view s, size_t end) {
  if (end == 0) return 0;
  size_t st = end - 1;
  while (st > 0 && (static_cast<unsigned char>(s[st]) & 0xC0) == 0x80) --st;
  return next_cp(s, st);
}
char32_t cp_at(std::string_view s, size_t i) { return i < s.size() ? next_cp(s, i) : 0; }
}  // namespace

void AddedTokenMatcher::split(std::string_view text, std::vector<Segment>& out) const {
  size_t run_start = 0;
  size_t i = 0;
  while (i < text.size()) {
    const auto& cands = by_first_[static_cast<unsigned char>(text[i])];
    const Entry* hit = nullptr;
    for (const auto& e : cands) {
      if (text.compare(i, e.text.size(), e.text) != 0) continue;
      if (e.tok->single_word) {
        char32_t b = cp_before(text, i), a = cp_at(text, i + e.text.size());
        if ((b && is_alnum(b)) || (a && is_alnum(a))) continue;
      }
      hit = &e;
      break;
    }
    if (!hit) {
      i += utf8_len(static_cast<unsigned char>(text[i]));
      continue;
    }
    size_t mb = i, me = i + hit->text.size();
    if (hit->tok->lstrip) {
      while (mb > run_start) {
        size_t st = mb - 1;
        while (st > run_start && (static_cast<unsigned char>(text[st]) & 0xC0) == 0x80) --st;
        size_t k = st;
        if (!is_whitespace(next_cp(text, k))) break;
        mb = st;
      }
    }
    if (hit->tok->rstrip) {
      while (me < text.size()) {
        size_t k = me;
        if (!is_whitespace(next_cp(text, k))) break;
        me = k;
      }
    }
    if (mb > run_start) out.push_back({-1, run_start, mb});
    out.push_back({hit->tok->id, 0, 0});
    run_start = i = me;
  }
  if (run_start < text.size()) out.push_back({-1, run_start, text.size()});
}

}  // namespace ogx::tok
