// Shared declarations of every ogx compute shader. Tensors are reached through buffer device addresses passed in
// push constants. STORE_F16 (compile-time define) selects fp16 storage for activations; arithmetic is fp32.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require

layout(buffer_reference, std430, buffer_reference_align = 4) buffer F32Buf { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer U32Buf { uint v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer I32Buf { int v[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer F16Buf { float16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer U32x4Buf { uvec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer F32x4Buf { vec4 v[]; };

#if STORE_F16
#define ActBuf F16Buf
#define ACT_BYTES 2u
#define TO_STORE(x) float16_t(x)
#else
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
