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
  U32Buf w;       // weights as words: fp32/fp16 [N, K]; int4 [N, nblocks * bs / 2] bytes
  ActBuf scales;  // int4: [N, nblocks]
  U32Buf zp;      // int4, when has_zp: [N, zp_stride] bytes
  ActBuf bias;    // when has_bias: [N]
  ActBuf y;       // [M, N]
  uint M, N, K;
  uint block_size, nblocks, zp_stride;  // int4 only
  uint has_zp, has_bias;
#if NORM_PROLOGUE
  ActBuf skip;      // when norm_flags & 1: [M, K]
  ActBuf norm_bias; // when norm_flags & 2: [K]
  ActBuf gamma;     // [K]
  ActBuf residual;  // when norm_flags & 4: [M, K], s
  float epsilon;
  uint norm_flags;
#endif
} p;

// v = b[base + k0 .. + 8] (zero past K); 16-byte loads when WIDE (base and k0 multiples of 8).
void load8(ActBuf b, uint base, uint k0, out float v[8]) {
  if (WIDE != 0) {
#if STORE_F16
    uvec4 q = U32x4Buf(b).v[(base + k0) / 8];
    vec2 a = unpackHalf2x16(q.x), c = unpackHalf2x16(q.y), d = unpackHalf2x16(q.z), e = unpackHalf2x16(q.w);
    v = float[8](a.x, a.y, c.x, c.y, d.x, d.y, e.x, e.y);
#else
    vec4 a = F32x4Buf(b).v[(base + k0) / 4], c = F32x4Buf(b).v[(base + k0) / 4 + 1];
    v = float[8](a.x, a.y, a.z, a.w, c.x, c.y, c.z, c.w);
#endif
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
    load8(p.norm_bias, 0, k0, t);
    for (uint i = 0; i < 8; i++) xs[i] += t[i];
  }
  float sq = 0.0;
  for (uint i = 0; i < 8; i++) sq += xs[i] * xs[i];  // zero past K
  ss += valid * sq;
  if (write_residual && valid != 0.0)
    for (uint i = 0; i < 8; i++)
      if (k0 + i < p.K) p.residual.v[m * p.K + k0 + i] = TO_STORE(xs[i]);
  load8(p.gamma, 0, k0, t);
  for (uint i = 0; i < 8; i++) xs[i] *= t[i];
}
#endif

