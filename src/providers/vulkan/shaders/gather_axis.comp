// Gather along one axis of any rank: out[o, j, e] = data[o, idx[j], e] (data viewed as [outer, axis_len, inner],
// out as [outer, J, inner]). Indices int64 (INDEX_I32: int32); negative ones count from the end, out-of-range
// ones give zeros. Elements copied as raw bits (ELEM_BYTES).
#version 460
#extension GL_EXT_shader_8bit_storage : require
#include "common.glsl"
#include "element_types.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
  ElemBuf data;  // [outer, axis_len, inner]
#if INDEX_I32
  I32Buf idx;    // [J]
#else
  U32Buf idx;    // int64 [J]
#endif
  ElemBuf out_;  // [outer, J, inner]
  uint n, J, axis_len, inner;
} p;

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (i >= p.n) return;
  uint e = i % p.inner, t = i / p.inner, j = t % p.J, o = t / p.J;
#if INDEX_I32
  int k = p.idx.v[j];
#else
  int k = load_i64(p.idx, j);
#endif
  if (k < 0) k += int(p.axis_len);
  bool ok = k >= 0 && k < int(p.axis_len);
  if (ok) p.out_.v[i] = p.data.v[(o * p.axis_len + uint(k)) * p.inner + e];
  else p.out_.v[i] = ELEM_FROM_BITS(0u, 0u);
}
