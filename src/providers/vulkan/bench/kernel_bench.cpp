// ogx_vulkan_bench: bandwidth of the decode matvec kernels (fp16 and int4 weights) at Llama-3.2-1B shapes, and the
// cost of a dispatch and of a barrier inside a recorded sequence. GPU time comes from timestamps around a recorded
// batch of dispatches; weights are cycled through enough copies (>= 256 MiB) that they stream from DRAM, not cache.
//
//   ogx_vulkan_bench [--quick] [--device-type gpu|cpu] [--threads N] [--q4-threads N] [--rows N] [--q4-rows N]
//                    [--q4-unroll N] [--shape-8b] [--chain-only] [--int4-matvec-only] [--pipeline-stats]
//     --quick: small shapes and few repetitions (a smoke test on lavapipe)
//     --threads/--q4-threads/--rows: the tuning row with these matvec values replaced (experiments); --q4-rows N:
//     int4 outputs per workgroup of matvec_q4_wide.comp (0: matvec.comp), --q4-unroll its chunks per load;
//     --shape-8b: Llama-3.1-8B's matvec shapes
//     --chain-only: only the dependent-matvec chains and attention calls (latency as a decode step sees it)
//     --int4-matvec-only: only the int4 matvec table (tuning sweeps)
//     --pipeline-stats: at the end, the driver's statistics of every pipeline built (registers on NVIDIA)
//     --attn-threads N: threads of the one-dispatch decode attention; --attn-max-splits N: its most workgroups per
//     KV head (the tuning row's decode_group_max_splits)
//   ogx_vulkan_bench --attention-only [--kv-lens 2048,8192,32768] [--prompt-lens 2048,8192,32768] [--quick]
//     long context at the 1B's attention shape (Hkv 8, D 64, fp16): one-token attention over each cache length (us
//     per layer and the KV bytes read per second; Hq 128 the split + combine path) and prompt attention over each
//     prompt length (us per layer, TFLOPS of the causal half)
//   ogx_vulkan_bench --matmul-only [--m M] [--reps N] [--simt] [--matmul-tile 64|128] [--skinny-max-m N]
//                    [--skinny-rows N] [--skinny-unroll N] [--coop-max-m N] [--coop-threads N] [--coop-unroll N]
//                    [--coop-cols N] [--coop-direct 0|1] [--shape-8b] [--device-type gpu|cpu] [--quick]
//     prefill projections (kernels::matmul, M > 2) at the 1B Llama shapes, M = 512 rows by default, fp16 and int4
//     (block 32) weights: GPU us per call, TFLOPS and weight GB/s; --simt: the portable tiled kernel (matmul.comp)
//     even where a matrix-unit kernel applies (disable_metacommands, keeping the vendor tuning row); --matmul-tile
//     caps its output tile (the tuning row's matmul_tile); --quick: M 64 and one call per shape (lavapipe). M <= 16:
//     a batched decode step's projections (the skinny matmul up to the row's skinny_max_m; --skinny-max-m 1 sends
//     them to the tiled / matrix-unit path instead, --skinny-rows sets its weight rows per workgroup, --skinny-unroll
//     the most units of K a thread loads at once). --coop-*: the matrix-unit skinny kernel's tuning values (M <= 64:
//     coop_skinny_max_m / threads / unroll / cols); --coop-tile / --coop-small-tile WM,WN,FM,FN,BK,STAGES: the prompt
//     matmul's big (fp16 and int4) / small tile (Tuning::CoopTile), --coop-big-min N: its coop_big_tile_min_groups;
//     --shape-8b: Llama-3.1-8B's projection shapes instead of the 1B's
#include <algorithm>
#include <stdexcept>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/half.h"
#include "providers/vulkan/kernels/attention.h"
#include "providers/vulkan/kernels/elementwise.h"
#include "providers/vulkan/kernels/matmul.h"
#include "providers/vulkan/transfer.h"
#include "providers/vulkan/bench/attention_bench.h"
#include "providers/vulkan/bench/bench_util.h"

