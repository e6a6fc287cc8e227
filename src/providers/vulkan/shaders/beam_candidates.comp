// Beam search's view of each row of logits, so that only a few numbers per row leave the device: one workgroup per
// row b writes out[b] = [max bits, sum bits, K logit bits, K token ids] (uint32, 2 + 2K words): the row's largest
// logit, the sum of exp(logit - max) over the row (fp32, in a tree order: the host's beam step sums in index order,
// so the two agree to rounding), and its K largest logits with their token ids, by value descending then token
// ascending (a threshold pass, below; the radix select of topk_select.glsl where it overflows). The host turns them
// into log-probs ((x - max) - log(sum)) and beam scores as it does from the whole row (genai/beam_search.cpp). out
// is host-visible: read after the submission completes. With a token
// mask (has_mask: beam steps below min_length ban EOS) a token whose bit is clear counts as -3e38, as the host's
// logit processing sets it to the lowest float: it adds nothing to the sum and is a candidate only after all others.
#version 460
#include "common.glsl"

layout(local_size_x = 256) in;
const uint T = 256;

layout(push_constant) uniform Push {
  ActBuf logits;  // [B, V]
  U32Buf out_;    // [B, 2 + 2K]
  U32Buf mask;    // has_mask: [B, ceil(V / 32)] allowed tokens (bit i % 32 of word i / 32)
  uint V, K;      // 1 <= K <= min(V, TOPK_MAX)
  uint has_mask;
} p;

float logit_at(uint b, uint i) {
  if (p.has_mask != 0 && ((p.mask.v[b * ((p.V + 31) / 32) + (i >> 5)] >> (i & 31)) & 1u) == 0) return -3.0e38;
  return float(p.logits.v[b * p.V + i]);
}

#define TOPK_MAX 1024  // the threshold pool (2 x 32 beams at most are kept)
#include "topk_select.glsl"

shared float red[T];

// Workgroup reduction of every thread's v (max or sum); the result in every thread.
float reduce(float v, bool take_max) {
  uint tid = gl_LocalInvocationID.x;
  barrier();
  red[tid] = v;
  barrier();
  for (uint w = T / 2; w > 0; w /= 2) {
    if (tid < w) red[tid] = take_max ? max(red[tid], red[tid + w]) : red[tid] + red[tid + w];
    barrier();
  }
  return red[0];
}

// Two passes over the row (topk_select.glsl's threshold pool fused with the statistics): its max and each thread's
// max; then the sum of exp(x - max) and, into the pool, every logit >= tau. A pool that overflows (more than
// TOPK_MAX logits >= tau: masses of equal values) takes the radix select instead.
void main() {
  uint b = gl_WorkGroupID.x, tid = gl_LocalInvocationID.x;
  float m = -1.0 / 0.0;
  for (uint i0 = tid; i0 < p.V; i0 += UNROLL * T) {
    float x[UNROLL];
    load8(b, i0, x);
    for (uint u = 0; u < UNROLL; u++) m = max(m, x[u]);
  }
  float tau = pool_threshold(m, p.K);
  float row_max = reduce(m, true);
  float s = 0.0;
  for (uint i0 = tid; i0 < p.V; i0 += UNROLL * T) {
    float x[UNROLL];
    load8(b, i0, x);
    for (uint u = 0; u < UNROLL; u++) {
      s += exp(x[u] - row_max);  // (-inf past the row: 0)
      if (i0 + u * T < p.V) pool_take(x[u], i0 + u * T, tau);
    }
  }
  float row_sum = reduce(s, false);  // (its barriers: the pool complete)
  if (!pool_sort()) radix_candidates(b, p.K);
  uint at = b * (2 + 2 * p.K);
  if (tid == 0) {
    p.out_.v[at] = floatBitsToUint(row_max);
    p.out_.v[at + 1] = floatBitsToUint(row_sum);
  }
  for (uint i = tid; i < p.K; i += T) {
    p.out_.v[at + 2 + i] = floatBitsToUint(cand_val[i]);
    p.out_.v[at + 2 + p.K + i] = cand_idx[i];
  }
}
