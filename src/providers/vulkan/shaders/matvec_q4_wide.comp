// y[m, n] = sum_k x[m, k] * W[n, k] (+ bias[n]) for MatMulNBits int4 weights ([N, K/bs, bs/2] bytes, low nibble
// first, scales [N, K/bs], optional packed 4-bit zero points [N, ceil(K/bs / 2)] bytes, default zero point 8): the
// decode matvec of block sizes >= 32 with K % 32 == 0 (matvec.comp takes the rest). Same semantics and variants
// (EPILOGUE_SILU, NORM_PROLOGUE) as matvec.comp.
//
// A workgroup computes ROWS outputs of MROWS activation rows (one with NORM_PROLOGUE); its threads split K in chunks
// of 32 values: one 16-byte load of nibbles and one scale per chunk and row (matvec.comp: a 4-byte load, a scale and a
// zero-point load per 8 values). With HALF_DOT each chunk of a weight row is dequantized once for all MROWS rows.
// The host sizes the workgroup so that each thread has at most UNROLL chunks: every weight load of a thread is
// issued before any is used — one memory round trip per dispatch, which is what a dependent dispatch waits for.
// One activation row with GROUP_ROWS < ROWS: the ROWS outputs go in groups of GROUP_ROWS, each group's weight loads
// issued before the previous group's products, so that a thread keeps one group's loads in flight while it
// multiplies (at most two groups' registers live) and the activations (with NORM_PROLOGUE: the norm's loads and sum
// of squares) serve ROWS outputs.
// A nibble q becomes the float 1 + q / 16 by moving it into the top mantissa bits of 1.0 (a shift and a mask-or, no
// conversion, no subtraction per value); the chunk's dot is sum (1 + q/16) x = sum x + sum q x / 16, so
// sum (q - z) x = 16 dot - (16 + z) sum x, exact up to fp32 rounding of the sums. fp32 accumulation.
//
// HALF_DOT (fp16 activations; the _h2 pipelines): the products in packed fp16 — per 32-bit word of nibbles one shift
// and four mask-ors make four half pairs, 4 + q/256 (low nibbles in mantissa bits 0..3 under exponent 2) and
// 0.25 + q/256 (high nibbles, bits 4..7 under exponent -2), exact; one subtraction per pair gives (q - z)/256
// exactly (a normal half: |q - z| >= 1 or zero), one fma per pair multiplies it by the raw activations (paired to
// match the nibbles by bit moves, no conversion or scaling), and the sums go to the fp32 accumulator (times 256 x
// scale). Sums of HALF_ACC_WORDS words' products per half lane (4 x HALF_ACC_WORDS products, at most 16) are finite
// for any finite fp16 input: 16 x 15/256 x 65504 < 65504. Products round to fp16 only inside fmas (~2^-11 relative,
// as the fp16 activations themselves); a first product below 2^-14 (|x| < 2^-6 / |q - z|) may flush to zero on
// devices without fp16 denormals, a contribution below fp16 output rounding.
#version 460
#extension GL_EXT_control_flow_attributes : require
#if HALF_DOT
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#endif
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 4;    // outputs per workgroup (even with EPILOGUE_SILU), 1..8 (..16 in
                                                // groups)
layout(constant_id = 2) const uint UNROLL = 1;  // chunks of 32 values per thread loaded together (1, 2 or 4)
layout(constant_id = 3) const uint HAS_ZP = 0;  // zero points present (else 8)
layout(constant_id = 4) const uint MROWS = 1;   // activation rows per workgroup (plain / SiLU variants; 1..8): the
                                                // weights loaded once for rows m0 .. m0 + MROWS (a batched step,
                                                // a speculative verify pass)
