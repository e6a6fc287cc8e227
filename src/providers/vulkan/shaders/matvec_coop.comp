// Skinny matmul on the matrix units (VK_NV_cooperative_matrix) for a batched decode step: y[m, n] = sum_k x[m, k] *
// W[n, k] (+ bias[n]) for 2 <= M <= 16 * RT activation rows, fp16 activations, fp32 accumulation. The rows fill RT
// 16-row A fragments (rows past M are zero), so the step reads the weights once. (The SIMT skinny kernel,
// matvec_skinny.comp, spends 16 fp32 FMAs per weight and was compute-bound at 3.5-5 TFLOPS on the H200; the tiled
// prompt kernels give too few workgroups at M <= 64.)
// Weights as uploaded for the matvec: fp16 [N, K] row-major, or with WEIGHT_INT4 MatMulNBits bytes [N, nblocks,
// block_size / 2] (low nibble first) with fp16 scales [N, nblocks] and optional 4-bit zero points (else 8).
//
// A workgroup of SG subgroups computes CT x 16 outputs n0.. of all rows; K is split over its subgroups in chunks of
// UNR steps of 16 (subgroup s takes chunks s, s + SG, ...), each subgroup accumulating RT x CT 16 x 16 fp32
// fragments, summed through shared memory at the end (one fragment at a time). Every lane stages UNR 16-byte pieces
// of x per row tile and of W per column tile per chunk into its subgroup's shared slots (rows past M / K zero; int4
// dequantized on the way; the lanes' order below, at the staging loop), then the subgroup multiplies: each x
// fragment serves CT weight tiles, each weight tile RT row tiles. A chunk's loads are issued before the previous
// chunk's multiplies (held in registers meanwhile).
// EPILOGUE_SILU: gate/up rows in pairs (n even: gate, n odd: up) -> y[m, n / 2] = silu(gate) * up, y [M, N / 2],
// each product rounded to fp16 first as the unfused ops round them.
// Specialization constants (kernels/matmul_coop.cpp picks them; shared memory SG * (RT + CT) * 256 * STRIDE + SG *
// 1 KiB bytes, STRIDE below): NT threads (SG = NT / 32 subgroups), UNR staged steps, CT column tiles, RT row tiles.
// Host contract (kernels/matmul_coop.cpp matvec_coop_applies): subgroup size 32, K % 8 == 0, x and fp16 W 16-byte
// aligned, int4 block_size % 8 == 0.
#version 460
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

#ifndef EPILOGUE_SILU
#define EPILOGUE_SILU 0
#endif

layout(constant_id = 0) const uint NT = 256;  // threads per workgroup (SG = NT / 32 subgroups)
layout(constant_id = 1) const uint UNR = 4;   // K steps of 16 a subgroup stages before it multiplies (loads in flight)
layout(constant_id = 2) const uint CT = 1;    // 16-column weight tiles per workgroup
layout(constant_id = 3) const uint RT = 1;    // 16-row activation tiles (M <= 16 * RT)
// fp16 weights: 1 = the subgroup loads whole 16 x 16 weight fragments from memory (coopMatLoadNV, no staging in
// shared memory) where a workgroup's tiles lie inside N and K % 16 == 0; 0 = staged as x is.
layout(constant_id = 4) const uint DIRECT_W = 0;
// 1: staged rows padded by 2 pieces (fp16, UNR >= 2; the host drops it when shared memory is short; int4: 0)
layout(constant_id = 5) const uint PAD = 1;
const uint SG = NT / 32;
// A staged tile is 16 rows x UNR * 16 k: 2 * UNR pieces of 8 halves a row, rows STRIDE pieces apart. Two pieces of
// padding (UNR >= 2) put 4 consecutive rows in different banks, so a 16 x 16 fragment loads from shared memory
// without bank conflicts (an unpadded stride of 8 pieces put all 16 rows in the same 8 banks).
const uint PR = 2 * UNR;
const uint STRIDE = PR + 2 * PAD - 2 * PAD * (1 / UNR);  // UNR 1: 2 (already conflict-free)

layout(local_size_x_id = 0) in;

layout(push_constant) uniform Push {
  U32x4Buf x;     // fp16 [M, K]
  U32x4Buf w;     // fp16 [N, K] or int4 bytes [N, nblocks * block_size / 2]
  F16Buf scales;  // int4: [N, nblocks]
  U32Buf zp;      // int4 with has_zp: bytes [N, zp_stride]
  F16Buf bias;    // has_bias: [N]
  F16Buf y;       // [M, N] (EPILOGUE_SILU: [M, N / 2])
  uint M, N, K;
  uint block_size, nblocks, zp_stride;
  uint has_zp, has_bias;
} p;

// Per subgroup and tile, the staged chunk: 16 rows x STRIDE pieces of 8 halves, of x (A, [m][k]) and W (B, [n][k]).
shared uvec4 Xs[SG * RT * 16 * STRIDE];
shared uvec4 Ws[SG * CT * 16 * STRIDE];
shared float Red[SG * 256];  // each subgroup's 16 x 16 fp32 result of one tile

