// Next-token selection on the device (logits never leave it): argmax, or top-k / top-p / temperature sampling with
// a per-row random state in a device buffer. Token ids are written as int64 [B] for the next step's Gather.
#pragma once
#include "exec/session.h"
#include "providers/vulkan/command_recorder.h"
#include "providers/vulkan/context.h"

namespace ogx::vk::kernels {

constexpr uint32_t kMaxSampleCandidates = 1024;  // sample.comp MAXK: top_p alone considers this many candidates

struct SamplingParams {
  bool greedy = true;        // argmax (lowest index among ties)
  uint32_t top_k = 0;        // 0: off (top-p over the whole vocabulary, nucleus capped at kMaxSampleCandidates;
                             // with top_p 1 an exact draw from the whole softmax, spread like the argmax)
  float top_p = 1.0f;
  float temperature = 1.0f;
};

// logits: [B, V] f32/f16; tokens: int64 [B]; rng_state: uint32 [B] (seed it with seed_sampling_state; advanced
// on each sampling call). host_tokens (optional): int64 [B] in host-visible memory, written with the same ids (the
// host reads them after the submission completes, no copy command). argmax_scratch (optional): uint32
// [argmax_scratch_words(B, V)] for the largest B it serves, zero before its first use and its counters left zero
// by every call (calls of any batch up to that B may share it): the argmax, the whole-distribution draw and
// rejection sampling (top-p alone, top-k alone) then spread each row over argmax_chunks(V) workgroups instead of
// one. token_mask (optional): uint32 [B, ceil(V / 32)], bit t
// of word t / 32 set for the tokens a row may pick (structured output); the others count as the lowest logit.
// row_params (optional): uint32 [B, 4] from write_row_params, read when the kernel runs: each row's own way of
// picking (rows of generators decoding together); `params` then only decides whether any row samples (rng_state).
void sample_tokens(CommandRecorder& rec, const SamplingParams& params, const TensorView& logits,
                   const TensorView& tokens, const TensorView& rng_state, const TensorView* host_tokens = nullptr,
                   const TensorView* argmax_scratch = nullptr, const TensorView* token_mask = nullptr,
                   const TensorView* row_params = nullptr);
// The 4 words of one row of row_params.
void write_row_params(const SamplingParams& params, uint32_t out[4]);

constexpr int64_t kArgmaxMaxRows = 256;  // rows of one spread argmax (the shader's MAX_ROWS: its counters' words)
uint32_t argmax_chunks(int64_t V);  // workgroups per row of the spread argmax (~2,048 logits each, at most 64)
int64_t argmax_scratch_words(int64_t B, int64_t V);
// With a scratch, top-p alone or top-k alone is rejection sampling spread like the argmax (sample.comp's header):
// one dispatch per round, this many rounds (the draw and 5 checks), then a final dispatch where a row still not
// accepted takes the one-workgroup sampler. For top-p, P(a row reaches it) <= (1 - top_p) ^ 5 (1e-5 at 0.9).
constexpr uint32_t kRejectionRounds = 6;

// Beam search's view of logits [B, V] (beam_candidates.comp): out, uint32 [B, 2 + 2K] (host-visible, read after the
// submission completes), gets per row its largest logit and the sum of exp(logit - max) (float bits), then its K
// largest logits (float bits, descending) and their token ids (ties: lower id first). 1 <= K <= kMaxBeamCandidates.
// token_mask (optional): uint32 [B, ceil(V / 32)] as sample_tokens' (tokens whose bit is clear count as -3e38).
constexpr int64_t kMaxBeamCandidates = 64;  // beam_candidates.comp TOPK_MAX: 2 x 32 beams
void beam_candidates(CommandRecorder& rec, const TensorView& logits, int64_t K, const TensorView& out,
                     const TensorView* token_mask = nullptr);
inline int64_t beam_candidate_words(int64_t K) { return 2 + 2 * K; }  // per row of out

// Logit processing on the device (logit_edits.comp): out, f32 [B, V], gets logits [B, V] with each row's edits
// applied (exec/session.h RowEdits), edits being uint32 words as pack_logit_edits lays them out (host-visible, read
// when the kernel runs). pending_tokens, int64 [>= B]: each row's pending token (RowEdits::pending; read only for
// such rows), the tokens the step before picked. B <= kLogitEditMaxRows.
constexpr int64_t kLogitEditMaxRows = 256;  // logit_edits.comp MAX_ROWS
constexpr int64_t kLogitEditSlice = 2048;   // logit_edits.comp SLICE: the tokens of a row one workgroup copies
void edit_logits(CommandRecorder& rec, const TensorView& logits, const TensorView& edits,
                 const TensorView& pending_tokens, const TensorView& out);
// The words of rows' edits: 6 header words per row (kLogitEditMaxRows rows: first edit, edit count, repetition
// penalty, flags, the fresh edit's subtract as two floats), then 6 per edit (token, flags, subtract and pending
// subtract as two floats each). logit_edit_words(n) holds n edits.
std::vector<uint32_t> pack_logit_edits(const std::vector<RowEdits>& rows);
inline int64_t logit_edit_words(int64_t edits) { return 6 * kLogitEditMaxRows + 6 * edits; }

// Host helper: initial PCG states for B rows from one seed.
std::vector<uint32_t> seed_sampling_state(uint64_t seed, int64_t B);

}  // namespace ogx::vk::kernels
