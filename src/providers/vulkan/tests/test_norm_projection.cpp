// The decode matvec with a (Skip)SimplifiedLayerNormalization prologue (kernels::matvec_fused with a NormPrologue)
// against the unfused path it replaces: the norm kernel into a buffer, then the plain matvec (or the gate/up SiLU
// epilogue). The unfused kernels are checked against float64 references in test_norm_elementwise.cpp and
// test_matmul.cpp. Random shapes and data, fp32/fp16 storage, fp16/int4 weights, with and without skip, norm bias,
// residual output, projection bias.
//
// Tolerances: the fused path keeps the normalized input in fp32 where the unfused one rounds it to the storage type
// (fp16: relative 2^-11 per element), and sums the rms in a different order, so fp16 allows 2e-3 relative plus
// 2e-3 * sqrt(K) absolute (as the matvec tests), fp32 1e-4 relative plus 1e-5 * sqrt(K). The residual is the same
// fp32 sum rounded once in both paths: equal.
#include <random>

#include "providers/vulkan/kernels/elementwise.h"
#include "providers/vulkan/kernels/matmul.h"
#include "providers/vulkan/kernels/norm.h"
#include "providers/vulkan/tests/vk_test_util.h"

namespace ogx::vk::test {
namespace {

struct NormProjCase {
  int64_t M, K, N;
  DType dtype;
  bool int4, skip, norm_bias, residual, bias, silu;
};

class VulkanNormProjectionTest : public VulkanTest, public ::testing::WithParamInterface<NormProjCase> {};

kernels::MatMulWeight make_weight(Context& ctx, int64_t K, int64_t N, DType dt, bool int4, uint32_t seed) {
  if (!int4) return kernels::upload_matmul_weight(ctx, "w", host_tensor(round_to(random_values(K * N, seed), dt), dt, {K, N}));
  int64_t bs = 32, nb = (K + bs - 1) / bs;
  std::mt19937 rng(seed);
  Tensor packed(DType::u8, {N, nb, bs / 2});
  for (int64_t i = 0; i < packed.numel(); i++) packed.data<uint8_t>()[i] = (uint8_t)(rng() & 0xff);
  auto scales = round_to(random_values(N * nb, seed + 1, 0.01f, 0.1f), dt);
  Tensor zp(DType::u8, {N * ((nb + 1) / 2)});
  for (int64_t i = 0; i < zp.numel(); i++) zp.data<uint8_t>()[i] = (uint8_t)(rng() & 0xff);
  return kernels::upload_matmul_nbits(ctx, "w", packed, host_tensor(scales, dt, {N * nb}), &zp, K, N, bs);
}

void check_norm_projection(Context& ctx, const NormProjCase& c) {
  std::vector<DeviceBuffer> keep;
  auto upload = [&](const std::vector<float>& v, DType t, Shape s) { return upload_to(ctx, keep, v, t, s); };
  auto empty = [&](DType t, Shape s) {
    return upload_to(ctx, keep, std::vector<float>((size_t)shape_numel(s), 0.0f), t, s);
  };
  auto download = [&](const TensorView& t) { return download_from(ctx, t); };
  DType dt = c.dtype;
  uint32_t seed = (uint32_t)(c.M * 7 + c.K * 31 + c.N * 131 + c.int4 * 3 + c.skip * 5 + c.silu * 11);
  int64_t N = c.silu ? 2 * c.N : c.N, out_n = c.N;
  kernels::MatMulWeight w = make_weight(ctx, c.K, N, dt, c.int4, seed);
  TensorView x = upload(random_values(c.M * c.K, seed + 1, -2.0f, 2.0f), dt, {c.M, c.K});
  TensorView skip = upload(random_values(c.M * c.K, seed + 2), dt, {c.M, c.K});
  TensorView nbias = upload(random_values(c.K, seed + 3, -0.3f, 0.3f), dt, {c.K});
  TensorView gamma = upload(random_values(c.K, seed + 4, 0.5f, 1.5f), dt, {c.K});
  TensorView bias = upload(random_values(N, seed + 5), dt, {N});
  TensorView normed = empty(dt, {c.M, c.K}), res_ref = empty(dt, {c.M, c.K}), res = empty(dt, {c.M, c.K});
  TensorView want_y = empty(dt, {c.M, out_n}), got_y = empty(dt, {c.M, out_n});
  float eps = 1e-5f;
  const TensorView* skip_p = c.skip ? &skip : nullptr;
  const TensorView* nbias_p = c.skip && c.norm_bias ? &nbias : nullptr;
  const TensorView* bias_p = c.bias && !c.silu ? &bias : nullptr;
  const TensorView* res_p = c.skip && c.residual ? &res : nullptr;
  CommandRecorder rec(ctx);
  rec.begin();
  if (skip_p) kernels::skip_rms_norm(rec, x, skip, nbias_p, gamma, eps, normed, res_p ? &res_ref : nullptr);
  else kernels::rms_norm(rec, x, gamma, eps, normed);
  if (c.silu) kernels::matvec_gate_up_silu(rec, normed, w, want_y);
  else kernels::matmul(rec, normed, w, bias_p, want_y);
  kernels::NormPrologue norm{skip_p, nbias_p, &gamma, eps, res_p};
  kernels::matvec_fused(rec, x, w, bias_p, &norm, c.silu, got_y);
  rec.end();
  rec.run();
  std::vector<float> want = download(want_y);
  double rel = dt == DType::f16 ? 2e-3 : 1e-4, atol = (dt == DType::f16 ? 2e-3 : 1e-5) * std::sqrt((double)c.K);
  // int4 with fp16 activations under q4_wide_half: both paths multiply in packed fp16, each product and each 4-term
  // sum rounded to fp16 (2^-11), from differently rounded inputs (fp32 normalized in the fused path, fp16 in the
  // other): 1e-2 relative (measured worst 4.9e-3 on lavapipe, through silu(g) * u).
  if (c.int4 && dt == DType::f16 && ctx.tuning().q4_wide_half && ctx.info().features.fp16_arithmetic) rel = 1e-2;
  if (c.silu) atol *= 2;  // silu(g) * u multiplies two such errors' operands
  expect_close(download(got_y), std::vector<double>(want.begin(), want.end()), rel, atol, "fused norm projection");
  if (res_p) {
    std::vector<float> a = download(res_ref), b = download(res);
    EXPECT_EQ(a, b) << "residual output differs from the norm kernel's";
  }
}

TEST_P(VulkanNormProjectionTest, MatchesNormThenProjection) { check_norm_projection(ctx(), GetParam()); }

// The int4 decode matvec with its outputs in groups (tuning q4_wide_groups: each group's weights loaded while the
// previous one multiplies; 2 and 3 groups of 4 or 2 outputs, fp32 and packed fp16 products, 1 and 2 chunks per
// thread), N not a multiple of a workgroup's outputs, with the norm prologue and the gate/up epilogue (at K 256:
// see skinny_cases on the unfused path's rounding at K 2048).
TEST_F(VulkanNormProjectionTest, GroupedInt4OutputsMatchNormThenProjection) {
  struct Variant {
    uint32_t rows, groups, half, unroll;
  };
  for (Variant v : {Variant{4, 2, 0, 1}, Variant{4, 3, 1, 1}, Variant{2, 4, 1, 2}, Variant{4, 4, 1, 1}}) {
    if (v.half && !ctx().info().features.fp16_arithmetic) continue;
    ContextOptions o = options_like(ctx());
    o.tuning->q4_wide_rows = v.rows;
    o.tuning->q4_wide_groups = v.groups;
    o.tuning->q4_wide_half = v.half;
    o.tuning->q4_wide_unroll = v.unroll;
    o.tuning->q4_wide_min_dim = 0;
    o.tuning->q4_norm_prologue = 1;
    Context other(o);
    for (NormProjCase c : {NormProjCase{1, 96, 50, DType::f16, true, true, false, true, false, false},
                           NormProjCase{1, 256, 37, DType::f16, true, true, false, true, false, true},
                           NormProjCase{1, 2048, 21, DType::f16, true, true, false, true, false, false},
                           NormProjCase{1, 1024, 29, DType::f32, true, false, true, false, true, false},
                           NormProjCase{1, 640, 13, DType::f16, true, false, false, false, true, false}}) {
      SCOPED_TRACE("rows " + std::to_string(v.rows) + " x groups " + std::to_string(v.groups) + ", half " +
                   std::to_string(v.half) + ", unroll " + std::to_string(v.unroll) + ", K " + std::to_string(c.K) +
                   ", N " + std::to_string(c.N) + (c.silu ? ", gate/up" : ""));
      check_norm_projection(other, c);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, VulkanNormProjectionTest,
    ::testing::Values(NormProjCase{1, 64, 40, DType::f32, false, false, false, false, true, false},  // plain norm
                      NormProjCase{1, 256, 72, DType::f16, false, true, false, true, false, false},  // skip + residual
                      NormProjCase{2, 128, 33, DType::f32, false, true, true, true, true, false},    // + norm bias, bias
                      NormProjCase{1, 100, 24, DType::f32, false, true, false, true, false, false},  // K % 8 != 0
                      NormProjCase{1, 96, 50, DType::f16, true, true, false, true, false, false},    // int4
                      NormProjCase{2, 160, 17, DType::f32, true, false, false, false, false, true},  // int4 gate/up
                      NormProjCase{1, 256, 37, DType::f16, false, true, false, true, false, true},   // fp16 gate/up
                      NormProjCase{1, 2048, 64, DType::f16, false, true, false, true, false, false},  // 1B width
                      NormProjCase{1, 2048, 40, DType::f16, true, true, false, true, false, true},    // int4 gate/up
                      NormProjCase{1, 4096, 9, DType::f32, true, false, true, false, true, false}));  // int4, 8B width

// Seeded random shapes and flags.
std::vector<NormProjCase> random_cases() {
  std::mt19937 rng(777);
  std::vector<NormProjCase> out;
  for (int i = 0; i < 8; i++) {
    bool int4 = rng() % 2;
    int64_t K = int4 ? 32 * (1 + rng() % 10) : 1 + rng() % 400;
    out.push_back({1 + (int64_t)(rng() % 2), K, 1 + (int64_t)(rng() % 90), rng() % 2 ? DType::f16 : DType::f32, int4,
                   rng() % 2 == 0, rng() % 2 == 0, rng() % 2 == 0, rng() % 2 == 0, rng() % 3 == 0});
  }
  return out;
}
INSTANTIATE_TEST_SUITE_P(RandomShapes, VulkanNormProjectionTest, ::testing::ValuesIn(random_cases()));

// Batched decode: the skinny matmul's norm prologue and SiLU epilogue over M = 2..16 rows (each row its own rms).
std::vector<NormProjCase> skinny_cases() {
  std::mt19937 rng(1717);
  std::vector<NormProjCase> out;
  for (int i = 0; i < 10; i++) {
    bool int4 = i % 2 == 1;
    int64_t K = int4 ? 32 * (1 + rng() % 10) : 1 + rng() % 400;
    out.push_back({2 + (int64_t)(rng() % 15), K, 1 + (int64_t)(rng() % 90), rng() % 2 ? DType::f16 : DType::f32, int4,
                   i % 4 != 3, rng() % 2 == 0, rng() % 2 == 0, rng() % 2 == 0, i % 3 == 0});
  }
  // 1B width; the gate/up epilogue at K = 256 (at K = 2048 |u| reaches ~75, and the unfused path's fp16 rounding
  // of the normed input, times u, exceeds the stated tolerance: against float64 the fused result is the closer one)
  out.push_back({16, 2048, 40, DType::f16, false, true, false, true, false, false});
  out.push_back({16, 256, 40, DType::f16, false, true, false, true, false, true});
  out.push_back({3, 1100, 20, DType::f32, false, true, true, true, true, false});  // 2 units per iteration
  out.push_back({6, 640, 24, DType::f16, true, true, false, true, false, true});   // int4 gate/up, 2 units
  return out;
}
INSTANTIATE_TEST_SUITE_P(Skinny, VulkanNormProjectionTest, ::testing::ValuesIn(skinny_cases()));

}  // namespace
}  // namespace ogx::vk::test
