// Vector primitives with runtime dispatch: AVX2+FMA+F16C when the CPU has them, portable scalar code otherwise.
// Every fast routine has its scalar twin here, and tests compare the two.
#pragma once
#include <cstdint>

#include "common/half.h"

namespace ogx::cpu {

bool cpu_has_avx2();  // AVX2 + FMA + F16C, checked once
// AVX-512F as well (and not turned off by set_avx512_enabled): kernels with a 512-bit twin of an AVX2 kernel take it.
bool cpu_has_avx512();
bool set_avx512_enabled(bool on);  // tests: the AVX2 kernels on an AVX-512 CPU; returns the previous setting

// y[0..n) += a[r] * x_r[0..n) for R rows at once: y_r += a_r * x, x shared (one weight row, R activation rows).
// x is float, f16 or bf16 storage; y is float.
void axpy_rows(int rows, const float* a, const float* x, float* const* y, int64_t n);
void axpy_rows(int rows, const float* a, const f16_t* x, float* const* y, int64_t n);
void axpy_rows(int rows, const float* a, const bf16_t* x, float* const* y, int64_t n);

// Scalar references, also used when AVX2 is absent.
void axpy_rows_scalar(int rows, const float* a, const float* x, float* const* y, int64_t n);
void axpy_rows_scalar(int rows, const float* a, const f16_t* x, float* const* y, int64_t n);
void axpy_rows_scalar(int rows, const float* a, const bf16_t* x, float* const* y, int64_t n);

float dot_f32(const float* a, const float* b, int64_t n);
// Attention's two row loops, each bit-identical to the loop of dot_f32 / axpy_rows(1, ...) it replaces (same fp32
// operations per output, in the same order), with several rows in flight:
// out[t] = dot_f32(q, k + t * h, h) * alpha for t in [0, n).
void dot_rows_f32(const float* q, const float* k, int64_t n, int64_t h, float alpha, float* out);
// acc[j] += p[t] * v[t * h + j] for t = 0, 1, ... n - 1 in order, j in [0, h).
void weighted_rows_f32(const float* p, const float* v, int64_t n, int64_t h, float* acc);
void dot_rows_f32_scalar(const float* q, const float* k, int64_t n, int64_t h, float alpha, float* out);
void weighted_rows_f32_scalar(const float* p, const float* v, int64_t n, int64_t h, float* acc);
// Forces the scalar path in tests (and on request); returns the previous setting.
bool set_simd_enabled(bool on);
bool simd_enabled();  // false after set_simd_enabled(false): fast kernels must take their scalar path

}  // namespace ogx::cpu
