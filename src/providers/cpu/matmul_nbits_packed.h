// Packed int4 weights of a constant MatMulNBits B for the int8 path (accuracy_level 4), and the GEMM that uses
// them: repacked once at session creation into a kernel-friendly layout, then multiplied by int8 activations
// quantized per block (quantize_row_int8) with AVX-512 VNNI (vpdpbusd: unsigned 4-bit weights x signed int8
// activations, 64 products per instruction). Used for decode (M = 1) and prefill (M > 1) alike: rows are tiled by
// 4 and columns by kTile, so one tile of weights (a few KiB) serves every row while it sits in L1.
//
// Layout, per tile of kTile columns and per chunk of 64 values of K (K padded with zeros to chunks * 64):
//   w  [tiles][chunks][kTile][32 bytes]     byte i: low nibble = q[k0 + i], high nibble = q[k0 + 32 + i]
//   s  [tiles][groups][kTile][spc] float   spc = 64 / bs scales per chunk (bs <= 64), else 1 per block
//   z  same shape as s, uint8              only when some zero point differs from 8
// Int32 lane l of a chunk's dot covers k0 + 4l .. k0 + 4l + 3, so its block is (4l) / bs within the chunk.
#pragma once
#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

namespace ogx::cpu::nbits {

constexpr int kTile = 4;  // columns per packed tile

// Allocator of the packed weights: 2 MiB-aligned and marked for transparent huge pages when large, so that
// streaming ~1 GB per token does not walk a 4 KiB page table entry every 4 KiB (and packing faults 512x less).
template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}
  T* allocate(size_t n) {
    constexpr size_t kHuge = size_t(2) << 20;
    const size_t bytes = n * sizeof(T);
    if (bytes < kHuge) return static_cast<T*>(::operator new(bytes));
    void* p = std::aligned_alloc(kHuge, (bytes + kHuge - 1) / kHuge * kHuge);
    if (!p) throw std::bad_alloc();
    madvise(p, bytes, MADV_HUGEPAGE);
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    if (n * sizeof(T) < (size_t(2) << 20)) ::operator delete(p);
    else std::free(p);
  }
  bool operator==(const HugePageAllocator&) const { return true; }
};

struct PackedQ4 {
  int64_t K = 0, N = 0, bs = 0, nb = 0;
  int64_t chunks = 0;  // ceil(nb * bs / 64)
  int64_t groups = 0;  // scale groups: chunks (bs <= 64) or nb (bs > 64, one group spans bs / 64 chunks)
  int spc = 1;         // scales per group
  bool sym = true;     // every zero point is 8: the correction is -8 * sum(a), computed from the activations
  std::vector<uint8_t, HugePageAllocator<uint8_t>> w;
  std::vector<float, HugePageAllocator<float>> s;
  std::vector<uint8_t> z;
  int64_t tiles() const { return (N + kTile - 1) / kTile; }
  int64_t chunks_per_group() const { return bs > 64 ? bs / 64 : 1; }
  int64_t a_stride() const { return chunks * 64; }      // int8 activation row, zero-padded
  int64_t sa_stride() const { return groups * spc; }    // activation scale row, zero-padded
};

bool q4_packed_available();  // AVX-512 F/BW/VL/DQ + VNNI, and the SIMD paths are enabled

// b: [N][nb][bs/2] MatMulNBits bytes; scales: [N][nb]; zp: [N][nb] unpacked zero points (8 when absent).
// threads: how many threads may pack a large matrix.
void pack_q4(const uint8_t* b, const float* scales, const uint8_t* zp, int64_t K, int64_t N, int64_t bs, int threads,
             PackedQ4& p);

// One row's chunk of activations as the kernel reads it: the 64 int8 values, the activation scale of each int32
// lane, and for symmetric weights the zero-point correction -8 * the sum of the lane's 4 values.
struct alignas(64) ActChunk {
  int8_t q[64];
  float sx[16];
  int32_t corr[16];
};

// Activation chunks are stored panel by panel: K in panels of panel_chunks(M) chunks, each panel [M][its chunks],
// so the rows of one panel are contiguous and stay in L2 while the weight tiles stream by.
int64_t panel_chunks(const PackedQ4& p, int64_t M);
inline int64_t act_index(const PackedQ4& p, int64_t M, int64_t m, int64_t j) {
  const int64_t pc = panel_chunks(p, M), j0 = j / pc * pc, len = std::min(pc, p.chunks - j0);
  return j0 * M + m * len + (j - j0);
}

// qa: [M][a_stride()] int8 rows and sa: [M][sa_stride()] their block scales (quantize_row_int8) -> act for rows
// [m0, m1) (act holds M * chunks entries).
void pack_activations(const PackedQ4& p, const int8_t* qa, const float* sa, int64_t M, int64_t m0, int64_t m1,
                      ActChunk* act);

// y[m][n] = sum_blk sa[m][blk] * sb[n][blk] * sum_k qa[m][k] * (q[n][k] - zp[n][blk]) (+ bias[n]) for rows
// [0, M) and column tiles [t0, t1); y: [M][N].
void q4_gemm_packed(const PackedQ4& p, const ActChunk* act, int64_t M, int64_t t0, int64_t t1, const float* bias,
                    float* y);

}  // namespace ogx::cpu::nbits
