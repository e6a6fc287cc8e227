// The int8 path of MatMulNBits (accuracy_level 4) for 4-bit weights, computed with exactly the floating-point
// operations of ONNX Runtime's MLAS on an AVX-512 VNNI CPU (SQ4BitGemm CompInt8, "BlkSum" variant, block sizes
// 16..256), so that ogx's results are bit-identical to ONNX Runtime's. What MLAS computes, per row m and column n
// (A quantized per block by quantize_row_int8: qa, sa; asum[b] = sa[b] * float(sum of the block's qa)):
//  1. K in groups of 128 values (8, 4, 2 blocks of 16, 32, 64; a block of 128; half a block of 256): 16 fp32
//     lanes, lane l += float(p_l) * (sa[b_l] * sb[b_l]) (one FMA), p_l the exact integer dot of unsigned weights
//     (0..15, no zero point) and qa over the two runs of 4 values of the lane (MlasLayout::run);
//  2. the blocks after the last whole group (nb % 8, % 4, % 2 for block sizes 16, 32, 64): for 16 and 32 the 16
//     lanes first fold to 8 (lane i + lane i + 8), then each block adds float(dot of its values 2i, 2i + 1 (16) or
//     4i..4i + 3 (32)) * (sa * sb) to lane i; for 64 the block adds the dot of values 4l..4l + 3 to lane l of 16;
//  3. the lanes sum to y: 8 lanes as ((l0 + l1) + l2) + l3 + (((l4 + l5) + l6) + l7) for columns in a tile of 4
//     and (l0 + l4 + (l2 + l6)) + (l1 + l5 + (l3 + l7)) for the last N % 4 columns; 16 lanes (block size >= 64)
//     fold to 8 (lane i + lane i + 8) and then sum in the single-column order, except in the last row of an odd M
//     for columns in a tile of 4: (q0 + q2) + (q1 + q3), q_j = ((l4j + l4j+1) + l4j+2) + l4j+3 (MLAS handles rows
//     in pairs and that row alone, with another reduction); y += bias[n];
//  4. the zero points enter in fp32: y = y + c with c the FMA chain over the blocks, in order, of asum[b] *
//     bsum[n][b], bsum = -zp * sb (zp = 8 without zero points).
// The integer dots are exact, so only the lane assignment, the FMA order and the sums above must match MLAS;
// tests/matmul_nbits_test.cpp holds a scalar model of these steps written from MLAS's register operations, and
// tools/ortgenai_check/matmul_nbits_check.sh the comparison with ONNX Runtime itself.
//
// Layout per tile of kTile columns (K padded with zeros to nb * bs):
//   w   [quads][groups][4][kTile][64 B]    the tiles in quads of 4 (the last quad padded with zero tiles), a
//                                          quad's 4 tiles side by side per group, so the one-row kernel, which
//                                          takes 4 tiles a call, reads the weights as one sequential stream; a
//                                          group's 128 weights of a column in lane order: register h (0, 1) of 64 values
//                                          holds, at 4l..4l+3, run h of lane l; byte j's low nibble is value j of
//                                          register 0, its high nibble value j of register 1 (one 64-byte load, a
//                                          mask and a shift give both registers)
//   wt  [tiles][tail][kTile][bs/2 bytes]   each block after the last group, byte i: values i and i + bs/2
//   s   [tiles][nb][kTile] float           scale_b, block-major so that a group's scales are one load
//   z   [tiles][nb][kTile] uint8           zero points, only when some differs from 8
#pragma once
#include <cstdint>
#include <vector>

#include "providers/cpu/matmul_nbits_packed.h"

namespace ogx::cpu::nbits {

// How one block size maps K onto MLAS's lanes.
struct MlasLayout {
  int bs = 0;
  int blocks_per_group = 1;  // 128 / bs, at least 1
  int groups_per_block = 1;  // bs / 128, at least 1
  uint8_t run[2][16];        // value (within the group) where run h of lane l starts; each run is 4 values
  uint8_t lane_block[16];    // the block (within the group) of lane l
};
bool mlas_block_supported(int64_t bs);  // 16, 32, 64, 128, 256: MLAS's int8 path; other sizes it computes in fp32
const MlasLayout& mlas_layout(int64_t bs);

struct MlasQ4Packed {
  int64_t K = 0, N = 0, bs = 0, nb = 0;
  int64_t groups = 0;  // whole groups of 128 values
  int64_t tail = 0;    // blocks after them (block sizes 16, 32, 64)
  bool sym = true;     // every zero point is 8
  std::vector<uint8_t, HugePageAllocator<uint8_t>> w;
  std::vector<uint8_t, HugePageAllocator<uint8_t>> wt;
  std::vector<float, HugePageAllocator<float>> s;
  std::vector<uint8_t> z;
  int64_t tiles() const { return (N + kTile - 1) / kTile; }
  int64_t quads() const { return (tiles() + 3) / 4; }
  // The 64-byte columns of tile t, group g (kTile of them, one after the other).
  const uint8_t* w_at(int64_t t, int64_t g) const {
    return w.data() + (((t >> 2) * groups + g) * 4 + (t & 3)) * kTile * 64;
  }
};

// b: [N][nb][bs/2] MatMulNBits bytes; scales: [N][nb]; zp: [N][nb] unpacked zero points.
void pack_q4_mlas(const uint8_t* b, const float* scales, const uint8_t* zp, int64_t K, int64_t N, int64_t bs,
                  int threads, MlasQ4Packed& p);

// One row's group of 128 values as the kernel reads it.
struct alignas(64) MlasActGroup {
  int8_t q[128];   // the quantized activations in lane order (two 64-byte registers, as w)
  float sa16[16];  // scale_a of each lane's block
};
// One row's block after the last group.
struct alignas(64) MlasActTail {
  int8_t q[64];  // its bs values in K order
  float sa;
};

// Activations of M rows: row m's groups at groups[m * p.groups ...], its tail blocks at tails[m * p.tail ...].
struct MlasActs {
  std::vector<MlasActGroup> groups;
  std::vector<MlasActTail> tails;
  std::vector<float> asum;  // [M][nb]: scale_a * sum of each block's quantized values (step 4)
};

// qa: [M][nb * bs] int8 rows and sa: [M][nb] their block scales (quantize_row_int8) -> act rows [m0, m1)
// (act sized by resize_acts for M rows).
void resize_acts(const MlasQ4Packed& p, int64_t M, MlasActs& act);
void pack_acts_mlas(const MlasQ4Packed& p, const int8_t* qa, const float* sa, int64_t m0, int64_t m1, MlasActs& act);

// y[m][n] for rows [0, M) and column tiles [t0, t1) (+ bias[n]); y: [M][N].
void q4_gemm_mlas(const MlasQ4Packed& p, const MlasActs& act, int64_t M, int64_t t0, int64_t t1, const float* bias,
                  float* y);

}  // namespace ogx::cpu::nbits
