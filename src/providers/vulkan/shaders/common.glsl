// Shared declarations of every ogx compute shader. Tensors are reached through buffer device addresses passed in
// push constants. STORE_F16 (compile-time define) selects fp16 storage for activations; arithmetic is fp32.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "chain.glsl"

layout(buffer_reference, std430, buffer_reference_align = 4) CHAIN_COHERENT buffer F32Buf { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) CHAIN_COHERENT buffer U32Buf { uint v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) CHAIN_COHERENT buffer I32Buf { int v[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) CHAIN_COHERENT buffer F16Buf { float16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) CHAIN_COHERENT buffer U32x4Buf { uvec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) CHAIN_COHERENT buffer F32x4Buf { vec4 v[]; };

// Model constants (weights, scales, norm weights, biases): read-only and, in the chained variants too, never
// coherent — nothing writes them while kernels run, so they keep the non-coherent cached load path.
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer ConstF32Buf { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer ConstU32Buf { uint v[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) readonly buffer ConstF16Buf { float16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer ConstU32x4Buf { uvec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer ConstF32x4Buf { vec4 v[]; };

#if STORE_F16
#define ConstActBuf ConstF16Buf
#define ActBuf F16Buf
#define ACT_BYTES 2u
#define TO_STORE(x) float16_t(x)
#else
#define ConstActBuf ConstF32Buf
#define ActBuf F32Buf
#define ACT_BYTES 4u
#define TO_STORE(x) (x)
#endif

// Reads element i of an int64 tensor (low word, sign from the high word), so no shaderInt64 is needed.
int load_i64(U32Buf b, uint i) {
  uint lo = b.v[2 * i];
  uint hi = b.v[2 * i + 1];
  return (hi & 0x80000000u) != 0 ? -int(~lo + 1u) : int(lo);
}
