#include "providers/vulkan/bench/attention_bench.h"

#include <cstdio>

#include "common/half.h"
#include "providers/vulkan/kernels/attention.h"
#include "providers/vulkan/transfer.h"

namespace ogx::vk::bench {

// Per-call GPU time of one-token attention with packed QKV (B rows of kv_len cached positions each, Hkv 8, head size
// D, fp16, rotary), `n` calls in a row (each writes the KV cache the next reads: one barrier each, as layers in a
// step), cycling through enough layers' caches (>= 256 MiB in all, as a decode step's layers) that long caches stream
// from DRAM, not cache. Hq 32 (group 4) takes the one-dispatch kernel; Hq 128 (group 16) takes the two-dispatch
// split + combine path. GB/s: the key and value bytes a call reads over its time.
void bench_attention(Context& ctx, Timer& timer, int64_t Hq, int64_t D, int64_t B, int kv_len, int n) {
  const int64_t Hkv = 8, row = (Hq + 2 * Hkv) * D;
  const int64_t cap = ((int64_t)kv_len + 256) / 256 * 256;  // the block-table width of a recorded step
  const VkDeviceSize cache_bytes = (VkDeviceSize)(B * Hkv * cap * D * 2);
  const int layers = (int)std::clamp<VkDeviceSize>((256ull << 20) / (2 * cache_bytes), 1, (VkDeviceSize)n);
  std::vector<DeviceBuffer> keep;
  auto buf = [&](VkDeviceSize bytes) {
    keep.push_back(ctx.memory().allocate("attn", bytes));
    ctx.transfers().fill_zero(keep.back().slice());
    return keep.back().slice();
  };
  std::vector<uint16_t> qkv(B * row), cs(cap * D / 2);
  for (int64_t i = 0; i < B * row; i++) qkv[i] = f32_to_f16((float)((int)(hash(i) % 200) - 100) / 100.0f);
  for (auto& c : cs) c = f32_to_f16(0.5f);
  BufferSlice q = buf(B * row * 2), cosb = buf(cs.size() * 2);
  ctx.transfers().upload(q, 0, qkv.data(), B * row * 2);
  ctx.transfers().upload(cosb, 0, cs.data(), cs.size() * 2);
  std::vector<int32_t> lens(B + 1, kv_len - 1);
  lens[B] = kv_len;
  BufferSlice lb = buf((B + 1) * 4);
  ctx.transfers().upload(lb, 0, lens.data(), (B + 1) * 4);
  TensorView cosv{cosb, DType::f16, {cap, D / 2}};
  std::vector<kernels::GqaTensors> ts(layers);
  std::vector<DeviceBuffer> tables(layers);
  for (int l = 0; l < layers; l++) {
    kernels::GqaTensors& t = ts[l];
    t.query = TensorView{q, DType::f16, {B, 1, row}};
    t.k_cache = TensorView{buf(cache_bytes), DType::f16, {B, Hkv, cap, D}};
    t.v_cache = TensorView{buf(cache_bytes), DType::f16, {B, Hkv, cap, D}};
    t.pages = kernels::contiguous_kv_pages(ctx, t.k_cache, t.v_cache, tables[l]);
    t.seqlens_k = TensorView{lb.sub(0, B * 4), DType::i32, {B}};
    t.total_sequence_length = TensorView{lb.sub(B * 4, 4), DType::i32, {1}};
    t.cos_cache = &cosv, t.sin_cache = &cosv;
    t.output = TensorView{buf(B * Hq * D * 2), DType::f16, {B, 1, Hq * D}};
  }
  kernels::GqaParams gp;
  gp.num_heads = Hq, gp.kv_num_heads = Hkv, gp.do_rotary = true;
  auto ws = kernels::make_gqa_workspace(ctx, B, 1, Hq, D, cap);
  CommandRecorder rec(ctx);
  rec.begin();
  rec.write_timestamp(timer.pool(), 0);
  for (int i = 0; i < n; i++) kernels::group_query_attention(rec, gp, ts[i % layers], ws);
  rec.write_timestamp(timer.pool(), 1);
  rec.end();
  double us = timer.median_us(rec, 5) / n;
  double gbs = 2.0 * B * Hkv * kv_len * D * 2 / (us * 1e3);
  std::printf("| attention | B %2lld Hq %3lld Hkv 8 D %3lld kv %5d | %4d | %8.2f | %7.1f | %s, %llu dispatches, %d "
              "caches |\n", (long long)B, (long long)Hq, (long long)D, kv_len, n, us, gbs,
              kernels::describe_decode_attention(ctx, ws, B, Hq, Hkv, D, cap).c_str(),
              (unsigned long long)rec.stats().dispatches, layers);
  std::fflush(stdout);
}

// GPU time of the attention of a first prompt of S tokens (causal; Hq 32, Hkv 8, D 64, fp16 packed QKV, rotary —
// the 1B's layer): the rotation / cache write and the tiled prompt kernel (on the matrix units where the device has
// them). TFLOPS over the causal half: 2 matrix products x 2 flops x Hq x D x S^2 / 2.
static void bench_prompt_attention(Context& ctx, Timer& timer, int64_t S, int n) {
  const int64_t Hq = 32, Hkv = 8, D = 64, row = (Hq + 2 * Hkv) * D, cap = (S + 255) / 256 * 256;
  std::vector<DeviceBuffer> keep;
  auto buf = [&](VkDeviceSize bytes) {
    keep.push_back(ctx.memory().allocate("prompt attn", bytes));
    ctx.transfers().fill_zero(keep.back().slice());
    return keep.back().slice();
  };
  BufferSlice q = buf((VkDeviceSize)(S * row * 2)), cosb = buf((VkDeviceSize)(cap * D));
  ctx.transfers().upload_generated(q, (VkDeviceSize)(S * row * 2), [&](VkDeviceSize off, void* out, VkDeviceSize b) {
    auto* h = static_cast<uint16_t*>(out);
    for (VkDeviceSize i = 0; i < b / 2; i++) h[i] = f32_to_f16((float)((int)(hash(off / 2 + i) % 200) - 100) / 100.0f);
  });
  std::vector<uint16_t> cs(cap * D / 2, f32_to_f16(0.5f));
  ctx.transfers().upload(cosb, 0, cs.data(), cs.size() * 2);
  int32_t lens[2] = {(int32_t)S - 1, (int32_t)S};
  BufferSlice lb = buf(8);
  ctx.transfers().upload(lb, 0, lens, 8);
  TensorView cosv{cosb, DType::f16, {cap, D / 2}};
  kernels::GqaTensors t;
  t.query = TensorView{q, DType::f16, {1, S, row}};
  t.k_cache = TensorView{buf((VkDeviceSize)(Hkv * cap * D * 2)), DType::f16, {1, Hkv, cap, D}};
  t.v_cache = TensorView{buf((VkDeviceSize)(Hkv * cap * D * 2)), DType::f16, {1, Hkv, cap, D}};
  DeviceBuffer table;
  t.pages = kernels::contiguous_kv_pages(ctx, t.k_cache, t.v_cache, table);
  t.seqlens_k = TensorView{lb.sub(0, 4), DType::i32, {1}};
  t.total_sequence_length = TensorView{lb.sub(4, 4), DType::i32, {1}};
  t.cos_cache = &cosv, t.sin_cache = &cosv;
  t.output = TensorView{buf((VkDeviceSize)(S * Hq * D * 2)), DType::f16, {1, S, Hq * D}};
  kernels::GqaParams gp;
  gp.num_heads = Hq, gp.kv_num_heads = Hkv, gp.do_rotary = true;
  auto ws = kernels::make_gqa_workspace(ctx, 1, S, Hq, D, cap);
  CommandRecorder rec(ctx);
  rec.begin();
  rec.write_timestamp(timer.pool(), 0);
  for (int i = 0; i < n; i++) kernels::group_query_attention(rec, gp, t, ws);
  rec.write_timestamp(timer.pool(), 1);
  rec.end();
  double us = timer.median_us(rec, 3) / n;
  double tflops = 2.0 * Hq * D * (double)S * (double)S / (us * 1e6);
  std::printf("| prompt attention | Hq 32 Hkv 8 D 64 S %6lld | %3d | %10.1f | %6.2f | %.1f MiB workspace |\n",
              (long long)S, n, us, tflops, (double)(ws.q_rotated.size() + ws.partials.size()) / (1 << 20));
  std::fflush(stdout);
}

// --attention-only: one-token attention over long caches and prompt attention over long prompts.
void bench_long_attention(Context& ctx, Timer& timer, const std::vector<int>& kv_lens,
                          const std::vector<int>& prompt_lens, bool quick) {
  std::printf("\n| kernel | shape | n | us/call | KV GB/s | |\n|---|---|---|---|---|---|\n");
  for (int kv : kv_lens) {
    for (int64_t hq : {32, 128}) bench_attention(ctx, timer, hq, 64, 1, kv, quick ? 4 : 64);
    bench_attention(ctx, timer, 32, 128, 1, kv, quick ? 4 : 64);  // the 8B's heads
  }
  // Short caches, one row and a batch of 16 (a batched decode step), the 1B's and the 8B's heads.
  for (int kv : {192, 1024})
    for (int64_t D : {64, 128})
      for (int64_t B : {1, 16}) bench_attention(ctx, timer, 32, D, B, kv, quick ? 4 : 64);
  std::printf("\n| kernel | shape | n | us/call | TFLOPS | |\n|---|---|---|---|---|---|\n");
  for (int S : prompt_lens) bench_prompt_attention(ctx, timer, S, quick ? 1 : 4);
}

}  // namespace ogx::vk::bench
