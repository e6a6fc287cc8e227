// y[m, n] = sum_k x[m, k] * W[n, k] (+ bias[n]) for MatMulNBits int4 weights ([N, K/bs, bs/2] bytes, low nibble
// first, scales [N, K/bs], optional packed 4-bit zero points [N, ceil(K/bs / 2)] bytes, default zero point 8): the
// decode matvec of block sizes >= 32 with K % 32 == 0 (matvec.comp takes the rest). Same semantics and variants
// (EPILOGUE_SILU, NORM_PROLOGUE) as matvec.comp.
//
// Each subgroup owns RPS whole weight rows: lanes stride over the row in chunks of 32 values (one 16-byte load of
// nibbles and one scale per chunk and row; the chunk's 32 activations loaded once for all RPS rows), and the row's
// sum is a subgroup reduction — no shared memory and no barrier. A nibble q becomes the float 1 + q / 16 by moving
// it into the top mantissa bits of 1.0 (a shift and a mask-or, no conversion, no subtraction per value); the chunk's
// dot is then sum (1 + q/16) x = sum x + sum q x / 16, so sum (q - z) x = 16 dot - (16 + z) sum x, exact up to fp32
// rounding of the sums (the fp16-rounded weights of matvec.comp are not formed: the products are fp32). fp32
// accumulation.
#version 460
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint RPS = 4;     // weight rows per subgroup (even with EPILOGUE_SILU), 1..8
layout(constant_id = 2) const uint ROWS = 16;   // weight rows per workgroup (a multiple of RPS)
layout(constant_id = 3) const uint UNROLL = 1;  // chunks of 32 values per lane loaded together (1, 2 or 4)
layout(constant_id = 4) const uint HAS_ZP = 0;  // zero points present (else 8)
const uint WIDE = 1;                            // activations are read 16 bytes at a time (host checks alignment)

#include "matvec_common.glsl"

// sum over the chunk's 32 values of (1 + q_i / 16) * xs[i], q_i the nibbles of w (low nibble first).
float dot_chunk(uvec4 w, float xs[32]) {
  float s[4] = float[4](0, 0, 0, 0);
  for (uint j = 0; j < 4; j++) {
    uint word = w[j];
    for (uint i = 0; i < 8; i++) {
      uint bits = i <= 4 ? (word << (19 - 4 * i)) : (word >> (4 * i - 19));  // nibble i to mantissa bits 19..22
      s[j] += uintBitsToFloat((bits & 0x00780000u) | 0x3F800000u) * xs[j * 8 + i];
    }
  }
  return (s[0] + s[1]) + (s[2] + s[3]);
}

void main() {
  uint m = gl_WorkGroupID.y;
  uint wg = gl_WorkGroupID.x + gl_WorkGroupID.z * gl_NumWorkGroups.x;  // grid folded into x, z
  uint lane = gl_SubgroupInvocationID, SG = gl_SubgroupSize;
  uint chunks = p.K / 32;
  uint row_vecs = (p.nblocks * p.block_size) >> 5;         // 16-byte vectors of one weight row
  uint chunk_shift = uint(findLSB(p.block_size)) - 5u;     // log2(chunks per quantization block)
  // Subgroups take RPS rows at a time (a loop, so any subgroup count the driver picks covers all ROWS).
  for (uint rb = gl_SubgroupID * RPS; rb < ROWS; rb += gl_NumSubgroups * RPS) {
    uint n0 = wg * ROWS + rb;
    if (n0 >= p.N) break;  // uniform in the subgroup
    float acc[8] = float[8](0, 0, 0, 0, 0, 0, 0, 0);
#if NORM_PROLOGUE
    float ss = 0.0;
    // One subgroup of the whole grid writes the residual row (each subgroup reads all of x anyway).
    bool write_residual = (p.norm_flags & 4u) != 0 && n0 == 0;
#endif
    for (uint c0 = lane; c0 < chunks; c0 += UNROLL * SG) {
      // UNROLL chunks of x and of every row's nibbles and scales are loaded before any is used. Chunks past the end
      // re-read the last one and count zero (no branch between the loads).
      float xs[UNROLL][32];
      float sx[UNROLL], valid[UNROLL];
      uint cs[UNROLL];
      for (uint i = 0; i < UNROLL; i++) {
        uint c = c0 + i * SG;
        valid[i] = c < chunks ? 1.0 : 0.0;
        cs[i] = min(c, chunks - 1);
        for (uint j = 0; j < 4; j++) {
          float t[8];
          load_x8(m, cs[i] * 32 + j * 8, t);
          for (uint e = 0; e < 8; e++) xs[i][j * 8 + e] = t[e];
        }
      }
      uvec4 w[UNROLL][RPS];
      float sc[UNROLL][RPS], zero[UNROLL][RPS];
      for (uint i = 0; i < UNROLL; i++)
        for (uint r = 0; r < RPS; r++) {
          uint n = min(n0 + r, p.N - 1);
          w[i][r] = U32x4Buf(p.w).v[n * row_vecs + cs[i]];
          uint blk = cs[i] >> chunk_shift;
          sc[i][r] = float(p.scales.v[n * p.nblocks + blk]);
          zero[i][r] = 8.0;
          if (HAS_ZP != 0) {
            uint byte_index = n * p.zp_stride + (blk >> 1);
            uint byte = (p.zp.v[byte_index >> 2] >> ((byte_index & 3u) << 3)) & 0xffu;
            zero[i][r] = float((blk & 1u) == 0 ? (byte & 0xfu) : (byte >> 4));
          }
        }
#if NORM_PROLOGUE
      for (uint i = 0; i < UNROLL; i++)
        for (uint j = 0; j < 4; j++) {
          float t[8];
          for (uint e = 0; e < 8; e++) t[e] = xs[i][j * 8 + e];
          norm_prologue(m, cs[i] * 32 + j * 8, t, ss, write_residual && valid[i] != 0.0, valid[i]);
          for (uint e = 0; e < 8; e++) xs[i][j * 8 + e] = t[e];
        }
#endif
      for (uint i = 0; i < UNROLL; i++) {
        float s = 0.0;
        for (uint e = 0; e < 32; e++) s += xs[i][e];
        sx[i] = s;
      }
      for (uint i = 0; i < UNROLL; i++)
        for (uint r = 0; r < RPS; r++)
          acc[r] += valid[i] * sc[i][r] * (16.0 * dot_chunk(w[i][r], xs[i]) - (16.0 + zero[i][r]) * sx[i]);
    }
    for (uint r = 0; r < RPS; r++) acc[r] = subgroupAdd(acc[r]);
    float inv = 1.0;  // 1 / rms of the normalized input
#if NORM_PROLOGUE
    ss = subgroupAdd(ss);
    inv = inversesqrt(ss / float(p.K) + p.epsilon);
#endif
#if EPILOGUE_SILU
    for (uint r = 0; r + 1 < RPS; r += 2) {
      if (lane == r / 2 && n0 + r + 1 < p.N) {
        float g = float(TO_STORE(acc[r] * inv)), u = float(TO_STORE(acc[r + 1] * inv));
        p.y.v[m * (p.N / 2) + (n0 + r) / 2] = TO_STORE(g / (1.0 + exp(-g)) * u);
      }
    }
#else
    for (uint r = 0; r < RPS; r++) {
      if (lane == r % SG && n0 + r < p.N) {
        float s = acc[r] * inv;
        if (p.has_bias != 0) s += float(p.bias.v[n0 + r]);
        p.y.v[m * p.N + n0 + r] = TO_STORE(s);
      }
    }
#endif
  }
}
