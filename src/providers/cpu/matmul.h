// Dense matrix multiply used by MatMul, Gemm and the attention kernels.
#pragma once
#include <cstdint>

#include "common/thread_pool.h"

namespace ogx::cpu {

// y[M,N] (fp32) = a[M,K] (fp32) x b[K,N] (storage S: float, f16_t or bf16_t), row-major; y is overwritten.
template <typename S>
void gemm_f32acc(const float* a, const S* b, float* y, int64_t M, int64_t K, int64_t N, ThreadPool& pool);

}  // namespace ogx::cpu
