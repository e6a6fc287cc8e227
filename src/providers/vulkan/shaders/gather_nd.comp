// GatherND (ai.onnx, batch_dims b): data [B.., D_b .. D_{b+k-1}, inner..], indices int64 [B.., J.., k];
// out[t, e] = data[batch(t), idx[t, 0..k-1], e] with t over the index tuples (J per batch) and e over the inner
// slice. Negative indices count from the end; out-of-range ones give zeros. Raw bits (ELEM_BYTES).
#version 460
#extension GL_EXT_shader_8bit_storage : require
#include "common.glsl"
#include "element_types.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
  ElemBuf data;
  U32Buf idx;     // int64 [tuples, k]
  ElemBuf out_;   // [tuples, inner]
  uint n, J, k, inner, batch_stride;  // batch_stride: data elements per batch entry
  uint dims[6];     // the indexed dims of data
  uint strides[6];  // their strides (elements)
} p;

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (i >= p.n) return;
  uint e = i % p.inner, t = i / p.inner;
  uint src = (t / p.J) * p.batch_stride + e;
  bool ok = true;
  for (uint q = 0; q < p.k; q++) {
    int v = load_i64(p.idx, t * p.k + q);
    if (v < 0) v += int(p.dims[q]);
    ok = ok && v >= 0 && v < int(p.dims[q]);
    src += uint(max(v, 0)) * p.strides[q];
  }
  if (ok) p.out_.v[i] = p.data.v[src];
  else p.out_.v[i] = ELEM_FROM_BITS(0u, 0u);
}
