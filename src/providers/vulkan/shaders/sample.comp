// Next-token choice on the device, 256 threads per workgroup; the token id is written as int64 so it can feed the
// next step's Gather directly, and also into a host-visible copy when one is given (flags & 1), so the host reads
// the token without a copy command.
//   mode 0: argmax (lowest index among equal maxima). Workgroup (b, c) of a (B, C) grid scans chunk c of row b,
//     8 loads in flight per thread; with C > 1 each chunk's (max, index) goes to the scratch and the last chunk to
//     finish (an atomic counter, reset by it for the next step) merges them. The counters sit at fixed words
//     [0, MAX_ROWS) whatever B is: one scratch serves steps of every batch (counters placed after B rows' pairs
//     moved with B, so a smaller batch read a larger one's pairs as counters and never merged: garbage tokens).
//   flags & 2: a token mask (structured output) leaves only the tokens whose bit is set.
//   flags & 4: per-row settings (generators decoding together, each with its own search options): row b reads
//     (mode, top_k, top_p, temperature) from row_params[b] instead of the push constants; on a (B, C) grid the
//     sampling rows use workgroup c = 0 only.
//   mode 1 with top_k = 0 and top_p >= 1 (the whole distribution, OpenAI's default): the argmax above of
//     logit / temperature + Gumbel noise, which is an exact draw from softmax(logit / temperature) (the Gumbel-max
//     trick); element i's noise comes from a hash of (row state, i), so chunks need no coordination and a row's token
//     does not depend on how the row is split; the row state advances once per call (by the chunk that merges).
//   mode 1 with exactly one of top-k / top-p, spread over C > 1 chunks with rounds > 0 recorded: rejection
//     sampling (exact in distribution, as FlashInfer's sorting-free top-p / top-k), one dispatch per round. Tokens
//     are ordered by (logit descending, index ascending); the nucleus S is the shortest prefix of that order whose
//     probability reaches top_p (top-k: the first k). Round 0 draws x from the whole softmax (the Gumbel argmax) and
//     sums the softmax's normaliser Z; round r checks x — x is in S exactly when the tokens before x hold less than
//     top_p of the mass (top-k: fewer than k of them) — and meanwhile draws the next x from the tokens before the
//     current one, with fresh noise; the first accepted x is the token. Each draw comes from a set that contains S,
//     so it lands in S with probability >= top_p, and the accepted x is distributed as the softmax renormalised
//     over S. A row still unaccepted after the last round (rare for top-p: (1 - top_p) ^ rounds; top-k over a flat
//     distribution often) takes the one-workgroup sampler below in a final dispatch (round == rounds), which also
//     advances the row state of the accepted rows. Row state between dispatches: scratch words after the partials.
//   mode 1 otherwise: top-k / top-p / temperature sampling, one workgroup per row. The k = min(top_k, MAXK)
//     largest logits are found by an exact radix select (4 passes of 8-bit digits over order-preserving keys), sorted (bitonic),
//     softmaxed with the temperature, cut to the smallest prefix whose probability reaches top_p, and sampled with
//     u from a per-row PCG state kept in a device buffer (advanced on every call). top_k = 0: top-p over the whole
//     vocabulary's softmax, exact when the nucleus fits in MAXK candidates (else the MAXK most likely tokens are
//     kept).
#version 460
#include "common.glsl"

layout(local_size_x = 256) in;
const uint T = 256, MAXK = 1024;
const uint MAX_ROWS = 256;  // kernels::kArgmaxMaxRows (sampling.h)

layout(buffer_reference, std430, buffer_reference_align = 4) coherent buffer CoherentU32 { uint v[]; };

layout(push_constant) uniform Push {
  ActBuf logits;        // [B, V]
  U32Buf tokens;        // int64 [B]
  U32Buf rng;           // uint [B] PCG state (mode 1)
  U32Buf host_tokens;   // int64 [B], host-visible (flags & 1)
  CoherentU32 scratch;  // C > 1: [MAX_ROWS] counters (0 between steps), [B, C, PART] partials, [B, ROW_WORDS] rows
  U32Buf mask;          // flags & 2: [B, ceil(V / 32)] allowed tokens (bit i % 32 of word i / 32)
  U32Buf row_params;    // flags & 4: [B, 4] mode, top_k, top_p (float bits), temperature (float bits)
  uint V, mode, top_k, flags;
  float top_p, temperature;
  uint round_, rounds;  // this dispatch's rejection round (0: the pick), rejection rounds recorded (0: none)
} p;

