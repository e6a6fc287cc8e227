// Cast: out[i] = (OUT) in[i] between float32, float16, int32, int64 and bool (IN_* / OUT_* defines: F32, F16, I32,
// I64, U8). Floats to integers truncate toward zero (non-finite values give 0, as the CPU provider); to bool: != 0.
#version 460
#extension GL_EXT_shader_8bit_storage : require
#if IN_I64 || OUT_I64
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif
#include "common.glsl"

layout(buffer_reference, std430, buffer_reference_align = 1) buffer U8Buf { uint8_t v[]; };
#if IN_I64 || OUT_I64
layout(buffer_reference, std430, buffer_reference_align = 8) buffer I64Buf { int64_t v[]; };
#endif
layout(local_size_x = 256) in;

#if IN_F32
#define InBuf F32Buf
#define LOAD(i) float(p.in_.v[i])
#define IN_FLOAT 1
#elif IN_F16
#define InBuf F16Buf
#define LOAD(i) float(p.in_.v[i])
#define IN_FLOAT 1
#elif IN_I32
#define InBuf I32Buf
#define LOAD(i) p.in_.v[i]
#elif IN_I64
#define InBuf I64Buf
#define LOAD(i) p.in_.v[i]
#else
#define InBuf U8Buf
#define LOAD(i) int(uint(p.in_.v[i]))
#endif

#if OUT_F32
#define OutBuf F32Buf
#define CONVERT(v) float(v)
#elif OUT_F16
#define OutBuf F16Buf
#define CONVERT(v) float16_t(float(v))
#elif OUT_I32
#define OutBuf I32Buf
#define CONVERT(v) int(v)
#elif OUT_I64
#define OutBuf I64Buf
#define CONVERT(v) int64_t(v)
#else
#define OutBuf U8Buf
#define CONVERT(v) uint8_t((v) != 0 ? 1u : 0u)
#endif

layout(push_constant) uniform Push {
  InBuf in_;    // [n]
  OutBuf out_;  // [n]
  uint n;
} p;

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (i >= p.n) return;
#if IN_FLOAT && !(OUT_F32 || OUT_F16)
  float v = LOAD(i);
#if OUT_U8
  p.out_.v[i] = uint8_t(v != 0.0 ? 1u : 0u);
#else
  p.out_.v[i] = isinf(v) || isnan(v) ? CONVERT(0) : CONVERT(v);
#endif
#else
  p.out_.v[i] = CONVERT(LOAD(i));
#endif
}
