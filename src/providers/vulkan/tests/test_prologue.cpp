// The fused decode matvecs (matvec_with_prologue) against the separate ops they replace, run on the same device:
// RMSNorm / SkipRMSNorm (with the residual output) then matvec, and SiLU·Mul of a fused gate/up row then matvec,
// for fp32 and fp16 storage and fp/int4 weights, on seeded random shapes. The fused path rounds its prologue
// values to the storage dtype as the separate op stores them; only the norm's reduction order differs, so the
// tolerance is a few fp32 ulps of the products (fp32) and one fp16 ulp of the outputs (fp16).
#include "providers/vulkan/kernels/elementwise.h"
#include "providers/vulkan/kernels/matmul.h"
#include "providers/vulkan/kernels/norm.h"
#include "providers/vulkan/tests/vk_test_util.h"

namespace ogx::vk::test {
namespace {

struct PrologueCase {
  int64_t M, K, N;
  DType dtype;
  bool int4;
};

class VulkanPrologueTest : public VulkanTest, public ::testing::WithParamInterface<PrologueCase> {
 protected:
  kernels::MatMulWeight weight(int64_t K, int64_t N, DType dt, bool int4, uint32_t seed) {
    if (!int4) return kernels::upload_matmul_weight(ctx(), "w", host_tensor(round_to(random_values(K * N, seed), dt), dt, {K, N}));
    int64_t bs = 32, nb = (K + bs - 1) / bs;
    std::mt19937 rng(seed);
    Tensor packed(DType::u8, {N, nb, bs / 2});
    for (int64_t i = 0; i < packed.numel(); i++) packed.data<uint8_t>()[i] = (uint8_t)(rng() & 0xff);
    auto scales = round_to(random_values(N * nb, seed + 1, 0.01f, 0.2f), dt);
    return kernels::upload_matmul_nbits(ctx(), "q", packed, host_tensor(scales, dt, {N * nb}), nullptr, K, N, bs);
  }
  void compare(const TensorView& fused, const TensorView& separate, DType dt, const char* what) {
    std::vector<float> a = download(fused), b = download(separate);
    std::vector<double> want(b.begin(), b.end());
    expect_close(a, want, dt == DType::f16 ? 2e-3 : 1e-4, dt == DType::f16 ? 2e-2 : 1e-4, what);
  }
};

TEST_P(VulkanPrologueTest, RmsNormPrologueMatchesSeparateOps) {
  auto [M, K, N, dt, int4] = GetParam();
  uint32_t seed = (uint32_t)(M * 7 + K * 11 + N * 13 + int4);
  auto w = weight(K, N, dt, int4, seed);
  TensorView x = upload(random_values(M * K, seed + 2, -2.f, 2.f), dt, {M, K});
  TensorView skip = upload(random_values(M * K, seed + 3), dt, {M, K});
  TensorView gamma = upload(random_values(K, seed + 4, 0.5f, 1.5f), dt, {K});
  for (bool with_skip : {false, true}) {
    TensorView xn = empty(dt, {M, K}), res1 = empty(dt, {M, K}), res2 = empty(dt, {M, K});
    TensorView y1 = empty(dt, {M, N}), y2 = empty(dt, {M, N});
    CommandRecorder rec(ctx());
    rec.begin();
    if (with_skip) kernels::skip_rms_norm(rec, x, skip, nullptr, gamma, 1e-5f, xn, &res1);
    else kernels::rms_norm(rec, x, gamma, 1e-5f, xn);
    kernels::matmul(rec, xn, w, nullptr, y1);
    kernels::MatvecPrologue pro;
    pro.kind = kernels::MatvecPrologue::rms_norm;
    pro.skip = with_skip ? &skip : nullptr;
    pro.gamma = &gamma;
    pro.residual = with_skip ? &res2 : nullptr;
    kernels::matvec_with_prologue(rec, pro, x, w, nullptr, y2);
    rec.end();
    rec.run();
    compare(y2, y1, dt, with_skip ? "skip rms norm prologue" : "rms norm prologue");
    if (with_skip) compare(res2, res1, dt, "residual");
  }
}

TEST_P(VulkanPrologueTest, SiluMulPrologueMatchesSeparateOps) {
  auto [M, K, N, dt, int4] = GetParam();
  uint32_t seed = (uint32_t)(M * 5 + K * 3 + N * 17 + int4);
  auto w = weight(K, N, dt, int4, seed);
  TensorView gu = upload(random_values(M * 2 * K, seed + 5, -3.f, 3.f), dt, {M, 2 * K});
  TensorView h = empty(dt, {M, K}), y1 = empty(dt, {M, N}), y2 = empty(dt, {M, N});
  CommandRecorder rec(ctx());
  rec.begin();
  kernels::silu_mul(rec, gu, gu, h, true);
  kernels::matmul(rec, h, w, nullptr, y1);
  kernels::MatvecPrologue pro;
  pro.kind = kernels::MatvecPrologue::silu_mul;
  kernels::matvec_with_prologue(rec, pro, gu, w, nullptr, y2);
  rec.end();
  rec.run();
  compare(y2, y1, dt, "silu·mul prologue");
}

std::vector<PrologueCase> cases() {
  std::vector<PrologueCase> v = {{1, 64, 48, DType::f32, false}, {2, 256, 100, DType::f16, false},
                                 {1, 128, 64, DType::f32, true}, {1, 96, 70, DType::f16, true}};
  std::mt19937 rng(2026);
  for (int i = 0; i < 4; i++) {
    int64_t K = 32 * (1 + rng() % 12), N = 1 + rng() % 200;
    v.push_back({1 + (int64_t)(rng() % 2), K, N, i % 2 ? DType::f16 : DType::f32, i >= 2});
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(Shapes, VulkanPrologueTest, ::testing::ValuesIn(cases()));

}  // namespace
}  // namespace ogx::vk::test