const uint PART = 4;       // scratch words per (row, chunk): best value bits, best index, then round 0: max bits, sum
                           // bits; rounds: mass bits, count
const uint ROW_WORDS = 5;  // per row: candidate x, its logit bits, done, row max bits, Z bits
uint part_at(uint b, uint c) { return MAX_ROWS + PART * (b * gl_NumWorkGroups.y + c); }
uint row_at(uint b) { return MAX_ROWS + PART * gl_NumWorkGroups.x * gl_NumWorkGroups.y + ROW_WORDS * b; }

shared float red_v[T];
shared uint red_i[T];

// Logit i of row b; a token the mask excludes (flags & 2) counts as the lowest logit.
float logit_at(uint b, uint i) {
  float x = float(p.logits.v[b * p.V + i]);
  if ((p.flags & 2u) != 0 && ((p.mask.v[b * ((p.V + 31) / 32) + (i >> 5)] >> (i & 31)) & 1u) == 0) x = -3.0e38;
  return x;
}


void write_token(uint b, uint id) {
  p.tokens.v[2 * b] = id;
  p.tokens.v[2 * b + 1] = 0;
  if ((p.flags & 1u) != 0) {
    p.host_tokens.v[2 * b] = id;
    p.host_tokens.v[2 * b + 1] = 0;
  }
}

const uint NONE = 0xffffffffu;

// (v, i) replaces (best, best_i) when larger, or equal with a lower index; NONE marks "nothing yet".
void take_better(inout float best, inout uint best_i, float v, uint i) {
  if (i != NONE && (best_i == NONE || v > best || (v == best && i < best_i))) {
    best = v;
    best_i = i;
  }
}

// Workgroup-wide argmax of every thread's (v, i): the result in red_v[0], red_i[0].
void reduce_argmax(float v, uint i) {
  uint tid = gl_LocalInvocationID.x;
  red_v[tid] = v;
  red_i[tid] = i;
  barrier();
  for (uint w = T / 2; w > 0; w /= 2) {
    if (tid < w) {
      float bv = red_v[tid];
      uint bi = red_i[tid];
      take_better(bv, bi, red_v[tid + w], red_i[tid + w]);
      red_v[tid] = bv;
      red_i[tid] = bi;
    }
    barrier();
  }
}

shared uint last_sh;

// The logits [x, y) of row b that workgroup (b, c) of the (B, C) grid scans.
uvec2 chunk_range() {
  uint C = gl_NumWorkGroups.y, per = (p.V + C - 1) / C, lo = gl_WorkGroupID.y * per;
  return uvec2(lo, min(p.V, lo + per));
}

// Thread 0 has written this chunk's partial for row b: true (in every thread) in the chunk that finished last (an
// atomic counter per row; the last chunk resets it for the next step).
bool last_chunk(uint b) {
  if (gl_LocalInvocationID.x == 0) {
    memoryBarrierBuffer();
    last_sh = atomicAdd(p.scratch.v[b], 1u) == gl_NumWorkGroups.y - 1 ? 1u : 0u;
  }
  barrier();
  if (last_sh == 0) return false;
  memoryBarrierBuffer();
  return true;
}

uint lcg_step(uint state) { return state * 747796405u + 2891336453u; }  // how a row state advances per call

uint pcg_next(inout uint state) {
  state = lcg_step(state);
  uint word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
  return (word >> 22u) ^ word;
}

