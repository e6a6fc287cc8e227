// C[M, N] = A[M, K] x W^T (+ bias[N]) on the GPU's matrix units through VK_NV_cooperative_matrix: fp16 inputs,
// fp32 accumulation, fp16 output. W is the weight as uploaded for the matvec, [N, K] row-major (fp16), or with
// WEIGHT_INT4 MatMulNBits bytes [N, nblocks, block_size / 2] (low nibble first) dequantized to fp16 on the way
// into shared memory (scales [N, nblocks] fp16, optional 4-bit zero points [N, zp_stride] bytes, else 8).
//
// A workgroup of WM x WN subgroups (32 lanes each) computes a BM x BN tile of C; each subgroup a (FM * 16) x
// (FN * 16) block held in FM x FN 16x16 accumulators. K advances BK (32 or 64) per step through shared memory,
// rows padded by 8 halves (16 bytes) against bank conflicts; the next step's global loads are issued before this
// step's multiply-adds (register double buffering). STAGES 2: two shared buffers, so a step's stores go to the
// buffer the previous step read and one barrier per step suffices (STAGES 1: store after a barrier, then another).
// The tile shape is chosen per device and matrix on the host (kernels/matmul_coop.cpp, Tuning::coop_tiles), as
// specialization constants; the host checks the shared memory (STAGES * (BM + BN) * (BK / 8 + 1) * 16 bytes, or
// the epilogue's WM * WN * 512 bytes if more) and that NT divides the staged pieces.
// Host contract (kernels/matmul_coop.cpp): subgroup size 32, K % 8 == 0, A and fp16 W 16-byte aligned.
#version 460
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

layout(constant_id = 0) const uint NT = 256;     // threads: WM * WN * 32
layout(constant_id = 1) const uint WM = 2;       // subgroups along M
layout(constant_id = 2) const uint WN = 4;       // subgroups along N
layout(constant_id = 3) const uint FM = 4;       // 16-row fragments per subgroup
layout(constant_id = 4) const uint FN = 2;       // 16-column fragments per subgroup
layout(constant_id = 5) const uint BK = 64;      // K per step (32 or 64)
layout(constant_id = 6) const uint STAGES = 1;   // shared buffers (1 or 2)
const uint BM = WM * FM * 16, BN = WN * FN * 16;
const uint SROW = BK / 8 + 1;             // uvec4 (8 halves) per shared row: BK halves + 8 of padding
const uint A_LOADS = BM * (BK / 8) / NT;  // uvec4 of A per thread and step
const uint B_LOADS = BN * (BK / 8) / NT;  // uvec4 of fp16 W per thread and step
const uint Q_PER_ROW = BK / 16;           // int4: 16-value pieces of a row per step
const uint Q_LOADS = BN * Q_PER_ROW / NT; // int4: pieces a thread loads and dequantizes per step
const uint STAGE = (BM + BN) * SROW;      // uvec4 of one shared buffer: A rows [m][k], then W rows [n][k]
const uint SHARED = STAGES * STAGE > WM * WN * 32 ? STAGES * STAGE : WM * WN * 32;

layout(local_size_x_id = 0) in;

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

// The staged K steps (STAGES buffers of STAGE uvec4: A [m][k], then W [n][k], read as a column-major K x N
// matrix); after the last step, each subgroup's 16 x 16 fp16 result fragment (32 uvec4) for the bounded store.
shared uvec4 S[SHARED];

