// C[M, N] = A[M, K] x W^T (+ bias[N]) on the GPU's matrix units through VK_NV_cooperative_matrix: fp16 inputs,
// fp32 accumulation, fp16 output. W is the weight as uploaded for the matvec, [N, K] row-major (fp16), or with
// WEIGHT_INT4 MatMulNBits bytes [N, nblocks, block_size / 2] (low nibble first) dequantized to fp16 on the way
// into shared memory (scales [N, nblocks] fp16, optional 4-bit zero points [N, zp_stride] bytes, else 8).
//
// A workgroup of WARPS_M x WARPS_N subgroups (32 lanes each) computes a BM x BN tile of C; each subgroup a
// (FM * 16) x (FN * 16) block held in FM x FN 16x16 accumulators. K advances BK = 64 per step through shared
// memory, rows padded by 8 halves (16 bytes) against bank conflicts; the next step's global loads are issued
// before this step's multiply-adds (register double buffering).
// Host contract (kernels/matmul_coop.cpp): subgroup size 32, K % 8 == 0, A and fp16 W 16-byte aligned.
#version 460
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

#if TILE_BIG
const uint WARPS_M = 2, WARPS_N = 4, FM = 4, FN = 2;  // 128 x 128 tile, 256 threads
#else
const uint WARPS_M = 2, WARPS_N = 2, FM = 2, FN = 2;  // 64 x 64 tile, 128 threads
#endif
const uint NT = WARPS_M * WARPS_N * 32;
// K step: 64 measured faster than 32 on the H200 (bench/vulkan-prefill.md); the shared memory the big tile then
// declares (~45 KB) is checked on the host (kernels/matmul_coop.cpp kBigTileShared).
const uint BM = WARPS_M * FM * 16, BN = WARPS_N * FN * 16, BK = 64;
const uint SROW = BK / 8 + 1;             // uvec4 (8 halves) per shared row: BK halves + 8 of padding
const uint A_LOADS = BM * (BK / 8) / NT;  // uvec4 of A per thread and step
const uint B_LOADS = BN * (BK / 8) / NT;  // uvec4 of fp16 W per thread and step
const uint Q_PER_ROW = BK / 16;               // int4: 16-value pieces of a row per step
const uint Q_LOADS = BN * Q_PER_ROW / NT;     // int4: pieces a thread loads and dequantizes per step

layout(local_size_x = NT) in;

layout(push_constant) uniform Push {
  U32x4Buf a;      // fp16 [M, K]
  U32x4Buf w;      // fp16 [N, K] or int4 bytes [N, nblocks * block_size / 2]
  F16Buf scales;   // int4: [N, nblocks]
  U32Buf zp;       // int4 with has_zp: bytes [N, zp_stride]
  F16Buf bias;     // has_bias: [N]
  F16Buf c;        // [M, N]
  uint M, N, K;
  uint block_size, nblocks, zp_stride;
  uint has_zp, has_bias;
} p;

shared uvec4 As[BM * SROW];  // [m][k] of the current K step
shared uvec4 Bs[BN * SROW];  // [n][k]: W(n, k), read as a column-major K x N matrix
shared float Cs[WARPS_M * WARPS_N * 256];  // one 16 x 16 fp32 fragment per subgroup, for the bounded store

// Register stage of one K step (loaded from memory, not yet in shared memory).
uvec4 a_reg[A_LOADS];
#if WEIGHT_INT4
uvec2 q_reg[Q_LOADS];           // 16 nibbles
vec2 q_scale_zero[Q_LOADS];     // (scale, zero point) of the piece's block
#else
uvec4 b_reg[B_LOADS];
#endif

uvec4 load_a(uint row, uint k) {  // 8 halves of A at (m0 + row, k); zero outside the matrix
  if (row >= p.M || k >= p.K) return uvec4(0);
  return p.a.v[(row * p.K + k) / 8];
}

void load_step(uint m0, uint n0, uint k0) {
  uint tid = gl_LocalInvocationIndex;
  [[unroll]] for (uint i = 0; i < A_LOADS; i++) {
    uint e = tid + i * NT;
    a_reg[i] = load_a(m0 + e / (BK / 8), k0 + (e % (BK / 8)) * 8);
  }
#if WEIGHT_INT4
  uint row_words = p.nblocks * p.block_size / 8;  // 32-bit words of one weight row
  [[unroll]] for (uint i = 0; i < Q_LOADS; i++) {
    uint e = tid + i * NT;  // (row, piece)
    uint n = n0 + e / Q_PER_ROW, k = k0 + (e % Q_PER_ROW) * 16;
    q_reg[i] = uvec2(0);
    q_scale_zero[i] = vec2(0.0, 8.0);
    if (n < p.N && k < p.K) {
      uint wi = n * row_words + k / 8;
      U32Buf words = U32Buf(p.w);
      q_reg[i] = uvec2(words.v[wi], words.v[wi + 1]);
      uint blk = k / p.block_size;
      float zero = 8.0;
      if (p.has_zp != 0) {
        uint zi = n * p.zp_stride + blk / 2;
        uint zb = (p.zp.v[zi / 4] >> ((zi % 4) * 8)) & 0xffu;
        zero = float((blk % 2) == 0 ? (zb & 0xfu) : (zb >> 4));
      }
      q_scale_zero[i] = vec2(float(p.scales.v[n * p.nblocks + blk]), zero);
    }
  }
#else
  [[unroll]] for (uint i = 0; i < B_LOADS; i++) {
    uint e = tid + i * NT;
    uint n = n0 + e / (BK / 8), k = k0 + (e % (BK / 8)) * 8;
    b_reg[i] = (n < p.N && k < p.K) ? p.w.v[(n * p.K + k) / 8] : uvec4(0);
  }
#endif
}