layout(constant_id = 5) const uint HALF_ACC_WORDS = 1;  // HALF_DOT: words of products summed in fp16 before fp32 (1, 2 or 4)
layout(constant_id = 6) const uint GROUP_ROWS = 4;  // one activation row: outputs whose weights are loaded together
                                                    // (ROWS / GROUP_ROWS groups; = ROWS: one); a divisor of ROWS,
                                                    // even with EPILOGUE_SILU
const uint WIDE = 1;                            // activations are read 16 bytes at a time (host checks alignment)
const uint NG = ROWS / GROUP_ROWS;              // groups of one activation row's outputs
#define FINISH_ROWS 16

#include "matvec_common.glsl"

#include "matvec_finish.glsl"

#if !NORM_PROLOGUE
// The end of a multi-row workgroup (MROWS > 1): every thread's partial dots acc[mm][r] summed per subgroup into
// shared memory, one barrier, then one thread per output sums the subgroups' partials (in matvec_finish's order:
// the same results as one row per workgroup) and writes row m0 + mm's column n0 + r, or silu(gate) * up of a
// (gate, up) pair with EPILOGUE_SILU. The host keeps the workgroup to at most 16 subgroups.
shared float partial_rows[MROWS * ROWS * 16];

void finish_rows(float acc[MROWS][FINISH_ROWS], uint m0, uint n0) {
  for (uint mm = 0; mm < MROWS; mm++)
    for (uint r = 0; r < ROWS; r++) {
      float s = subgroupAdd(acc[mm][r]);
      if (gl_SubgroupInvocationID == 0) partial_rows[(mm * ROWS + r) * 16 + gl_SubgroupID] = s;
    }
  barrier();
#if EPILOGUE_SILU
  const uint per_row = ROWS / 2;
#else
  const uint per_row = ROWS;
#endif
  for (uint o = gl_LocalInvocationID.x; o < MROWS * per_row; o += gl_WorkGroupSize.x) {
    uint mm = o / per_row, t = o % per_row, m = m0 + mm;
    if (m >= p.M) continue;
#if EPILOGUE_SILU
    if (n0 + 2 * t + 1 >= p.N) continue;
    float g = 0.0, u = 0.0;
    for (uint i = 0; i < gl_NumSubgroups; i++) {
      g += partial_rows[(mm * ROWS + 2 * t) * 16 + i];
      u += partial_rows[(mm * ROWS + 2 * t + 1) * 16 + i];
    }
    store_silu(m, n0, t, g, u);
#else
    if (n0 + t >= p.N) continue;
    float s = 0.0;
    for (uint i = 0; i < gl_NumSubgroups; i++) s += partial_rows[(mm * ROWS + t) * 16 + i];
    store_plain(m, n0, t, s);
#endif
  }
}
#endif

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

#if HALF_DOT
// The chunk's activations as 16 half pairs, word j's pairs at 4j..4j+3: (x0, x4), (x1, x5), (x2, x6), (x3, x7) of its
// 8 values (the order in which dequant_chunk below makes the nibble pairs).
void pair_x(float xs[32], out f16vec2 xp[16]) {
  for (uint j = 0; j < 4; j++)
    for (uint t = 0; t < 4; t++) xp[4 * j + t] = f16vec2(vec2(xs[8 * j + t], xs[8 * j + t + 4]));
}

// One word's 8 fp16 activations (a 16-byte load) as its 4 half pairs: picked by bit moves, no conversion.
void pair_word(uvec4 q, out f16vec2 xp[4]) {
  xp[0] = unpackFloat2x16((q.x & 0xFFFFu) | (q.z << 16));
  xp[1] = unpackFloat2x16((q.x >> 16) | (q.z & 0xFFFF0000u));
  xp[2] = unpackFloat2x16((q.y & 0xFFFFu) | (q.w << 16));
  xp[3] = unpackFloat2x16((q.y >> 16) | (q.w & 0xFFFF0000u));
}

