// Skinny matmul for small M (batched decode, 2 <= M <= 16): y[m, n] = sum_k x[m, k] * W[n, k] (+ bias[n]) over the
// weight layouts of matvec.comp (fp32/fp16 [N, K]; MatMulNBits int4 [N, K/bs, bs/2] bytes with scales and optional
// packed zero points). A workgroup computes ROWS outputs for MROWS rows m at once: each thread loads a unit (8
// values of K) of its ROWS weight rows once, decodes it, and multiplies it with that unit of every row's activations
// (read from memory; the same x serves every workgroup, so it stays in the caches). So the weights — the bytes that
// bound decode — are read once per step for all M rows instead of M times. fp32 accumulation.
// The variants of matvec.comp: EPILOGUE_SILU (gate/up rows in pairs -> silu(gate) * up, y [M, N / 2]) and
// NORM_PROLOGUE (the (Skip)SimplifiedLayerNorm folded in: each row's own sum of squares and 1 / rms).
// Workgroup y index: the block of MROWS rows (the host compiles MROWS for a few row counts, M rounded up; rows past
// M repeat row M - 1 and are not written).
#version 460
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 4;   // weight rows (outputs per activation row) per workgroup, <= 8
layout(constant_id = 2) const uint WIDE = 1;   // 16-byte loads of fp weights and of x (K % 8 == 0, x 16-byte aligned)
layout(constant_id = 3) const uint MROWS = 4;  // activation rows per workgroup, <= 16
layout(constant_id = 4) const uint NSG = 64;   // subgroups a workgroup can have at most (threads / min subgroup size)
// Units (8 values of K) per thread and loop iteration whose weights are loaded before any is used (1, 2 or 4), as
// matvec.comp's UNROLL: one memory round trip for several units. Units past the end repeat the last and count zero.
layout(constant_id = 5) const uint UNROLL = 1;

#include "matvec_common.glsl"

// Per subgroup: ROWS * MROWS partial dot products, then MROWS sums of squares (NORM_PROLOGUE).
shared float partial[(ROWS * MROWS + MROWS) * NSG];

// UNROLL units of the workgroup's weight rows, decoded (module scope: arrays sized by specialization constants cannot
// be function parameters): w[(u * ROWS + r) * 8 + i] = row n0 + r (clamped to N - 1) at K index unit * 8 + i (zero
// past K) of the u-th unit loaded; int4: scale[u * ROWS + r] is the row's block scale (w holds q - zero), fp: 1.
float w[UNROLL * ROWS * 8];
float scale[UNROLL * ROWS];

void load_weights(uint n0, uint unit, uint slot) {
  for (uint rr = 0; rr < ROWS; rr++) {
    uint r = slot * ROWS + rr;  // index of the row's unit in w / scale
    uint n = min(n0 + rr, p.N - 1);
#if WEIGHT_INT4
    uint row_words = (p.nblocks * p.block_size) >> 3;
    uint blk = unit / (p.block_size >> 3);
    uint word = p.w.v[n * row_words + unit];
    scale[r] = float(p.scales.v[n * p.nblocks + blk]);
    // p.zp points at readable memory without zero points too (matvec.comp's rule): load, then select.
    uint byte_index = n * p.zp_stride + (blk >> 1);
    uint byte = (p.zp.v[byte_index >> 2] >> ((byte_index & 3u) << 3)) & 0xffu;
    float zero = p.has_zp != 0 ? float((blk & 1u) == 0 ? (byte & 0xfu) : (byte >> 4)) : 8.0;
    float offset = 8388608.0 + zero;  // 2^23 + zero: see matvec.comp
    for (uint i = 0; i < 8; i++) w[r * 8 + i] = uintBitsToFloat(0x4B000000u | ((word >> (4 * i)) & 0xfu)) - offset;
#elif WEIGHT_F16
    scale[r] = 1.0;
    if (WIDE != 0) {
      uvec4 q = U32x4Buf(p.w).v[(n * p.K) / 8 + unit];
      vec2 a = unpackHalf2x16(q.x), b = unpackHalf2x16(q.y), c = unpackHalf2x16(q.z), d = unpackHalf2x16(q.w);
      w[r * 8 + 0] = a.x, w[r * 8 + 1] = a.y, w[r * 8 + 2] = b.x, w[r * 8 + 3] = b.y;
      w[r * 8 + 4] = c.x, w[r * 8 + 5] = c.y, w[r * 8 + 6] = d.x, w[r * 8 + 7] = d.y;
    } else {
      F16Buf w16 = F16Buf(p.w);
      for (uint i = 0; i < 8; i++) w[r * 8 + i] = unit * 8 + i < p.K ? float(w16.v[n * p.K + unit * 8 + i]) : 0.0;
    }
#else
    scale[r] = 1.0;
    if (WIDE != 0) {
      F32x4Buf w4 = F32x4Buf(p.w);
      vec4 a = w4.v[(n * p.K) / 4 + unit * 2], b = w4.v[(n * p.K) / 4 + unit * 2 + 1];
      w[r * 8 + 0] = a.x, w[r * 8 + 1] = a.y, w[r * 8 + 2] = a.z, w[r * 8 + 3] = a.w;
      w[r * 8 + 4] = b.x, w[r * 8 + 5] = b.y, w[r * 8 + 6] = b.z, w[r * 8 + 7] = b.w;
    } else {
      F32Buf w32 = F32Buf(p.w);
      for (uint i = 0; i < 8; i++) w[r * 8 + i] = unit * 8 + i < p.K ? w32.v[n * p.K + unit * 8 + i] : 0.0;
    }
#endif
  }
}

