#include "genai/guidance/logit_mask.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "common/error.h"

namespace ogx::genai::guidance {

LogitMask::LogitMask(std::shared_ptr<CompiledGrammar> g, int rows)
    : g_(std::move(g)), rows_(rows, Matcher(g_)), off_(rows, false) {}

void LogitMask::reset() {
  rows_.assign(rows_.size(), Matcher(g_));
  off_.assign(rows_.size(), false);
}

namespace {

// kByteLanes[b][j]: all ones where bit j of b is set — a byte of the mask as 8 lane masks, so a mixed word is 8
// bitwise selects of 8 floats (the compiler vectorizes them; a per-bit select was ~3 ns a token: 0.4 ms a step at
// a 128k vocabulary).
struct ByteLanes {
  uint32_t m[256][8];
  constexpr ByteLanes() : m() {
    for (int b = 0; b < 256; b++)
      for (int j = 0; j < 8; j++) m[b][j] = (b >> j & 1) ? ~0u : 0u;
  }
};
constexpr ByteLanes kByteLanes;

// Floats p[0..8) whose lane in byte's bits is clear become `banned`.
inline void select8(float* p, uint32_t byte, float banned) {
  uint32_t x[8], ban;
  std::memcpy(x, p, sizeof(x));
  std::memcpy(&ban, &banned, 4);
  const uint32_t* keep = kByteLanes.m[byte];
  for (int j = 0; j < 8; j++) x[j] = (x[j] & keep[j]) | (ban & ~keep[j]);
  std::memcpy(p, x, sizeof(x));
}

}  // namespace

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
    if (n == 64) {
      for (int k = 0; k < 8; k++) select8(row + base + 8 * k, (uint32_t)(bits >> (8 * k)) & 0xffu, banned);
      continue;
    }
    for (int64_t i = 0; i < n; i++) row[base + i] = (bits >> i & 1) ? row[base + i] : banned;  // the last word
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