// The same for a chunk from its four 16-byte loads.
void pair_x_raw(uvec4 r[4], out f16vec2 xp[16]) {
  for (uint j = 0; j < 4; j++) {
    f16vec2 w[4];
    pair_word(r[j], w);
    for (uint t = 0; t < 4; t++) xp[4 * j + t] = w[t];
  }
}

// One word's 8 nibbles as 4 half pairs (q - z) / 256, exact, in the order pair_word pairs the activations: 4 + q/256
// (low nibbles) and 0.25 + q/256 (high nibbles) by mask-ors, minus the zero point.
void dequant_word(uint a, float z, out f16vec2 q[4]) {
  f16vec2 zl = f16vec2(float16_t(4.0 + z / 256.0)), zh = f16vec2(float16_t(0.25 + z / 256.0));
  uint b = a >> 8;
  q[0] = unpackFloat2x16((a & 0x000F000Fu) | 0x44004400u) - zl;  // values 0, 4 of the word
  q[1] = unpackFloat2x16((a & 0x00F000F0u) | 0x34003400u) - zh;  // 1, 5
  q[2] = unpackFloat2x16((b & 0x000F000Fu) | 0x44004400u) - zl;  // 2, 6
  q[3] = unpackFloat2x16((b & 0x00F000F0u) | 0x34003400u) - zh;  // 3, 7
}

// The chunk's 32 nibbles as 16 half pairs, word j's at 4j..4j+3.
void dequant_chunk(uvec4 w, float z, out f16vec2 q[16]) {
  for (uint j = 0; j < 4; j++) {
    f16vec2 t[4];
    dequant_word(w[j], z, t);
    for (uint k = 0; k < 4; k++) q[4 * j + k] = t[k];
  }
}

// sum over the chunk of (q_i - z) x_i / 256 from its dequantized pairs: fmas with the paired activations, each
// HALF_ACC_WORDS words' two half sums added in fp32.
float half_dot_pairs(f16vec2 q[16], f16vec2 xp[16]) {
  float s = 0.0;
  f16vec2 d = f16vec2(0.0);
  for (uint j = 0; j < 4; j++) {
    d = (j % HALF_ACC_WORDS == 0) ? q[4 * j] * xp[4 * j] : fma(q[4 * j], xp[4 * j], d);
    d = fma(q[4 * j + 1], xp[4 * j + 1], d);
    d = fma(q[4 * j + 2], xp[4 * j + 2], d);
    d = fma(q[4 * j + 3], xp[4 * j + 3], d);
    if ((j + 1) % HALF_ACC_WORDS == 0) {
      vec2 df = vec2(d);
      s += df.x + df.y;
    }
  }
  return s;
}

float half_dot_chunk(uvec4 w, f16vec2 xp[16], float z) {
  f16vec2 q[16];
  dequant_chunk(w, z, q);
  return half_dot_pairs(q, xp);
}
#endif

// Weight row n's chunk c (quantization block blk): its 32 nibbles (one 16-byte load), scale and zero point (8
// without zero points).
void load_chunk(uint n, uint c, uint blk, uint row_vecs, out uvec4 w, out float sc, out float zero) {
  w = U32x4Buf(p.w).v[n * row_vecs + c];
  sc = float(p.scales.v[n * p.nblocks + blk]);
  zero = 8.0;
  if (HAS_ZP != 0) {
    uint byte_index = n * p.zp_stride + (blk >> 1);
    uint byte = (p.zp.v[byte_index >> 2] >> ((byte_index & 3u) << 3)) & 0xffu;
    zero = float((blk & 1u) == 0 ? (byte & 0xfu) : (byte >> 4));
  }
}

