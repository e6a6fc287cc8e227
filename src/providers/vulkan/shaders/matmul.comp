// C[b, m, n] = sum_k A[b, m, k] * B[b](k, n) (+ bias[n]): SIMT tiled GEMM for prefill and batched activations.
// A is [batch, M, K] row-major. B(k, n) is read through strides: a weight stored transposed [N, K] (sbk = 1,
// sbn = K) or an ONNX [K, N] tensor (sbk = N, sbn = 1, matmul_batched, batch stride 0 when shared).
// WEIGHT_INT4 reads MatMulNBits: B bytes [N, nblocks, block_size / 2] (low nibble first), scales [N, nblocks]
// of the activation dtype, optional packed 4-bit zero points [N, zp_stride] bytes (default 8).
//
// A workgroup (256 threads, tx = tid % 16, ty = tid / 16) computes a BM x BN = 64 MI x 64 NI tile of C; thread
// (tx, ty) accumulates in fp32 the (4 MI) x (4 NI) outputs at rows ty * 4 + [0, 4) + 64 i, columns
// tx * 4 + [0, 4) + 64 j. K advances BK = 16 at a time through shared memory holding the slices transposed
// ([k][m], [k][n]) so the inner loop reads vec4 along m and n. The next slice is loaded into registers while the
// current one is computed: one barrier pair per step. Global loads: 16 bytes along K (A_VEC / B_VEC, the host
// checks strides, K % VW and alignment), else one element; int4 B one 32-bit word (8 values) per thread, with
// its scale and zero point read once per word and dequantized into shared memory.
#version 460
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint MI = 2;     // BM = 64 MI rows of C per workgroup (1 or 2)
layout(constant_id = 1) const uint NI = 2;     // BN = 64 NI columns (1 or 2)
layout(constant_id = 2) const uint A_VEC = 0;  // 1: A read as 16-byte vectors along K
layout(constant_id = 3) const uint B_VEC = 0;  // 1: fp B read as 16-byte vectors along K (sbk == 1)

layout(push_constant) uniform Push {
  ActBuf a;       // [batch, M, K]
  ActBuf b;       // fp: B elements; int4: [N, nblocks * bs / 2] bytes
  ActBuf scales;  // int4: [N, nblocks]
  U32Buf zp;      // int4, when has_zp: [N, zp_stride] bytes
  ActBuf bias;    // when has_bias: [N]
  ActBuf c;       // [batch, M, N]
  uint M, N, K;
  uint sbk, sbn, batch_stride_b;  // element strides of B; batch stride 0 for shared weights
  uint block_size, nblocks, zp_stride;
  uint has_zp, has_bias;
} p;

const uint BK = 16, BM = 64 * MI, BN = 64 * NI;
#if STORE_F16
#define VEC_T uvec4  // 8 fp16
#define VecBuf U32x4Buf
const uint VW = 8;
float vec_at(uvec4 v, uint i) { return unpackHalf2x16(v[i / 2])[i % 2]; }
const uint SCALES_PER_WORD = 2;
float scale_at(uint word, uint i) { return unpackHalf2x16(word >> (16 * (i % 2))).x; }  // element i of its word
#else
#define VEC_T vec4
#define VecBuf F32x4Buf
const uint VW = 4;
float vec_at(vec4 v, uint i) { return v[i]; }
const uint SCALES_PER_WORD = 1;
float scale_at(uint word, uint i) { return uintBitsToFloat(word); }
#endif

// Shared K slices [k][row], row k shifted by 2 VW (k / VW) floats: the transposing stores of a warp
// (32 / (BK / VW) rows x BK / VW chunks of VW values of K) fall in 32 distinct 4-byte banks.
shared vec4 As[(BK * BM + 32) / 4];
shared vec4 Bs[(BK * BN + 32) / 4];
uint sidx(uint k, uint r, uint rows) { return k * rows + (k / VW) * 2 * VW + r; }
void put_a(uint k, uint m, float v) { uint i = sidx(k, m, BM); As[i / 4][i % 4] = v; }
void put_b(uint k, uint n, float v) { uint i = sidx(k, n, BN); Bs[i / 4][i % 4] = v; }

