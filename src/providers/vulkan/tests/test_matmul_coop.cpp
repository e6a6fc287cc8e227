// The matrix-unit matmul (kernels/matmul_coop, VK_NV_cooperative_matrix) against float64 references: fp16 and int4
// weights, bias, the tuning row's tiles and every tile shape the table may name, M / N / K edges. Skipped on devices without the fp16 cooperative-matrix
// shape (lavapipe, CI); run on the H200 by bench/device/run_verify.sh.
#include "providers/vulkan/kernels/matmul_coop.h"
#include "providers/vulkan/tests/vk_test_util.h"

namespace ogx::vk::test {
namespace {

using kernels::MatMulWeight;

struct CoopCase {
  int64_t M, K, N;
  int64_t block;  // 0: fp16 weight; else int4 MatMulNBits block size
  bool zero_points, bias;
};

class VulkanMatMulCoopTest : public VulkanTest, public ::testing::WithParamInterface<CoopCase> {};

// Random MatMulNBits weights and the dequantized values (float64) the reference multiplies with.
MatMulWeight random_nbits(Context& ctx, int64_t K, int64_t N, int64_t bs, bool with_zp, uint32_t seed,
                          std::vector<double>* dequant /* [N, K] */) {
  std::mt19937 rng(seed);
  int64_t nb = (K + bs - 1) / bs, zp_stride = (nb + 1) / 2;
  Tensor packed(DType::u8, {N, nb, bs / 2}), zp(DType::u8, {N * zp_stride});
  for (int64_t i = 0; i < packed.numel(); i++) packed.data<uint8_t>()[i] = (uint8_t)(rng() & 0xff);
  for (int64_t i = 0; i < zp.numel(); i++) zp.data<uint8_t>()[i] = (uint8_t)(rng() & 0xff);
  auto scales = round_to(random_values(N * nb, (uint32_t)rng(), 0.01f, 0.2f), DType::f16);
  dequant->assign(N * K, 0.0);
  for (int64_t n = 0; n < N; n++)
    for (int64_t k = 0; k < K; k++) {
      int64_t blk = k / bs, within = k % bs;
      uint8_t byte = packed.data<uint8_t>()[(n * nb + blk) * (bs / 2) + within / 2];
      int q = within % 2 == 0 ? byte & 15 : byte >> 4, z = 8;
      if (with_zp) {
        uint8_t zb = zp.data<uint8_t>()[n * zp_stride + blk / 2];
        z = blk % 2 == 0 ? zb & 15 : zb >> 4;
      }
      (*dequant)[n * K + k] = (double)(q - z) * scales[n * nb + blk];
    }
  return kernels::upload_matmul_nbits(ctx, "q", packed, host_tensor(scales, DType::f16, {N * nb}),
                                      with_zp ? &zp : nullptr, K, N, bs);
}

// c = a x w (+ bias) on c's context through kernels::matmul (the cooperative-matrix path) against float64.
void check_case(Context& cx, const CoopCase& cc, const char* what) {
  auto [M, K, N, bs, with_zp, with_bias] = cc;
  uint32_t seed = (uint32_t)(M * 7919 + K * 31 + N + bs);
  auto a = round_to(random_values(M * K, seed), DType::f16);
  auto bias = round_to(random_values(N, seed + 2), DType::f16);
  std::vector<double> wt;  // [N, K]
  MatMulWeight w;
  if (bs == 0) {
    auto b = round_to(random_values(K * N, seed + 1), DType::f16);  // ONNX [K, N]
    w = kernels::upload_matmul_weight(cx, "w", host_tensor(b, DType::f16, {K, N}));
    wt.resize(N * K);
    for (int64_t k = 0; k < K; k++)
      for (int64_t n = 0; n < N; n++) wt[n * K + k] = b[k * N + n];
  } else {
    w = random_nbits(cx, K, N, bs, with_zp, seed + 1, &wt);
  }
  DeviceBuffer ab = cx.memory().allocate("a", M * K * 2), bb = cx.memory().allocate("bias", N * 2),
               cb = cx.memory().allocate("c", M * N * 2);
  TensorView av = ab.view(DType::f16, {M, K}), bv = bb.view(DType::f16, {N}), c = cb.view(DType::f16, {M, N});
  cx.transfers().upload_tensor(av, host_tensor(a, DType::f16, {M, K}));
  cx.transfers().upload_tensor(bv, host_tensor(bias, DType::f16, {N}));
  ASSERT_TRUE(kernels::matmul_coop_applies(cx, av, w)) << what;
  CommandRecorder rec(cx);
  rec.begin();
  kernels::matmul(rec, av, w, with_bias ? &bv : nullptr, c);  // takes the cooperative-matrix path
  rec.end();
  rec.run();
  std::vector<double> want(M * N);
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < N; n++) {
      double s = with_bias ? bias[n] : 0.0;
      for (int64_t k = 0; k < K; k++) s += (double)a[m * K + k] * wt[n * K + k];
      want[m * N + n] = s;
    }
  // fp16 inputs, fp32 accumulation, fp16 output (2^-11 relative; with a bias the product is rounded to fp16 before
  // the bias is added, as the unfused MatMul + Add round); int4 weights are rounded to fp16 when dequantized into
  // shared memory (|w| <= 1.6, half an ulp ~4e-4 per product, random signs: ~4e-4 sqrt(K/3)).
  Tensor got = cx.transfers().download_tensor(c);
  std::vector<float> g(M * N);
  for (int64_t i = 0; i < M * N; i++) g[i] = f16_to_f32(got.data<uint16_t>()[i]);
  expect_close(g, want, 2e-3, 2e-3 * std::sqrt((double)K), what);
}

TEST_P(VulkanMatMulCoopTest, MatchesReference) {
  if (!ctx().coopmat_f16()) GTEST_SKIP() << "device has no fp16 cooperative-matrix kernels: " << ctx().info().name;
  check_case(ctx(), GetParam(), "cooperative-matrix matmul");
}

// Every tile shape the tuning table may name (Tuning::CoopTile: subgroups, fragments, K step, shared buffers), as the
// big tile at any size, on fp16 and int4 weights with K, M and N tails.
class VulkanMatMulCoopTiles : public VulkanTest {};

TEST_F(VulkanMatMulCoopTiles, EveryTileShapeMatchesTheReference) {
  if (!ctx().coopmat_f16()) GTEST_SKIP() << "device has no fp16 cooperative-matrix kernels: " << ctx().info().name;
  const Tuning::CoopTile tiles[] = {{2, 4, 4, 2, 64, 1}, {2, 2, 4, 4, 64, 1}, {2, 2, 4, 4, 32, 2},
                                    {2, 4, 4, 2, 32, 2}, {2, 4, 4, 4, 32, 1}, {4, 2, 4, 4, 32, 1},
                                    {4, 2, 2, 4, 32, 2}, {2, 2, 2, 2, 32, 2}, {2, 2, 2, 2, 64, 1},
                                    {4, 2, 4, 2, 64, 1}, {4, 2, 2, 2, 64, 1}};
  const CoopCase cases[] = {{200, 264, 300, 0, false, true}, {130, 520, 260, 32, true, false},
                            {257, 1024, 129, 0, false, false}, {64, 96, 72, 16, false, true}};
  for (const Tuning::CoopTile& t : tiles) {
    ContextOptions o = options_like(ctx());
    o.tuning->coop_big_tile = t;
    o.tuning->coop_big_tile_q4 = t;
    o.tuning->coop_big_tile_min_groups = 1;  // the big tile at every size
    Context cx(o);
    for (const CoopCase& cc : cases) {
      std::string what = "tile " + std::to_string(t.warps_m) + "," + std::to_string(t.warps_n) + "," +
                         std::to_string(t.frags_m) + "," + std::to_string(t.frags_n) + "," + std::to_string(t.k_step) +
                         "," + std::to_string(t.stages) + " M " + std::to_string(cc.M) + " K " + std::to_string(cc.K) +
                         " N " + std::to_string(cc.N) + " block " + std::to_string(cc.block);
      check_case(cx, cc, what.c_str());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, VulkanMatMulCoopTest,
                         ::testing::Values(CoopCase{3, 64, 40, 0, false, true},     // M, N below a tile
                                           CoopCase{64, 128, 64, 0, false, false},  // exactly one small tile
                                           CoopCase{65, 264, 130, 0, false, true},  // K not a multiple of 32
                                           CoopCase{200, 1000, 72, 0, false, false},
                                           CoopCase{1024, 72, 2048, 0, false, true},   // 128x128 tiles
                                           CoopCase{3, 64, 40, 32, false, false},
                                           CoopCase{70, 200, 90, 16, true, true},     // K tail inside a block
                                           CoopCase{129, 512, 260, 64, true, false},
                                           CoopCase{1024, 96, 2048, 32, true, true},  // 128x128 tiles, int4
                                           CoopCase{1030, 128, 2050, 32, false, false}));

}  // namespace
}  // namespace ogx::vk::test
