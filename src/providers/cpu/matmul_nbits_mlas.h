// The int8 path of MatMulNBits (accuracy_level 4) for 4-bit weights in blocks of 32, computed with exactly the
// floating-point operations of ONNX Runtime's MLAS on an AVX-512 VNNI CPU (SQ4BitGemm CompInt8, "BlkSum" variant),
// so that ogx's results are bit-identical to ONNX Runtime's at every M. What MLAS computes, per row m and column n
// (A quantized per block by quantize_row_int8: qa, sa; asum[b] = sa[b] * float(sum of the block's qa)):
//  1. blocks in groups of 4 (128 values): 16 fp32 lanes, lane l += float(p_l) * (sa[b_l] * sb[b_l]) (one FMA),
//     where p_l is the exact integer dot of unsigned weights (0..15, no zero point) and qa over the 8 values
//     kLaneBlock[l] * 32 + kLaneOffset[l] + {0..3, 8..11};
//  2. the 16 lanes fold to 8 (lane i + lane i + 8); each remaining block (nb % 4) adds to lane i
//     float(dot of values 4i..4i+3) * (sa * sb) (one FMA);
//  3. the 8 lanes sum to y: ((l0 + l1) + l2) + l3 + (((l4 + l5) + l6) + l7) for columns in a tile of 4, and
//     (l0 + l4 + (l2 + l6)) + (l1 + l5 + (l3 + l7)) for the last N % 4 columns; y += bias[n];
//  4. the zero points enter in fp32: y = y + c with c = FMA chain over the blocks in order of asum[b] * bsum[n][b],
//     bsum = -zp * sb (zp = 8 without zero points).
// The integer dots are exact, so only the lane assignment, the FMA order and the two sums above must match MLAS;
// tests/matmul_nbits_test.cpp holds a scalar model of exactly these steps, and tools/ortgenai_check the comparison
// with ONNX Runtime itself.
//
// Layout per tile of kTile columns (K padded with zeros to nb * 32):
//   w   [tiles][groups][kTile][64 bytes]   a group's 128 weights in lane order (kLaneK): byte i of half h holds
//                                          the values of register h, bytes 0..31 low nibbles, 32..63 high
//   wt  [tiles][tail][kTile][16 bytes]     each remaining block in K order, byte i: values i and i + 16
//   s   [tiles][nb][kTile] float           scale_b, block-major so a group's 4 x 4 scales are one 64-byte load
//   z   [tiles][nb][kTile] uint8           zero points, only when some differs from 8
#pragma once
#include <cstdint>
#include <vector>

#include "providers/cpu/matmul_nbits_packed.h"

namespace ogx::cpu::nbits {

constexpr int64_t kMlasBlock = 32;  // the block size this path computes exactly

struct MlasQ4Packed {
  int64_t K = 0, N = 0, nb = 0;
  int64_t groups = 0;  // nb / 4
  int64_t tail = 0;    // nb % 4
  bool sym = true;     // every zero point is 8
  std::vector<uint8_t, HugePageAllocator<uint8_t>> w;
  std::vector<uint8_t, HugePageAllocator<uint8_t>> wt;
  std::vector<float, HugePageAllocator<float>> s;
  std::vector<uint8_t> z;
  int64_t tiles() const { return (N + kTile - 1) / kTile; }
};

// b: [N][nb][16] MatMulNBits bytes (block size 32); scales: [N][nb]; zp: [N][nb] unpacked zero points.
void pack_q4_mlas(const uint8_t* b, const float* scales, const uint8_t* zp, int64_t K, int64_t N, int threads,
                  MlasQ4Packed& p);

// One row's group of 4 blocks as the kernel reads it.
struct alignas(64) MlasActGroup {
  int8_t q[128];   // the 128 quantized activations in lane order (two 64-byte registers)
  float sa16[16];  // scale_a of each lane's block
  float asum[4];   // scale_a * sum of the block's quantized values, blocks in K order
};
// One row's remaining block.
struct alignas(64) MlasActTail {
  int8_t q[32];  // in K order
  float sa, asum;
};

// Activations of M rows: row m's groups at groups[m * p.groups ...], its tail blocks at tails[m * p.tail ...].
struct MlasActs {
  std::vector<MlasActGroup> groups;
  std::vector<MlasActTail> tails;
  std::vector<float> asum;  // [M][nb]: the block sums again, row-major, for the zero-point pass over many rows
};

// qa: [M][nb * 32] int8 rows and sa: [M][nb] their block scales (quantize_row_int8) -> act rows [m0, m1)
// (act sized by resize_acts for M rows).
void resize_acts(const MlasQ4Packed& p, int64_t M, MlasActs& act);
void pack_acts_mlas(const MlasQ4Packed& p, const int8_t* qa, const float* sa, int64_t m0, int64_t m1, MlasActs& act);

// y[m][n] for rows [0, M) and column tiles [t0, t1) (+ bias[n]); y: [M][N].
void q4_gemm_mlas(const MlasQ4Packed& p, const MlasActs& act, int64_t M, int64_t t0, int64_t t1, const float* bias,
                  float* y);

// The lane order: lane l of a group's dot covers values kLaneBlock[l] * 32 + kLaneOffset[l] + {0..3} (register 0)
// and the same + 8 (register 1). Shared with the tests' scalar model.
extern const int kLaneBlock[16];
extern const int kLaneOffset[16];

}  // namespace ogx::cpu::nbits
