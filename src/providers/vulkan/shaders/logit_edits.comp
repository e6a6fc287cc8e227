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
const uint PER = 8;
const uint SLICE = T * PER;  // kernels::kLogitEditSlice
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

const uint BASE = 6 * MAX_ROWS;  // the first entry's word

// The first of a row's entries a..count-1 (entries from `first` on, ascending by token) naming a token >= t.
uint first_naming(uint first, uint a, uint count, uint t) {
  uint z = count;
  while (a < z) {
    uint mid = (a + z) / 2;
    if (p.edits.v[BASE + 6 * (first + mid)] < t) a = mid + 1;
    else z = mid;
  }
  return a;
}

shared uint first_in_slice;

void main() {
  uint b = gl_WorkGroupID.x, tid = gl_LocalInvocationID.x;
  uint row = b * p.V, lo = gl_WorkGroupID.y * SLICE, hi = min(p.V, lo + SLICE);
  float v[PER];
  for (uint k = 0; k < PER; k++) {
    uint i = lo + tid + k * T;
    v[k] = i < hi ? float(p.logits.v[row + i]) : 0.0;
  }
  for (uint k = 0; k < PER; k++) {
    uint i = lo + tid + k * T;
    if (i < hi) p.y.v[row + i] = v[k];
  }
  uint first = p.edits.v[6 * b], count = p.edits.v[6 * b + 1], row_flags = p.edits.v[6 * b + 3];
  float penalty = word_f(6 * b + 2);
  if (tid == 0) first_in_slice = first_naming(first, 0, count, lo);  // the row's first entry in the slice
  memoryBarrierBuffer();
  barrier();  // the edits overwrite copied values
  uint pend = (row_flags & 1u) != 0 ? p.pending.v[2 * b] : 0xffffffffu;  // (a token id fits the low word)
  for (uint e = first_in_slice + tid; e < count; e += T) {
    uint at = BASE + 6 * (first + e);
    uint t = p.edits.v[at], flags = p.edits.v[at + 1];
    if (t >= hi) break;
    float x = float(p.logits.v[row + t]);
    if (t == pend) x = edited(x, penalty, (flags & 4u) != 0, word_f(at + 4), word_f(at + 5));
    else x = edited(x, penalty, (flags & 1u) != 0, word_f(at + 2), word_f(at + 3));
    if ((flags & 2u) != 0) x = uintBitsToFloat(0xff7fffffu);  // the lowest float
    p.y.v[row + t] = x;
  }
  if (tid == 0 && pend >= lo && pend < hi) {  // a pending token no edit names: the row's fresh edit
    uint a = first_naming(first, first_in_slice, count, pend);
    if (a == count || p.edits.v[BASE + 6 * (first + a)] != pend)
      p.y.v[row + pend] = edited(float(p.logits.v[row + pend]), penalty, (row_flags & 2u) != 0, word_f(6 * b + 4),
                                 word_f(6 * b + 5));
  }
}
