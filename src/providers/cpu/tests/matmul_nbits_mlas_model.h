// A scalar model of MLAS's fp32 arithmetic for MatMulNBits accuracy_level 4 with 4-bit weights on AVX-512 VNNI,
// the reference of MatMulNBits.BitIdenticalToMlas (see src/providers/cpu/matmul_nbits_mlas.h).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace ogx::test {

// MLAS's fp32 arithmetic for the int8 path (SQ4BitGemm CompInt8 on AVX-512 VNNI), written here from its register
// operations rather than from ogx's kernel. Per group of 128 values, two registers of 64 values are dotted 4 at a
// time (vpdpbusd / maddubs: unsigned weights x int8 activations) into d0 and d1 (16 int32 each, d[j]: values 4j..
// 4j+3 of the register) and interleaved into 16 lanes, each FMA'd with its block's scale_b * scale_a:
//   16 (8 blocks): 64-bit interleave, lane 4L + {0, 1, 2, 3} = d0[4L] + d0[4L+2], d0[4L+1] + d0[4L+3], the same of d1;
//   32 (4 blocks): the same interleave;
//   64 (2 blocks): 32-bit interleave, lane 4L + {0, 1, 2, 3} = d0[4L] + d0[4L+2], d1[4L] + d1[4L+2],
//                  d0[4L+1] + d0[4L+3], d1[4L+1] + d1[4L+3];
//   128, 256: the two registers accumulated, lane l = d0[l] + d1[l].
// Blocks after the last group: for 16 / 32 the 16 lanes first fold to 8 (l + l + 8), then lane i gets values 2i, 2i+1
// (16) or 4i..4i+3 (32) of the block; for 64 lane l of 16 gets values 4l..4l+3. The lanes then sum: 8 lanes by tile
// (4 columns) or single-column order; 16 lanes fold to 8 and sum in single-column order, except in the last row of an
// odd M for tile columns (quarter sums). Then + bias, + the FMA chain of the zero-point block sums.
// a: [M][K]; qb: [N][nb * bs] unpacked 4-bit values (any past K: the activations there are 0); scale, zp: [N][nb];
// bias: [N] or null.
// Returns y: [M][N].
inline std::vector<float> mlas_int8_model(const std::vector<float>& a, const std::vector<uint8_t>& qb,
                                          const std::vector<float>& scale, const std::vector<uint8_t>& zp,
                                          const float* bias, int64_t M, int64_t K, int64_t N, int64_t bs) {
  const int64_t nb = (K + bs - 1) / bs, kp = nb * bs;
  std::vector<float> y((size_t)(M * N));
  for (int64_t m = 0; m < M; m++) {
    std::vector<int> qa((size_t)kp, 0);
    std::vector<float> sa((size_t)nb), asum((size_t)nb);
    for (int64_t b = 0; b < nb; b++) {
      float amax = 0;
      const int64_t k1 = std::min(K, (b + 1) * bs);
      for (int64_t k = b * bs; k < k1; k++) amax = std::max(amax, std::fabs(a[(size_t)(m * K + k)]));
      sa[(size_t)b] = amax / 127.f;
      const float inv = amax != 0 ? 127.f / amax : 0.f;
      int sum = 0;
      for (int64_t k = b * bs; k < k1; k++) {
        volatile float p = a[(size_t)(m * K + k)] * inv;
        sum += qa[(size_t)k] = (int)std::nearbyint((float)p);
      }
      asum[(size_t)b] = sa[(size_t)b] * (float)sum;
    }
    const bool odd_last_row = M % 2 == 1 && m == M - 1;
    for (int64_t n = 0; n < N; n++) {
      const uint8_t* q = &qb[(size_t)(n * kp)];
      const float* sb = &scale[(size_t)(n * nb)];
      auto dot4 = [&](int64_t k) {
        int s = 0;
        for (int i = 0; i < 4; i++) s += qa[(size_t)(k + i)] * q[k + i];
        return s;
      };
      auto cs = [&](int64_t b) { return sb[b] * sa[(size_t)b]; };
      const int64_t bpg = std::max<int64_t>(1, 128 / bs), groups = bs <= 128 ? nb / bpg : nb * bs / 128;
      float acc[16] = {}, acc8[8];
      for (int64_t g = 0; g < groups; g++) {
        int d0[16], d1[16];
        for (int j = 0; j < 16; j++) d0[j] = dot4(g * 128 + 4 * j), d1[j] = dot4(g * 128 + 64 + 4 * j);
        for (int l = 0; l < 16; l++) {
          const int L = l / 4, j = l % 4;
          int part;
          int64_t b;  // the lane's block
          if (bs <= 32) {  // 64-bit interleave
            const int* dd = j < 2 ? d0 : d1;
            part = dd[4 * L + (j & 1)] + dd[4 * L + (j & 1) + 2];
            const int64_t v = (j < 2 ? 0 : 64) + 16 * L;  // first value of the lane's runs
            b = g * bpg + v / bs;
          } else if (bs == 64) {  // 32-bit interleave
            const int* dd = (j & 1) ? d1 : d0;
            part = dd[4 * L + (j >> 1)] + dd[4 * L + (j >> 1) + 2];
            b = g * 2 + (j & 1);
          } else {
            part = d0[l] + d1[l];
            b = g * 128 / bs;
          }
          acc[l] = std::fmaf((float)part, cs(b), acc[l]);
        }
      }
      const int64_t tail0 = bs <= 64 ? groups * bpg : nb;
      if (bs <= 32) {
        for (int i = 0; i < 8; i++) acc8[i] = acc[i] + acc[i + 8];
        for (int64_t b = tail0; b < nb; b++)
          for (int i = 0; i < 8; i++) {
            const int64_t k = b * bs + (bs == 16 ? 2 : 4) * i;
            const int p = bs == 16 ? qa[(size_t)k] * q[k] + qa[(size_t)(k + 1)] * q[k + 1] : dot4(k);
            acc8[i] = std::fmaf((float)p, cs(b), acc8[i]);
          }
      } else {
        for (int64_t b = tail0; b < nb; b++)
          for (int l = 0; l < 16; l++) acc[l] = std::fmaf((float)dot4(b * bs + 4 * l), cs(b), acc[l]);
        for (int i = 0; i < 8; i++) acc8[i] = acc[i] + acc[i + 8];
      }
      const bool tile = n < N - N % 4;
      float v;
      if (tile && bs <= 32) {
        v = (((acc8[0] + acc8[1]) + acc8[2]) + acc8[3]) + (((acc8[4] + acc8[5]) + acc8[6]) + acc8[7]);
      } else if (tile && odd_last_row) {
        float qs[4];
        for (int j = 0; j < 4; j++) qs[j] = ((acc[4 * j] + acc[4 * j + 1]) + acc[4 * j + 2]) + acc[4 * j + 3];
        v = (qs[0] + qs[2]) + (qs[1] + qs[3]);
      } else {
        v = ((acc8[4] + acc8[0]) + (acc8[6] + acc8[2])) + ((acc8[5] + acc8[1]) + (acc8[7] + acc8[3]));
      }
      if (bias) v += bias[n];
      float corr = 0;
      for (int64_t b = 0; b < nb; b++)
        corr = std::fmaf(asum[(size_t)b], -(float)zp[(size_t)(n * nb + b)] * sb[b], corr);
      y[(size_t)(m * N + n)] = corr + v;
    }
  }
  return y;
}

}  // namespace ogx::test
