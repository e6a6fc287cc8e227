// The k largest logits of a row, found by one workgroup of T threads: an exact radix select (4 passes of 8-bit
// digits over order-preserving keys) finds the k-th largest, the logits above it and then the ties at it (in no
// particular order among themselves) fill k slots, and a bitonic sort orders them by value descending, then index
// ascending. Used by sample.comp (top-k / top-p sampling) and beam_candidates.comp (beam search).
// The includer defines T (threads, 256: the digits' histogram has one bin per thread), TOPK_MAX (slots, a power of
// two >= k) and `float logit_at(uint b, uint i)` (logit i of row b), and its push constants hold the row length p.V.

shared uint hist[256];
shared uint sh_prefix, sh_remaining, sh_count;
shared float cand_val[TOPK_MAX];
shared uint cand_idx[TOPK_MAX];

uint key_of(float f) {  // larger float -> larger key
  uint u = floatBitsToUint(f);
  return (u & 0x80000000u) != 0 ? ~u : (u | 0x80000000u);
}

// The passes over a row run in one workgroup: each thread keeps 8 loads in flight (a load at a time made every pass
// wait out the memory latency 500 times over 128k logits).
const uint UNROLL = 8;

// Logits i0 + u * T (u < UNROLL) of row b; past the row: -inf (never a candidate; exp gives 0).
void load8(uint b, uint i0, out float x[UNROLL]) {
  for (uint u = 0; u < UNROLL; u++) x[u] = i0 + u * T < p.V ? logit_at(b, i0 + u * T) : -1.0 / 0.0;
}

// Exact key of the k-th largest logit.
uint kth_key(uint b, uint k) {
  uint tid = gl_LocalInvocationID.x;
  if (tid == 0) { sh_prefix = 0; sh_remaining = k; }
  for (int pass = 3; pass >= 0; pass--) {
    hist[tid] = 0;
    barrier();
    uint shift = uint(pass) * 8;
    uint mask_hi = pass == 3 ? 0u : (0xffffffffu << (shift + 8));
    uint prefix = sh_prefix;
    for (uint i0 = tid; i0 < p.V; i0 += UNROLL * T) {
      float x[UNROLL];
      load8(b, i0, x);
      for (uint u = 0; u < UNROLL; u++) {
        uint key = key_of(x[u]);
        if (i0 + u * T < p.V && (key & mask_hi) == (prefix & mask_hi)) atomicAdd(hist[(key >> shift) & 0xffu], 1u);
      }
    }
    barrier();
    if (tid == 0) {
      uint remaining = sh_remaining;
      for (int d = 255; d >= 0; d--) {
        if (hist[d] >= remaining) { sh_prefix = prefix | (uint(d) << shift); break; }
        remaining -= hist[d];
      }
      sh_remaining = remaining;
    }
    barrier();
  }
  return sh_prefix;
}

// The k (1 <= k <= min(TOPK_MAX, p.V)) largest logits of row b into cand_val / cand_idx [0, k), sorted by value
// descending then index ascending; slots [k, n) (n: k rounded up to a power of two) hold -inf. Ties at the k-th
// value: which of them are kept is not defined when more tie than fit (the sort orders the kept ones).
void top_candidates(uint b, uint k) {
  uint tid = gl_LocalInvocationID.x;
  uint threshold = kth_key(b, k);
  if (tid == 0) sh_count = 0;
  for (uint i = tid; i < TOPK_MAX; i += T) { cand_val[i] = -1.0 / 0.0; cand_idx[i] = 0xffffffffu; }
  barrier();
  for (uint i0 = tid; i0 < p.V; i0 += UNROLL * T) {
    float x[UNROLL];
    load8(b, i0, x);
    for (uint u = 0; u < UNROLL; u++)
      if (i0 + u * T < p.V && key_of(x[u]) > threshold) {  // (fewer than k; the bound guards the arrays)
        uint slot = atomicAdd(sh_count, 1u);
        if (slot < k) { cand_val[slot] = x[u]; cand_idx[slot] = i0 + u * T; }
      }
  }
  barrier();
  for (uint i0 = tid; i0 < p.V; i0 += UNROLL * T) {  // ties at the threshold fill the remaining slots
    float x[UNROLL];
    load8(b, i0, x);
    for (uint u = 0; u < UNROLL; u++)
      if (i0 + u * T < p.V && key_of(x[u]) == threshold) {
        uint slot = atomicAdd(sh_count, 1u);
        if (slot < k) { cand_val[slot] = x[u]; cand_idx[slot] = i0 + u * T; }
      }
  }
  barrier();
  // Bitonic sort of the first n candidates (n = k rounded up to a power of two; the rest are -inf),
  // descending by value then ascending by index.
  uint n = 1;
  while (n < k) n *= 2;
  for (uint size = 2; size <= n; size *= 2) {
    for (uint stride = size / 2; stride > 0; stride /= 2) {
      for (uint i = tid; i < n; i += T) {
        uint j = i ^ stride;
        if (j > i) {
          bool desc = (i & size) == 0;
          float vi = cand_val[i], vj = cand_val[j];
          uint ii = cand_idx[i], ij = cand_idx[j];
          bool i_first = vi > vj || (vi == vj && ii < ij);
          if (i_first != desc) {
            cand_val[i] = vj; cand_val[j] = vi;
            cand_idx[i] = ij; cand_idx[j] = ii;
          }
        }
      }
      barrier();
    }
  }
}
