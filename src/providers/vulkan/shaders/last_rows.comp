// Each batch row's last real position of a step's activations, for logits of that position only:
//   y[b, :] = x[b, s_b, :],  s_b = seqlens_k[b] - (total_sequence_length - S), clamped to [0, S)
// (GroupQueryAttention's lengths: a row's last valid key is seqlens_k[b]; the step's S positions end at total - 1
// for the longest row, so a right-padded prompt's row ends before S - 1, every other row at S - 1).
#version 460
#include "common.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
  ActBuf x;        // [B, S, D]
  I32Buf seqlens;  // int32 [B]
  I32Buf total;    // int32 [1]
  ActBuf y;        // [B, D]
  uint B, S, D;
} p;

void main() {
  uint b = gl_WorkGroupID.y;
  uint col = gl_GlobalInvocationID.x;
  if (b >= p.B || col >= p.D) return;
  int s = p.seqlens.v[b] - (p.total.v[0] - int(p.S));
  s = clamp(s, 0, int(p.S) - 1);
  p.y.v[b * p.D + col] = p.x.v[(b * p.S + uint(s)) * p.D + col];
}