#if !NORM_PROLOGUE
// MROWS activation rows from m0 (rows past M repeat the last; their outputs are not written): each weight chunk
// loaded once, and with HALF_DOT dequantized once, for all of them.
void rows_together(uint m0, uint n0, uint tid, uint T, uint chunks, uint row_vecs, uint chunk_shift) {
  float acc[MROWS][FINISH_ROWS];
  for (uint mm = 0; mm < MROWS; mm++)
    for (uint r = 0; r < FINISH_ROWS; r++) acc[mm][r] = 0.0;
  for (uint c0 = tid; c0 < chunks; c0 += UNROLL * T) {
    // Every row's nibbles, scales (and zero points) of the UNROLL chunks first, then the activations; chunks past
    // the end re-read the last one and count zero (no branch between the loads).
    uint cs[UNROLL];
    float valid[UNROLL];
    uvec4 w[UNROLL][ROWS];
    float sc[UNROLL][ROWS], zero[UNROLL][ROWS];
    for (uint i = 0; i < UNROLL; i++) {
      uint c = c0 + i * T;
      valid[i] = c < chunks ? 1.0 : 0.0;
      cs[i] = min(c, chunks - 1);
      uint blk = cs[i] >> chunk_shift;
      for (uint r = 0; r < ROWS; r++) {
        load_chunk(min(n0 + r, p.N - 1), cs[i], blk, row_vecs, w[i][r], sc[i][r], zero[i][r]);
      }
    }
    for (uint i = 0; i < UNROLL; i++) {
#if HALF_DOT
      f16vec2 wq[ROWS][16];  // each row's chunk dequantized once, for all MROWS activation rows
      for (uint r = 0; r < ROWS; r++) dequant_chunk(w[i][r], zero[i][r], wq[r]);
      for (uint mm = 0; mm < MROWS; mm++) {
        uint m = min(m0 + mm, p.M - 1);
        uvec4 raw[4];
        for (uint j = 0; j < 4; j++) raw[j] = U32x4Buf(p.x).v[(m * p.K + cs[i] * 32) / 8 + j];
        f16vec2 xp[16];
        pair_x_raw(raw, xp);
        for (uint r = 0; r < ROWS; r++)
          acc[mm][r] += valid[i] * (256.0 * sc[i][r]) * half_dot_pairs(wq[r], xp);
      }
#else
      for (uint mm = 0; mm < MROWS; mm++) {
        uint m = min(m0 + mm, p.M - 1);
        float xs[32];
        for (uint j = 0; j < 4; j++) {
          float t[8];
          load_x8(m, cs[i] * 32 + j * 8, t);
          for (uint e = 0; e < 8; e++) xs[j * 8 + e] = t[e];
        }
        float sx = 0.0;
        for (uint e = 0; e < 32; e++) sx += xs[e];
        for (uint r = 0; r < ROWS; r++)
          acc[mm][r] += valid[i] * sc[i][r] * (16.0 * dot_chunk(w[i][r], xs) - (16.0 + zero[i][r]) * sx);
      }
#endif
    }
  }
  finish_rows(acc, m0, n0);
}
#endif

