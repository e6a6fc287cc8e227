// com.microsoft RotaryEmbedding, SimplifiedLayerNormalization, SkipSimplifiedLayerNormalization and the biased
// FastGelu / Gelu against plain
// float64 loops written here from ONNX Runtime's contrib-op documentation (ContribOperators.md), on seeded random
// shapes and data, fp32 and fp16 (tolerances: contrib_test_util.h).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "providers/cpu/cpu_ops.h"
#include "providers/cpu/tests/contrib_test_util.h"

namespace ogx::test {
namespace {

using namespace contrib;

// ---------------------------------------------------------------------------------------------------------------
// RotaryEmbedding
// ---------------------------------------------------------------------------------------------------------------

TEST(RotaryEmbedding, RandomCasesAgainstFloat64) {
  std::mt19937 rng(11);
  int n = 0;
  for (DType dt : {DType::f32, DType::f16})
    for (bool four_d : {false, true})
      for (bool interleaved : {false, true})
        for (bool partial : {false, true})
          for (bool offset_form : {false, true})
            for (bool with_num_heads : {false, true}) {
              if (!four_d && partial && !with_num_heads) continue;  // 3-D partial rotary needs num_heads
              const int64_t B = 1 + rng() % 3, S = 1 + rng() % 6, N = 1 + rng() % 4, H = int64_t{8} << (rng() % 3);
              const int64_t rot = partial ? H / 2 : H, half = rot / 2;
              // scale describes how the caches were built; ONNX Runtime does not apply it, nor may we.
              const float scale = n % 3 == 0 ? 1.0f : n % 3 == 1 ? 0.5f : 4.0f;
              // 3-D without num_heads: the head size is the cache width x 2 (the full-rotary form).
              SCOPED_TRACE(::testing::Message() << dtype_name(dt) << (four_d ? " 4-D" : " 3-D") << " interleaved="
                                                << interleaved << " rot=" << rot << " H=" << H << " N=" << N
                                                << " B=" << B << " S=" << S << " offset_form=" << offset_form
                                                << " num_heads=" << with_num_heads << " scale=" << scale
                                                << " case " << n);
              n++;
              Shape xs = four_d ? Shape{B, N, S, H} : Shape{B, S, N * H};
              Buf x = random_buf(rng, dt, xs);
              const int64_t max_pos = 24;
              Buf cosb, sinb;
              make_caches(rng, dt, max_pos, half, cosb, sinb);
              std::vector<int64_t> pos((size_t)(B * S));
              Tensor pos_t;
              if (offset_form) {
                int64_t off = (int64_t)(rng() % (max_pos - S + 1));
                for (int64_t i = 0; i < B * S; i++) pos[(size_t)i] = off + i % S;
                pos_t = make_tensor(DType::i64, {1}, std::vector<int64_t>{off});
              } else {
                for (auto& p : pos) p = (int64_t)(rng() % max_pos);
                pos_t = make_tensor(DType::i64, {B, S}, pos);
              }
              std::vector<double> ref = x.v;
              for (int64_t b = 0; b < B; b++)
                for (int64_t s = 0; s < S; s++)
                  for (int64_t h = 0; h < N; h++) {
                    int64_t off = four_d ? ((b * N + h) * S + s) * H : ((b * S + s) * N + h) * H;
                    rotate_ref(&ref[(size_t)off], rot, cosb.v, sinb.v, pos[(size_t)(b * S + s)], interleaved);
                  }
              NodeRun run("com.microsoft", "RotaryEmbedding");
              run.input("x", x.t).input("position_ids", pos_t).input("cos", cosb.t).input("sin", sinb.t);
              run.attr("interleaved", int64_t{interleaved ? 1 : 0}).registry(cpu::register_rotary);
              if (scale != 1.0f) run.attr("scale", scale);
              if (partial) run.attr("rotary_embedding_dim", rot);
              if (with_num_heads) run.attr("num_heads", N);
              Tensor y = run.run()[0];
              ASSERT_EQ(y.shape(), xs);
              expect_close(y, ref, tol_for(dt), "rotary output");
              if (::testing::Test::HasFailure()) return;
            }
}

// ---------------------------------------------------------------------------------------------------------------
// SimplifiedLayerNormalization / SkipSimplifiedLayerNormalization (RMSNorm)
// ---------------------------------------------------------------------------------------------------------------

TEST(SimplifiedLayerNormalization, RandomCasesAgainstFloat64) {
  std::mt19937 rng(13);
  for (DType dt : {DType::f32, DType::f16})
    for (const char* domain : {"", "com.microsoft"})
      for (int trial = 0; trial < 6; trial++) {
        const int rank = 2 + trial % 2;
        Shape xs(rank);
        for (auto& d : xs) d = 1 + rng() % 5;
        xs.back() = 1 + rng() % 80;
        const bool two_axes = trial == 5;  // normalize over the last two dimensions
        const int64_t axis = two_axes ? rank - 2 : -1;
        const int64_t Hn = two_axes ? xs[rank - 2] * xs[rank - 1] : xs.back();
        const float eps = trial % 2 ? 1e-5f : 1e-6f;
        SCOPED_TRACE(::testing::Message() << dtype_name(dt) << " domain '" << domain << "' shape " << shape_str(xs)
                                          << " axis " << axis);
        Buf x = random_buf(rng, dt, xs, -3, 3), g = random_buf(rng, dt, {Hn}, -2, 2);
        const int64_t rows = shape_numel(xs) / Hn;
        std::vector<double> y((size_t)shape_numel(xs)), inv((size_t)rows);
        for (int64_t r = 0; r < rows; r++) {
          double ss = 0;
          for (int64_t i = 0; i < Hn; i++) ss += x.v[(size_t)(r * Hn + i)] * x.v[(size_t)(r * Hn + i)];
          inv[(size_t)r] = 1.0 / std::sqrt(ss / (double)Hn + (double)eps);
          for (int64_t i = 0; i < Hn; i++) y[(size_t)(r * Hn + i)] = x.v[(size_t)(r * Hn + i)] * inv[(size_t)r] * g.v[(size_t)i];
        }
        auto res = NodeRun(domain, "SimplifiedLayerNormalization")
                       .input("x", x.t)
                       .constant("scale", g.t)
                       .attr("epsilon", eps)
                       .attr("axis", axis)
                       .outputs(2)
                       .registry(cpu::register_norm)
                       .run();
        expect_close(res[0], y, tol_for(dt), "Y");
        ASSERT_EQ(res[1].dtype(), DType::f32);
        expect_close(res[1], inv, Tol{0, 1e-5}, "inv_std_var (fp32)");
      }
}

TEST(SkipSimplifiedLayerNormalization, RandomCasesAgainstFloat64) {
  std::mt19937 rng(17);
  for (DType dt : {DType::f32, DType::f16})
    for (bool bias : {false, true})
      for (int skip_form = 0; skip_form < 3; skip_form++)  // skip [B,S,H], [1,S,H] or [S,H]
        for (bool want_stats : {false, true}) {
          const int64_t B = 1 + rng() % 3, S = 1 + rng() % 5, H = 1 + rng() % 96;
          const float eps = 1e-6f;
          SCOPED_TRACE(::testing::Message() << dtype_name(dt) << " bias=" << bias << " skip_form=" << skip_form
                                            << " B=" << B << " S=" << S << " H=" << H << " stats=" << want_stats);
          Shape ss = skip_form == 0 ? Shape{B, S, H} : skip_form == 1 ? Shape{1, S, H} : Shape{S, H};
          Buf x = random_buf(rng, dt, {B, S, H}, -3, 3), sk = random_buf(rng, dt, ss, -3, 3);
          Buf g = random_buf(rng, dt, {H}, -2, 2), bi = random_buf(rng, dt, {H}, -1, 1);
          std::vector<double> y((size_t)(B * S * H)), sum(y.size()), inv((size_t)(B * S));
          for (int64_t r = 0; r < B * S; r++) {
            int64_t sr = skip_form == 0 ? r : r % S;
            double sq = 0;
            for (int64_t i = 0; i < H; i++) {
              double t = x.v[(size_t)(r * H + i)] + sk.v[(size_t)(sr * H + i)] + (bias ? bi.v[(size_t)i] : 0.0);
              sum[(size_t)(r * H + i)] = t;
              sq += t * t;
            }
            inv[(size_t)r] = 1.0 / std::sqrt(sq / (double)H + (double)eps);
            for (int64_t i = 0; i < H; i++) y[(size_t)(r * H + i)] = sum[(size_t)(r * H + i)] * inv[(size_t)r] * g.v[(size_t)i];
          }
          NodeRun run("com.microsoft", "SkipSimplifiedLayerNormalization");
          run.input("input", x.t).input("skip", sk.t).constant("gamma", g.t);
          if (bias) run.constant("bias", bi.t);
          run.attr("epsilon", eps).outputs(4).registry(cpu::register_norm);
          if (!want_stats) run.skip_output(1).skip_output(2);  // as the reference builder wires it: Y and the sum
          auto res = run.run();
          expect_close(res[0], y, tol_for(dt), "output");
          // The residual sum is stored in the input type: one rounding of x + skip + bias.
          Tol sum_tol = dt == DType::f16 ? Tol{1e-3, 1e-3} : Tol{1e-5, 1e-6};
          expect_close(res[3], sum, sum_tol, "input_skip_bias_sum");
          if (want_stats) expect_close(res[2], inv, Tol{0, 1e-5}, "inv_std_var (fp32)");
        }
}

// ---------------------------------------------------------------------------------------------------------------
// FastGelu / Gelu with their bias input: gelu(x + bias), the sum rounded to the storage type, bias over the last axis
// ---------------------------------------------------------------------------------------------------------------
TEST(BiasedGelu, RandomCasesAgainstFloat64) {
  std::mt19937 rng(5);
  for (DType dt : {DType::f32, DType::f16})
    for (bool fast : {true, false}) {
      SCOPED_TRACE(::testing::Message() << dtype_name(dt) << (fast ? " FastGelu" : " Gelu"));
      Buf x = random_buf(rng, dt, {2, 3, 7}, -3, 3), b = random_buf(rng, dt, {7});
      Tensor y = NodeRun("com.microsoft", fast ? "FastGelu" : "Gelu").input("x", x.t).constant("b", b.t)
                     .registry(cpu::register_unary).run()[0];
      std::vector<double> want(x.v.size());
      for (size_t i = 0; i < want.size(); i++) {
        double v = round_to(dt, x.v[i] + b.v[i % 7]);
        want[i] = fast ? 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))
                       : 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
      }
      expect_close(y, want, tol_for(dt), "biased gelu");
    }
  Buf x = random_buf(rng, DType::f32, {2, 4}), bad = random_buf(rng, DType::f32, {3});
  EXPECT_THROW(NodeRun("com.microsoft", "FastGelu").input("x", x.t).constant("b", bad.t)
                   .registry(cpu::register_unary).run(), Error);
}

}  // namespace
}  // namespace ogx::test