uvec4 load_x(uint row, uint k) {  // 8 halves of x at (row, k); zero past M or K
  if (row >= p.M || k >= p.K) return uvec4(0);
  return p.x.v[(row * p.K + k) / 8];
}

#if WEIGHT_INT4
// 8 dequantized halves of W at (n, k); zero past K. Each byte's two nibbles become the fp16 pair (1024 + lo,
// 1024 + hi) by bit operations (0x6400 is 1024.0; 1024 + q is exact), then (v - (1024 + zero)) * scale in packed fp16:
// the difference is an exact small integer, so the one rounding is the product's (as in the fp32 product converted
// to fp16), in about half the instructions per value.
uvec4 load_w(uint n, uint k) {
  if (k >= p.K) return uvec4(0);
  uint row_words = p.nblocks * p.block_size / 8;
  uint word = U32Buf(p.w).v[n * row_words + k / 8];
  uint blk = k / p.block_size;
  uint zero = 8u;
  if (p.has_zp != 0) {
    uint zi = n * p.zp_stride + blk / 2;
    uint zb = (p.zp.v[zi / 4] >> ((zi % 4) * 8)) & 0xffu;
    zero = (blk % 2) == 0 ? (zb & 0xfu) : (zb >> 4);
  }
  f16vec2 off = f16vec2(float16_t(1024u + zero)), scale = f16vec2(p.scales.v[n * p.nblocks + blk]);
  uvec4 r;
  [[unroll]] for (uint j = 0; j < 4; j++) {
    uint b = word >> (8 * j);
    uint h = (b & 0xfu) | ((b & 0xf0u) << 12) | 0x64006400u;  // (lo, hi) nibble -> fp16 (1024 + lo, 1024 + hi)
    r[j] = packFloat2x16((unpackFloat2x16(h) - off) * scale);
  }
  return r;
}
#else
uvec4 load_w(uint n, uint k) {
  if (k >= p.K) return uvec4(0);
  return p.w.v[(n * p.K + k) / 8];
}
#endif

// Writes tile (rt, ct)'s sums of every subgroup's fragment (in Red) to y.
void write_tile(uint n0, uint rt, uint ct) {
  uint tid = gl_LocalInvocationIndex;
  uint nt = n0 + ct * 16;  // the tile's first weight row
#if EPILOGUE_SILU
  for (uint e = tid; e < 128; e += NT) {  // 16 rows x 8 (gate, up) pairs
    uint m = rt * 16 + e / 8, pr = e % 8;
    if (m < p.M && nt + 2 * pr + 1 < p.N) {
      float g = 0.0, v = 0.0;
      for (uint s = 0; s < SG; s++) {
        g += Red[s * 256 + (e / 8) * 16 + 2 * pr];
        v += Red[s * 256 + (e / 8) * 16 + 2 * pr + 1];
      }
      g = float(float16_t(g));
      v = float(float16_t(v));
      p.y.v[m * (p.N / 2) + nt / 2 + pr] = float16_t(g / (1.0 + exp(-g)) * v);
    }
  }
#else
  for (uint e = tid; e < 256; e += NT) {
    uint m = rt * 16 + e / 16, col = e % 16;
    if (m < p.M && nt + col < p.N) {
      float s = 0.0;
      for (uint i = 0; i < SG; i++) s += Red[i * 256 + e];
      if (p.has_bias != 0) s += float(p.bias.v[nt + col]);
      p.y.v[m * p.N + nt + col] = float16_t(s);
    }
  }
#endif
}

