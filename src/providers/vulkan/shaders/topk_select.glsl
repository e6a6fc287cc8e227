// The k largest logits of a row, found by one workgroup of T threads, sorted by value descending then index
// ascending. Used by sample.comp (top-k / top-p sampling) and beam_candidates.comp (beam search).
//  - k <= T, the threshold pool (two passes): each thread's largest logit (its tokens: tid, tid + T, ...); tau, the
//    k-th largest of those, bounds the k-th largest logit from below (k distinct logits are >= tau), so every logit
//    >= tau — the k largest and all ties at the k-th among them — goes to the pool, which a bitonic sort orders.
//    Ties at the k-th value are then kept by lower index.
//  - otherwise, or when more than TOPK_MAX logits are >= tau (masses of equal values): an exact radix select (4 passes
//    of 8-bit digits over order-preserving keys) finds the k-th largest, the logits above it and then the ties at it
//    (in no particular order among themselves) fill k slots, and the sort orders them.
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

shared float tmax[T];  // each thread's largest logit, sorted descending
shared uint pool_count;

// Bitonic sort of cand_val / cand_idx [0, n) (n a power of two <= TOPK_MAX): value descending, index ascending.
void sort_candidates(uint n) {
  uint tid = gl_LocalInvocationID.x;
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

// The threshold pool in steps, for a kernel that fuses its passes with its own (beam_candidates.comp):
// pool_threshold(m, k) with each thread's largest logit m (every thread calls it; k <= T) empties the pool and
// returns tau; pool_take(x, i, tau) during a pass over the row keeps logit x of index i when x >= tau; pool_sort()
// after a barrier sorts the pool into cand_val / cand_idx, or returns false when it overflowed.
float pool_threshold(float m, uint k) {
  uint tid = gl_LocalInvocationID.x;
  barrier();
  tmax[tid] = m;
  if (tid == 0) pool_count = 0;
  barrier();
  for (uint size = 2; size <= T; size *= 2)
    for (uint stride = size / 2; stride > 0; stride /= 2) {
      uint j = tid ^ stride;
      if (j > tid) {
        float vi = tmax[tid], vj = tmax[j];
        if ((vi < vj) == ((tid & size) == 0)) { tmax[tid] = vj; tmax[j] = vi; }
      }
      barrier();
    }
  return tmax[k - 1];
}

void pool_take(float x, uint i, float tau) {
  if (x >= tau) {
    uint slot = atomicAdd(pool_count, 1u);
    if (slot < TOPK_MAX) { cand_val[slot] = x; cand_idx[slot] = i; }
  }
}

bool pool_sort() {
  uint tid = gl_LocalInvocationID.x, count = pool_count;
  if (count > TOPK_MAX) return false;
  uint n = 1;
  while (n < count) n *= 2;
  for (uint i = count + tid; i < n; i += T) { cand_val[i] = -1.0 / 0.0; cand_idx[i] = 0xffffffffu; }
  barrier();
  sort_candidates(n);
  return true;
}

// The k (1 <= k <= min(TOPK_MAX, p.V)) largest logits of row b by the radix select into cand_val / cand_idx
// [0, k), sorted; slots [k, n) (n: k rounded up to a power of two) hold -inf. Ties at the k-th value: which of them
// are kept is not defined when more tie than fit (the sort orders the kept ones).
void radix_candidates(uint b, uint k) {
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
  uint n = 1;  // the first n candidates sorted (n = k rounded up to a power of two; the rest are -inf)
  while (n < k) n *= 2;
  sort_candidates(n);
}

// The k (1 <= k <= min(TOPK_MAX, p.V)) largest logits of row b into cand_val / cand_idx [0, k), sorted by value
// descending then index ascending (slots past k may hold more candidates or -inf): the threshold pool where k <= T and
// it does not overflow, else the radix select.
void top_candidates(uint b, uint k) {
  if (k <= T) {
    uint tid = gl_LocalInvocationID.x;
    float m = -1.0 / 0.0;
    for (uint i0 = tid; i0 < p.V; i0 += UNROLL * T) {
      float x[UNROLL];
      load8(b, i0, x);
      for (uint u = 0; u < UNROLL; u++) m = max(m, x[u]);
    }
    float tau = pool_threshold(m, k);
    for (uint i0 = tid; i0 < p.V; i0 += UNROLL * T) {
      float x[UNROLL];
      load8(b, i0, x);
      for (uint u = 0; u < UNROLL; u++)
        if (i0 + u * T < p.V) pool_take(x[u], i0 + u * T, tau);
    }
    barrier();
    if (pool_sort()) return;
  }
  radix_candidates(b, k);
}
