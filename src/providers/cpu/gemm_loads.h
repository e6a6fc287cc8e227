// Element access shared by the fp32-accumulating GEMM kernels (gemm_f32.cpp, gemm_packed_b.cpp) over weights held
// as fp32, fp16 or bf16: one value as float (scalar twins), 8 values as an AVX2 vector and 16 as an AVX-512 one.
// Internal to this folder.
#pragma once
#include <immintrin.h>

#include <type_traits>

#include "common/half.h"

namespace ogx::cpu::gemm {

template <typename S>
inline float to_f(S v) {
  if constexpr (std::is_same_v<S, float>) return v;
  else return to_float(v);
}

#define OGX_GEMM_AVX2 __attribute__((target("avx2,fma,f16c")))

OGX_GEMM_AVX2 inline __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
OGX_GEMM_AVX2 inline __m256 load8(const f16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)p)); }
OGX_GEMM_AVX2 inline __m256 load8(const bf16_t* p) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i*)p)), 16));
}

#define OGX_GEMM_AVX512 __attribute__((target("avx512f,avx2,fma,f16c")))

OGX_GEMM_AVX512 inline __m512 load16(const float* p) { return _mm512_loadu_ps(p); }
OGX_GEMM_AVX512 inline __m512 load16(const f16_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)p));
}
OGX_GEMM_AVX512 inline __m512 load16(const bf16_t* p) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i*)p)), 16));
}

}  // namespace ogx::cpu::gemm
