// A copy of logits [B, V] with each row's logit processing applied (genai/search.h LogitEdit: repetition penalty,
// presence / frequency penalties, bans), so that the device picks from processed logits while the model's own stay
// as they are (get_logits). One workgroup per row copies it, then applies the row's edits to the tokens they name,
// each from the unprocessed logit: repetition (flags & 1) divides a positive logit by the row's penalty (correctly
// rounded, as the host's division) or multiplies a negative one; `subtract` (hi + lo: a double as two floats) is taken
// off as the host takes it off in double precision (an exact two-sum of the float and hi, then lo: the result is the
// host's to the last bit but for ties of the two roundings); a ban (flags & 2) gives the lowest float.
// edits: per row 3 words (first entry, entry count, repetition penalty bits), then entries of 4 words (token, flags,
// subtract hi bits, subtract lo bits) from word 3 * MAX_ROWS on.
#version 460
#include "common.glsl"

layout(local_size_x = 256) in;
const uint T = 256;
const uint MAX_ROWS = 256;  // kernels::kLogitEditMaxRows

layout(push_constant) uniform Push {
  ActBuf logits;  // [B, V]
  F32Buf y;       // [B, V]
  U32Buf edits;
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

void main() {
  uint b = gl_WorkGroupID.x, tid = gl_LocalInvocationID.x;
  uint row = b * p.V;
  for (uint i = tid; i < p.V; i += T) p.y.v[row + i] = float(p.logits.v[row + i]);
  memoryBarrierBuffer();
  barrier();  // the edits overwrite copied values
  uint first = p.edits.v[3 * b], count = p.edits.v[3 * b + 1];
  float penalty = uintBitsToFloat(p.edits.v[3 * b + 2]);
  for (uint e = tid; e < count; e += T) {
    uint at = 3 * MAX_ROWS + 4 * (first + e);
    uint t = p.edits.v[at], flags = p.edits.v[at + 1];
    if (t >= p.V) continue;
    float v = float(p.logits.v[row + t]);
    if ((flags & 1u) != 0) v = v < 0.0 ? v * penalty : div_rn(v, penalty);
    float hi = uintBitsToFloat(p.edits.v[at + 2]), lo = uintBitsToFloat(p.edits.v[at + 3]);
    if (hi != 0.0 || lo != 0.0) v = subtract_rn(v, hi, lo);
    if ((flags & 2u) != 0) v = uintBitsToFloat(0xff7fffffu);  // the lowest float
    p.y.v[row + t] = v;
  }
}
