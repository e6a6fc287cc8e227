// y[m, n] = sum_k x[m, k] * W[n, k] (+ bias[n]): decode-time matrix-vector product over weights stored row-major as
// [N, K] (the transposed ONNX MatMul weight) in fp32/fp16, or MatMulNBits int4 ([N, K/bs, bs/2] bytes, low nibble
// first, scales [N, K/bs], optional packed 4-bit zero points [N, ceil(K/bs / 2)] bytes, default zero point 8).
// A workgroup computes ROWS outputs of one row m; threads stride over K in units of 8 values, UNROLL units per
// iteration with their loads issued together; fp32 accumulation.
// EPILOGUE_SILU (compile time): weight rows come in (gate, up) pairs (a fused, row-interleaved gate/up projection)
// and the workgroup writes silu(gate) * up for each pair into y [M, N / 2], the products rounded to the storage
// type first as the separate projection would store them.
#version 460
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 4;  // outputs per workgroup, <= 8
layout(constant_id = 2) const uint WIDE = 1;  // 16-byte loads of fp weights and of x (K % 8 == 0, x 16-byte aligned)
// Units (8 values of K) per thread and loop iteration, loaded together (1, 2 or 4): the host picks as many as a
// thread has units, within a register budget, so a long K costs one memory round trip instead of several.
layout(constant_id = 3) const uint UNROLL = 1;

#include "matvec_common.glsl"

#include "matvec_finish.glsl"

#if WEIGHT_INT4
uint row_words;  // 32-bit words of one int4 weight row: nblocks * block_size / 8
uint unit_shift;  // log2 of the units (8 values) per quantization block: block_size is a power of two >= 16
#endif

float dot_unit(uint n, uint unit, float xs[8]) {
  float s = 0.0;
#if WEIGHT_INT4
  uint word = p.w.v[n * row_words + unit];
  uint blk = unit >> unit_shift;
  float scale = float(p.scales.v[n * p.nblocks + blk]);
  // Without zero points p.zp points at readable memory anyway (the host passes the scales): the byte is always
  // loaded and the default 8 selected, so no branch separates this row's loads from the next row's.
  uint byte_index = n * p.zp_stride + (blk >> 1);
  uint byte = (p.zp.v[byte_index >> 2] >> ((byte_index & 3u) << 3)) & 0xffu;
  float zero = p.has_zp != 0 ? float((blk & 1u) == 0 ? (byte & 0xfu) : (byte >> 4)) : 8.0;
  // A nibble q becomes the float 2^23 + q by OR-ing it into the mantissa of 2^23 (no int-to-float conversion);
  // subtracting 2^23 + zero then gives q - zero exactly.
  float offset = 8388608.0 + zero;
  for (uint i = 0; i < 8; i++) s += (uintBitsToFloat(0x4B000000u | ((word >> (4 * i)) & 0xfu)) - offset) * xs[i];
  return s * scale;
#elif WEIGHT_F16
  if (WIDE != 0) {
    uvec4 q = U32x4Buf(p.w).v[(n * p.K) / 8 + unit];
    vec2 a = unpackHalf2x16(q.x), b = unpackHalf2x16(q.y), c = unpackHalf2x16(q.z), d = unpackHalf2x16(q.w);
    return a.x * xs[0] + a.y * xs[1] + b.x * xs[2] + b.y * xs[3] + c.x * xs[4] + c.y * xs[5] + d.x * xs[6] +
           d.y * xs[7];
  }
  F16Buf w16 = F16Buf(p.w);
  for (uint i = 0; i < 8; i++)
    if (unit * 8 + i < p.K) s += float(w16.v[n * p.K + unit * 8 + i]) * xs[i];
  return s;
#else
  if (WIDE != 0) {
    F32x4Buf w4 = F32x4Buf(p.w);
    vec4 a = w4.v[(n * p.K) / 4 + unit * 2], b = w4.v[(n * p.K) / 4 + unit * 2 + 1];
    return dot(a, vec4(xs[0], xs[1], xs[2], xs[3])) + dot(b, vec4(xs[4], xs[5], xs[6], xs[7]));
  }
  F32Buf w32 = F32Buf(p.w);
  for (uint i = 0; i < 8; i++)
    if (unit * 8 + i < p.K) s += w32.v[n * p.K + unit * 8 + i] * xs[i];
  return s;
#endif
}

void main() {
  uint m = gl_WorkGroupID.y;
  uint n0 = (gl_WorkGroupID.x + gl_WorkGroupID.z * gl_NumWorkGroups.x) * ROWS;  // grid folded into x, z
  if (n0 >= p.N) return;  // whole workgroup
  uint tid = gl_LocalInvocationID.x;
  uint units = (p.K + 7) / 8;
  float acc[8] = float[8](0, 0, 0, 0, 0, 0, 0, 0);
#if NORM_PROLOGUE
  float ss = 0.0;
  bool write_residual = (p.norm_flags & 4u) != 0 && n0 == 0;
#endif
  uint T = gl_WorkGroupSize.x;
#if WEIGHT_INT4
  row_words = (p.nblocks * p.block_size) >> 3;
  unit_shift = uint(findLSB(p.block_size)) - 3u;
#endif
  for (uint u0 = tid; u0 < units; u0 += UNROLL * T) {
    // UNROLL units of x and of every row's weights are loaded before any is used: one memory round trip per
    // iteration. Units past the end re-read the last unit and count zero (no branch between the loads).
    float xs[4][8];
    uint us[4];
    float valid[4];
    for (uint i = 0; i < UNROLL; i++) {
      uint u = u0 + i * T;
      valid[i] = u < units ? 1.0 : 0.0;
      us[i] = min(u, units - 1);
      load_x8(m, us[i] * 8, xs[i]);
    }
#if NORM_PROLOGUE
    for (uint i = 0; i < UNROLL; i++) norm_prologue(m, us[i] * 8, xs[i], ss, write_residual, valid[i]);
#endif
    for (uint i = 0; i < UNROLL; i++)
      for (uint r = 0; r < ROWS; r++) acc[r] += valid[i] * dot_unit(min(n0 + r, p.N - 1), us[i], xs[i]);
  }
#if NORM_PROLOGUE
  matvec_finish(acc, ss, m, n0);
#else
  matvec_finish(acc, 0.0, m, n0);
#endif
}
