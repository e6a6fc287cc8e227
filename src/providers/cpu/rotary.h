// Rotary position embedding on one head vector, shared by RotaryEmbedding and GroupQueryAttention(do_rotary).
#pragma once
#include <cmath>
#include <cstdint>

namespace ogx::cpu {

// x[0..rot_dim) rotated in place by angle tables cos/sin[rot_dim/2] of one position.
// interleaved: pairs (x[2i], x[2i+1]); otherwise halves (x[i], x[i + rot_dim/2]).
// ONNX Runtime 1.30's arithmetic (MLAS's AVX2 rope kernel): x1*cos - x2*sin and x1*sin + x2*cos each as one fused
// multiply-add over the rounded second product.
inline void rotate_head(float* x, int64_t rot_dim, const float* cos, const float* sin, bool interleaved) {
  int64_t half = rot_dim / 2;
  for (int64_t i = 0; i < half; i++) {
    int64_t a = interleaved ? 2 * i : i, b = interleaved ? 2 * i + 1 : i + half;
    float x1 = x[a], x2 = x[b];
    x[a] = std::fma(x1, cos[i], -(x2 * sin[i]));
    x[b] = std::fma(x1, sin[i], x2 * cos[i]);
  }
}

}  // namespace ogx::cpu
