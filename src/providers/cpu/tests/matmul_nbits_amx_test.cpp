// The AMX-INT8 GEMM of MatMulNBits (matmul_nbits_amx.h): the kernel against a scalar model of its arithmetic (exact
// integer block dots, then per block in order acc = fma(float(dot), sa * sb, acc), + bias: the same bits) and a
// float64 reference (within the fp32 summation bound), over odd M / N / K, every block size, zero points absent or
// random, bias; and the op through the provider option int4_gemm (auto: AMX from kAmxMinRows rows; mlas: the
// MLAS-exact kernels at every M). Skipped where the CPU or the OS has no AMX-INT8.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>

#include "common/thread_pool.h"
#include "providers/cpu/cpu_ops.h"
#include "providers/cpu/matmul_nbits_amx.h"
#include "providers/cpu/matmul_nbits_packed.h"
#include "providers/cpu/tests/kernel_test_util.h"

namespace ogx::cpu::nbits {
void quantize_row_int8(const float* a, int64_t K, int64_t bs, int64_t nb, int8_t* q, float* scale);
}

namespace {

using namespace ogx::cpu::nbits;
using ogx::DType;
using ogx::Tensor;

#define SKIP_WITHOUT_AMX()                             \
  if (!amx_int8_available() || !q4_packed_available()) \
  GTEST_SKIP() << "no AMX-INT8 on this CPU (or the OS did not grant the tile state): the AMX kernel is unused here"

struct Problem {
  int64_t M, K, N, bs, nb;
  std::vector<uint8_t> q;   // [N][nb * bs] weight values 0..15 (0 past K)
  std::vector<uint8_t> zp;  // [N][nb]
  std::vector<float> s;     // [N][nb]
  std::vector<float> a;     // [M][K]
  std::vector<float> bias;  // [N] or empty
};

Problem make_problem(int64_t M, int64_t K, int64_t N, int64_t bs, bool zp, bool bias, uint32_t seed) {
  Problem p{M, K, N, bs, (K + bs - 1) / bs, {}, {}, {}, {}, {}};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> ua(-1.f, 1.f), us(0.005f, 0.05f);
  p.q.assign((size_t)(N * p.nb * bs), 0);
  for (int64_t n = 0; n < N; n++)
    for (int64_t k = 0; k < K; k++) p.q[(size_t)(n * p.nb * bs + k)] = (uint8_t)(rng() % 16);
  p.zp.assign((size_t)(N * p.nb), 8);
  if (zp)
    for (auto& v : p.zp) v = (uint8_t)(rng() % 16);
  p.s.resize((size_t)(N * p.nb));
  for (auto& v : p.s) v = us(rng);
  p.a.resize((size_t)(M * K));
  for (auto& v : p.a) v = ua(rng);
  if (bias) {
    p.bias.resize((size_t)N);
    for (auto& v : p.bias) v = ua(rng);
  }
  return p;
}

std::vector<uint8_t> packed_bytes(const Problem& p) {  // MatMulNBits B: [N][nb][bs / 2]
  std::vector<uint8_t> b(p.q.size() / 2);
  for (size_t i = 0; i < b.size(); i++) b[i] = (uint8_t)(p.q[2 * i] | (p.q[2 * i + 1] << 4));
  return b;
}

std::string name(const Problem& p) {
  std::ostringstream os;
  os << "M" << p.M << " K" << p.K << " N" << p.N << " bs" << p.bs << " zp"
     << !std::all_of(p.zp.begin(), p.zp.end(), [](uint8_t z) { return z == 8; }) << " bias" << !p.bias.empty();
  return os.str();
}

// The kernel called directly (as run_q4_amx does, on `threads` threads), against the scalar model of its arithmetic
// (bit for bit) and against float64 (|y - ref| <= (nb + 2) 2^-24 sum_b |term_b|: the bound of nb + 1 rounded fp32
// additions of the block terms, term_b = dot_b * fp32(sa * sb), each exact in float64).
void check_kernel(const Problem& pr, int threads) {
  MlasQ4Packed p;
  const std::vector<uint8_t> b = packed_bytes(pr);
  pack_q4_mlas(b.data(), pr.s.data(), pr.zp.data(), pr.K, pr.N, pr.bs, 1, p);
  const int64_t kp = pr.nb * pr.bs;
  std::vector<float> af((size_t)(pr.M * kp), 0.f);
  for (int64_t m = 0; m < pr.M; m++)
    std::copy(&pr.a[(size_t)(m * pr.K)], &pr.a[(size_t)(m * pr.K)] + pr.K, &af[(size_t)(m * kp)]);
  std::vector<float> y((size_t)(pr.M * pr.N), -1.f);
  ogx::ThreadPool pool(threads);
  run_q4_amx(p, af.data(), pr.K, pr.M, pr.bias.empty() ? nullptr : pr.bias.data(), y.data(), pool);

  std::vector<int8_t> qa((size_t)kp);
  std::vector<float> sa((size_t)pr.nb);
  int bad = 0;
  for (int64_t m = 0; m < pr.M; m++) {
    quantize_row_int8(&af[(size_t)(m * kp)], pr.K, pr.bs, pr.nb, qa.data(), sa.data());
    for (int64_t n = 0; n < pr.N; n++) {
      float acc = 0.f;
      double exact = 0, mag = 0;
      for (int64_t blk = 0; blk < pr.nb; blk++) {
        int32_t dot = 0;
        for (int64_t k = blk * pr.bs; k < (blk + 1) * pr.bs; k++)
          dot += qa[(size_t)k] * ((int)pr.q[(size_t)(n * kp + k)] - (int)pr.zp[(size_t)(n * pr.nb + blk)]);
        const float cs = sa[(size_t)blk] * pr.s[(size_t)(n * pr.nb + blk)];
        acc = std::fma((float)dot, cs, acc);
        exact += (double)dot * cs;
        mag += std::fabs((double)dot * cs);
      }
      const float bv = pr.bias.empty() ? 0.f : pr.bias[(size_t)n];
      const float model = acc + bv;
      const double ref = exact + bv, tol = (pr.nb + 2) * std::ldexp(mag + std::fabs(bv), -24);
      const float got = y[(size_t)(m * pr.N + n)];
      if ((got != model || !(std::fabs(got - ref) <= tol)) && bad++ < 3)
        ADD_FAILURE() << name(pr) << " threads " << threads << " [" << m << "][" << n << "]: got " << got << " model "
                      << model << " float64 " << ref << " tol " << tol;
    }
  }
}

TEST(MatMulNBitsAmx, KernelMatchesScalarModel) {
  SKIP_WITHOUT_AMX();
  uint32_t seed = 1;
  for (int64_t bs : {16, 32, 64, 128, 256})
    for (int64_t K : {bs, int64_t{200}, int64_t{64 * 5 + 13}, int64_t{1056}})
      for (int64_t M : {1, 15, 16, 17, 47, 100})
        for (int64_t N : {1, 17, 37, 67}) {
          const int v = (int)(seed % 4);
          check_kernel(make_problem(M, K, N, bs, v & 1, v & 2, seed), 1 + (int)(seed % 2));
          seed++;
        }
}

TEST(MatMulNBitsAmx, KernelLargeShapes) {  // several row chunks and panel pairs, odd quads, both threads
  SKIP_WITHOUT_AMX();
  check_kernel(make_problem(257, 8192 + 32, 75, 32, true, true, 11), 2);
  check_kernel(make_problem(300, 2048, 130, 32, false, false, 12), 2);
  check_kernel(make_problem(129, 4096, 33, 128, true, false, 13), 3);
  check_kernel(make_problem(64, 2048, 48, 16, false, true, 14), 2);
}

// The op: int4_gemm=mlas is the MLAS-exact path at every M (the same bits as with AMX absent), auto takes AMX from
// kAmxMinRows rows (within the fp32 bound of mlas; not the same bits) and the exact kernels below; fp16 A too.
Tensor run_op(const Problem& pr, const char* gemm, bool fp16) {
  const DType T = fp16 ? DType::f16 : DType::f32;
  const std::vector<uint8_t> b = packed_bytes(pr);
  Tensor B(DType::u8, {pr.N, pr.nb, pr.bs / 2});
  std::copy(b.begin(), b.end(), B.data<uint8_t>());
  const int64_t zb = (pr.nb + 1) / 2;
  Tensor Z = Tensor::zeros(DType::u8, {pr.N * zb});
  for (int64_t n = 0; n < pr.N; n++)
    for (int64_t k = 0; k < pr.nb; k++)
      Z.data<uint8_t>()[n * zb + k / 2] |= (uint8_t)(pr.zp[(size_t)(n * pr.nb + k)] << ((k & 1) * 4));
  ogx::test::NodeRun r("com.microsoft", "MatMulNBits");
  r.registry([](ogx::KernelRegistry& reg) { ogx::cpu::register_matmul_nbits(reg); });
  r.option("int4_gemm", gemm).threads(2);
  r.input("A", ogx::test::make_tensor(T, {pr.M, pr.K}, pr.a)).constant("B", B);
  r.constant("scales", ogx::test::make_tensor(T, {pr.N * pr.nb}, pr.s)).constant("zero_points", Z).omitted();
  if (!pr.bias.empty()) r.constant("bias", ogx::test::make_tensor(T, {pr.N}, pr.bias));
  r.attr("K", pr.K)
      .attr("N", pr.N)
      .attr("bits", int64_t{4})
      .attr("block_size", pr.bs)
      .attr("accuracy_level", int64_t{4});
  return r.run().at(0);
}

TEST(MatMulNBitsAmx, OptionSelectsTheKernel) {
  SKIP_WITHOUT_AMX();
  for (bool fp16 : {false, true})
    for (int64_t M : {kAmxMinRows - 1, kAmxMinRows, int64_t{64}, int64_t{301}}) {
      const Problem pr = make_problem(M, 1056, 67, 32, true, true, (uint32_t)(100 + M));
      const Tensor exact = run_op(pr, "mlas", fp16), fast = run_op(pr, "auto", fp16);
      const bool prev = set_amx_disabled(true);
      const Tensor without = run_op(pr, "auto", fp16);
      set_amx_disabled(prev);
      // Both paths: exact integer dots, fp32 sums in different orders (MLAS: lanes, zero points as a separate
      // fp32 chain over unsigned-weight dots). Tolerance 1e-5 of the row's magnitude sum_k |a_k| * 15 * s_b(k)
      // (~100 fp32 ulps of the terms' sum); fp16: plus half an fp16 ulp of the result on each side.
      std::vector<double> mag((size_t)(M * pr.N), 0.0);
      for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < pr.N; n++)
          for (int64_t k = 0; k < pr.K; k++)
            mag[(size_t)(m * pr.N + n)] +=
                std::fabs(pr.a[(size_t)(m * pr.K + k)]) * 15 * pr.s[(size_t)(n * pr.nb + k / pr.bs)];
      int differ = 0;
      for (int64_t i = 0; i < exact.numel(); i++) {
        const double e = exact.get_f64(i), f = fast.get_f64(i);
        const double tol = 1e-5 * mag[(size_t)i] + (fp16 ? 1e-3 * std::fabs(e) + 1e-6 : 1e-7);
        ASSERT_EQ(without.get_f64(i), e) << "auto without AMX is the exact path, M " << M << " [" << i << "]";
        if (M < kAmxMinRows) {
          ASSERT_EQ(f, e) << "auto below kAmxMinRows is the exact path, M " << M;
        }
        EXPECT_NEAR(f, e, tol) << "M " << M << " [" << i << "]";
        differ += f != e;
      }
      if (M >= kAmxMinRows && !fp16) {
        EXPECT_GT(differ, 0) << "auto at M " << M << " gave the exact path's bits";
      }
    }
}

TEST(MatMulNBitsAmx, UnknownOptionValueIsAnError) {
  const Problem pr = make_problem(2, 64, 3, 32, false, false, 5);
  EXPECT_THROW(run_op(pr, "fast", false), std::exception);
}

}  // namespace