// One activation row (m; every variant, NORM_PROLOGUE included): the ROWS outputs from n0 in NG groups.
void one_row(uint m, uint n0, uint tid, uint T, uint chunks, uint row_vecs, uint chunk_shift) {
  float acc[FINISH_ROWS];
  for (uint r = 0; r < FINISH_ROWS; r++) acc[r] = 0.0;
#if NORM_PROLOGUE
  float ss = 0.0;
  bool write_residual = (p.norm_flags & 4u) != 0 && n0 == 0;
#endif
  for (uint c0 = tid; c0 < chunks; c0 += UNROLL * T) {
    // Chunks past the end re-read the last one and count zero (no branch between the loads).
    uint cs[UNROLL];
    float valid[UNROLL];
    for (uint i = 0; i < UNROLL; i++) {
      uint c = c0 + i * T;
      valid[i] = c < chunks ? 1.0 : 0.0;
      cs[i] = min(c, chunks - 1);
    }
    uvec4 w[UNROLL][ROWS];
    float sc[UNROLL][ROWS], zero[UNROLL][ROWS];
#if HALF_DOT
    f16vec2 xp[UNROLL][16];
#else
    float xs[UNROLL][32], sx[UNROLL];
#endif
    // Group g's nibbles, scales (and zero points): group 0 before the activations, group g + 1 before group g's
    // products.
    [[unroll]] for (uint g = 0; g <= NG; g++) {
      if (g < NG) {
        for (uint i = 0; i < UNROLL; i++) {
          uint blk = cs[i] >> chunk_shift;
          for (uint rr = 0; rr < GROUP_ROWS; rr++) {
            uint r = g * GROUP_ROWS + rr;
            load_chunk(min(n0 + r, p.N - 1), cs[i], blk, row_vecs, w[i][r], sc[i][r], zero[i][r]);
          }
        }
      }
      if (g == 0) {
        // The chunks' activations, once for all groups (with NORM_PROLOGUE: x (+ skip, + bias) times gamma, the sum
        // of squares; the residual written by the first workgroup).
        for (uint i = 0; i < UNROLL; i++) {
#if NORM_PROLOGUE
          float t32[32];
          for (uint j = 0; j < 4; j++) {
            float t[8];
            load_x8(m, cs[i] * 32 + j * 8, t);
            norm_prologue(m, cs[i] * 32 + j * 8, t, ss, write_residual && valid[i] != 0.0, valid[i]);
            for (uint e = 0; e < 8; e++) t32[j * 8 + e] = t[e];
          }
#if HALF_DOT
          pair_x(t32, xp[i]);
#else
          xs[i] = t32;
#endif
#elif HALF_DOT
          uvec4 raw[4];
          for (uint j = 0; j < 4; j++) raw[j] = U32x4Buf(p.x).v[(m * p.K + cs[i] * 32) / 8 + j];
          pair_x_raw(raw, xp[i]);
#else
          for (uint j = 0; j < 4; j++) {
            float t[8];
            load_x8(m, cs[i] * 32 + j * 8, t);
            for (uint e = 0; e < 8; e++) xs[i][j * 8 + e] = t[e];
          }
#endif
#if !HALF_DOT
          sx[i] = 0.0;
          for (uint e = 0; e < 32; e++) sx[i] += xs[i][e];
#endif
        }
        continue;
      }
      uint gp = g - 1;  // the group whose products follow
      for (uint i = 0; i < UNROLL; i++)
        for (uint rr = 0; rr < GROUP_ROWS; rr++) {
          uint r = gp * GROUP_ROWS + rr;
#if HALF_DOT
          acc[r] += valid[i] * (256.0 * sc[i][r]) * half_dot_chunk(w[i][r], xp[i], zero[i][r]);
#else
          acc[r] += valid[i] * sc[i][r] * (16.0 * dot_chunk(w[i][r], xs[i]) - (16.0 + zero[i][r]) * sx[i]);
#endif
        }
    }
  }
#if NORM_PROLOGUE
  matvec_finish(acc, ss, m, n0);
#else
  matvec_finish(acc, 0.0, m, n0);
#endif
}

void main() {
  uint m0 = gl_WorkGroupID.y * MROWS;
  uint n0 = (gl_WorkGroupID.x + gl_WorkGroupID.z * gl_NumWorkGroups.x) * ROWS;  // grid folded into x, z
  if (n0 >= p.N) return;  // whole workgroup
  uint tid = gl_LocalInvocationID.x, T = gl_WorkGroupSize.x;
  uint chunks = p.K / 32;
  uint row_vecs = (p.nblocks * p.block_size) >> 5;      // 16-byte vectors of one weight row
  uint chunk_shift = uint(findLSB(p.block_size)) - 5u;  // log2(chunks per quantization block)
#if !NORM_PROLOGUE
  if (MROWS > 1) {
    rows_together(m0, n0, tid, T, chunks, row_vecs, chunk_shift);
    return;
  }
#endif
  one_row(m0, n0, tid, T, chunks, row_vecs, chunk_shift);
}
