// Recording and replay: barriers only at read-after-write / write-after-read hazards, one vkQueueSubmit per replayed
// step, a greedy decode loop whose sampled token feeds the next step on the device, and an attention step replayed
// with new sequence lengths written to a host-visible buffer.
#include "providers/vulkan/kernels/attention.h"
#include "providers/vulkan/kernels/elementwise.h"
#include "providers/vulkan/kernels/matmul.h"
#include "providers/vulkan/kernels/norm.h"
#include "providers/vulkan/kernels/sampling.h"
#include "providers/vulkan/tests/attention_reference.h"
#include "providers/vulkan/tests/vk_test_util.h"

namespace ogx::vk::test {
namespace {

class VulkanReplayTest : public VulkanTest {};

TEST_F(VulkanReplayTest, BarriersOnlyAtHazards) {
  int64_t K = 32, N = 16;
  auto w = kernels::upload_matmul_weight(ctx(), "w", host_tensor(random_values(K * N, 1), DType::f32, {K, N}));
  TensorView x = upload(random_values(K, 2), DType::f32, {1, K});
  TensorView y1 = empty(DType::f32, {1, N}), y2 = empty(DType::f32, {1, N}), x2 = empty(DType::f32, {1, K});
  TensorView y3 = empty(DType::f32, {1, N});
  CommandRecorder rec(ctx());
  rec.begin();                                                   // barrier 1 (leading)
  kernels::matmul(rec, x, w, nullptr, y1);                       // reads x
  kernels::matmul(rec, x, w, nullptr, y2);                       // independent
  kernels::unary(rec, kernels::UnaryOp::neg, x, x2);             // independent
  EXPECT_EQ(rec.stats().barriers, 1u);
  kernels::binary(rec, kernels::BinaryOp::mul, x2, x2, x);       // writes x, read above: WAR -> barrier 2
  EXPECT_EQ(rec.stats().barriers, 2u);
  kernels::binary(rec, kernels::BinaryOp::add, y1, y2, y3);      // y1/y2 written before barrier 2: none
  EXPECT_EQ(rec.stats().barriers, 2u);
  kernels::unary(rec, kernels::UnaryOp::neg, y3, y1);            // reads y3 (RAW) -> barrier 3
  EXPECT_EQ(rec.stats().barriers, 3u);
  rec.end();                                                     // barrier 4 (trailing)
  EXPECT_EQ(rec.stats().dispatches, 6u);
  EXPECT_EQ(rec.stats().barriers, 4u);
  rec.run();
}

// A greedy decode loop on the device: ids -> Gather -> RMSNorm -> MatMul -> argmax -> ids, recorded once.
TEST_F(VulkanReplayTest, GreedyLoopReplaysWithOneSubmitPerStep) {
  int64_t V = 96, D = 40, steps = 8;
  auto emb = random_values(V * D, 3), gamma = random_values(D, 4, 0.5f, 1.5f), head = random_values(D * V, 5);
  TensorView table = upload(emb, DType::f32, {V, D}), g = upload(gamma, DType::f32, {D});
  auto w = kernels::upload_matmul_weight(ctx(), "lm_head", host_tensor(head, DType::f32, {D, V}));
  TensorView ids = upload_i64({7}, {1, 1});
  TensorView h = empty(DType::f32, {1, 1, D}), hn = empty(DType::f32, {1, 1, D}), logits = empty(DType::f32, {1, V});
  CommandRecorder rec(ctx());
  rec.begin();
  kernels::gather_rows(rec, table, ids, h);
  kernels::rms_norm(rec, h, g, 1e-6f, hn);
  kernels::matmul(rec, hn, w, nullptr, logits);
  kernels::sample_tokens(rec, {}, logits, ids, ids);
  rec.end();
  EXPECT_EQ(rec.stats().dispatches, 4u);
  EXPECT_EQ(rec.stats().barriers, 5u);  // leading, three read-after-write, trailing
  uint64_t submits_before = ctx().submit_count();
  std::vector<int64_t> got;
  for (int64_t s = 0; s < steps; s++) {
    rec.run();
    Tensor t = ctx().transfers().download_tensor(ids);
    got.push_back(t.data<int64_t>()[0]);
  }
  EXPECT_EQ(rec.stats().submits, (uint64_t)steps);
  EXPECT_EQ(ctx().submit_count() - submits_before, (uint64_t)(2 * steps));  // one step + one readback each
  std::vector<int64_t> want;
  int64_t id = 7;
  for (int64_t s = 0; s < steps; s++) {
    double ss = 0;
    for (int64_t d = 0; d < D; d++) ss += (double)emb[id * D + d] * emb[id * D + d];
    double inv = 1 / std::sqrt(ss / D + 1e-6);
    int64_t best = 0;
    double best_v = -INFINITY;
    for (int64_t n = 0; n < V; n++) {
      double acc = 0;
      for (int64_t d = 0; d < D; d++) acc += emb[id * D + d] * inv * gamma[d] * head[d * V + n];
      if (acc > best_v) best_v = acc, best = n;
    }
    want.push_back(id = best);
  }
  EXPECT_EQ(got, want);
}

// One recorded attention decode step replayed for several tokens; only host-visible buffers change.
TEST_F(VulkanReplayTest, AttentionStepReplaysWithNewLengths) {
  int64_t B = 1, Hq = 4, Hkv = 2, D = 32, max_seq = 40, past = 9, steps = 4;
  GqaReference r{B, 1, Hq, Hkv, D, max_seq, 1.0f / std::sqrt((float)D), 0, -1, true, false, {}, {}};
  rope_caches(max_seq, D, r.cos_c, r.sin_c);
  auto kc = random_values(B * Hkv * max_seq * D, 20), vc = random_values(B * Hkv * max_seq * D, 21);
  TensorView kcv = upload(kc, DType::f32, {B, Hkv, max_seq, D}), vcv = upload(vc, DType::f32, {B, Hkv, max_seq, D});
  TensorView cosv = upload(r.cos_c, DType::f32, {max_seq, D / 2}), sinv = upload(r.sin_c, DType::f32, {max_seq, D / 2});
  HostVisibleBuffer step(ctx().memory(), "step inputs", 4096);
  int64_t qn = Hq * D, kn = Hkv * D;
  kernels::GqaTensors t;
  t.query = step.view(DType::f32, {B, 1, qn});  // q | k | v | seqlens | total, one buffer
  TensorView kv = t.query, vv = t.query;
  kv.mem = step.slice().sub(qn * 4, kn * 4), kv.shape = {B, 1, kn};
  vv.mem = step.slice().sub((qn + kn) * 4, kn * 4), vv.shape = {B, 1, kn};
  t.key = &kv, t.value = &vv;
  t.seqlens_k = {step.slice().sub((qn + 2 * kn) * 4, 4), DType::i32, {B}};
  t.total_sequence_length = {step.slice().sub((qn + 2 * kn + 1) * 4, 4), DType::i32, {1}};
  t.k_cache = kcv, t.v_cache = vcv, t.cos_cache = &cosv, t.sin_cache = &sinv;
  DeviceBuffer kv_table;
  t.pages = kernels::contiguous_kv_pages(ctx(), kcv, vcv, kv_table);
  t.output = empty(DType::f32, {B, 1, qn});
  kernels::GqaParams p;
  p.num_heads = Hq, p.kv_num_heads = Hkv, p.do_rotary = true;
  auto ws = kernels::make_gqa_workspace(ctx(), B, 1, Hq, D, max_seq);
  CommandRecorder rec(ctx());
  rec.begin();
  kernels::group_query_attention(rec, p, t, ws);
  rec.end();
  for (int64_t s = 0; s < steps; s++) {
    auto q = random_values(qn, 30 + s), k = random_values(kn, 40 + s), v = random_values(kn, 50 + s);
    int32_t lens[2] = {(int32_t)(past + s), (int32_t)(past + s + 1)};  // seqlens_k, total
    step.write(q.data(), qn * 4, 0);
    step.write(k.data(), kn * 4, qn * 4);
    step.write(v.data(), kn * 4, (qn + kn) * 4);
    step.write(lens, 8, (qn + 2 * kn) * 4);
    rec.run();
    auto want = gqa_reference(r, q, k, v, kc, vc, {lens[0]}, lens[1], [](float x) { return x; });
    expect_close(download(t.output), want, 1e-4, 1e-5, "replayed attention step");
  }
}

}  // namespace
}  // namespace ogx::vk::test
