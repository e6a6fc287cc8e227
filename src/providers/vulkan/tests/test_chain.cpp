// Dispatch chaining (CommandRecorder::set_chaining, shaders/chain.glsl): three decode layers — norm + packed QKV
// projection, one-token attention over a filled cache, o projection, a plain (non-chainable) residual add, norm +
// gate/up SiLU, down projection — recorded with barriers and with chaining must give bit-identical outputs and
// caches (the same kernels in the same order; only what orders them differs), on every replay. The chained
// recording must replace barriers (fewer barriers, chained dispatches counted) and keep one where a plain dispatch
// reads a chained one's output. On lavapipe, which runs dispatches one at a time, this checks the recorder's
// bookkeeping and the kernels' wait/signal paths; on a GPU that overlaps dispatches it also checks the ordering.
#include <random>

#include "providers/vulkan/kernels/attention.h"
#include "providers/vulkan/kernels/elementwise.h"
#include "providers/vulkan/kernels/matmul.h"
#include "providers/vulkan/tests/vk_test_util.h"

namespace ogx::vk::test {
namespace {

class VulkanChainTest : public VulkanTest, public ::testing::WithParamInterface<DType> {};

constexpr int64_t kHq = 8, kHkv = 2, kD = 32, kHidden = kHq * kD, kInter = 160, kCap = 64, kPast = 37, kLayers = 3;

struct Layer {
  kernels::MatMulWeight qkv, o, gate_up, down;
  TensorView gamma1, gamma2;
  TensorView k_cache, v_cache;
};

TEST_P(VulkanChainTest, ChainedLayersMatchBarrierOrder) {
  DType dt = GetParam();
  auto weight = [&](int64_t K, int64_t N, uint32_t seed) {
    float r = 1.0f / std::sqrt((float)K);
    return kernels::upload_matmul_weight(ctx(), "w", host_tensor(round_to(random_values(K * N, seed, -r, r), dt), dt, {K, N}));
  };
  std::vector<Layer> layers(kLayers);
  std::vector<std::vector<float>> cache_init;
  for (int64_t l = 0; l < kLayers; l++) {
    Layer& L = layers[l];
    uint32_t s = 100 + (uint32_t)l * 10;
    L.qkv = weight(kHidden, (kHq + 2 * kHkv) * kD, s);
    L.o = weight(kHidden, kHidden, s + 1);
    L.gate_up = weight(kHidden, 2 * kInter, s + 2);
    L.down = weight(kInter, kHidden, s + 3);
    L.gamma1 = upload(random_values(kHidden, s + 4, 0.5f, 1.5f), dt, {kHidden});
    L.gamma2 = upload(random_values(kHidden, s + 5, 0.5f, 1.5f), dt, {kHidden});
    cache_init.push_back(round_to(random_values(kHkv * kCap * kD, s + 6), dt));
    cache_init.push_back(round_to(random_values(kHkv * kCap * kD, s + 7), dt));
    L.k_cache = upload(cache_init[2 * l], dt, {1, kHkv, kCap, kD});
    L.v_cache = upload(cache_init[2 * l + 1], dt, {1, kHkv, kCap, kD});
  }
  TensorView seqlens = upload_i32({(int32_t)kPast}, {1}), total = upload_i32({(int32_t)kPast + 1}, {1});
  TensorView x0 = upload(random_values(kHidden, 7, -2.0f, 2.0f), dt, {1, kHidden});
  TensorView h = empty(dt, {1, kHidden}), r = empty(dt, {1, kHidden}), t = empty(dt, {1, kHidden}), qkv = empty(dt, {1, 1, (kHq + 2 * kHkv) * kD});
  TensorView attn = empty(dt, {1, 1, kHidden}), o = empty(dt, {1, kHidden}), y = empty(dt, {1, kInter});
  kernels::GqaWorkspace ws = kernels::make_gqa_workspace(ctx(), 1, 1, kHq, kD, kCap);
  kernels::GqaParams gp;
  gp.num_heads = kHq, gp.kv_num_heads = kHkv;

  auto record = [&](CommandRecorder& rec) {
    rec.begin();
    for (int64_t l = 0; l < kLayers; l++) {
      Layer& L = layers[l];
      const TensorView& in = l == 0 ? x0 : h;
      kernels::NormPrologue n1{l == 0 ? nullptr : &r, nullptr, &L.gamma1, 1e-5f, nullptr};
      // Layer 0 normalizes x0; later layers x = h + r (the previous layer's residual, read two dispatches later).
      kernels::matvec_fused(rec, in, L.qkv, nullptr, &n1, false, qkv);
      kernels::GqaTensors at;
      at.query = qkv, at.k_cache = L.k_cache, at.v_cache = L.v_cache, at.seqlens_k = seqlens;
      at.total_sequence_length = total, at.output = attn;
      kernels::group_query_attention(rec, gp, at, ws);
      kernels::matmul(rec, TensorView{attn.mem, dt, {1, kHidden}}, L.o, nullptr, o);
      if (l == 0) {
        kernels::binary(rec, kernels::BinaryOp::add, o, x0, r);  // a plain dispatch between chained ones
        kernels::NormPrologue n2{nullptr, nullptr, &L.gamma2, 1e-5f, nullptr};
        kernels::matvec_fused(rec, r, L.gate_up, nullptr, &n2, true, y);
      } else {
        kernels::binary(rec, kernels::BinaryOp::add, h, r, t);  // t = h + r
        kernels::NormPrologue n2{&o, nullptr, &L.gamma2, 1e-5f, &r};
        kernels::matvec_fused(rec, t, L.gate_up, nullptr, &n2, true, y);  // r = t + o, written by the norm
      }
      kernels::matmul(rec, y, L.down, nullptr, h);
    }
    rec.end();
  };
  auto outputs = [&] {
    std::vector<std::vector<float>> out{download(h), download(r)};
    for (auto& L : layers) {
      out.push_back(download(L.k_cache));
      out.push_back(download(L.v_cache));
    }
    return out;
  };
  auto restore = [&] {
    for (int64_t l = 0; l < kLayers; l++) {
      Tensor k = host_tensor(cache_init[2 * l], dt, {kHkv * kCap * kD}), v = host_tensor(cache_init[2 * l + 1], dt, {kHkv * kCap * kD});
      ctx().transfers().upload(layers[l].k_cache.mem, 0, k.raw(), k.bytes());
      ctx().transfers().upload(layers[l].v_cache.mem, 0, v.raw(), v.bytes());
    }
  };

  CommandRecorder plain(ctx());
  plain.set_chaining(false);
  record(plain);
  plain.run();
  auto want = outputs();
  RecorderStats plain_stats = plain.stats();

  CommandRecorder chained(ctx());
  chained.set_chaining(true);
  record(chained);
  RecorderStats chained_stats = chained.stats();
  EXPECT_EQ(chained_stats.dispatches, plain_stats.dispatches);
  EXPECT_LT(chained_stats.barriers, plain_stats.barriers);
  EXPECT_GT(chained_stats.chained, 0u);
  for (int replay = 0; replay < 3; replay++) {
    restore();
    chained.run();
    auto got = outputs();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); i++)
      for (size_t j = 0; j < want[i].size(); j++)
        ASSERT_EQ(got[i][j], want[i][j]) << "replay " << replay << ", output " << i << ", element " << j;
  }
}

INSTANTIATE_TEST_SUITE_P(DTypes, VulkanChainTest, ::testing::Values(DType::f32, DType::f16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

}  // namespace
}  // namespace ogx::vk::test
