// Chained dispatches (command_recorder.h, shaders/chain.glsl): a decode-layer-like sequence of dependent projections
// recorded with chaining gives the same bits as with barriers (the kernels are the same; only how they wait
// differs), records no barrier between chained dispatches, and still takes one where a plain dispatch is involved; a
// chained wait that gave up is an error naming the tuning option, and the context stays usable.
#include <cstring>

#include "providers/vulkan/kernels/elementwise.h"
#include "providers/vulkan/kernels/matmul.h"
#include "providers/vulkan/tests/vk_test_util.h"

namespace ogx::vk::test {
namespace {

class VulkanChainTest : public VulkanTest {
 protected:
  std::unique_ptr<Context> context_with_chain(uint32_t on) {
    ContextOptions o;
    o.provider = ctx().options();
    o.provider.hardware_type = ctx().info().type == DeviceType::cpu ? HardwareType::cpu : HardwareType::gpu;
    o.instance.validation = true;
    o.tuning = ctx().tuning();
    o.tuning->chain_dispatches = on;
    o.staging_bytes = 4 << 20;
    o.readback_bytes = 1 << 20;
    o.block_bytes = 16 << 20;
    return std::make_unique<Context>(o);
  }
};

kernels::MatMulWeight int4_weight(Context& c, int64_t K, int64_t N, uint32_t seed) {
  const int64_t bs = 32, nb = K / bs;
  Tensor packed(DType::u8, {N, nb, bs / 2});
  std::mt19937 rng(seed);
  for (int64_t i = 0; i < packed.numel(); i++) packed.data<uint8_t>()[i] = (uint8_t)(rng() & 0xff);
  auto scales = round_to(random_values(N * nb, seed + 1, 0.01f, 0.1f), DType::f16);
  return kernels::upload_matmul_nbits(c, "q", packed, host_tensor(scales, DType::f16, {N * nb}), nullptr, K, N, bs);
}

struct LayerRun {
  std::vector<float> out, residual;
  RecorderStats stats;
};

// x -> norm + q (fp16) -> o (int4) -> norm + gate/up SiLU (int4) -> down (fp16) -> add (a plain dispatch) -> norm +
// projection (int4) -> y, twice over (the second round reads the first's output: a dependence across the plain
// dispatch), with an independent projection of x between.
LayerRun run_layer(Context& c, int64_t H, int64_t I) {
  std::vector<DeviceBuffer> keep;
  auto up = [&](const std::vector<float>& v, Shape s) { return upload_to(c, keep, v, DType::f16, s); };
  auto zeros = [&](int64_t n) { return up(std::vector<float>(n, 0.0f), {1, n}); };
  TensorView x = up(random_values(H, 1), {1, H}), gamma = up(random_values(H, 2, 0.5f, 1.5f), {H});
  TensorView q = zeros(H), o = zeros(H), gu = zeros(I), d = zeros(H), s = zeros(H), y = zeros(H), side = zeros(H);
  TensorView residual = zeros(H);
  auto wq = kernels::upload_matmul_weight(c, "wq", host_tensor(random_values(H * H, 3, -0.1f, 0.1f), DType::f16, {H, H}));
  auto wo = int4_weight(c, H, H, 4);
  auto wgu = int4_weight(c, H, 2 * I, 5);
  auto wd = kernels::upload_matmul_weight(c, "wd", host_tensor(random_values(I * H, 6, -0.1f, 0.1f), DType::f16, {I, H}));
  auto wy = int4_weight(c, H, H, 7);
  CommandRecorder rec(c);
  rec.begin();
  for (int round = 0; round < 2; round++) {
    const TensorView& in = round == 0 ? x : y;
    kernels::NormPrologue n1{nullptr, nullptr, &gamma, 1e-5f, nullptr};
    kernels::matvec_fused(rec, in, wq, nullptr, &n1, false, q);
    kernels::matmul(rec, x, wq, nullptr, side);  // independent of q
    kernels::matmul(rec, q, wo, nullptr, o);
    kernels::NormPrologue n2{&o, nullptr, &gamma, 1e-5f, &residual};
    kernels::matvec_fused(rec, in, wgu, nullptr, &n2, true, gu);
    kernels::matmul(rec, gu, wd, nullptr, d);
    kernels::binary(rec, kernels::BinaryOp::add, d, side, s);  // plain
    kernels::NormPrologue n3{nullptr, nullptr, &gamma, 1e-5f, nullptr};
    kernels::matvec_fused(rec, s, wy, nullptr, &n3, false, y);
  }
  rec.end();
  rec.run();
  rec.run();  // a replay starts counting afresh
  return {download_from(c, y), download_from(c, residual), rec.stats()};
}

TEST_F(VulkanChainTest, ChainedLayerGivesTheBitsOfBarriers) {
  auto on = context_with_chain(1);
  if (!on->chaining())
    GTEST_SKIP() << ctx().info().name << " cannot chain dispatches (no host-visible device-local memory)";
  auto off = context_with_chain(0);
  ASSERT_FALSE(off->chaining());
  const int64_t H = 256, I = 512;
  LayerRun a = run_layer(*on, H, I), b = run_layer(*off, H, I);
  ASSERT_EQ(a.out.size(), b.out.size());
  EXPECT_EQ(0, std::memcmp(a.out.data(), b.out.data(), a.out.size() * 4)) << "chained output differs";
  EXPECT_EQ(0, std::memcmp(a.residual.data(), b.residual.data(), a.residual.size() * 4)) << "residual differs";
  double norm = 0;
  for (float v : a.out) norm += std::fabs(v);
  EXPECT_GT(norm, 0.0) << "all-zero output proves nothing";
  EXPECT_EQ(a.stats.dispatches, b.stats.dispatches);
  EXPECT_EQ(a.stats.chained, 12u);      // every projection
  EXPECT_EQ(b.stats.chained, 0u);
  // Waits: o, gate/up and down of round 0; q (reads round 0's y), o, gate/up and down of round 1.
  EXPECT_EQ(a.stats.chain_waits, 7u);
  // With barriers: leading, one before each dependent dispatch (5 in round 0, 6 in round 1), trailing. Chained:
  // leading, the two next to each plain add (before it, and before the projection reading its output), trailing.
  EXPECT_EQ(b.stats.barriers, 13u);
  EXPECT_EQ(a.stats.barriers, 6u);
}

TEST_F(VulkanChainTest, AWaitThatGaveUpIsAnErrorAndTheContextStaysUsable) {
  auto on = context_with_chain(1);
  if (!on->chaining()) GTEST_SKIP() << ctx().info().name << " cannot chain dispatches";
  HostVisibleBuffer three(on->memory(), "timeouts", 4);
  const uint32_t timeouts = 3;
  three.write(&timeouts, 4);
  CommandRecorder rec(*on);
  rec.begin();
  rec.copy(three.slice(), on->chain_counters().sub(4, 4));  // as if 3 workgroups had given up
  rec.end();
  try {
    rec.run();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tuning=chain_dispatches=0"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(run_layer(*on, 64, 128));
}

}  // namespace
}  // namespace ogx::vk::test