void main() {
  uint m0 = gl_WorkGroupID.y * MROWS;
  uint n0 = (gl_WorkGroupID.x + gl_WorkGroupID.z * gl_NumWorkGroups.x) * ROWS;  // grid folded into x, z
  if (n0 >= p.N) return;  // whole workgroup
  uint tid = gl_LocalInvocationID.x;
  uint T = gl_WorkGroupSize.x;
  uint units = (p.K + 7) / 8;
  float acc[ROWS * MROWS];  // [r * MROWS + j]: output n0 + r of row m0 + j
  for (uint i = 0; i < ROWS * MROWS; i++) acc[i] = 0.0;
#if NORM_PROLOGUE
  float ss[MROWS];
  for (uint j = 0; j < MROWS; j++) ss[j] = 0.0;
  bool write_residual = (p.norm_flags & 4u) != 0 && n0 == 0;
#endif
  for (uint u0 = tid; u0 < units; u0 += UNROLL * T) {
    float valid[UNROLL];
    uint us[UNROLL];
    for (uint k = 0; k < UNROLL; k++) {  // every unit's weight loads first
      uint u = u0 + k * T;
      valid[k] = u < units ? 1.0 : 0.0;
      us[k] = min(u, units - 1);
      load_weights(n0, us[k], k);
    }
    for (uint k = 0; k < UNROLL; k++)
      for (uint j = 0; j < MROWS; j++) {
        uint m = min(m0 + j, p.M - 1);
        float xs[8];
        load_x8(m, us[k] * 8, xs);
#if NORM_PROLOGUE
        norm_prologue(m, us[k] * 8, xs, ss[j], write_residual && m0 + j < p.M, valid[k]);
#endif
        for (uint r = 0; r < ROWS; r++) {
          float s = 0.0;
          for (uint i = 0; i < 8; i++) s += w[(k * ROWS + r) * 8 + i] * xs[i];
          acc[r * MROWS + j] += valid[k] * s * scale[k * ROWS + r];
        }
      }
  }
  uint sg = gl_SubgroupID;
  for (uint i = 0; i < ROWS * MROWS; i++) {
    float s = subgroupAdd(acc[i]);
    if (gl_SubgroupInvocationID == 0) partial[i * NSG + sg] = s;
  }
#if NORM_PROLOGUE
  for (uint j = 0; j < MROWS; j++) {
    float s = subgroupAdd(ss[j]);
    if (gl_SubgroupInvocationID == 0) partial[(ROWS * MROWS + j) * NSG + sg] = s;
  }
#endif
  barrier();
#if EPILOGUE_SILU
  const uint outputs = (ROWS / 2) * MROWS;
#else
  const uint outputs = ROWS * MROWS;
#endif
  for (uint o = tid; o < outputs; o += T) {
    uint r = o / MROWS, j = o % MROWS, m = m0 + j;
    if (m >= p.M) continue;
    float inv = 1.0;  // 1 / rms of row m's normalized input
#if NORM_PROLOGUE
    float total = 0.0;
    for (uint i = 0; i < gl_NumSubgroups; i++) total += partial[(ROWS * MROWS + j) * NSG + i];
    inv = inversesqrt(total / float(p.K) + p.epsilon);
#endif
#if EPILOGUE_SILU
    if (n0 + 2 * r + 1 >= p.N) continue;
    float g = 0.0, v = 0.0;
    for (uint i = 0; i < gl_NumSubgroups; i++) {
      g += partial[((2 * r) * MROWS + j) * NSG + i];
      v += partial[((2 * r + 1) * MROWS + j) * NSG + i];
    }
    g = float(TO_STORE(g * inv));
    v = float(TO_STORE(v * inv));
    p.y.v[m * (p.N / 2) + n0 / 2 + r] = TO_STORE(g / (1.0 + exp(-g)) * v);
#else
    if (n0 + r >= p.N) continue;
    float s = 0.0;
    for (uint i = 0; i < gl_NumSubgroups; i++) s += partial[(r * MROWS + j) * NSG + i];
    s *= inv;
    if (p.has_bias != 0) s += float(p.bias.v[n0 + r]);
    p.y.v[m * p.N + n0 + r] = TO_STORE(s);
#endif
  }
}