// Registers holding the next K slice as loaded (vectors and words converted only when stored to shared memory,
// so the loads stay in flight during compute; fp16 has no 16-bit registers without shaderFloat16).
const uint UPR = BK / VW;                                   // vector units per row of a slice
const uint A_UNITS = BM * UPR, A_VPER = (A_UNITS + 255) / 256;
const uint B_UNITS = BN * UPR, B_VPER = (B_UNITS + 255) / 256;
const uint A_SPER = BM * BK / 256, B_SPER = BN * BK / 256;  // scalar loads per thread
const uint Q_UNITS = BN * BK / 8, Q_PER = (Q_UNITS + 255) / 256;  // int4 words
VEC_T a_vec[A_VPER];
float a_sc[A_SPER];
#if WEIGHT_INT4
uint q_word[Q_PER], q_scale[Q_PER], q_zp[Q_PER];  // the words holding the value, scale and zero point
#else
VEC_T b_vec[B_VPER];
float b_sc[B_SPER];
#endif

uint tid, batch, m0, n0;
vec4 acc[4 * MI][NI];  // acc[row][column group]: 4 consecutive columns

// A[batch, m0 + r, k0 + k] into registers, zero outside M and K.
void load_a(uint k0) {
  uint base = batch * p.M * p.K;
  if (A_VEC != 0) {
    [[unroll]] for (uint t = 0; t < A_VPER; t++) {
      uint u = tid + 256 * t, m = m0 + u / UPR, k = k0 + u % UPR * VW;
      a_vec[t] = VEC_T(0);
      if (u < A_UNITS && m < p.M && k < p.K) a_vec[t] = VecBuf(p.a).v[(base + m * p.K + k) / VW];
    }
  } else {
    [[unroll]] for (uint t = 0; t < A_SPER; t++) {
      uint e = tid + 256 * t, m = m0 + e / BK, k = k0 + e % BK;  // k fastest: A rows are contiguous
      a_sc[t] = 0.0;
      if (m < p.M && k < p.K) a_sc[t] = float(p.a.v[base + m * p.K + k]);
    }
  }
}

void store_a() {
  if (A_VEC != 0) {
    [[unroll]] for (uint t = 0; t < A_VPER; t++) {
      uint u = tid + 256 * t;
      if (u < A_UNITS)
        [[unroll]] for (uint i = 0; i < VW; i++) put_a(u % UPR * VW + i, u / UPR, vec_at(a_vec[t], i));
    }
  } else {
    [[unroll]] for (uint t = 0; t < A_SPER; t++) put_a((tid + 256 * t) % BK, (tid + 256 * t) / BK, a_sc[t]);
  }
}

#if WEIGHT_INT4
// Word u % 2 of the slice of weight row n0 + u / 2 (K beyond the last block stays inside the row; A is zero
// there), and that row's scale and zero-point byte for the slice's block (BK divides block_size).
void load_b(uint k0) {
  uint row_words = p.nblocks * p.block_size / 8, blk = k0 / p.block_size;
  [[unroll]] for (uint t = 0; t < Q_PER; t++) {
    uint u = tid + 256 * t, n = n0 + u / 2;
    q_word[t] = 0u, q_scale[t] = 0u, q_zp[t] = 0u;  // scale 0: columns past N come out 0
    if (u < Q_UNITS && n < p.N) {
      q_word[t] = U32Buf(p.b).v[n * row_words + k0 / 8 + u % 2];
      q_scale[t] = U32Buf(p.scales).v[(n * p.nblocks + blk) / SCALES_PER_WORD];
      if (p.has_zp != 0) q_zp[t] = p.zp.v[(n * p.zp_stride + blk / 2) / 4];
    }
  }
}