namespace ogx::vk {
namespace {

using bench::Shape2;
using bench::Timer;
using bench::hash;
using bench::weight_half;
using bench::bench_attention;
using bench::bench_long_attention;


kernels::MatMulWeight make_weight(Context& ctx, const Shape2& s, bool int4, uint64_t copy) {
  kernels::MatMulWeight w;
  w.dtype = DType::f16;
  w.K = s.K, w.N = s.N;
  w.int4 = int4;
  if (!int4) {
    w.data = ctx.memory().allocate(s.name, s.N * s.K * 2);
    ctx.transfers().upload_generated(w.data.slice(), s.N * s.K * 2, [&](VkDeviceSize off, void* out, VkDeviceSize n) {
      auto* h = static_cast<uint16_t*>(out);
      for (VkDeviceSize i = 0; i < n / 2; i++) h[i] = weight_half(copy, off / 2 + i);
    });
    return w;
  }
  w.block_size = 32, w.nblocks = s.K / 32;
  w.data = ctx.memory().allocate(s.name, s.N * s.K / 2);
  ctx.transfers().upload_generated(w.data.slice(), s.N * s.K / 2, [&](VkDeviceSize off, void* out, VkDeviceSize n) {
    auto* b = static_cast<uint8_t*>(out);
    for (VkDeviceSize i = 0; i < n; i++) b[i] = (uint8_t)hash(copy * 7919 + off + i);
  });
  w.scales = ctx.memory().allocate("scales", s.N * w.nblocks * 2);
  ctx.transfers().upload_generated(w.scales.slice(), s.N * w.nblocks * 2, [&](VkDeviceSize off, void* out, VkDeviceSize n) {
    auto* h = static_cast<uint16_t*>(out);
    for (VkDeviceSize i = 0; i < n / 2; i++) h[i] = f32_to_f16(0.01f + (hash(copy + 3 * (off / 2 + i)) % 100) * 1e-4f);
  });
  return w;
}

// n fp16 activations in [-1, 1], the same sequence for every shape.
std::vector<uint16_t> bench_activations(size_t n) {
  std::vector<uint16_t> x(n);
  for (size_t i = 0; i < n; i++) x[i] = f32_to_f16((float)((int)(hash(i + 99) % 2001) - 1000) / 1000.0f);
  return x;
}

// Host reference of output column n of copy 0 (fp16 weights or int4 blocks) for x.
double reference(const Shape2& s, bool int4, const std::vector<uint16_t>& x, int64_t n) {
  double acc = 0;
  for (int64_t k = 0; k < s.K; k++) {
    double wv;
    if (!int4) {
      wv = f16_to_f32(weight_half(0, (uint64_t)(n * s.K + k)));
    } else {
      uint64_t byte_index = (uint64_t)(n * s.K / 2 + k / 2);
      uint8_t byte = (uint8_t)hash(byte_index);
      int q = k % 2 == 0 ? byte & 15 : byte >> 4;
      uint64_t si = (uint64_t)(n * (s.K / 32) + k / 32);
      wv = (q - 8) * (double)f16_to_f32(f32_to_f16(0.01f + (hash(3 * si) % 100) * 1e-4f));
    }
    acc += wv * f16_to_f32(x[k]);
  }
  return acc;
}

void bench_matvec(Context& ctx, Timer& timer, const Shape2& s, bool int4, bool quick) {
  double bytes = int4 ? s.N * s.K / 2.0 + s.N * (s.K / 32) * 2.0 : s.N * s.K * 2.0;
  int copies = (int)std::clamp<double>(std::ceil((quick ? 8e6 : 256e6 * 1.05) / bytes), 1, 64);
  int reps = (int)std::clamp<double>(std::ceil((quick ? 16e6 : 2e9) / bytes), copies, 512);
  std::vector<kernels::MatMulWeight> w;
  for (int c = 0; c < copies; c++) w.push_back(make_weight(ctx, s, int4, (uint64_t)c));
  std::vector<uint16_t> xh = bench_activations((size_t)s.K);
  DeviceBuffer xb = ctx.memory().allocate("x", s.K * 2);
  ctx.transfers().upload(xb.slice(), 0, xh.data(), s.K * 2);
  DeviceBuffer ob = ctx.memory().allocate("y", (VkDeviceSize)reps * s.N * 2);
  TensorView x = xb.view(DType::f16, {1, s.K});
  CommandRecorder rec(ctx);
  rec.begin();
  rec.write_timestamp(timer.pool(), 0);
  for (int r = 0; r < reps; r++) {
    TensorView y{ob.slice().sub((VkDeviceSize)r * s.N * 2, s.N * 2), DType::f16, {1, s.N}};
    kernels::matmul(rec, x, w[r % copies], nullptr, y);
  }
  rec.write_timestamp(timer.pool(), 1);
  rec.end();
  double us = timer.median_us(rec, quick ? 2 : 5) / reps;
  std::vector<uint16_t> y(s.N);
  ctx.transfers().download(ob.slice(), 0, y.data(), s.N * 2);
  double worst = 0;
  for (int64_t n = 0; n < std::min<int64_t>(s.N, 64); n++) {
    double want = reference(s, int4, xh, n);
    worst = std::max(worst, std::fabs(f16_to_f32(y[n]) - want) / (std::fabs(want) + 0.05));
  }
  std::printf("| %-6s | %-16s | %8.2f | %9.1f | %6.1f%% | %4d x %3d | %.1e |\n", int4 ? "int4" : "fp16", s.name, us,
              bytes / us * 1e-3, bytes / us * 1e-3 / 4470.0 * 100.0, reps, copies, worst);
  std::fflush(stdout);
}

// Prefill projection: GPU time of kernels::matmul (the tiled path) for x [M, K] fp16 times the K x N weight (fp16 or
// int4 block 32), `reps` dispatches in one recorded batch; TFLOPS counts 2 M N K. Rows 0 and M - 1 of a few
// columns are checked against the host reference.
void bench_prefill(Context& ctx, Timer& timer, const Shape2& s, int64_t M, bool int4, int reps, int runs) {
  kernels::MatMulWeight w = make_weight(ctx, s, int4, 0);
  std::vector<uint16_t> xh = bench_activations((size_t)(M * s.K));
  DeviceBuffer xb = ctx.memory().allocate("x", M * s.K * 2), ob = ctx.memory().allocate("y", M * s.N * 2);
  ctx.transfers().upload(xb.slice(), 0, xh.data(), M * s.K * 2);
  TensorView x = xb.view(DType::f16, {M, s.K}), y = ob.view(DType::f16, {M, s.N});
  CommandRecorder rec(ctx);
  rec.begin();
  rec.write_timestamp(timer.pool(), 0);
  for (int r = 0; r < reps; r++) kernels::matmul(rec, x, w, nullptr, y);  // same output: a barrier between each
  rec.write_timestamp(timer.pool(), 1);
  rec.end();
  double us = timer.median_us(rec, runs) / reps;
  std::vector<uint16_t> out((size_t)(M * s.N));
  ctx.transfers().download(ob.slice(), 0, out.data(), M * s.N * 2);
  double worst = 0;
  for (int64_t m : {(int64_t)0, M - 1}) {
    std::vector<uint16_t> row(xh.begin() + m * s.K, xh.begin() + (m + 1) * s.K);
    for (int64_t n : {(int64_t)0, (int64_t)1, s.N / 2 + 3, s.N - 1}) {
      double want = reference(s, int4, row, n);
      worst = std::max(worst, std::fabs(f16_to_f32(out[m * s.N + n]) - want) / (std::fabs(want) + 0.05));
    }
  }
  double bytes = int4 ? s.N * s.K / 2.0 + s.N * (s.K / 32) * 2.0 : s.N * s.K * 2.0;
  std::printf("| %-6s | %4lld | %-18s | %10.1f | %8.4f | %7.1f | %d x %d | %.1e |\n", int4 ? "int4" : "fp16",
              (long long)M, s.name, us, 2.0 * M * s.N * s.K / us * 1e-6, bytes / us * 1e-3, reps, runs, worst);
  std::fflush(stdout);
}

// Per-dispatch GPU time of `n` tiny dispatches, independent (no barriers) or chained (a barrier before each);
// `alternate` switches between two pipelines (add, then sigmoid) as a model's step does.
void bench_dispatch(Context& ctx, Timer& timer, bool chained, int n, bool alternate = false) {
  DeviceBuffer buf = ctx.memory().allocate("tiny", (VkDeviceSize)(n + 1) * 256);
  ctx.transfers().fill_zero(buf.slice());
  auto row = [&](int i) { return TensorView{buf.slice().sub((VkDeviceSize)i * 256, 256), DType::f32, {64}}; };
  CommandRecorder rec(ctx);
  auto t0 = std::chrono::steady_clock::now();
  rec.begin();
  rec.write_timestamp(timer.pool(), 0);
  for (int i = 1; i <= n; i++) {
    if (alternate && i % 2 == 0) kernels::unary(rec, kernels::UnaryOp::sigmoid, chained ? row(i - 1) : row(0), row(i));
    else kernels::binary(rec, kernels::BinaryOp::add, chained ? row(i - 1) : row(0), row(0), row(i));
  }
  rec.write_timestamp(timer.pool(), 1);
  rec.end();
  double record_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  double us = timer.median_us(rec, 5);
  auto h0 = std::chrono::steady_clock::now();
  int replays = 20;
  for (int i = 0; i < replays; i++) rec.run();
  double replay_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - h0).count() / replays;
  std::printf("| %-11s | %6d | %6llu | %8.3f | %8.3f | %9.1f |\n",
              alternate ? (chained ? "chained 2pl" : "indep. 2pl") : (chained ? "chained" : "independent"), n,
              (unsigned long long)rec.stats().barriers, us / n, record_us / n, replay_us);
}

// The weights a chain cycles through: copies of s (with `pair`, odd copies N x K), >= 256 MB in all (2..32 copies).
std::vector<kernels::MatMulWeight> chain_weights(Context& ctx, const Shape2& s, bool pair, bool int4) {
  Shape2 back{"back", s.N, s.K};
  double bytes_fwd = int4 ? s.N * s.K * (0.5 + 2.0 / 32) : s.N * s.K * 2.0;
  int copies = (int)std::clamp<double>(std::ceil(256e6 / bytes_fwd), 2, 32);
  std::vector<kernels::MatMulWeight> w;
  for (int c = 0; c < copies; c++) w.push_back(make_weight(ctx, (pair && c % 2) ? back : s, int4, (uint64_t)c));
  return w;
}

// Per-matvec GPU time of a chain of `n` dependent matvecs (each reads the previous output: one barrier each), as
// in a decode step, against the same matvecs' throughput above. `pair` alternates K x N and N x K (up, then down);
// weights cycle through copies so they stream from DRAM.
void bench_chain(Context& ctx, Timer& timer, const Shape2& s, bool pair, bool int4, int n) {
  std::vector<kernels::MatMulWeight> w = chain_weights(ctx, s, pair, int4);
  const size_t copies = w.size();
  int64_t width = std::max(s.K, s.N);
  DeviceBuffer a = ctx.memory().allocate("chain a", width * 2), b = ctx.memory().allocate("chain b", width * 2);
  std::vector<uint16_t> xh(width, f32_to_f16(0.01f));
  ctx.transfers().upload(a.slice(), 0, xh.data(), width * 2);
  ctx.transfers().upload(b.slice(), 0, xh.data(), width * 2);
  CommandRecorder rec(ctx);
  rec.begin();
  rec.write_timestamp(timer.pool(), 0);
  for (int i = 0; i < n; i++) {
    const kernels::MatMulWeight& wi = w[i % copies];
    const DeviceBuffer& in = i % 2 ? b : a;
    const DeviceBuffer& out = i % 2 ? a : b;
    TensorView x{in.slice().sub(0, wi.K * 2), DType::f16, {1, wi.K}}, y{out.slice().sub(0, wi.N * 2), DType::f16, {1, wi.N}};
    kernels::matmul(rec, x, wi, nullptr, y);
  }
  rec.write_timestamp(timer.pool(), 1);
  rec.end();
  double us = timer.median_us(rec, 5) / n;
  std::printf("| %-6s | %-22s | %4d | %8.2f |\n", int4 ? "int4" : "fp16", pair ? (std::string(s.name) + " <-> back").c_str() : s.name,
              n, us);
  std::fflush(stdout);
}

// The decode step's norm-fused int4 projections as a chain: `n` dependent matvec_fused calls with a
// SkipSimplifiedLayerNorm prologue (skip, gamma, residual written) and, with `silu`, the gate/up SiLU epilogue (the
// q/k/v and gate/up projections of a layer; y feeds the next call).
void bench_chain_norm(Context& ctx, Timer& timer, const Shape2& s, bool silu, int n) {
  std::vector<kernels::MatMulWeight> w = chain_weights(ctx, s, false, true);
  const size_t copies = w.size();
  int64_t width = std::max(s.K, s.N);
  std::vector<DeviceBuffer> bufs;
  std::vector<uint16_t> xh(width, f32_to_f16(0.01f));
  for (int i = 0; i < 5; i++) {  // x / y ping-pong, skip, gamma, residual
    bufs.push_back(ctx.memory().allocate("chain norm", width * 2));
    ctx.transfers().upload(bufs.back().slice(), 0, xh.data(), width * 2);
  }
  auto view = [&](int i, int64_t len) { return TensorView{bufs[i].slice().sub(0, len * 2), DType::f16, {1, len}}; };
  TensorView skip = view(2, s.K), gamma = view(3, s.K), residual = view(4, s.K);
  CommandRecorder rec(ctx);
  rec.begin();
  rec.write_timestamp(timer.pool(), 0);
  for (int i = 0; i < n; i++) {
    TensorView x = view(i % 2, s.K), y = view(1 - i % 2, silu ? s.N / 2 : s.N);
    kernels::NormPrologue norm{&skip, nullptr, &gamma, 1e-5f, &residual};
    kernels::matvec_fused(rec, x, w[i % copies], nullptr, &norm, silu, y);
  }
  rec.write_timestamp(timer.pool(), 1);
  rec.end();
  double us = timer.median_us(rec, 5) / n;
  std::printf("| %-6s | %-22s | %4d | %8.2f |\n", "int4", (std::string(s.name) + (silu ? " norm+silu" : " norm")).c_str(),
              n, us);
  std::fflush(stdout);
}

std::vector<int> int_list(const std::string& s) {
  std::vector<int> v;
  size_t at = 0;
  while (at < s.size()) {
    size_t comma = s.find(',', at);
    v.push_back(std::stoi(s.substr(at, comma == std::string::npos ? std::string::npos : comma - at)));
    at = comma == std::string::npos ? s.size() : comma + 1;
  }
  return v;
}

int run(int argc, char** argv) {
  bool quick = false;
  std::string type = "gpu";
  uint32_t q4_threads = 0, rows = 0, threads = 0, attn_threads = 0;
  bool chain_only = false, matmul_only = false, simt = false, int4_only = false;
  int64_t mm_rows = 0;
  int mm_reps = 0;
  uint32_t mm_tile = 0, skinny_max_m = 0, skinny_rows = 0, skinny_unroll = 0, attn_splits = 0;
  uint32_t coop_max_m = 0, coop_threads = 0, coop_unroll = 0, coop_cols = 0, coop_direct = 2;  // 2: the row's
  int q4_rows = -1, q4_unroll = 0;  // -1: the row's
  std::string tuning_overrides;  // --tuning field=value,...: as the provider option `tuning`
  std::vector<int> coop_tile, coop_small;  // the prompt matmul's tiles (6 values each), empty: the row's
  uint32_t coop_big_min = 0;
  bool shape_8b = false;
  bool attention_only = false;
  bool pipeline_stats = false;
  std::vector<int> kv_lens = {2048, 8192, 32768}, prompt_lens = {2048, 8192, 32768};
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--quick") quick = true;
    else if (a == "--device-type" && i + 1 < argc) type = argv[++i];
    else if (a == "--q4-threads" && i + 1 < argc) q4_threads = (uint32_t)std::stoul(argv[++i]);
    else if (a == "--rows" && i + 1 < argc) rows = (uint32_t)std::stoul(argv[++i]);
    else if (a == "--threads" && i + 1 < argc) threads = (uint32_t)std::stoul(argv[++i]);
    else if (a == "--chain-only") chain_only = true;
    else if (a == "--int4-matvec-only") int4_only = true;
    else if (a == "--attn-threads" && i + 1 < argc) attn_threads = (uint32_t)std::stoul(argv[++i]);
    else if (a == "--attn-max-splits" && i + 1 < argc) attn_splits = (uint32_t)std::stoul(argv[++i]);
    else if (a == "--attention-only") attention_only = true;
    else if (a == "--kv-lens" && i + 1 < argc) kv_lens = int_list(argv[++i]);
    else if (a == "--prompt-lens" && i + 1 < argc) prompt_lens = int_list(argv[++i]);
    else if (a == "--matmul-only") matmul_only = true;
    else if (a == "--simt") simt = true;
    else if (a == "--m" && i + 1 < argc) mm_rows = std::stoll(argv[++i]);
    else if (a == "--reps" && i + 1 < argc) mm_reps = std::stoi(argv[++i]);
    else if (a == "--matmul-tile" && i + 1 < argc) mm_tile = (uint32_t)std::stoul(argv[++i]);
    else if (a == "--skinny-max-m" && i + 1 < argc) skinny_max_m = (uint32_t)std::stoul(argv[++i]);
    else if (a == "--skinny-rows" && i + 1 < argc) skinny_rows = (uint32_t)std::stoul(argv[++i]);
    else if (a == "--skinny-unroll" && i + 1 < argc) skinny_unroll = (uint32_t)std::stoul(argv[++i]);
    else if (a == "--coop-max-m" && i + 1 < argc) coop_max_m = (uint32_t)std::stoul(argv[++i]);
    else if (a == "--coop-threads" && i + 1 < argc) coop_threads = (uint32_t)std::stoul(argv[++i]);
    else if (a == "--coop-unroll" && i + 1 < argc) coop_unroll = (uint32_t)std::stoul(argv[++i]);
    else if (a == "--coop-cols" && i + 1 < argc) coop_cols = (uint32_t)std::stoul(argv[++i]);
    else if (a == "--coop-direct" && i + 1 < argc) coop_direct = (uint32_t)std::stoul(argv[++i]);
    else if (a == "--coop-tile" && i + 1 < argc) coop_tile = int_list(argv[++i]);
    else if (a == "--coop-small-tile" && i + 1 < argc) coop_small = int_list(argv[++i]);
    else if (a == "--coop-big-min" && i + 1 < argc) coop_big_min = (uint32_t)std::stoul(argv[++i]);
    else if (a == "--shape-8b") shape_8b = true;
    else if (a == "--q4-rows" && i + 1 < argc) q4_rows = std::stoi(argv[++i]);
    else if (a == "--q4-unroll" && i + 1 < argc) q4_unroll = std::stoi(argv[++i]);
    else if (a == "--tuning" && i + 1 < argc) tuning_overrides = argv[++i];
    else if (a == "--pipeline-stats") pipeline_stats = true;
    else {
      std::fprintf(stderr, "usage: ogx_vulkan_bench [--quick] [--device-type gpu|cpu] [--threads N] [--q4-threads N] "
                           "[--rows N] [--q4-rows N] [--q4-unroll N] [--tuning F=V,...] [--shape-8b] [--chain-only] "
                           "[--int4-matvec-only] [--pipeline-stats] "
                           "[--attn-threads N] "
                           "[--attn-max-splits N]\n"
                           "       ogx_vulkan_bench --attention-only [--kv-lens 2048,8192,32768] "
                           "[--prompt-lens 2048,8192,32768] [--attn-threads N] [--attn-max-splits N] [--tuning F=V,...] "
                           "[--quick]\n"
                           "       ogx_vulkan_bench --matmul-only [--m M] [--reps N] [--simt] [--matmul-tile 64|128] "
                           "[--skinny-max-m N] [--skinny-rows N] [--skinny-unroll N] [--coop-max-m N] [--coop-threads N] "
                           "[--coop-unroll N] [--coop-cols N] [--coop-direct 0|1] [--coop-tile WM,WN,FM,FN,BK,STAGES] "
                           "[--coop-small-tile WM,WN,FM,FN,BK,STAGES] [--coop-big-min N] [--shape-8b] "
                           "[--device-type gpu|cpu] [--quick]\n");
      return 2;
    }
  }
  ContextOptions o;
  o.provider = parse_provider_options({{"hardware_device_type", type}});
  o.provider.tuning_overrides = tuning_overrides;
  o.provider.pipeline_statistics = pipeline_stats;
  o.block_bytes = 1ull << 30;
  // Tuning experiments: the table's row with these values replaced.
  if (q4_threads || rows || threads || attn_threads || attn_splits || mm_tile || simt ||
      skinny_max_m || skinny_rows || skinny_unroll || coop_max_m || coop_threads || coop_unroll || coop_cols ||
      coop_direct != 2 || q4_rows >= 0 || q4_unroll || !coop_tile.empty() || !coop_small.empty() ||
      coop_big_min) {
    Context probe(o);
    Tuning t = probe.tuning();
    if (q4_threads) t.matvec_threads_q4 = q4_threads;
    if (rows) t.matvec_rows = rows;
    if (threads) t.matvec_threads = threads;
    if (attn_threads) t.decode_group_threads = attn_threads;
    if (attn_splits) t.decode_group_max_splits = attn_splits;
    if (mm_tile) t.matmul_tile = mm_tile;
    if (skinny_max_m) t.skinny_max_m = skinny_max_m;
    if (skinny_rows) t.skinny_rows = skinny_rows;
    if (skinny_unroll) t.skinny_unroll = skinny_unroll;
    if (coop_max_m) t.coop_skinny_max_m = coop_max_m;
    if (coop_threads) t.coop_skinny_threads = coop_threads;
    if (coop_unroll) t.coop_skinny_unroll = coop_unroll;
    if (coop_cols) t.coop_skinny_cols = coop_cols;
    if (coop_direct != 2) t.coop_skinny_direct_w = coop_direct;
    if (q4_rows >= 0) t.q4_wide_rows = (uint32_t)q4_rows;
    if (q4_unroll) t.q4_wide_unroll = (uint32_t)q4_unroll;
    auto tile_of = [](const std::vector<int>& v, Tuning::CoopTile& tile) {
      if (v.size() != 6) throw std::runtime_error("--coop-tile / --coop-small-tile take 6 values WM,WN,FM,FN,BK,STAGES");
      tile = {(uint32_t)v[0], (uint32_t)v[1], (uint32_t)v[2], (uint32_t)v[3], (uint32_t)v[4], (uint32_t)v[5]};
    };
    if (!coop_tile.empty()) tile_of(coop_tile, t.coop_big_tile), tile_of(coop_tile, t.coop_big_tile_q4);
    if (!coop_small.empty()) tile_of(coop_small, t.coop_small_tile);
    if (coop_big_min) t.coop_big_tile_min_groups = coop_big_min;
    auto tile_str = [](const Tuning::CoopTile& c) {
      return std::to_string(c.warps_m) + "," + std::to_string(c.warps_n) + "," + std::to_string(c.frags_m) + "," +
             std::to_string(c.frags_n) + "," + std::to_string(c.k_step) + "," + std::to_string(c.stages);
    };
    t.row += " (threads " + std::to_string(t.matvec_threads) + ", q4 threads " + std::to_string(t.matvec_threads_q4) +
             ", rows " + std::to_string(t.matvec_rows) + ", matmul tile " + std::to_string(t.matmul_tile) +
             ", skinny max m " + std::to_string(t.skinny_max_m) + ", skinny rows " + std::to_string(t.skinny_rows) +
             ", skinny unroll " + std::to_string(t.skinny_unroll) + ", attention threads " +
             std::to_string(t.decode_group_threads) + ", attention max splits " +
             std::to_string(t.decode_group_max_splits) + ", attention subgroup loop " +
             std::to_string(t.decode_group_subgroup_loop) + ", coop max m " + std::to_string(t.coop_skinny_max_m) +
             ", coop threads " + std::to_string(t.coop_skinny_threads) + ", coop unroll " +
             std::to_string(t.coop_skinny_unroll) + ", coop cols " + std::to_string(t.coop_skinny_cols) +
             ", coop direct " + std::to_string(t.coop_skinny_direct_w) + ", q4 wide rows " +
             std::to_string(t.q4_wide_rows) + ", q4 wide unroll " + std::to_string(t.q4_wide_unroll) +
             ", q4 wide half " + std::to_string(t.q4_wide_half) +
             ", coop tile " + tile_str(t.coop_big_tile) + " from " + std::to_string(t.coop_big_tile_min_groups) +
             " groups, else " + tile_str(t.coop_small_tile) + ")";
    o.tuning = t;
  }
  if (simt) o.provider.disable_metacommands = true;  // the row above stays; only the matrix-unit kernels go
  Context ctx(o);
  // --pipeline-stats: the driver's statistics (registers, ...) of every pipeline the benches built, at the end.
  struct PrintStatistics {
    Context& ctx;
    bool on;
    ~PrintStatistics() {
      if (!on) return;
      std::printf("\n| pipeline | statistic | value |\n|---|---|---|\n");
      for (const Pipeline* p : ctx.pipelines().built())
        for (auto& st : p->statistics) std::printf("| %s | %s | %g |\n", p->name.c_str(), st.name.c_str(), st.value);
    }
  } print_statistics{ctx, pipeline_stats};
  const DeviceInfo& d = ctx.info();
  std::printf("device: %s (vendor %u, driver %s %s), Vulkan %s, subgroup %u, tuning row %s, timestamp period %.3f ns\n",
              d.name.c_str(), d.vendor_id, d.driver_name.c_str(), driver_version_string(d).c_str(),
              api_version_string(d.api_version).c_str(), d.subgroup_size, ctx.tuning().row.c_str(), d.timestamp_period);
  OGX_CHECK(d.timestamp_period > 0, "the device has no compute timestamps");
  Timer timer(ctx);
  if (attention_only) {
    if (quick) kv_lens = {300, 1100}, prompt_lens = {130};
    bench_long_attention(ctx, timer, kv_lens, prompt_lens, quick);
    return 0;
  }
  if (matmul_only) {
    int64_t M = mm_rows ? mm_rows : (quick ? 64 : 512);
    int reps = mm_reps ? mm_reps : (quick ? 1 : 20);
    std::vector<Shape2> mm = {{"2048x3072 (qkv)", 2048, 3072}, {"2048x2048 (o)", 2048, 2048},
                              {"2048x16384 (gate/up)", 2048, 16384}, {"8192x2048 (down)", 8192, 2048}};
    if (shape_8b)
      mm = {{"4096x6144 (qkv)", 4096, 6144}, {"4096x4096 (o)", 4096, 4096}, {"4096x28672 (gate/up)", 4096, 28672},
            {"14336x4096 (down)", 14336, 4096}};
    std::printf("\n| weights | M | K x N | us/call | TFLOPS | weight GB/s | calls x runs | max rel err |\n"
                "|---|---|---|---|---|---|---|---|\n");
    for (bool int4 : {false, true})
      for (const auto& s : mm) bench_prefill(ctx, timer, s, M, int4, reps, quick ? 1 : 5);
    return 0;
  }
  std::vector<Shape2> shapes = {{"2048x2048 (q/o)", 2048, 2048}, {"2048x8192 (up)", 2048, 8192},
                                {"8192x2048 (down)", 8192, 2048}, {"2048x128256 (lm)", 2048, 128256}};
  if (shape_8b)
    shapes = {{"4096x6144 (qkv)", 4096, 6144}, {"4096x4096 (o)", 4096, 4096}, {"4096x28672 (gate/up)", 4096, 28672},
              {"14336x4096 (down)", 14336, 4096}, {"4096x128256 (lm)", 4096, 128256}};
  if (quick) shapes = {{"256x512", 256, 512}, {"512x256", 512, 256}};
  if (int4_only) {  // the int4 matvec tables only (tuning sweeps): dependent chains, then independent dispatches
    std::printf("\n| weights | chain (dependent matvecs) | n | us/matvec |\n|---|---|---|---|\n");
    for (const auto& s : shapes) bench_chain(ctx, timer, s, false, true, quick ? 8 : 64);
    bench_chain_norm(ctx, timer, shapes[0], false, quick ? 8 : 64);  // q/k/v-like
    bench_chain_norm(ctx, timer, shape_8b ? shapes[2] : shapes[1], true, quick ? 8 : 64);  // gate/up
    std::printf("\n| weights | K x N | us/matvec | GB/s | of 4.47 TB/s | dispatches x copies | max rel err |\n"
                "|---|---|---|---|---|---|---|\n");
    for (const auto& s : shapes) bench_matvec(ctx, timer, s, true, quick);
    return 0;
  }
  std::printf("\n| weights | chain (dependent matvecs) | n | us/matvec |\n|---|---|---|---|\n");
  for (bool int4 : {false, true}) {
    bench_chain(ctx, timer, shapes[0], false, int4, quick ? 8 : 64);
    bench_chain(ctx, timer, shapes[1], true, int4, quick ? 8 : 64);
  }
  for (int kv : {32, 200})
    for (int64_t hq : {32, 128}) bench_attention(ctx, timer, hq, 64, 1, kv, quick ? 4 : 64);
  if (chain_only) return 0;
  std::printf("\n| weights | K x N | us/matvec | GB/s | of 4.47 TB/s | dispatches x copies | max rel err |\n"
              "|---|---|---|---|---|---|---|\n");
  for (bool int4 : {false, true})
    for (const auto& s : shapes) bench_matvec(ctx, timer, s, int4, quick);
  std::printf("\n| sequence | dispatches | barriers | GPU us/dispatch | record us/dispatch | replay wall us |\n"
              "|---|---|---|---|---|---|\n");
  int n = quick ? 50 : 2000;
  bench_dispatch(ctx, timer, false, n);
  bench_dispatch(ctx, timer, true, n);
  bench_dispatch(ctx, timer, false, n, true);
  bench_dispatch(ctx, timer, true, n, true);
  return 0;
}

}  // namespace
}  // namespace ogx::vk

int main(int argc, char** argv) {
  try {
    return ogx::vk::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
