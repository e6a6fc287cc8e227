// A copy of logits [B, V] with each row's logit processing applied (genai/search.h LogitEdit: repetition penalty,
// presence / frequency penalties, bans), so that the device picks from processed logits while the model's own stay
// as they are (get_logits). One workgroup per row copies it, then applies the row's edits to the tokens they name,
// each from the unprocessed logit: repetition (flags & 1) divides a positive logit by the row's penalty (correctly
// rounded, as the host's division) or multiplies a negative one; `subtract` (hi + lo: a double as two floats) is taken
// off as the host takes it off in double precision (an exact two-sum of the float and hi, then lo: the result is the
// host's to the last bit but for ties of the two roundings); a ban (flags & 2) gives the lowest float.
// A row may be pending (flags & 1): its latest token, read from `pending` (the tokens the step before picked on the
// device), is not among the tokens its edits reflect. The edit naming that token applies its pending values (flags &
// 4: repetition; the second subtract); when none names it, the row's fresh edit applies to it (flags & 2: repetition;
// the row's subtract).
// edits: per row 6 words (first entry, entry count, repetition penalty bits, flags, fresh subtract hi / lo bits), then
// entries of 6 words (token, flags, subtract hi / lo bits, pending subtract hi / lo bits) from word 6 * MAX_ROWS on.
#version 460
#include "common.glsl"

layout(local_size_x = 256) in;
const uint T = 256;
const uint MAX_ROWS = 256;  // kernels::kLogitEditMaxRows

layout(push_constant) uniform Push {
  ActBuf logits;  // [B, V]
  F32Buf y;       // [B, V]
  U32Buf edits;
  U32Buf pending;  // int64 [B] as uint pairs: each row's pending token
  uint V;
} p;

#include "exact_math.glsl"

// x - (hi + lo) as the host's (float)((double)x - d) with d = hi + lo.
float subtract_rn(float x, float hi, float lo) {
  precise float s = x - hi;
  precise float bb = s - x;
  precise float e = (x - (s - bb)) + (-hi - bb);  // two-sum: s + e == x - hi exactly
  precise float t = e - lo;
  precise float r = s + t;
  return r;
}

float edited(float v, float penalty, bool repetition, float hi, float lo) {
  if (repetition) v = v < 0.0 ? v * penalty : div_rn(v, penalty);
  if (hi != 0.0 || lo != 0.0) v = subtract_rn(v, hi, lo);
  return v;
}

float word_f(uint at) { return uintBitsToFloat(p.edits.v[at]); }

void main() {
  uint b = gl_WorkGroupID.x, tid = gl_LocalInvocationID.x;
  uint row = b * p.V;
  for (uint i = tid; i < p.V; i += T) p.y.v[row + i] = float(p.logits.v[row + i]);
  memoryBarrierBuffer();
  barrier();  // the edits overwrite copied values
  uint first = p.edits.v[6 * b], count = p.edits.v[6 * b + 1], row_flags = p.edits.v[6 * b + 3];
  float penalty = word_f(6 * b + 2);
  uint pend = (row_flags & 1u) != 0 ? p.pending.v[2 * b] : 0xffffffffu;  // (a token id fits the low word)
  const uint base = 6 * MAX_ROWS;
  for (uint e = tid; e < count; e += T) {
    uint at = base + 6 * (first + e);
    uint t = p.edits.v[at], flags = p.edits.v[at + 1];
    if (t >= p.V) continue;
    float v = float(p.logits.v[row + t]);
    if (t == pend) v = edited(v, penalty, (flags & 4u) != 0, word_f(at + 4), word_f(at + 5));
    else v = edited(v, penalty, (flags & 1u) != 0, word_f(at + 2), word_f(at + 3));
    if ((flags & 2u) != 0) v = uintBitsToFloat(0xff7fffffu);  // the lowest float
    p.y.v[row + t] = v;
  }
  if (tid == 0 && pend < p.V) {  // a pending token no edit names: the row's fresh edit (entries ascend by token)
    uint lo = 0, hi = count;
    while (lo < hi) {
      uint mid = (lo + hi) / 2;
      if (p.edits.v[base + 6 * (first + mid)] < pend) lo = mid + 1;
      else hi = mid;
    }
    if (lo == count || p.edits.v[base + 6 * (first + lo)] != pend)
      p.y.v[row + pend] = edited(float(p.logits.v[row + pend]), penalty, (row_flags & 2u) != 0, word_f(6 * b + 4),
                                 word_f(6 * b + 5));
  }
}
