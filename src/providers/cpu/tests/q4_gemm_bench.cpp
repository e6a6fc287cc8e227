// Microbenchmark of the packed int4 GEMM of MatMulNBits (accuracy_level 4, matmul_nbits_mlas.h) on the matrices of
// one model shape, not a test (not registered with ctest):
//   ogx_q4_gemm_bench M THREADS PASSES [LAYERS]
// packs LAYERS (default 16) decoder layers of the Llama-3.2-1B shape (q,k,v 2048 -> 3072, o 2048 -> 2048, gate and
// up 2048 -> 8192 each, down 8192 -> 2048) plus the 128256 x 2048 lm_head, block size 32, no zero points, random
// bytes, then runs PASSES passes of M rows through all of them, as MatMulNBits does (quantize + pack the
// activations, then the column tiles over the thread pool), and prints each pass's time, the median, and the weight
// bytes streamed per second. LAYERS -1: one 2048 x 1024 matrix (1.25 MB, in L2) run 200 times a pass — the
// kernel's compute speed without memory traffic. LAYERS KxN (e.g. 2048x3072): that one matrix, run as many times a
// pass as make ~2 G multiply-adds. KERNEL (5th argument): mlas (default: the MLAS-exact kernels at every M) or amx
// (the AMX-INT8 kernel of int4_gemm=auto, matmul_nbits_amx.h; needs a CPU with AMX). Two builds of this file (or the
// two kernels) alternated by a script give an A/B comparison.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "common/thread_pool.h"
#include "providers/cpu/matmul_nbits_amx.h"
#include "providers/cpu/matmul_nbits_mlas.h"

namespace ogx::cpu::nbits {
void quantize_row_int8(const float* a, int64_t K, int64_t bs, int64_t nb, int8_t* q, float* scale);
}

using namespace ogx::cpu::nbits;

namespace {

struct Matrix {
  int64_t K, N;
  MlasQ4Packed p;
};

double packed_bytes(const MlasQ4Packed& p) {
  return (double)(p.w.size() + p.wt.size() + p.s.size() * sizeof(float) + p.z.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s M THREADS PASSES [LAYERS]\n", argv[0]);
    return 2;
  }
  const int64_t M = std::atoll(argv[1]);
  const int threads = std::atoi(argv[2]), passes = std::atoi(argv[3]);
  long long one_k = 0, one_n = 0;
  const bool one = argc > 4 && std::sscanf(argv[4], "%lldx%lld", &one_k, &one_n) == 2;
  const int layers = one ? 0 : argc > 4 ? std::atoi(argv[4]) : 16;
  const bool amx = argc > 5 && std::string(argv[5]) == "amx";
  if (amx && !amx_int8_available()) {
    std::fprintf(stderr, "no AMX-INT8 on this CPU (or the OS did not grant it)\n");
    return 2;
  }
  const int64_t bs = 32;
  std::vector<std::pair<int64_t, int64_t>> shapes;  // (K, N)
  for (int l = 0; l < layers; l++)
    for (auto kn : {std::pair<int64_t, int64_t>{2048, 3072}, {2048, 2048}, {2048, 8192}, {2048, 8192}, {8192, 2048}})
      shapes.push_back(kn);
  if (one) shapes.push_back({one_k, one_n});
  else if (layers >= 0) shapes.push_back({2048, 128256});
  else shapes.push_back({2048, 1024});
  const int repeat = one ? (int)std::max<double>(1, 2e9 / ((double)one_k * one_n * M)) : layers >= 0 ? 1 : 200;
  std::mt19937 rng(7);
  std::vector<Matrix> mats(shapes.size());
  double bytes = 0;
  for (size_t i = 0; i < shapes.size(); i++) {
    auto [K, N] = shapes[i];
    const int64_t nb = (K + bs - 1) / bs;
    std::vector<uint8_t> b((size_t)(N * nb * bs / 2)), zp((size_t)(N * nb), 8);
    for (auto& v : b) v = (uint8_t)rng();
    std::vector<float> s((size_t)(N * nb));
    for (auto& v : s) v = 0.01f + (float)(rng() % 1000) * 1e-5f;
    mats[i].K = K, mats[i].N = N;
    pack_q4_mlas(b.data(), s.data(), zp.data(), K, N, bs, threads, mats[i].p);
    bytes += packed_bytes(mats[i].p);
  }
  ogx::ThreadPool pool(threads);
  std::vector<float> a((size_t)(M * std::max<int64_t>(8192, one_k))), y((size_t)(M * std::max<int64_t>(128256, one_n)));
  std::uniform_real_distribution<float> ua(-1.f, 1.f);
  for (auto& v : a) v = ua(rng);
  std::vector<int8_t> qa((size_t)(M * 8192));
  std::vector<float> sa((size_t)(M * 8192 / bs));
  MlasActs act;
  // Wall time, and the process's CPU time: on a shared machine the latter (with THREADS 1) still measures the
  // kernel when the OS hands the core to others part of the time.
  auto cpu_ms = [] {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
  };
  std::vector<double> ms, cpu;
  for (int pass = 0; pass < passes; pass++) {
    auto t0 = std::chrono::steady_clock::now();
    const double c0 = cpu_ms();
    for (int rep = 0; rep < repeat; rep++)
    for (auto& m : mats) {
      const MlasQ4Packed& p = m.p;
      if (amx) {  // as MatMulNBits runs it (rows quantized by quantize_row_int8; K is a multiple of bs here)
        run_q4_amx(p, a.data(), m.K, M, nullptr, y.data(), pool);
        continue;
      }
      const int64_t nb = p.nb;
      resize_acts(p, M, act);
      auto quant = [&](int64_t m0, int64_t m1) {
        for (int64_t r = m0; r < m1; r++)
          quantize_row_int8(a.data() + r * m.K, m.K, bs, nb, qa.data() + r * nb * bs, sa.data() + r * nb);
        pack_acts_mlas(p, qa.data(), sa.data(), m0, m1, act);
      };
      if (M > 1) pool.parallel_for(M, 1, quant);
      else quant(0, M);
      pool.parallel_for(p.quads(), 1, [&](int64_t q0, int64_t q1) {
        q4_gemm_mlas(p, act, M, q0 * 4, std::min(q1 * 4, p.tiles()), nullptr, y.data());
      });
    }
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    cpu.push_back(cpu_ms() - c0);
    std::printf("pass %d: %.2f ms (CPU %.2f ms)\n", pass, ms.back(), cpu.back());
  }
  std::sort(ms.begin(), ms.end());
  std::sort(cpu.begin(), cpu.end());
  const double med = ms[ms.size() / 2];
  double macs = 0;
  for (auto& m : mats) macs += (double)m.K * m.N * M * repeat;
  bytes *= repeat;
  const double cmed = cpu[cpu.size() / 2];
  std::printf("median %.2f ms, min %.2f ms: %.1f GB/s of weights (%.0f MB), %.1f GMAC/s; CPU median %.2f ms, %.1f "
              "GMAC/s per CPU-second (M=%lld, threads %d, %s)\n",
              med, ms[0], bytes / med / 1e6, bytes / 1e6, macs / med / 1e6, cmed, macs / cmed / 1e6, (long long)M,
              threads, amx ? "amx" : "mlas");
  return 0;
}
