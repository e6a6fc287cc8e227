// The AMX-INT8 int4 x int8 GEMM of MatMulNBits (accuracy_level 4, 4-bit constant weights) for calls of many rows
// (a prompt): the same quantized math as the MLAS-exact path (A quantized per block by quantize_row_int8: qa, sa;
// y[m][n] = sum_b sa[m][b] * sb[n][b] * sum_{k in b} qa[m][k] * (w[n][k] - zp[n][b]) + bias[n]), but the integer
// block dots come from AMX tiles and the blocks are accumulated in fp32 in block order (one FMA of float(dot) and
// the fp32 product sa * sb per block), not in MLAS's lane order: results differ from ONNX Runtime's in the last bits.
// MatMulNBits takes this path only when the session's `int4_gemm` option is `auto` (the default), the call has at
// least kAmxMinRows rows and amx_int8_available(); `int4_gemm=mlas` keeps the bit-exact kernels everywhere.
//
// It reads the weights in their MLAS-packed layout (matmul_nbits_mlas.h): no second copy. The roles are swapped so
// that no weight transpose is needed: C^T = W x A^T, the weights as TDPBSSD's first operand (16 columns n as tile
// rows, each a column's K bytes as MLAS packed them) and the activations as the second (VNNI layout: 4 K bytes of
// 16 rows per tile row). Within a group of 128 values the packed K order is MLAS's lane order, in which a block's
// values are scattered in 4-value runs; the kernel sorts those runs by block ("sorted order": the dwords of block j
// of a group are its dwords j * bs / 4 .. (j + 1) * bs / 4 - 1, in lane order within the block) for both operands,
// so every block is a contiguous K range and a block dot (order-independent) is one or more tile products.
#pragma once
#include <cstdint>
#include <vector>

#include "providers/cpu/matmul_nbits_mlas.h"

namespace ogx {
class ThreadPool;
}

namespace ogx::cpu::nbits {

// The CPU has AMX-TILE, AMX-INT8 and AVX-512 F/BW/VL/DQ/VBMI, and Linux granted this process the tile data state
// (arch_prctl ARCH_REQ_XCOMP_PERM, asked once); false when the SIMD paths are disabled.
bool amx_int8_available();
// Test hook: pretend AMX is absent (the op then takes the MLAS-exact path); returns the previous setting.
bool set_amx_disabled(bool on);

// Calls with fewer rows keep the MLAS-exact kernels (decode is M = 1). The AMX path unpacks every weight panel at
// least once per call and computes whole 16-row tiles; with weights streamed from memory it overtakes the exact
// kernels between 8 and 12 rows (1 thread: M = 8 67 vs 66 GMAC/s, 12: 107 vs 78; bench/cpu.md).
constexpr int64_t kAmxMinRows = 12;

// Activations of M rows in AMX's B-operand layout, row tiles of 16 rows (the last one padded with zero rows).
struct AmxActs {
  int64_t M = 0, tiles = 0, kp = 0, nb = 0;
  std::vector<int8_t> a;  // [tiles][kp / 4][16][4]: for each sorted-order dword of K, the 4 bytes of each row
  std::vector<float> sa;  // [tiles][nb][16]: scale_a of row 16 t + i in block b (0 for padding rows)
};
void resize_acts_amx(const MlasQ4Packed& p, int64_t M, AmxActs& act);
// qa: [M][nb * bs] int8 rows, sa: [M][nb] (quantize_row_int8) -> row tiles [t0, t1) of act.
void pack_acts_amx(const MlasQ4Packed& p, const int8_t* qa, const float* sa, int64_t t0, int64_t t1, AmxActs& act);
// y[m][n] (+ bias[n]) for every row and the columns of quads [q0, q1) (16 columns each); y: [M][N]. Runs on the
// calling thread (configures its tiles, releases them at the end).
void q4_gemm_amx(const MlasQ4Packed& p, const AmxActs& act, int64_t q0, int64_t q1, const float* bias, float* y);

// The whole op on this path: af [M][nb * bs] fp32 rows -> y [M][N], quantizing, packing and the GEMM spread over
// the pool (thread_local scratch of the calling thread).
void run_q4_amx(const MlasQ4Packed& p, const float* af, int64_t K, int64_t M, const float* bias, float* y,
                ThreadPool& pool);

}  // namespace ogx::cpu::nbits
