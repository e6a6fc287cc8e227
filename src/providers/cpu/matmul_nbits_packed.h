// What the packed int4 GEMM of MatMulNBits (matmul_nbits_mlas.h) shares with its callers: the column tile, the
// allocator of the packed weights and the CPU check.
#pragma once
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <new>

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

// The ISA of the packed int4 GEMM: AVX-512 F/BW/VL/DQ + VNNI, else its AVX2 + FMA twin (the same fp32 operations:
// the same bits, slower), else none (the SIMD paths disabled, or neither ISA).
enum class Q4Isa { none, avx2, avx512_vnni };
Q4Isa q4_packed_isa();
inline bool q4_packed_available() { return q4_packed_isa() != Q4Isa::none; }
// Test hook: the AVX2 twin even where AVX-512 VNNI exists; returns the previous setting.
bool set_q4_force_avx2(bool on);

}  // namespace ogx::cpu::nbits
