// com.microsoft RotaryEmbedding: rotates the first rot_dim elements of every head by the angle of its position.
//   non-interleaved: pairs (j, j + rot_dim/2);   interleaved: pairs (2i, 2i + 1).
// Positions: pos_mode 0 -> position_ids[b, s] (int64 [B, S]); 1 -> position_ids[0] + s.
// Layout through element strides (3-D [B, S, H*D] or 4-D [B, H, S, D]); out must not alias x.
#version 460
#include "common.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
  ActBuf x;       // input
  U32Buf pos;     // int64 position ids
  ActBuf cos_c;   // [max_pos, rot_dim / 2]
  ActBuf sin_c;   // [max_pos, rot_dim / 2]
  ActBuf out_;    // same layout as x
  uint B, S, H, D, rot_dim, interleaved, pos_mode, max_pos;
  uint stride_b, stride_s, stride_h;  // elements
} p;

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (i >= p.B * p.S * p.H * p.D) return;
  uint j = i % p.D, h = (i / p.D) % p.H, s = (i / (p.D * p.H)) % p.S, b = i / (p.D * p.H * p.S);
  uint base = b * p.stride_b + s * p.stride_s + h * p.stride_h;
  float xj = float(p.x.v[base + j]);
  if (j >= p.rot_dim) {
    p.out_.v[base + j] = TO_STORE(xj);
    return;
  }
  int position = p.pos_mode == 0 ? load_i64(p.pos, b * p.S + s) : load_i64(p.pos, 0) + int(s);
  position = clamp(position, 0, int(p.max_pos) - 1);
  uint half_dim = p.rot_dim / 2;
  uint pair, idx;
  bool first;
  if (p.interleaved != 0) {
    idx = j / 2;
    first = (j % 2) == 0;
    pair = first ? j + 1 : j - 1;
  } else {
    first = j < half_dim;
    idx = first ? j : j - half_dim;
    pair = first ? j + half_dim : j - half_dim;
  }
  float c = float(p.cos_c.v[uint(position) * half_dim + idx]);
  float sn = float(p.sin_c.v[uint(position) * half_dim + idx]);
  float xp = float(p.x.v[base + pair]);
  p.out_.v[base + j] = TO_STORE(first ? xj * c - xp * sn : xj * c + xp * sn);
}
