// Dense matrix multiply used by MatMul, Gemm and the attention kernels.
#pragma once
#include <cstdint>
#include <vector>

#include "common/thread_pool.h"

namespace ogx::cpu {

// y[M,N] (fp32) = a[M,K] (fp32) x b[K,N] (storage S: float, f16_t or bf16_t), row-major; y is overwritten.
template <typename S>
void gemm_f32acc(const float* a, const S* b, float* y, int64_t M, int64_t K, int64_t N, ThreadPool& pool);

}  // namespace ogx::cpu

namespace ogx::cpu {

// A constant MatMul weight b[K,N] repacked once into panels of kPanelCols columns, [panels][K][kPanelCols]
// (zero-padded past N), so that every kernel reads it front to back (gemm_packed_b.cpp).
constexpr int64_t kPanelCols = 16;
template <typename S>
struct PackedB {
  int64_t K = 0, N = 0;
  std::vector<S> p;
  int64_t panels() const { return (N + kPanelCols - 1) / kPanelCols; }
};
template <typename S>
void pack_b(const S* b, int64_t K, int64_t N, PackedB<S>& out);
// y[M,N] = a[M,K] x b, the same ordered fp32 sums as gemm_f32acc (bit for bit).
template <typename S>
void gemm_packed_b(const float* a, const PackedB<S>& b, float* y, int64_t M, ThreadPool& pool);

}  // namespace ogx::cpu