void store_b(uint k0) {
  uint blk = k0 / p.block_size;
  [[unroll]] for (uint t = 0; t < Q_PER; t++) {
    uint u = tid + 256 * t;
    if (u >= Q_UNITS) continue;
    float zero = 8.0, scale = scale_at(q_scale[t], (n0 + u / 2) * p.nblocks + blk);
    if (p.has_zp != 0) {
      uint zi = (n0 + u / 2) * p.zp_stride + blk / 2;
      zero = float((q_zp[t] >> ((zi % 4) * 8 + (blk % 2) * 4)) & 15u);
    }
    [[unroll]] for (uint i = 0; i < 8; i++)
      put_b(u % 2 * 8 + i, u / 2, (float((q_word[t] >> (4 * i)) & 15u) - zero) * scale);
  }
}
#else
// B(k0 + k, n0 + n) into registers, zero outside K and N.
void load_b(uint k0) {
  uint base = batch * p.batch_stride_b;
  if (B_VEC != 0) {
    [[unroll]] for (uint t = 0; t < B_VPER; t++) {
      uint u = tid + 256 * t, n = n0 + u / UPR, k = k0 + u % UPR * VW;
      b_vec[t] = VEC_T(0);
      if (u < B_UNITS && n < p.N && k < p.K) b_vec[t] = VecBuf(p.b).v[(base + n * p.sbn + k) / VW];
    }
  } else {
    [[unroll]] for (uint t = 0; t < B_SPER; t++) {
      uint e = tid + 256 * t, n, k;  // the contiguous axis fastest
      if (p.sbk == 1) n = e / BK, k = e % BK;
      else n = e % BN, k = e / BN;
      n += n0, k += k0;
      b_sc[t] = 0.0;
      if (n < p.N && k < p.K) b_sc[t] = float(p.b.v[base + k * p.sbk + n * p.sbn]);
    }
  }
}

void store_b(uint k0) {
  if (B_VEC != 0) {
    [[unroll]] for (uint t = 0; t < B_VPER; t++) {
      uint u = tid + 256 * t;
      if (u < B_UNITS)
        [[unroll]] for (uint i = 0; i < VW; i++) put_b(u % UPR * VW + i, u / UPR, vec_at(b_vec[t], i));
    }
  } else {
    [[unroll]] for (uint t = 0; t < B_SPER; t++) {
      uint e = tid + 256 * t;
      if (p.sbk == 1) put_b(e % BK, e / BK, b_sc[t]);
      else put_b(e / BN, e % BN, b_sc[t]);
    }
  }
}
#endif

// acc += the shared slices' product: per k, MI + NI vec4 reads feed 16 MI NI multiply-adds.
void compute(uint tx, uint ty) {
  [[unroll]] for (uint kk = 0; kk < BK; kk++) {
    uint ra = sidx(kk, ty * 4, BM) / 4, rb = sidx(kk, tx * 4, BN) / 4;
    vec4 av[MI], bv[NI];
    [[unroll]] for (uint i = 0; i < MI; i++) av[i] = As[ra + 16 * i];
    [[unroll]] for (uint j = 0; j < NI; j++) bv[j] = Bs[rb + 16 * j];
    [[unroll]] for (uint i = 0; i < MI; i++)
      [[unroll]] for (uint r = 0; r < 4; r++)
        [[unroll]] for (uint j = 0; j < NI; j++) acc[4 * i + r][j] += av[i][r] * bv[j];
  }
}

void store_c(uint tx, uint ty) {
  vec4 bias[NI];
  [[unroll]] for (uint j = 0; j < NI; j++)
    [[unroll]] for (uint c = 0; c < 4; c++) {
      uint n = n0 + tx * 4 + 64 * j + c;
      bias[j][c] = 0.0;
      if (p.has_bias != 0 && n < p.N) bias[j][c] = float(p.bias.v[n]);
    }
  [[unroll]] for (uint i = 0; i < MI; i++)
    [[unroll]] for (uint r = 0; r < 4; r++) {
      uint m = m0 + ty * 4 + 64 * i + r;
      if (m >= p.M) continue;
      [[unroll]] for (uint j = 0; j < NI; j++)
        [[unroll]] for (uint c = 0; c < 4; c++) {
          uint n = n0 + tx * 4 + 64 * j + c;
          if (n < p.N) p.c.v[(batch * p.M + m) * p.N + n] = TO_STORE(acc[4 * i + r][j][c] + bias[j][c]);
        }
    }
}

void main() {
  tid = gl_LocalInvocationID.x;
  uint tx = tid % 16, ty = tid / 16;
  batch = gl_WorkGroupID.z, m0 = gl_WorkGroupID.y * BM, n0 = gl_WorkGroupID.x * BN;
  [[unroll]] for (uint i = 0; i < 4 * MI; i++)
    [[unroll]] for (uint j = 0; j < NI; j++) acc[i][j] = vec4(0.0);
  load_a(0);
  load_b(0);
  for (uint k0 = 0; k0 < p.K; k0 += BK) {
    store_a();
    store_b(k0);
    barrier();
    if (k0 + BK < p.K) {  // the next slice's loads are in flight during compute
      load_a(k0 + BK);
      load_b(k0 + BK);
    }
    compute(tx, ty);
    barrier();
  }
  store_c(tx, ty);
}