// Register stage of one K step (loaded from memory, not yet in shared memory).
uvec4 a_reg[A_LOADS];
#if WEIGHT_INT4
uvec2 q_reg[Q_LOADS];           // 16 nibbles
f16vec2 q_off[Q_LOADS];         // 1024 + the piece's zero point (both halves)
f16vec2 q_scale[Q_LOADS];       // the piece's scale (both halves)
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
    q_off[i] = f16vec2(1032.0);
    q_scale[i] = f16vec2(0.0);
    if (n < p.N && k < p.K) {
      uint wi = n * row_words + k / 8;
      U32Buf words = U32Buf(p.w);
      q_reg[i] = uvec2(words.v[wi], words.v[wi + 1]);
      uint blk = k / p.block_size;
      uint zero = 8u;
      if (p.has_zp != 0) {
        uint zi = n * p.zp_stride + blk / 2;
        uint zb = (p.zp.v[zi / 4] >> ((zi % 4) * 8)) & 0xffu;
        zero = (blk % 2) == 0 ? (zb & 0xfu) : (zb >> 4);
      }
      q_off[i] = f16vec2(float16_t(1024u + zero));
      q_scale[i] = f16vec2(p.scales.v[n * p.nblocks + blk]);
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
// 8 nibbles (low first) -> 8 halves (q - zero) * scale. Each byte's nibbles become the fp16 pair (1024 + lo,
// 1024 + hi) by bit operations (0x6400 is 1024.0; 1024 + q is exact); minus 1024 + zero is an exact small integer,
// so the one rounding is the packed fp16 product's (the same bits as the fp32 product rounded to fp16).
uvec4 dequant8(uint word, f16vec2 off, f16vec2 scale) {
  uvec4 r;
  [[unroll]] for (uint j = 0; j < 4; j++) {
    uint b = word >> (8 * j);
    uint h = (b & 0xfu) | ((b & 0xf0u) << 12) | 0x64006400u;
    r[j] = packFloat2x16((unpackFloat2x16(h) - off) * scale);
  }
  return r;
}
#endif

void store_step(uint stage) {
  uint tid = gl_LocalInvocationIndex;
  uint a0 = stage * STAGE, b0 = a0 + BM * SROW;
  [[unroll]] for (uint i = 0; i < A_LOADS; i++) {
    uint e = tid + i * NT;
    S[a0 + (e / (BK / 8)) * SROW + e % (BK / 8)] = a_reg[i];
  }
#if WEIGHT_INT4
  [[unroll]] for (uint i = 0; i < Q_LOADS; i++) {
    uint e = tid + i * NT;
    uint base = b0 + (e / Q_PER_ROW) * SROW + (e % Q_PER_ROW) * 2;
    S[base] = dequant8(q_reg[i].x, q_off[i], q_scale[i]);
    S[base + 1] = dequant8(q_reg[i].y, q_off[i], q_scale[i]);
  }
#else
  [[unroll]] for (uint i = 0; i < B_LOADS; i++) {
    uint e = tid + i * NT;
    S[b0 + (e / (BK / 8)) * SROW + e % (BK / 8)] = b_reg[i];
  }
#endif
}

void main() {
  uint m0 = gl_WorkGroupID.y * BM, n0 = gl_WorkGroupID.x * BN;
  uint warp = gl_LocalInvocationIndex / 32, lane = gl_LocalInvocationIndex % 32;
  uint wm = warp / WN, wn = warp % WN;  // this subgroup's block: rows wm * FM * 16, cols wn * FN * 16

  fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[FM][FN];
  [[unroll]] for (uint i = 0; i < FM; i++)
    [[unroll]] for (uint j = 0; j < FN; j++) acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);

  load_step(m0, n0, 0);
  store_step(0);
  barrier();
  uint stage = 0;
  for (uint k0 = 0; k0 < p.K; k0 += BK) {
    bool more = k0 + BK < p.K;
    if (more) load_step(m0, n0, k0 + BK);  // in flight during this step's multiply-adds
    uint a0 = stage * STAGE, b0 = a0 + BM * SROW;
    [[unroll]] for (uint kk = 0; kk < BK / 8; kk += 2) {  // 16 values of K (2 uvec4) per multiply-add
      fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fa[FM];
      fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fb[FN];
      [[unroll]] for (uint i = 0; i < FM; i++)
        coopMatLoadNV(fa[i], S, a0 + (wm * FM + i) * 16 * SROW + kk, SROW, false);
      [[unroll]] for (uint j = 0; j < FN; j++)
        coopMatLoadNV(fb[j], S, b0 + (wn * FN + j) * 16 * SROW + kk, SROW, true);
      [[unroll]] for (uint i = 0; i < FM; i++)
        [[unroll]] for (uint j = 0; j < FN; j++) acc[i][j] = coopMatMulAddNV(fa[i], fb[j], acc[i][j]);
    }
    if (STAGES == 1) {
      barrier();  // every subgroup has read the buffer before it is overwritten
      if (more) store_step(0);
    } else {
      stage ^= 1;
      if (more) store_step(stage);  // the buffer the previous step read (all subgroups passed its barrier)
    }
    barrier();
  }

  // Each 16 x 16 accumulator leaves as fp16 through this subgroup's 32 uvec4 of shared memory (the staged buffers
  // are free after the last barrier); lanes add the bias and store the rows inside C (16 consecutive halves each).
  [[unroll]] for (uint i = 0; i < FM; i++) {
    [[unroll]] for (uint j = 0; j < FN; j++) {
      fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> h = fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>(acc[i][j]);
      coopMatStoreNV(h, S, warp * 32, 2, false);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      uint row0 = m0 + (wm * FM + i) * 16, col0 = n0 + (wn * FN + j) * 16;
      [[unroll]] for (uint e = lane; e < 128; e += 32) {  // 16 rows x 8 pairs of halves
        uint r = row0 + e / 8, c = col0 + (e % 8) * 2;
        uvec4 q = S[warp * 32 + e / 4];
        vec2 v = unpackHalf2x16(q[e % 4]);
        if (p.has_bias != 0) {
          if (c < p.N) v.x = float(float16_t(v.x) + p.bias.v[c]);
          if (c + 1 < p.N) v.y = float(float16_t(v.y) + p.bias.v[c + 1]);
        }
        if (r < p.M && c < p.N) p.c.v[r * p.N + c] = float16_t(v.x);
        if (r < p.M && c + 1 < p.N) p.c.v[r * p.N + c + 1] = float16_t(v.y);
      }
      subgroupBarrier();
    }
  }
}
