// Bit-exactness of the fp32 CPU norms, rotary and sigmoid against ONNX Runtime 1.30's arithmetic, written out here
// operation by operation from ONNX Runtime's sources (MLAS core/mlas/lib/layernorm_kernel_avx2.cpp,
// contrib_ops/cpu/skip_layer_norm.cc, rotary_embedding_kernel_avx2_fp32.cpp, logistic.cpp), on seeded random data
// and odd sizes (below, at and off the vector widths).
// The float64 tests of contrib_ops_test.cpp bound the error; these pin the rounding (tools/ortgenai_check's
// graph_diff.sh checks the same against ONNX Runtime itself).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "providers/cpu/attention_ort.h"
#include "providers/cpu/cpu_ops.h"
#include "providers/cpu/tests/contrib_test_util.h"

namespace ogx::test {
namespace {

using namespace contrib;

// The MLAS AVX2 row: 8 lanes (sum; fused sum of squares), reduced ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)), the tail
// in order, then x * (1 / sqrt(sumsq / H + eps)) * gamma.
std::vector<float> rms_row_mlas(const float* x, int64_t H, const float* g, float eps) {
  float ls[8] = {}, lq[8] = {};
  int64_t i = 0;
  for (; i + 8 <= H; i += 8)
    for (int j = 0; j < 8; j++) {
      ls[j] = ls[j] + x[i + j];
      lq[j] = std::fma(x[i + j], x[i + j], lq[j]);
    }
  float q = ((lq[0] + lq[4]) + (lq[2] + lq[6])) + ((lq[1] + lq[5]) + (lq[3] + lq[7]));
  for (; i < H; i++) q = std::fma(x[i], x[i], q);
  const float dev = std::sqrt(q / (float)H + eps), inv = 1.0f / dev;
  std::vector<float> y((size_t)H);
  for (int64_t h = 0; h < H; h++) {
    const float t = x[h] * inv;
    y[(size_t)h] = t * g[h];
  }
  return y;
}

std::vector<float> as_f32(const Tensor& t) {
  std::vector<float> v((size_t)t.numel());
  std::memcpy(v.data(), t.data<float>(), v.size() * sizeof(float));
  return v;
}

TEST(OrtParity, SimplifiedLayerNormBitIdenticalToMlasOrder) {
  std::mt19937 rng(41);
  for (int64_t H : {1, 3, 7, 8, 9, 15, 16, 31, 32, 33, 64, 65, 100, 896, 1027}) {
    SCOPED_TRACE(::testing::Message() << "H=" << H);
    const int64_t rows = 1 + rng() % 4;
    Buf x = random_buf(rng, DType::f32, {rows, H}, -4, 4), g = random_buf(rng, DType::f32, {H}, -2, 2);
    const float eps = 1e-6f;
    Tensor y = NodeRun("", "SimplifiedLayerNormalization").input("x", x.t).constant("scale", g.t)
                   .attr("epsilon", eps).attr("axis", int64_t{-1}).registry(cpu::register_norm).run()[0];
    std::vector<float> got = as_f32(y), xf = as_f32(x.t), gf = as_f32(g.t);
    for (int64_t r = 0; r < rows; r++) {
      std::vector<float> want = rms_row_mlas(xf.data() + r * H, H, gf.data(), eps);
      for (int64_t h = 0; h < H; h++)
        ASSERT_EQ(got[(size_t)(r * H + h)], want[(size_t)h]) << "row " << r << " element " << h;
    }
  }
}

// SkipSimplifiedLayerNormalization: skip_layer_norm.cc's own scalar loop: the sum and the sum of squares in index
// order (no fused operations), then x / sqrt(sumsq / H + eps) * gamma (a division).
TEST(OrtParity, SkipSimplifiedLayerNormBitIdenticalToScalarLoop) {
  std::mt19937 rng(43);
  for (int64_t H : {5, 8, 24, 64, 67, 896}) {
    SCOPED_TRACE(::testing::Message() << "H=" << H);
    Buf x = random_buf(rng, DType::f32, {1, 3, H}, -3, 3), sk = random_buf(rng, DType::f32, {1, 3, H}, -3, 3);
    Buf g = random_buf(rng, DType::f32, {H}, -2, 2);
    auto res = NodeRun("com.microsoft", "SkipSimplifiedLayerNormalization").input("input", x.t).input("skip", sk.t)
                   .constant("gamma", g.t).attr("epsilon", 1e-6f).outputs(4).registry(cpu::register_norm).run();
    std::vector<float> got = as_f32(res[0]), xf = as_f32(x.t), sf = as_f32(sk.t), gf = as_f32(g.t);
    for (int64_t r = 0; r < 3; r++) {
      float ss = 0.0f;
      std::vector<float> sum((size_t)H);
      for (int64_t h = 0; h < H; h++) {
        sum[(size_t)h] = xf[(size_t)(r * H + h)] + sf[(size_t)(r * H + h)];
        const float sq = sum[(size_t)h] * sum[(size_t)h];
        ss = ss + sq;
      }
      const float dev = std::sqrt(ss / (float)H + 1e-6f);
      for (int64_t h = 0; h < H; h++) {
        const float t = sum[(size_t)h] / dev;
        ASSERT_EQ(got[(size_t)(r * H + h)], t * gf[(size_t)h]) << "row " << r << " element " << h;
      }
    }
  }
}

TEST(OrtParity, RotaryBitIdenticalToMlasRope) {
  std::mt19937 rng(47);
  for (bool interleaved : {false, true})
    for (int64_t H : {8, 32, 64, 80}) {
      SCOPED_TRACE(::testing::Message() << "H=" << H << " interleaved=" << interleaved);
      const int64_t S = 5, half = H / 2;
      Buf x = random_buf(rng, DType::f32, {1, 1, S, H}, -3, 3);
      Buf cosb, sinb;
      make_caches(rng, DType::f32, 16, half, cosb, sinb);
      std::vector<int64_t> pos{3, 0, 7, 15, 9};
      Tensor y = NodeRun("com.microsoft", "RotaryEmbedding").input("x", x.t)
                     .input("position_ids", make_tensor(DType::i64, {1, S}, pos)).input("cos", cosb.t)
                     .input("sin", sinb.t).attr("interleaved", int64_t{interleaved ? 1 : 0})
                     .registry(cpu::register_rotary).run()[0];
      std::vector<float> got = as_f32(y), xf = as_f32(x.t), cf = as_f32(cosb.t), sf = as_f32(sinb.t);
      for (int64_t s = 0; s < S; s++)
        for (int64_t i = 0; i < half; i++) {
          const int64_t a = interleaved ? 2 * i : i, b = interleaved ? 2 * i + 1 : i + half;
          const float x1 = xf[(size_t)(s * H + a)], x2 = xf[(size_t)(s * H + b)];
          const float c = cf[(size_t)(pos[(size_t)s] * half + i)], sn = sf[(size_t)(pos[(size_t)s] * half + i)];
          const float p1 = x2 * sn, p2 = x2 * c;
          ASSERT_EQ(got[(size_t)(s * H + a)], std::fma(x1, c, -p1)) << "s " << s << " i " << i;
          ASSERT_EQ(got[(size_t)(s * H + b)], std::fma(x1, sn, p2)) << "s " << s << " i " << i;
        }
    }
}


// ONNX Runtime's attention order (attention_ort.h) against float64 softmax attention: prompts spanning several query
// blocks (2H rows) and several key blocks (the L2-sized block, forced small here through a long prompt and a large
// head), one-row query blocks (MLAS's M = 1 kernel), local windows, decode rows; random data, within 2e-5 (fp32
// sums of a few hundred terms of magnitude <= 1).
TEST(OrtParity, AttentionInOrtOrderAgreesWithFloat64) {
  std::mt19937 rng(53);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  struct Case {
    int64_t S, past, H, window;
  };
  const int64_t big_h = 256;  // key block = L2 / (32 H): 256 keys for a 2 MiB L2
  const int64_t kvb = cpu::ort_attention_kv_block(big_h);
  std::vector<Case> cases = {{1, 0, 8, -1},   {2, 0, 16, -1},  {7, 0, 20, 3},          {65, 0, 32, -1},
                             {129, 0, 32, 6}, {1, 40, 32, -1}, {1, 300, 64, 17},      {33, 0, 64, -1},
                             {kvb + 37, 0, big_h, -1},         {2 * big_h + 1, 0, big_h, 50}};
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "S=" << c.S << " past=" << c.past << " H=" << c.H << " window=" << c.window);
    const int64_t T = c.past + c.S;
    std::vector<float> q((size_t)(c.S * c.H)), k((size_t)(T * c.H)), v((size_t)(T * c.H)), out((size_t)(c.S * c.H));
    for (auto& x : q) x = u(rng);
    for (auto& x : k) x = u(rng);
    for (auto& x : v) x = u(rng);
    const float scale = 1.0f / std::sqrt((float)c.H);
    cpu::OrtAttentionHead a{q.data(), k.data(), v.data(), nullptr, 0, c.S, c.H, T, c.past, c.window, scale, out.data(), c.H};
    std::vector<float> scratch;
    cpu::ort_attention_head(a, scratch);
    for (int64_t s = 0; s < c.S; s++) {
      const int64_t limit = c.past + s + 1, start = c.window >= 0 && limit > c.window ? limit - c.window : 0;
      std::vector<double> w((size_t)T, 0.0);
      double mx = -1e300, sum = 0;
      for (int64_t t = start; t < limit; t++) {
        double d = 0;
        for (int64_t h = 0; h < c.H; h++) d += (double)q[(size_t)(s * c.H + h)] * k[(size_t)(t * c.H + h)];
        w[(size_t)t] = d * scale;
        mx = std::max(mx, w[(size_t)t]);
      }
      for (int64_t t = start; t < limit; t++) sum += w[(size_t)t] = std::exp(w[(size_t)t] - mx);
      for (int64_t h = 0; h < c.H; h++) {
        double want = 0;
        for (int64_t t = start; t < limit; t++) want += w[(size_t)t] / sum * v[(size_t)(t * c.H + h)];
        ASSERT_NEAR(out[(size_t)(s * c.H + h)], want, 2e-5) << "row " << s << " h " << h;
      }
    }
  }
}

}  // namespace
}  // namespace ogx::test
