#include "genai/guidance/logit_mask.h"

#include <algorithm>
#include <limits>

#include "common/error.h"

namespace ogx::genai::guidance {

LogitMask::LogitMask(std::shared_ptr<CompiledGrammar> g, int rows)
    : g_(std::move(g)), rows_(rows, Matcher(g_)), off_(rows, false) {}

void LogitMask::reset() {
  rows_.assign(rows_.size(), Matcher(g_));
  off_.assign(rows_.size(), false);
}

void LogitMask::apply_row(int r, float* row, int64_t vocab) {
  if (off_.at(r)) return;
  const float banned = std::numeric_limits<float>::lowest();
  rows_[r].allowed(scratch_);
  const int64_t words = std::min<int64_t>((int64_t)scratch_.size(), (vocab + 63) / 64);
  for (int64_t w = 0; w < words; w++) {
    uint64_t bits = scratch_[w];
    if (bits == ~0ull) continue;
    const int64_t base = w * 64, n = std::min<int64_t>(64, vocab - base);
    if (bits == 0) {  // most words where few tokens fit
      std::fill_n(row + base, n, banned);
      continue;
    }
    for (int64_t i = 0; i < n; i++)  // a select, not a branch per token (mixed words are unpredictable): vectorized
      row[base + i] = (bits >> i & 1) ? row[base + i] : banned;
  }
  for (int64_t t = words * 64; t < vocab; t++) row[t] = banned;  // ids past the tokenizer's vocabulary
}

void LogitMask::consume(const std::vector<int32_t>& tokens, const std::vector<bool>& ended, bool strict) {
  for (size_t r = 0; r < rows_.size() && r < tokens.size(); r++) {
    if ((r < ended.size() && ended[r]) || off_[r] || rows_[r].stopped()) continue;
    if (rows_[r].consume(tokens[r])) continue;
    OGX_CHECK(!strict, "guidance: token ", tokens[r], " of row ", r,
              " does not fit the constraint (it was not among the allowed tokens)");
    off_[r] = true;
  }
}

void LogitMask::reorder(const std::vector<int32_t>& src) {
  std::vector<Matcher> next;
  std::vector<bool> off;
  next.reserve(src.size());
  for (int32_t s : src) next.push_back(rows_.at(s)), off.push_back(off_.at(s));
  rows_ = std::move(next);
  off_ = std::move(off);
}

void LogitMask::packed(int row, int64_t vocab, std::vector<uint32_t>& bits) {
  rows_.at(row).allowed(scratch_);
  bits.assign((size_t)((vocab + 31) / 32), 0);
  for (int64_t w = 0; w < (int64_t)bits.size(); w++) {
    int64_t q = w / 2;
    if (q < (int64_t)scratch_.size()) bits[w] = (uint32_t)(scratch_[q] >> (32 * (w % 2)));
  }
}

}  // namespace ogx::genai::guidance
