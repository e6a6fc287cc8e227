// GroupQueryAttention, flash-decoding step 2: merges the nsplit partial softmax results of each (row, head):
//   out = sum_i exp(m_i - M) o_i / sum_i exp(m_i - M) l_i   with M = max_i m_i (empty splits have m = -inf).
#version 460
#include "common.glsl"

layout(local_size_x = 64) in;

layout(push_constant) uniform Push {
  F32Buf partial;  // [B * S, Hq, nsplit, D + 2]
  ActBuf out_;     // [B, S, Hq * D]
  uint Hq, D, nsplit;
} p;

void main() {
  uint h = gl_WorkGroupID.x, bs = gl_WorkGroupID.y;
  uint base = (bs * p.Hq + h) * p.nsplit * (p.D + 2);
  float M = -1.0 / 0.0;
  for (uint i = 0; i < p.nsplit; i++) M = max(M, p.partial.v[base + i * (p.D + 2) + p.D]);
  float denom = 0.0;
  for (uint i = 0; i < p.nsplit; i++) {
    float mi = p.partial.v[base + i * (p.D + 2) + p.D];
    if (mi > -1.0 / 0.0) denom += exp(mi - M) * p.partial.v[base + i * (p.D + 2) + p.D + 1];
  }
  for (uint d = gl_LocalInvocationID.x; d < p.D; d += 64) {
    float num = 0.0;
    for (uint i = 0; i < p.nsplit; i++) {
      float mi = p.partial.v[base + i * (p.D + 2) + p.D];
      if (mi > -1.0 / 0.0) num += exp(mi - M) * p.partial.v[base + i * (p.D + 2) + d];
    }
    p.out_.v[(bs * p.Hq + h) * p.D + d] = TO_STORE(denom > 0.0 ? num / denom : 0.0);
  }
}
