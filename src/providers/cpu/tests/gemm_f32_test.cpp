// gemm_f32acc (MatMul/Gemm) and gemm_packed_b (constant weights in panels): register-tiled AVX2 kernels (and
// gemm_packed_b's AVX-512 tiles where the CPU has them) and their scalar twins against a float64 reference on odd shapes (rows that fill 4-row tiles or not, columns that fill
// 16-column panels and 64-column groups or not), fp32/fp16/bf16 weights; every path gives the same fp32 sums bit for
// bit, with 1 or 3 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "common/half.h"
#include "providers/cpu/matmul.h"
#include "providers/cpu/simd.h"

namespace {

template <typename S>
S from_f(float v) {
  if constexpr (std::is_same_v<S, float>) return v;
  else if constexpr (std::is_same_v<S, ogx::f16_t>) return ogx::f16_t{ogx::f32_to_f16(v)};
  else return ogx::bf16_t{ogx::f32_to_bf16(v)};
}
template <typename S>
double to_d(S v) {
  if constexpr (std::is_same_v<S, float>) return v;
  else return ogx::to_float(v);
}

template <typename S>
void check(int64_t M, int64_t K, int64_t N, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> a((size_t)(M * K));
  std::vector<S> b((size_t)(K * N));
  for (auto& v : a) v = u(rng);
  for (auto& v : b) v = from_f<S>(u(rng));
  ogx::ThreadPool p1(1), p3(3);
  std::vector<float> y1((size_t)(M * N)), y3(y1.size()), ys(y1.size());
  ogx::cpu::gemm_f32acc<S>(a.data(), b.data(), y1.data(), M, K, N, p1);
  ogx::cpu::gemm_f32acc<S>(a.data(), b.data(), y3.data(), M, K, N, p3);
  bool prev = ogx::cpu::set_simd_enabled(false);
  ogx::cpu::gemm_f32acc<S>(a.data(), b.data(), ys.data(), M, K, N, p1);
  ogx::cpu::set_simd_enabled(prev);
  EXPECT_EQ(y1, y3) << "threads, M" << M << " K" << K << " N" << N;
  ogx::cpu::PackedB<S> pb;  // the constant-weight path: same sums from the panel layout
  ogx::cpu::pack_b(b.data(), K, N, pb);
  std::vector<float> yp(y1.size()), yps(y1.size()), yp2(y1.size());
  ogx::cpu::gemm_packed_b(a.data(), pb, yp.data(), M, p3);
  const bool avx512 = ogx::cpu::set_avx512_enabled(false);  // the AVX2 kernels where the CPU has AVX-512 too
  ogx::cpu::gemm_packed_b(a.data(), pb, yp2.data(), M, p3);
  ogx::cpu::set_avx512_enabled(avx512);
  prev = ogx::cpu::set_simd_enabled(false);
  ogx::cpu::gemm_packed_b(a.data(), pb, yps.data(), M, p1);
  ogx::cpu::set_simd_enabled(prev);
  EXPECT_EQ(y1, yp) << "packed B, M" << M << " K" << K << " N" << N;
  EXPECT_EQ(y1, yp2) << "packed B without AVX-512, M" << M << " K" << K << " N" << N;
  EXPECT_EQ(y1, yps) << "packed B scalar, M" << M << " K" << K << " N" << N;
  EXPECT_EQ(y1, ys) << "simd vs scalar, M" << M << " K" << K << " N" << N;
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < N; n++) {
      double s = 0, bound = 0;
      for (int64_t k = 0; k < K; k++) {
        const double t = a[(size_t)(m * K + k)] * to_d(b[(size_t)(k * N + n)]);
        s += t;
        bound += std::fabs(t);
      }
      ASSERT_NEAR(y1[(size_t)(m * N + n)], s, 1e-6 * bound + 1e-7) << "M" << M << " K" << K << " N" << N;
    }
}

TEST(GemmF32, MatchesReferenceOnOddShapes) {
  uint32_t seed = 1;
  for (int64_t M : {1, 3, 4, 5, 8, 9, 17})
    for (int64_t K : {1, 7, 64, 129})
      for (int64_t N : {1, 15, 16, 17, 33, 100, 130}) {
        check<float>(M, K, N, seed++);
        check<ogx::f16_t>(M, K, N, seed++);
        check<ogx::bf16_t>(M, K, N, seed++);
      }
}

}  // namespace
