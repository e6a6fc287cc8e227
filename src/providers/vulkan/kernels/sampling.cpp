#include "providers/vulkan/kernels/sampling.h"

#include <algorithm>
#include <cstring>

#include "providers/vulkan/kernels/kernel_util.h"

namespace ogx::vk::kernels {

uint32_t argmax_chunks(int64_t V) { return (uint32_t)std::clamp<int64_t>((V + 2047) / 2048, 1, 64); }

// sample.comp: the counters, then PART (4) words per (row, chunk), then ROW_WORDS (5) per row.
int64_t argmax_scratch_words(int64_t B, int64_t V) { return kArgmaxMaxRows + B * (4 * (int64_t)argmax_chunks(V) + 5); }

void sample_tokens(CommandRecorder& rec, const SamplingParams& params, const TensorView& logits,
                   const TensorView& tokens, const TensorView& rng_state, const TensorView* host_tokens,
                   const TensorView* argmax_scratch, const TensorView* token_mask, const TensorView* row_params) {
  const char* t = storage_suffix(logits.dtype, "sampling");
  OGX_CHECK(logits.shape.size() >= 1, "sampling: logits must be [B, V]");
  int64_t V = logits.shape.back(), B = logits.numel() / V;
  OGX_CHECK(tokens.dtype == DType::i64 && tokens.numel() == B, "sampling: tokens must be int64 [", B, "]");
  OGX_CHECK(!host_tokens || (host_tokens->dtype == DType::i64 && host_tokens->numel() == B),
            "sampling: host tokens must be int64 [", B, "]");
  OGX_CHECK(params.greedy || (rng_state.numel() == B && dtype_size(rng_state.dtype) == 4),
            "sampling: rng_state must be uint32 [", B, "]");
  OGX_CHECK(params.greedy || (params.top_p > 0.0f && params.top_p <= 1.0f && params.temperature > 0.0f),
            "sampling: top_p must be in (0, 1] and temperature > 0");
  uint32_t chunks = 1;  // the argmax (plain or Gumbel) and rejection sampling spread a row over chunks
  const bool whole = !params.greedy && params.top_k == 0 && params.top_p >= 1.0f;
  const bool one_cut = !params.greedy && ((params.top_k == 0) != (params.top_p >= 1.0f));  // top-p or top-k alone
  if ((params.greedy || whole || one_cut || row_params) && argmax_scratch) {
    OGX_CHECK(dtype_size(argmax_scratch->dtype) == 4 && argmax_scratch->numel() >= argmax_scratch_words(B, V),
              "sampling: the argmax scratch must hold ", argmax_scratch_words(B, V), " 32-bit words");
    chunks = argmax_chunks(V);
    OGX_CHECK(B <= kArgmaxMaxRows, "sampling: the spread argmax takes at most ", kArgmaxMaxRows, " rows, not ", B);
  }
  OGX_CHECK(!token_mask || (dtype_size(token_mask->dtype) == 4 && token_mask->numel() >= B * ((V + 31) / 32)),
            "sampling: the token mask must be uint32 [", B, ", ", (V + 31) / 32, "]");
  OGX_CHECK(!row_params || (dtype_size(row_params->dtype) == 4 && row_params->numel() >= B * 4),
            "sampling: the row settings must be uint32 [", B, ", 4]");
  const bool rng = !params.greedy || row_params;  // (per-row settings: some row may sample)
  OGX_CHECK(!rng || (rng_state.numel() >= B && dtype_size(rng_state.dtype) == 4), "sampling: rng_state must be uint32 [",
            B, "]");
  // Rejection rounds: recorded when some row may sample with top-p alone or top-k alone (per-row settings are read
  // when the kernel runs, so any row might) and the rows are spread.
  const uint32_t rounds = chunks > 1 && (one_cut || row_params) ? kRejectionRounds : 0;
  struct {
    uint64_t logits, tokens, rng, host_tokens, scratch, mask, row_params;
    uint32_t V, mode, top_k, flags;
    float top_p, temperature;
    uint32_t round, rounds;
  } p{addr(logits), addr(tokens), rng ? addr(rng_state) : 0, host_tokens ? addr(*host_tokens) : 0,
      chunks > 1 ? addr(*argmax_scratch) : 0, token_mask ? addr(*token_mask) : 0, row_params ? addr(*row_params) : 0,
      (uint32_t)V, params.greedy ? 0u : 1u, params.top_k,
      (host_tokens ? 1u : 0u) | (token_mask ? 2u : 0u) | (row_params ? 4u : 0u), params.top_p, params.temperature,
      0u, rounds};
  const Pipeline& pl = rec.context().pipelines().get(std::string("sample_") + t);
  std::vector<BufferSlice> reads{logits.mem}, writes{tokens.mem};
  if (rng) reads.push_back(rng_state.mem), writes.push_back(rng_state.mem);
  if (row_params) reads.push_back(row_params->mem);
  if (host_tokens) writes.push_back(host_tokens->mem);
  if (chunks > 1) reads.push_back(argmax_scratch->mem), writes.push_back(argmax_scratch->mem);
  if (token_mask) reads.push_back(token_mask->mem);
  rec.dispatch(pl, &p, sizeof(p), (uint32_t)B, chunks, 1, reads, writes);
  for (p.round = 1; p.round <= rounds; p.round++)  // the rejection rounds, then the final dispatch
    rec.dispatch(pl, &p, sizeof(p), (uint32_t)B, chunks, 1, reads, writes);
}

void beam_candidates(CommandRecorder& rec, const TensorView& logits, int64_t K, const TensorView& out,
                     const TensorView* token_mask) {
  const char* t = storage_suffix(logits.dtype, "beam candidates");
  OGX_CHECK(logits.shape.size() >= 1 && logits.shape.back() > 0, "beam candidates: logits must be [B, V]");
  const int64_t V = logits.shape.back(), B = logits.numel() / V;
  OGX_CHECK(K >= 1 && K <= kMaxBeamCandidates && K <= V, "beam candidates: K (", K, ") must be in [1, min(",
            kMaxBeamCandidates, ", vocabulary ", V, ")]");
  OGX_CHECK(dtype_size(out.dtype) == 4 && out.numel() >= B * beam_candidate_words(K),
            "beam candidates: out must be uint32 [", B, ", ", beam_candidate_words(K), "]");
  OGX_CHECK(B >= 1 && B <= 65535, "beam candidates: ", B, " rows (1..65535)");
  OGX_CHECK(!token_mask || (dtype_size(token_mask->dtype) == 4 && token_mask->numel() >= B * ((V + 31) / 32)),
            "beam candidates: the token mask must be uint32 [", B, ", ", (V + 31) / 32, "]");
  struct {
    uint64_t logits, out, mask;
    uint32_t V, K, has_mask;
  } p{addr(logits), addr(out), token_mask ? addr(*token_mask) : 0, (uint32_t)V, (uint32_t)K, token_mask ? 1u : 0u};
  std::vector<BufferSlice> reads{logits.mem};
  if (token_mask) reads.push_back(token_mask->mem);
  rec.dispatch(rec.context().pipelines().get(std::string("beam_candidates_") + t), &p, sizeof(p), (uint32_t)B, 1, 1,
               reads, {out.mem});
}

void edit_logits(CommandRecorder& rec, const TensorView& logits, const TensorView& edits,
                 const TensorView& pending_tokens, const TensorView& out) {
  const char* t = storage_suffix(logits.dtype, "logit edits");
  OGX_CHECK(logits.shape.size() >= 1 && logits.shape.back() > 0, "logit edits: logits must be [B, V]");
  const int64_t V = logits.shape.back(), B = logits.numel() / V;
  OGX_CHECK(B >= 1 && B <= kLogitEditMaxRows, "logit edits: ", B, " rows (1..", kLogitEditMaxRows, ")");
  OGX_CHECK(out.dtype == DType::f32 && out.numel() == B * V, "logit edits: out must be f32 [", B, ", ", V, "]");
  OGX_CHECK(dtype_size(edits.dtype) == 4 && edits.numel() >= logit_edit_words(0), "logit edits: the edits must be ",
            "uint32 words (at least ", logit_edit_words(0), ")");
  OGX_CHECK(pending_tokens.dtype == DType::i64 && pending_tokens.numel() >= B, "logit edits: pending tokens must be ",
            "int64 [>= ", B, "]");
  struct {
    uint64_t logits, out, edits, pending;
    uint32_t V;
  } p{addr(logits), addr(out), addr(edits), addr(pending_tokens), (uint32_t)V};
  const int64_t slices = (V + kLogitEditSlice - 1) / kLogitEditSlice;
  OGX_CHECK(slices <= 65535, "logit edits: a vocabulary of ", V, " tokens is more than ", 65535 * kLogitEditSlice);
  rec.dispatch(rec.context().pipelines().get(std::string("logit_edits_") + t), &p, sizeof(p), (uint32_t)B,
               (uint32_t)slices, 1, {logits.mem, edits.mem, pending_tokens.mem}, {out.mem});
}

namespace {
void put_double(uint32_t* w, double d) {  // as two floats: hi + lo
  const float hi = (float)d, lo = (float)(d - (double)hi);
  std::memcpy(&w[0], &hi, 4);
  std::memcpy(&w[1], &lo, 4);
}
}  // namespace

std::vector<uint32_t> pack_logit_edits(const std::vector<RowEdits>& rows) {
  OGX_CHECK((int64_t)rows.size() <= kLogitEditMaxRows, "logit edits: ", rows.size(), " rows (at most ",
            kLogitEditMaxRows, ")");
  int64_t n = 0;
  for (const auto& r : rows) n += (int64_t)r.edits.size();
  std::vector<uint32_t> w((size_t)logit_edit_words(n), 0u);
  uint32_t first = 0;
  for (size_t b = 0; b < rows.size(); b++) {
    const RowEdits& r = rows[b];
    uint32_t* h = &w[6 * b];
    h[0] = first;
    h[1] = (uint32_t)r.edits.size();
    std::memcpy(&h[2], &r.repetition_penalty, 4);
    h[3] = (r.pending ? 1u : 0u) | (r.fresh.repetition ? 2u : 0u);
    put_double(&h[4], r.fresh.subtract);
    for (size_t i = 0; i < r.edits.size(); i++) {
      const TokenEdit& e = r.edits[i];
      // (the kernel finds a pending token's edit by binary search)
      OGX_CHECK(e.token >= 0 && (i == 0 || e.token > r.edits[i - 1].token), "logit edits: row ", b,
                "'s tokens must ascend");
      uint32_t* x = &w[(size_t)(6 * kLogitEditMaxRows + 6 * first++)];
      x[0] = (uint32_t)e.token;
      x[1] = (e.repetition ? 1u : 0u) | (e.ban ? 2u : 0u) | (e.pending_repetition ? 4u : 0u);
      put_double(&x[2], e.subtract);
      put_double(&x[4], e.pending_subtract);
    }
  }
  return w;
}

void write_row_params(const SamplingParams& params, uint32_t out[4]) {
  out[0] = params.greedy ? 0u : 1u;
  out[1] = params.top_k;
  std::memcpy(&out[2], &params.top_p, 4);
  std::memcpy(&out[3], &params.temperature, 4);
}

std::vector<uint32_t> seed_sampling_state(uint64_t seed, int64_t B) {
  std::vector<uint32_t> s(B);
  uint64_t x = seed ? seed : 0x9e3779b97f4a7c15ull;
  for (auto& v : s) {  // splitmix64
    x += 0x9e3779b97f4a7c15ull;
    uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    v = (uint32_t)(z ^ (z >> 31));
  }
  return s;
}

}  // namespace ogx::vk::kernels