uint hash_u32(uint x) {  // "lowbias32" (C. Wellons): a well-mixed 32-bit permutation
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

// Gumbel(0, 1) noise of element i for a row whose state is `state` (mixed = hash_u32(state)).
float gumbel(uint state, uint mixed, uint i) {
  uint h = hash_u32(hash_u32(i * 0x9e3779b9u ^ mixed) + state);
  float u = (float(h >> 8) + 0.5) * (1.0 / 16777216.0);  // in (0, 1)
  return -log(-log(u));
}

// The argmax of row b (sampled: of logit * inv_t + Gumbel noise, see the header), spread over the grid's chunks.
void argmax_row(uint b, bool sampled, float inv_t) {
  uint tid = gl_LocalInvocationID.x, c = gl_WorkGroupID.y, C = gl_NumWorkGroups.y;
  uvec2 range = chunk_range();
  uint lo = range.x, hi = range.y;
  uint state = sampled ? p.rng.v[b] : 0u, mixed = hash_u32(state);
  float best = -1.0 / 0.0;
  uint best_i = NONE;
  for (uint i0 = lo + tid; i0 < hi; i0 += 8 * T) {  // indices rise within a thread: strict > keeps the first
    float x[8];
    for (uint k = 0; k < 8; k++) x[k] = i0 + k * T < hi ? logit_at(b, i0 + k * T) : 0.0;
    if (sampled)
      for (uint k = 0; k < 8; k++) x[k] = x[k] * inv_t + gumbel(state, mixed, i0 + k * T);
    for (uint k = 0; k < 8; k++)
      if (i0 + k * T < hi && (best_i == NONE || x[k] > best)) {
        best = x[k];
        best_i = i0 + k * T;
      }
  }
  reduce_argmax(best, best_i);  // (its barriers: every thread of this chunk has read the row state)
  if (C == 1) {
    if (tid == 0) {
      write_token(b, red_i[0]);
      if (sampled) p.rng.v[b] = lcg_step(state);
    }
    return;
  }
  if (tid == 0) {
    p.scratch.v[part_at(b, c)] = floatBitsToUint(red_v[0]);
    p.scratch.v[part_at(b, c) + 1] = red_i[0];
  }
  if (!last_chunk(b)) return;
  best = -1.0 / 0.0;
  best_i = NONE;
  for (uint k = tid; k < C; k += T)
    take_better(best, best_i, uintBitsToFloat(p.scratch.v[part_at(b, k)]), p.scratch.v[part_at(b, k) + 1]);
  reduce_argmax(best, best_i);
  if (tid == 0) {
    write_token(b, red_i[0]);
    p.scratch.v[b] = 0u;
    if (sampled) p.rng.v[b] = lcg_step(state);  // every chunk has read it (the counter says so)
  }
}

#define TOPK_MAX MAXK
#include "topk_select.glsl"

void sample_row(uint b, uint top_k, float top_p, float temperature) {
  uint tid = gl_LocalInvocationID.x;
  uint k = min(top_k == 0 ? MAXK : min(top_k, MAXK), p.V);
  top_candidates(b, k);
  float t = max(temperature, 1e-6);
  float top = cand_val[0];
  // Softmax denominator: over the k candidates with top_k (top-p then applies to the renormalised top-k), over the
  // whole vocabulary without it (so the nucleus is exact whenever it fits in MAXK candidates).
  float part = 0.0;
  if (top_k == 0)
    for (uint i0 = tid; i0 < p.V; i0 += UNROLL * T) {
      float x[UNROLL];
      load8(b, i0, x);
      for (uint u = 0; u < UNROLL; u++) part += exp((x[u] - top) / t);  // (-inf past the row: 0)
    }
  red_v[tid] = part;
  barrier();  // (every thread has read `top`)
  for (uint i = tid; i < k; i += T) cand_val[i] = exp((cand_val[i] - top) / t);  // now each candidate's weight
  barrier();
  for (uint w = T / 2; w > 0; w /= 2) {
    if (tid < w) red_v[tid] += red_v[tid + w];
    barrier();
  }
  if (tid == 0) {  // (sums of the weights only: the exponentials were taken in parallel above)
    float total = 0.0;
    if (top_k != 0)
      for (uint i = 0; i < k; i++) total += cand_val[i];
    else
      total = red_v[0];
    uint keep = k;  // top-p: smallest prefix with probability >= top_p
    float cum = 0.0;
    for (uint i = 0; i < k; i++) {
      cum += cand_val[i] / total;
      if (cum >= top_p) { keep = i + 1; break; }
    }
    float kept = 0.0;
    for (uint i = 0; i < keep; i++) kept += cand_val[i];
    uint state = p.rng.v[b];
    float u = float(pcg_next(state) >> 8) * (1.0 / 16777216.0);
    p.rng.v[b] = state;
    float target = u * kept, run = 0.0;
    uint choice = cand_idx[keep - 1];
    for (uint i = 0; i < keep; i++) {
      run += cand_val[i];
      if (run > target) { choice = cand_idx[i]; break; }
    }
    write_token(b, choice);
  }
}

// ---- Rejection sampling for top-p alone or top-k alone, spread over the grid (see the header) ----

// Workgroup sums (every thread gets the result; red_v / red_i are free again after the next barrier).
float reduce_sum(float v) {
  uint tid = gl_LocalInvocationID.x;
  barrier();
  red_v[tid] = v;
  barrier();
  for (uint w = T / 2; w > 0; w /= 2) {
    if (tid < w) red_v[tid] += red_v[tid + w];
    barrier();
  }
  return red_v[0];
}

uint reduce_count(uint v) {
  uint tid = gl_LocalInvocationID.x;
  barrier();
  red_i[tid] = v;
  barrier();
  for (uint w = T / 2; w > 0; w /= 2) {
    if (tid < w) red_i[tid] += red_i[tid + w];
    barrier();
  }
  return red_i[0];
}

bool rejection_row(uint mode, uint top_k, float top_p) {
  return p.rounds > 0 && gl_NumWorkGroups.y > 1 && mode == 1 && ((top_k == 0) != (top_p >= 1.0));
}

// Round 0: the first candidate (the Gumbel argmax over the whole row) and the softmax's max and normaliser, in
// units of logit / temperature. The row state is not advanced (the final dispatch does it).
void rejection_first(uint b, float inv_t) {
  uint tid = gl_LocalInvocationID.x, c = gl_WorkGroupID.y, C = gl_NumWorkGroups.y;
  uvec2 range = chunk_range();
  uint lo = range.x, hi = range.y;
  uint state = p.rng.v[b], mixed = hash_u32(state);
  float best = -1.0 / 0.0, m = -1.0 / 0.0, sum = 0.0;  // sum of exp(l - m) over this thread's tokens
  uint best_i = NONE;
  for (uint i0 = lo + tid; i0 < hi; i0 += 8 * T) {
    float x[8];
    for (uint k = 0; k < 8; k++) x[k] = i0 + k * T < hi ? logit_at(b, i0 + k * T) * inv_t : 0.0;
    for (uint k = 0; k < 8; k++) {
      uint i = i0 + k * T;
      if (i >= hi) break;
      if (x[k] > m) {
        sum = sum * exp(m - x[k]) + 1.0;
        m = x[k];
      } else if (x[k] > -1.0 / 0.0) {
        sum += exp(x[k] - m);
      }
      float g = x[k] + gumbel(state, mixed, i);
      if (best_i == NONE || g > best) { best = g; best_i = i; }
    }
  }
  reduce_argmax(best, best_i);
  float chunk_best = red_v[0];
  uint chunk_best_i = red_i[0];
  barrier();  // every thread has read the result before red_v is reused
  reduce_argmax(m, tid);
  float cm = red_v[0];
  float csum = reduce_sum(m > -1.0 / 0.0 ? sum * exp(m - cm) : 0.0);
  if (tid == 0) {
    uint at = part_at(b, c);
    p.scratch.v[at] = floatBitsToUint(chunk_best);
    p.scratch.v[at + 1] = chunk_best_i;
    p.scratch.v[at + 2] = floatBitsToUint(cm);
    p.scratch.v[at + 3] = floatBitsToUint(csum);
  }
  if (!last_chunk(b) || tid != 0) return;
  float bv = -1.0 / 0.0, M = -1.0 / 0.0, Z = 0.0;
  uint bi = NONE;
  for (uint k = 0; k < C; k++) {
    take_better(bv, bi, uintBitsToFloat(p.scratch.v[part_at(b, k)]), p.scratch.v[part_at(b, k) + 1]);
    M = max(M, uintBitsToFloat(p.scratch.v[part_at(b, k) + 2]));
  }
  for (uint k = 0; k < C; k++) {
    float mk = uintBitsToFloat(p.scratch.v[part_at(b, k) + 2]);
    if (mk > -1.0 / 0.0) Z += uintBitsToFloat(p.scratch.v[part_at(b, k) + 3]) * exp(mk - M);
  }
  uint rw = row_at(b);
  p.scratch.v[rw] = bi;
  p.scratch.v[rw + 1] = floatBitsToUint(logit_at(b, bi));
  p.scratch.v[rw + 2] = 0u;  // not done
  p.scratch.v[rw + 3] = floatBitsToUint(M);
  p.scratch.v[rw + 4] = floatBitsToUint(Z);
  p.scratch.v[b] = 0u;
}

// Round r: accept the candidate x, or replace it by a fresh draw from the tokens before it.
void rejection_round(uint b, uint r, uint top_k, float top_p, float inv_t) {
  uint tid = gl_LocalInvocationID.x, c = gl_WorkGroupID.y, C = gl_NumWorkGroups.y;
  uint rw = row_at(b);
  if (p.scratch.v[rw + 2] != 0u) return;  // accepted earlier (the same word for the whole grid of the row)
  uint x = p.scratch.v[rw];
  float lx = uintBitsToFloat(p.scratch.v[rw + 1]), M = uintBitsToFloat(p.scratch.v[rw + 3]);
  uvec2 range = chunk_range();
  uint lo = range.x, hi = range.y;
  uint state = p.rng.v[b] + r * 0x85ebca6bu, mixed = hash_u32(state);  // round r's own noise
  float best = -1.0 / 0.0, mass = 0.0;
  uint best_i = NONE, count = 0;
  for (uint i0 = lo + tid; i0 < hi; i0 += 8 * T) {
    float x8[8];
    for (uint k = 0; k < 8; k++) x8[k] = i0 + k * T < hi ? logit_at(b, i0 + k * T) : 0.0;
    for (uint k = 0; k < 8; k++) {
      uint i = i0 + k * T;
      if (i >= hi) break;
      if (x8[k] > lx || (x8[k] == lx && i < x)) {  // i comes before x
        float l = x8[k] * inv_t;
        mass += exp(l - M);
        count++;
        float g = l + gumbel(state, mixed, i);
        if (best_i == NONE || g > best) { best = g; best_i = i; }
      }
    }
  }
  reduce_argmax(best, best_i);
  float chunk_best = red_v[0];
  uint chunk_best_i = red_i[0];
  float cmass = reduce_sum(mass);
  uint ccount = reduce_count(count);
  if (tid == 0) {
    uint at = part_at(b, c);
    p.scratch.v[at] = floatBitsToUint(chunk_best);
    p.scratch.v[at + 1] = chunk_best_i;
    p.scratch.v[at + 2] = floatBitsToUint(cmass);
    p.scratch.v[at + 3] = ccount;
  }
  if (!last_chunk(b) || tid != 0) return;
  float bv = -1.0 / 0.0, before = 0.0;
  uint bi = NONE, n_before = 0;
  for (uint k = 0; k < C; k++) {
    take_better(bv, bi, uintBitsToFloat(p.scratch.v[part_at(b, k)]), p.scratch.v[part_at(b, k) + 1]);
    before += uintBitsToFloat(p.scratch.v[part_at(b, k) + 2]);
    n_before += p.scratch.v[part_at(b, k) + 3];
  }
  float Z = uintBitsToFloat(p.scratch.v[rw + 4]);
  bool accept = top_k > 0 ? n_before < top_k : before < top_p * Z;
  if (accept || bi == NONE) {
    write_token(b, x);
    p.scratch.v[rw + 2] = 1u;
  } else {
    p.scratch.v[rw] = bi;
    p.scratch.v[rw + 1] = floatBitsToUint(logit_at(b, bi));
  }
  p.scratch.v[b] = 0u;
}

// The final dispatch: rows accepted in a round advance their state; the others take the one-workgroup sampler.
void rejection_last(uint b, uint top_k, float top_p, float temperature) {
  if (gl_WorkGroupID.y != 0) return;
  if (p.scratch.v[row_at(b) + 2] != 0u) {
    if (gl_LocalInvocationID.x == 0) p.rng.v[b] = lcg_step(p.rng.v[b]);
    return;
  }
  sample_row(b, top_k, top_p, temperature);
}

// Row b picks with (mode, top_k, top_p, temperature). Dispatch 0: the argmax (plain or Gumbel) on every chunk of the
// grid, round 0 of rejection sampling, or the top-k / top-p sampler on chunk 0 only; later dispatches: the
// rejection rounds and the final dispatch, for the rows that take rejection sampling.
void pick(uint b, uint mode, uint top_k, float top_p, float temperature) {
  float inv_t = 1.0 / max(temperature, 1e-6);
  if (p.round_ > 0) {
    if (!rejection_row(mode, top_k, top_p)) return;
    if (p.round_ < p.rounds)
      rejection_round(b, p.round_, top_k, top_p, inv_t);
    else
      rejection_last(b, top_k, top_p, temperature);
  } else if (mode == 0) {
    argmax_row(b, false, 1.0);
  } else if (top_k == 0 && top_p >= 1.0) {
    argmax_row(b, true, inv_t);
  } else if (rejection_row(mode, top_k, top_p)) {
    rejection_first(b, inv_t);
  } else if (gl_WorkGroupID.y == 0) {
    sample_row(b, top_k, top_p, temperature);
  }
}

void main() {
  uint b = gl_WorkGroupID.x;
  if ((p.flags & 4u) == 0) {
    pick(b, p.mode, p.top_k, p.top_p, p.temperature);
  } else {
    pick(b, p.row_params.v[4 * b], p.row_params.v[4 * b + 1], uintBitsToFloat(p.row_params.v[4 * b + 2]),
         uintBitsToFloat(p.row_params.v[4 * b + 3]));
  }
}
