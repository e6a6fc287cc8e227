// The CPU check of the packed int4 GEMM (matmul_nbits_packed.h).
#include "providers/cpu/matmul_nbits_packed.h"

#include <atomic>

#include "providers/cpu/simd.h"

namespace ogx::cpu::nbits {

namespace {

std::atomic<bool> g_force_avx2{false};

bool detect_vnni() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vnni");
}

}  // namespace

Q4Isa q4_packed_isa() {
  static const bool vnni = detect_vnni();
  if (!simd_enabled() || !cpu_has_avx2()) return Q4Isa::none;
  return vnni && !g_force_avx2.load(std::memory_order_relaxed) ? Q4Isa::avx512_vnni : Q4Isa::avx2;
}

bool set_q4_force_avx2(bool on) { return g_force_avx2.exchange(on); }

}  // namespace ogx::cpu::nbits
