// Shared by matvec.comp and matvec_skinny.comp (included after their specialization constants; load8 reads WIDE):
// the push constants (MatvecPush in kernels/matmul.cpp), 8-value loads of activations, and the
// (Skip)SimplifiedLayerNorm prologue of the NORM_PROLOGUE variants.
#ifndef EPILOGUE_SILU
#define EPILOGUE_SILU 0
#endif
#ifndef NORM_PROLOGUE
#define NORM_PROLOGUE 0
#endif

layout(push_constant) uniform Push {
  ActBuf x;       // [M, K]
  ConstU32Buf w;  // weights as words: fp32/fp16 [N, K]; int4 [N, nblocks * bs / 2] bytes
  ConstActBuf scales;  // int4: [N, nblocks]
  ConstU32Buf zp;      // int4, when has_zp: [N, zp_stride] bytes
  ConstActBuf bias;    // when has_bias: [N]
  ActBuf y;       // [M, N]
  uint M, N, K;
  uint block_size, nblocks, zp_stride;  // int4 only
  uint has_zp, has_bias;
#if NORM_PROLOGUE
  ActBuf skip;      // when norm_flags & 1: [M, K]
  ConstActBuf norm_bias; // when norm_flags & 2: [K]
  ConstActBuf gamma;     // [K]
  ActBuf residual;  // when norm_flags & 4: [M, K], s
  float epsilon;
  uint norm_flags;
#endif
  CHAIN_PUSH
} p;

// v = b[base + k0 .. + 8] (zero past K); 16-byte loads when WIDE (base and k0 multiples of 8). For activations
// (ActBuf); load8c: model constants (ConstActBuf: gamma, the norm's bias).
#if STORE_F16
#define LOAD8_WIDE(V4, F4)                                                                                       \
  uvec4 q = V4(b).v[(base + k0) / 8];                                                                        \
  vec2 a = unpackHalf2x16(q.x), c = unpackHalf2x16(q.y), d = unpackHalf2x16(q.z), e = unpackHalf2x16(q.w);  \
  v = float[8](a.x, a.y, c.x, c.y, d.x, d.y, e.x, e.y);
#else
#define LOAD8_WIDE(V4, F4)                                                                                       \
  vec4 a = F4(b).v[(base + k0) / 4], c = F4(b).v[(base + k0) / 4 + 1];                           \
  v = float[8](a.x, a.y, a.z, a.w, c.x, c.y, c.z, c.w);
#endif
void load8(ActBuf b, uint base, uint k0, out float v[8]) {
  if (WIDE != 0) {
    LOAD8_WIDE(U32x4Buf, F32x4Buf)
    return;
  }
  for (uint i = 0; i < 8; i++) v[i] = k0 + i < p.K ? float(b.v[base + k0 + i]) : 0.0;
}
void load8c(ConstActBuf b, uint base, uint k0, out float v[8]) {
  if (WIDE != 0) {
    LOAD8_WIDE(ConstU32x4Buf, ConstF32x4Buf)
    return;
  }
  for (uint i = 0; i < 8; i++) v[i] = k0 + i < p.K ? float(b.v[base + k0 + i]) : 0.0;
}

void load_x8(uint m, uint k0, out float xs[8]) { load8(p.x, m * p.K, k0, xs); }

#if NORM_PROLOGUE
// xs (x at k0..k0+7) becomes s * gamma; ss accumulates s^2; the residual row gets s when write_residual.
// valid = 0: a repeated unit past the end (counts nothing, writes nothing).
void norm_prologue(uint m, uint k0, inout float xs[8], inout float ss, bool write_residual, float valid) {
  float t[8];
  if ((p.norm_flags & 1u) != 0) {
    load8(p.skip, m * p.K, k0, t);
    for (uint i = 0; i < 8; i++) xs[i] += t[i];
  }
  if ((p.norm_flags & 2u) != 0) {
    load8c(p.norm_bias, 0, k0, t);
    for (uint i = 0; i < 8; i++) xs[i] += t[i];
  }
  float sq = 0.0;
  for (uint i = 0; i < 8; i++) sq += xs[i] * xs[i];  // zero past K
  ss += valid * sq;
  if (write_residual && valid != 0.0)
    for (uint i = 0; i < 8; i++)
      if (k0 + i < p.K) p.residual.v[m * p.K + k0 + i] = TO_STORE(xs[i]);
  load8c(p.gamma, 0, k0, t);
  for (uint i = 0; i < 8; i++) xs[i] *= t[i];
}
#endif

