// ScatterND (ai.onnx; out already holds a copy of data): for each index tuple t (int64 [T, k]) and inner element
// e, out[offset(t) + e] = updates[t, e], or combined with it by REDUCTION (1 add, 2 mul, 3 max, 4 min). With a
// reduction one invocation owns an inner element and walks the tuples in order (duplicates reduce in the CPU's
// order); without, one invocation per (t, e). Negative indices count from the end; out-of-range tuples are skipped.
// Storage: SC_F32, SC_F16 (fp32 arithmetic), SC_I32, SC_I64 (needs shaderInt64), SC_U8 (bool; no reduction).
#version 460
#extension GL_EXT_shader_8bit_storage : require
#if SC_I64
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif
#include "common.glsl"

layout(buffer_reference, std430, buffer_reference_align = 1) buffer U8Buf { uint8_t v[]; };
#if SC_I64
layout(buffer_reference, std430, buffer_reference_align = 8) buffer I64Buf { int64_t v[]; };
#endif
#if SC_F32
#define Buf F32Buf
#define T float
#define STORE(x) (x)
#elif SC_F16
#define Buf F16Buf
#define T float
#define STORE(x) float16_t(x)
#elif SC_I32
#define Buf I32Buf
#define T int
#define STORE(x) (x)
#elif SC_I64
#define Buf I64Buf
#define T int64_t
#define STORE(x) (x)
#else
#define Buf U8Buf
#define T uint
#define STORE(x) uint8_t(x)
#endif

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint REDUCTION = 0;

layout(push_constant) uniform Push {
  Buf out_;      // data's shape
  U32Buf idx;    // int64 [T, k]
  Buf upd;       // [T, inner]
  uint T_, k, inner;
  uint dims[6];     // data's first k dims
  uint strides[6];  // their strides (elements)
} p;

bool offset_of(uint t, out uint off) {
  off = 0;
  for (uint q = 0; q < p.k; q++) {
    int v = load_i64(p.idx, t * p.k + q);
    if (v < 0) v += int(p.dims[q]);
    if (v < 0 || v >= int(p.dims[q])) return false;
    off += uint(v) * p.strides[q];
  }
  return true;
}

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  uint off;
  if (REDUCTION == 0) {
    if (i >= p.T_ * p.inner) return;
    uint e = i % p.inner, t = i / p.inner;
    if (offset_of(t, off)) p.out_.v[off + e] = p.upd.v[i];
    return;
  }
  if (i >= p.inner) return;
  for (uint t = 0; t < p.T_; t++) {
    if (!offset_of(t, off)) continue;
    T x = T(p.out_.v[off + i]), u = T(p.upd.v[t * p.inner + i]);
    T r = REDUCTION == 1 ? x + u : REDUCTION == 2 ? x * u : REDUCTION == 3 ? max(x, u) : min(x, u);
    p.out_.v[off + i] = STORE(r);
  }
}
