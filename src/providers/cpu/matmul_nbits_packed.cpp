// The CPU check of the packed int4 GEMM (matmul_nbits_packed.h).
#include "providers/cpu/matmul_nbits_packed.h"

#include "providers/cpu/simd.h"

namespace ogx::cpu::nbits {

namespace {

bool detect_vnni() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vnni");
}

}  // namespace

bool q4_packed_available() {
  static const bool v = detect_vnni();
  return v && simd_enabled();
}

}  // namespace ogx::cpu::nbits
