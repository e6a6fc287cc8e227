// Elementwise ops with ONNX (numpy) broadcasting, up to rank 5 (the launcher merges dims first). OP
// (specialization constant) is a row of kernels/elementwise_ops.table; its expression comes in through the
// generated elementwise_ops.glsl. Storage type (one define): EW_F32, EW_F16 (fp32 arithmetic), EW_I32, EW_I64
// (int64 arithmetic: needs shaderInt64), EW_U8 (bool). Mode (one define or none): out = apply(a, b) (T; unary ops
// get b = a), MODE_COMPARE out = compare(a, b) (bool), MODE_SELECT out = select(a (bool), b, c) (T). Input strides
// are 0 along broadcast axes.
#version 460
#extension GL_EXT_shader_8bit_storage : require
#if EW_I64
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif
#include "common.glsl"

layout(buffer_reference, std430, buffer_reference_align = 1) buffer U8Buf { uint8_t v[]; };
#if EW_I64
layout(buffer_reference, std430, buffer_reference_align = 8) buffer I64Buf { int64_t v[]; };
#endif

#if EW_F32
#define InBuf F32Buf
#define T float
#define EW_CLASS_FLOAT 1
#define STORE(x) (x)
#elif EW_F16
#define InBuf F16Buf
#define T float
#define EW_CLASS_FLOAT 1
#define STORE(x) float16_t(x)
#elif EW_I32
#define InBuf I32Buf
#define T int
#define EW_CLASS_INT 1
#define STORE(x) (x)
#elif EW_I64
#define InBuf I64Buf
#define T int64_t
#define EW_CLASS_INT 1
#define STORE(x) (x)
#else
#define InBuf U8Buf
#define T bool
#define EW_CLASS_BOOL 1
#define STORE(x) uint8_t((x) ? 1u : 0u)
#endif

#if EW_CLASS_BOOL
#define LOAD(buf, i) (uint(buf.v[i]) != 0u)
#else
#define LOAD(buf, i) T(buf.v[i])
#endif

#include "elementwise_math.glsl"
#include "elementwise_ops.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint OP = 0;

layout(push_constant) uniform Push {
#if MODE_SELECT
  U8Buf a;      // bool condition
#else
  InBuf a;
#endif
  InBuf b;      // binary / select
  InBuf c;      // select
#if MODE_COMPARE
  U8Buf out_;   // bool [dims]
#else
  InBuf out_;   // [dims]
#endif
  uint n, rank;
  float pa, pb;       // the row's parameters a, b
  uint dims[5];       // output dims, innermost last
  uint sa[5], sb[5], sc[5];  // input strides (elements)
} p;

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (i >= p.n) return;
  uint rem = i, ia = 0, ib = 0, ic = 0;
  for (int d = int(p.rank) - 1; d >= 0; d--) {
    uint k = rem % p.dims[d];
    rem /= p.dims[d];
    ia += k * p.sa[d];
    ib += k * p.sb[d];
    ic += k * p.sc[d];
  }
#if MODE_SELECT
  p.out_.v[i] = STORE(ew_select(OP, uint(p.a.v[ia]) != 0u, LOAD(p.b, ib), LOAD(p.c, ic)));
#elif MODE_COMPARE
  p.out_.v[i] = uint8_t(ew_compare(OP, LOAD(p.a, ia), LOAD(p.b, ib)) ? 1u : 0u);
#else
  T x = LOAD(p.a, ia);
  T y = LOAD(p.b, ib);
  p.out_.v[i] = STORE(ew_apply(OP, x, y, p.pa, p.pb));
#endif
}