void main() {
  uint n0 = (gl_WorkGroupID.x + gl_WorkGroupID.z * gl_NumWorkGroups.x) * (16 * CT);
  if (n0 >= p.N) return;  // whole workgroup
  uint sg = gl_LocalInvocationIndex / 32, lane = gl_LocalInvocationIndex % 32;
  uint row = lane / 2, half_k = (lane % 2) * 8;  // this lane's piece of each staged 16 x 16 tile
  uint steps = (p.K + 15) / 16;

  fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[RT * CT];
  [[unroll]] for (uint t = 0; t < RT * CT; t++) acc[t] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
#if !WEIGHT_INT4
  if (DIRECT_W != 0 && n0 + 16 * CT <= p.N && p.K % 16 == 0) {  // uniform in the workgroup
    for (uint c = sg * UNR; c < steps; c += SG * UNR) {
      uvec4 xr[UNR * RT];
      fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fw[UNR * CT];
      [[unroll]] for (uint u = 0; u < UNR; u++) {  // every load first
        uint k = (c + u) * 16 + half_k;
        [[unroll]] for (uint r = 0; r < RT; r++) xr[u * RT + r] = load_x(r * 16 + row, k);
        if (c + u < steps)
          [[unroll]] for (uint t = 0; t < CT; t++)  // B [k][n] = W(n, k): column-major, K / 8 uvec4 per column
            coopMatLoadNV(fw[u * CT + t], p.w.v, ((n0 + t * 16) * p.K + (c + u) * 16) / 8, p.K / 8, true);
      }
      [[unroll]] for (uint u = 0; u < UNR; u++)
        [[unroll]] for (uint r = 0; r < RT; r++) Xs[((sg * UNR + u) * RT + r) * 32 + lane] = xr[u * RT + r];
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      [[unroll]] for (uint u = 0; u < UNR; u++) {
        if (c + u >= steps) break;  // uniform in the subgroup
        fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fa[RT];
        [[unroll]] for (uint r = 0; r < RT; r++) coopMatLoadNV(fa[r], Xs, ((sg * UNR + u) * RT + r) * 32, 2, false);
        [[unroll]] for (uint r = 0; r < RT; r++)
          [[unroll]] for (uint t = 0; t < CT; t++) acc[r * CT + t] = coopMatMulAddNV(fa[r], fw[u * CT + t], acc[r * CT + t]);
      }
      subgroupBarrier();
    }
  } else
#endif
  {
    // Staged: while the subgroup multiplies one chunk from shared memory, its loads of the next are in flight. Load
    // j of a lane takes piece PIECE(j) = (row, piece) of each tile's chunk, stored at SLOT(row, piece) of the tile;
    // the fragment of K step u loads from FRAG(u) with a stride of FSTRIDE pieces. fp16: consecutive lanes read
    // consecutive 16-byte pieces of a row (at UNR 4, each load reads 4 whole 128-byte rows: 4 memory requests, not
    // 16), staged as the rows lie, padded (PAD) so that a fragment's 16 rows fall in different banks. int4: two lanes
    // a row, each walking along K, staged per K step as 16 rows x 2 pieces (conflict-free without padding; the fp16
    // order made the int4 kernel 1.2-1.8x slower on the H200).
#if WEIGHT_INT4
#define PIECE(J) uvec2(lane / 2, (J) * 2 + lane % 2)
#define SLOT(R, PC) (((PC) / 2) * 32 + (R) * 2 + (PC) % 2)
#define FRAG(U) ((U) * 32)
#define FSTRIDE 2
#else
#define PIECE(J) uvec2(((J) * 32 + lane) / PR, ((J) * 32 + lane) % PR)
#define SLOT(R, PC) ((R) * STRIDE + (PC))
#define FRAG(U) ((U) * 2)
#define FSTRIDE STRIDE
#endif
    uvec4 xr[UNR * RT], wr[UNR * CT];
#define LOAD_CHUNK(C)                                                                                               \
    [[unroll]] for (uint j = 0; j < UNR; j++) {                                                                     \
      uvec2 pc = PIECE(j);                                                                                          \
      uint k = (C) * 16 + pc.y * 8;                                                                                 \
      [[unroll]] for (uint r = 0; r < RT; r++) xr[j * RT + r] = load_x(r * 16 + pc.x, k);                          \
      [[unroll]] for (uint t = 0; t < CT; t++) /* rows past N repeat the last, not written */                     \
        wr[j * CT + t] = load_w(min(n0 + t * 16 + pc.x, p.N - 1), k);                                               \
    }
    if (sg * UNR < steps) LOAD_CHUNK(sg * UNR)
    for (uint c = sg * UNR; c < steps; c += SG * UNR) {
      [[unroll]] for (uint j = 0; j < UNR; j++) {
        uvec2 pc = PIECE(j);
        uint at = SLOT(pc.x, pc.y);
        [[unroll]] for (uint r = 0; r < RT; r++) Xs[(sg * RT + r) * 16 * STRIDE + at] = xr[j * RT + r];
        [[unroll]] for (uint t = 0; t < CT; t++) Ws[(sg * CT + t) * 16 * STRIDE + at] = wr[j * CT + t];
      }
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      if (c + SG * UNR < steps) LOAD_CHUNK(c + SG * UNR)
      [[unroll]] for (uint u = 0; u < UNR; u++) {
        if (c + u >= steps) break;  // uniform in the subgroup
        fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fa[RT], fb[CT];
        [[unroll]] for (uint r = 0; r < RT; r++)  // A [m][k]
          coopMatLoadNV(fa[r], Xs, (sg * RT + r) * 16 * STRIDE + FRAG(u), FSTRIDE, false);
        [[unroll]] for (uint t = 0; t < CT; t++)  // B [k][n] = W(n, k): column-major
          coopMatLoadNV(fb[t], Ws, (sg * CT + t) * 16 * STRIDE + FRAG(u), FSTRIDE, true);
        [[unroll]] for (uint r = 0; r < RT; r++)
          [[unroll]] for (uint t = 0; t < CT; t++) acc[r * CT + t] = coopMatMulAddNV(fa[r], fb[t], acc[r * CT + t]);
      }
      subgroupBarrier();  // the slots are rewritten by the next chunk
    }
#undef PIECE
#undef SLOT
#undef FRAG
#undef FSTRIDE
#undef LOAD_CHUNK
  }
  [[unroll]] for (uint r = 0; r < RT; r++) {
    if (r * 16 >= p.M) break;  // uniform: row tiles past M hold zeros
    [[unroll]] for (uint t = 0; t < CT; t++) {
      coopMatStoreNV(acc[r * CT + t], Red, sg * 256, 16, false);
      barrier();
      write_tile(n0, r, t);
      barrier();  // Red is rewritten by the next tile
    }
  }
}