#if WEIGHT_INT4
uvec4 dequant8(uint word, vec2 sz) {  // 8 nibbles (low first) -> 8 halves (q - zero) * scale
  uvec4 r;
  [[unroll]] for (uint j = 0; j < 4; j++) {
    float lo = (float((word >> (8 * j)) & 0xfu) - sz.y) * sz.x;
    float hi = (float((word >> (8 * j + 4)) & 0xfu) - sz.y) * sz.x;
    r[j] = packHalf2x16(vec2(lo, hi));
  }
  return r;
}
#endif

void store_step() {
  uint tid = gl_LocalInvocationIndex;
  [[unroll]] for (uint i = 0; i < A_LOADS; i++) {
    uint e = tid + i * NT;
    As[(e / (BK / 8)) * SROW + e % (BK / 8)] = a_reg[i];
  }
#if WEIGHT_INT4
  [[unroll]] for (uint i = 0; i < Q_LOADS; i++) {
    uint e = tid + i * NT;
    uint base = (e / Q_PER_ROW) * SROW + (e % Q_PER_ROW) * 2;
    Bs[base] = dequant8(q_reg[i].x, q_scale_zero[i]);
    Bs[base + 1] = dequant8(q_reg[i].y, q_scale_zero[i]);
  }
#else
  [[unroll]] for (uint i = 0; i < B_LOADS; i++) {
    uint e = tid + i * NT;
    Bs[(e / (BK / 8)) * SROW + e % (BK / 8)] = b_reg[i];
  }
#endif
}

void main() {
  uint m0 = gl_WorkGroupID.y * BM, n0 = gl_WorkGroupID.x * BN;
  uint warp = gl_LocalInvocationIndex / 32, lane = gl_LocalInvocationIndex % 32;
  uint wm = warp / WARPS_N, wn = warp % WARPS_N;  // this subgroup's block: rows wm * FM * 16, cols wn * FN * 16

  fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[FM][FN];
  [[unroll]] for (uint i = 0; i < FM; i++)
    [[unroll]] for (uint j = 0; j < FN; j++) acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);

  load_step(m0, n0, 0);
  store_step();
  barrier();
  for (uint k0 = 0; k0 < p.K; k0 += BK) {
    bool more = k0 + BK < p.K;
    if (more) load_step(m0, n0, k0 + BK);  // in flight during this step's multiply-adds
    [[unroll]] for (uint kk = 0; kk < BK / 8; kk += 2) {  // 16 values of K (2 uvec4) per multiply-add
      fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fa[FM];
      fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fb[FN];
      [[unroll]] for (uint i = 0; i < FM; i++) coopMatLoadNV(fa[i], As, (wm * FM + i) * 16 * SROW + kk, SROW, false);
      [[unroll]] for (uint j = 0; j < FN; j++) coopMatLoadNV(fb[j], Bs, (wn * FN + j) * 16 * SROW + kk, SROW, true);
      [[unroll]] for (uint i = 0; i < FM; i++)
        [[unroll]] for (uint j = 0; j < FN; j++) acc[i][j] = coopMatMulAddNV(fa[i], fb[j], acc[i][j]);
    }
    barrier();
    if (more) {
      store_step();
      barrier();
    }
  }

  // Each 16 x 16 accumulator goes through this subgroup's fp32 scratch; lanes add the bias and store the rows
  // inside C (16 consecutive halves per row).
  [[unroll]] for (uint i = 0; i < FM; i++) {
    [[unroll]] for (uint j = 0; j < FN; j++) {
      coopMatStoreNV(acc[i][j], Cs, warp * 256, 16, false);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      uint row0 = m0 + (wm * FM + i) * 16, col0 = n0 + (wn * FN + j) * 16;
      [[unroll]] for (uint e = lane; e < 256; e += 32) {
        uint r = row0 + e / 16, c = col0 + e % 16;
        float v = Cs[warp * 256 + e];
        if (p.has_bias != 0 && c < p.N) v += float(p.bias.v[c]);
        if (r < p.M && c < p.N) p.c.v[r * p.N + c] = float16_t(v);
      }
      subgroupBarrier();
    }
  }
}
