// com.microsoft Attention (fused multi-head attention with the combined [2,B,N,P,H] past of GPT-2 exports),
// EmbedLayerNormalization and FastGelu's bias input against float64 loops written here from ONNX Runtime's contrib-op documentation, on seeded
// random shapes and data, fp32 and fp16 (tolerances: contrib_test_util.h; the attention output also passes through
// the fp32 QKV projection over In <= 48 terms, covered by the fp32 tolerance).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "providers/cpu/cpu_ops.h"
#include "providers/cpu/tests/contrib_test_util.h"

namespace ogx::test {
namespace {

using namespace contrib;

TEST(Attention, RandomCasesAgainstFloat64) {
  std::mt19937 rng(21);
  int n = 0;
  for (DType dt : {DType::f32, DType::f16})
    for (bool with_past : {false, true})
      for (bool causal : {false, true})
        for (int mask_kind : {0, 1, 2, 3}) {
          const int64_t B = 1 + rng() % 3, S = 1 + rng() % 5, N = 1 + rng() % 3, dh = 2 + rng() % 5;
          const int64_t Hd = N * dh, In = 4 + rng() % 45, P = with_past ? rng() % 6 : 0, T = P + S;
          const bool with_bias = n % 2 == 0, with_attn_bias = n % 3 == 0;
          const float filter = n % 2 ? -10000.0f : -std::numeric_limits<float>::max();
          SCOPED_TRACE(::testing::Message() << dtype_name(dt) << " B=" << B << " S=" << S << " N=" << N << " dh=" << dh
                                            << " In=" << In << " P=" << P << " causal=" << causal
                                            << " mask=" << mask_kind << " case " << n);
          n++;
          Buf x = random_buf(rng, dt, {B, S, In}), w = random_buf(rng, dt, {In, 3 * Hd}, -0.5, 0.5);
          Buf bias = random_buf(rng, dt, {3 * Hd}), past = random_buf(rng, dt, {2, B, N, P, dh});
          Buf ab = random_buf(rng, DType::f32, {1, N, S, T});
          // Masks: key counts [B] (at least 1), raw [B,T] and [B,S,T] with at least one visible key per query.
          std::vector<int32_t> counts((size_t)B), raw2((size_t)(B * T)), raw3((size_t)(B * S * T));
          for (auto& c : counts) c = 1 + (int32_t)(rng() % T);
          for (auto& m : raw2) m = rng() % 4 != 0;
          for (auto& m : raw3) m = rng() % 4 != 0;
          for (int64_t b = 0; b < B; b++) {
            raw2[(size_t)(b * T)] = 1;
            for (int64_t s = 0; s < S; s++) raw3[(size_t)((b * S + s) * T)] = 1;
          }
          auto visible = [&](int64_t b, int64_t s, int64_t t) {
            if (causal && t > P + s) return false;
            if (mask_kind == 1) return t < counts[(size_t)b];
            if (mask_kind == 2) return raw2[(size_t)(b * T + t)] != 0;
            if (mask_kind == 3) return raw3[(size_t)((b * S + s) * T + t)] != 0;
            return true;
          };
          // float64 reference: QKV projection, K/V = past ++ new (new rounded to dt as the kernel stores them).
          std::vector<double> qkv((size_t)(B * S * 3 * Hd));
          for (int64_t r = 0; r < B * S; r++)
            for (int64_t c = 0; c < 3 * Hd; c++) {
              double a = with_bias ? bias.v[(size_t)c] : 0;
              for (int64_t k = 0; k < In; k++) a += x.v[(size_t)(r * In + k)] * w.v[(size_t)(k * 3 * Hd + c)];
              qkv[(size_t)(r * 3 * Hd + c)] = a;
            }
          std::vector<double> present((size_t)(2 * B * N * T * dh)), y((size_t)(B * S * Hd));
          for (int kv = 0; kv < 2; kv++)
            for (int64_t b = 0; b < B; b++)
              for (int64_t h = 0; h < N; h++)
                for (int64_t t = 0; t < T; t++)
                  for (int64_t i = 0; i < dh; i++) {
                    double v = t < P ? past.v[(size_t)((((kv * B + b) * N + h) * P + t) * dh + i)]
                                     : round_to(dt, qkv[(size_t)((b * S + t - P) * 3 * Hd + (kv + 1) * Hd + h * dh + i)]);
                    present[(size_t)((((kv * B + b) * N + h) * T + t) * dh + i)] = v;
                  }
          const double scale = 1.0 / std::sqrt((double)dh);
          for (int64_t b = 0; b < B; b++)
            for (int64_t h = 0; h < N; h++)
              for (int64_t s = 0; s < S; s++) {
                std::vector<double> sc((size_t)T);
                double mx = -INFINITY;
                for (int64_t t = 0; t < T; t++) {
                  double dot = 0;
                  for (int64_t i = 0; i < dh; i++)
                    dot += qkv[(size_t)((b * S + s) * 3 * Hd + h * dh + i)] *
                           present[(size_t)(((b * N + h) * T + t) * dh + i)];
                  double v = dot * scale + (visible(b, s, t) ? 0.0 : (double)filter);
                  if (with_attn_bias) v += ab.v[(size_t)((h * S + s) * T + t)];
                  sc[(size_t)t] = v;
                  mx = std::max(mx, v);
                }
                double sum = 0;
                for (auto& v : sc) sum += v = std::exp(v - mx);
                for (int64_t i = 0; i < dh; i++) {
                  double acc = 0;
                  for (int64_t t = 0; t < T; t++)
                    acc += sc[(size_t)t] * present[(size_t)((((B + b) * N + h) * T + t) * dh + i)];
                  y[(size_t)((b * S + s) * Hd + h * dh + i)] = acc / sum;
                }
              }
          NodeRun run("com.microsoft", "Attention");
          run.input("input", x.t).constant("weights", w.t);
          if (with_bias) run.constant("bias", bias.t);
          else run.omitted();
          if (mask_kind == 1) run.input("mask_index", make_tensor(DType::i32, {B}, counts));
          else if (mask_kind == 2) run.input("mask_index", make_tensor(DType::i32, {B, T}, raw2));
          else if (mask_kind == 3) run.input("mask_index", make_tensor(DType::i32, {B, S, T}, raw3));
          else run.omitted();
          if (with_past) run.input("past", past.t);
          else run.omitted();
          if (with_attn_bias) run.input("attention_bias", ab.t);
          auto res = run.attr("num_heads", N)
                         .attr("unidirectional", (int64_t)causal)
                         .attr("mask_filter_value", filter)
                         .outputs(2)
                         .threads(1 + n % 3)
                         .registry(cpu::register_attention_mha)
                         .run();
          expect_close(res[0], y, tol_for(dt), "output");
          ASSERT_EQ(res[1].shape(), (Shape{2, B, N, T, dh}));
          expect_close(res[1], present, tol_for(dt), "present");
        }
}

TEST(Attention, BadShapesAreErrorsNamingTheNode) {
  Tensor x = make_tensor(DType::f32, {1, 2, 4}, std::vector<float>(8, 0.5f));
  Tensor w = make_tensor(DType::f32, {4, 12}, std::vector<float>(48, 0.1f));
  Tensor past = make_tensor(DType::f32, {2, 1, 3, 1, 2}, std::vector<float>(12, 0.f));  // 3 heads, not 2
  try {
    NodeRun("com.microsoft", "Attention").input("input", x).constant("weights", w).omitted().omitted()
        .input("past", past).attr("num_heads", int64_t{2}).outputs(2).registry(cpu::register_attention_mha).run();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("past must be [2, 1, 2, past_length, 2]"), std::string::npos) << e.what();
  }
}

TEST(EmbedLayerNormalization, RandomCasesAgainstFloat64) {
  std::mt19937 rng(23);
  for (DType dt : {DType::f32, DType::f16})
    for (int trial = 0; trial < 8; trial++) {
      const int64_t B = 1 + rng() % 3, S = 1 + rng() % 6, H = 2 + rng() % 40, V = 5 + rng() % 30, P = S + rng() % 8;
      const bool segments = trial % 2, with_pos_ids = trial % 4 >= 2, with_mask = trial >= 4, with_beta = trial != 3;
      SCOPED_TRACE(::testing::Message() << dtype_name(dt) << " B=" << B << " S=" << S << " H=" << H << " trial " << trial);
      std::vector<int32_t> ids((size_t)(B * S)), seg((size_t)(B * S)), pos((size_t)(B * S)), mask((size_t)(B * S));
      for (auto& v : ids) v = (int32_t)(rng() % V);
      for (auto& v : seg) v = (int32_t)(rng() % 2);
      for (auto& v : pos) v = (int32_t)(rng() % P);
      for (auto& v : mask) v = (int32_t)(rng() % 3 != 0);
      Buf word = random_buf(rng, dt, {V, H}), pe = random_buf(rng, dt, {P, H}), se = random_buf(rng, dt, {2, H});
      Buf gamma = random_buf(rng, dt, {H}, -2, 2), beta = random_buf(rng, dt, {H});
      const float eps = 1e-5f;
      std::vector<double> y((size_t)(B * S * H)), sum((size_t)(B * S * H)), mi((size_t)B);
      for (int64_t b = 0; b < B; b++) {
        double count = 0;
        for (int64_t s = 0; s < S; s++) count += with_mask ? mask[(size_t)(b * S + s)] : 1;
        mi[(size_t)b] = count;
        for (int64_t s = 0; s < S; s++) {
          const int64_t i = b * S + s, p = with_pos_ids ? pos[(size_t)i] : s;
          double mean = 0, var = 0;
          for (int64_t h = 0; h < H; h++) {
            double v = word.v[(size_t)(ids[(size_t)i] * H + h)] + pe.v[(size_t)(p * H + h)];
            if (segments) v += se.v[(size_t)(seg[(size_t)i] * H + h)];
            sum[(size_t)(i * H + h)] = v;
            mean += v;
          }
          mean /= (double)H;
          for (int64_t h = 0; h < H; h++) var += (sum[(size_t)(i * H + h)] - mean) * (sum[(size_t)(i * H + h)] - mean);
          const double inv = 1.0 / std::sqrt(var / (double)H + eps);
          for (int64_t h = 0; h < H; h++)
            y[(size_t)(i * H + h)] = (sum[(size_t)(i * H + h)] - mean) * inv * gamma.v[(size_t)h] +
                                     (with_beta ? beta.v[(size_t)h] : 0.0);
        }
      }
      NodeRun run("com.microsoft", "EmbedLayerNormalization");
      run.input("input_ids", make_tensor(DType::i32, {B, S}, ids));
      if (segments) run.input("segment_ids", make_tensor(DType::i32, {B, S}, seg));
      else run.omitted();
      run.constant("word_embedding", word.t).constant("position_embedding", pe.t);
      if (segments) run.constant("segment_embedding", se.t);
      else run.omitted();
      run.constant("gamma", gamma.t);
      if (with_beta) run.constant("beta", beta.t);
      else run.omitted();
      if (with_mask) run.input("mask", make_tensor(DType::i32, {B, S}, mask));
      else run.omitted();
      if (with_pos_ids) run.input("position_ids", make_tensor(DType::i32, {B, S}, pos));
      auto res = run.attr("epsilon", eps).outputs(3).registry(cpu::register_embed_layer_norm).run();
      expect_close(res[0], y, tol_for(dt), "output");
      expect_close(res[1], mi, Tol{0, 0}, "mask_index");
      expect_close(res[2], sum, tol_for(dt), "embedding_sum");
    }
  std::vector<int32_t> bad{0, 7};
  try {
    NodeRun("com.microsoft", "EmbedLayerNormalization")
        .input("input_ids", make_tensor(DType::i32, {1, 2}, bad)).omitted()
        .constant("word_embedding", make_tensor(DType::f32, {4, 2}, std::vector<float>(8, 1.f)))
        .constant("position_embedding", make_tensor(DType::f32, {4, 2}, std::vector<float>(8, 1.f))).omitted()
        .constant("gamma", make_tensor(DType::f32, {2}, std::vector<float>(2, 1.f)))
        .registry(cpu::register_embed_layer_norm).run();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("input id 7 is outside the table of 4 rows"), std::string::npos) << e.what();
  }
}

TEST(FastGelu, BiasAlongTheLastAxisAgainstFloat64) {
  std::mt19937 rng(29);
  for (DType dt : {DType::f32, DType::f16})
    for (int trial = 0; trial < 4; trial++) {
      const int64_t B = 1 + rng() % 3, S = 1 + rng() % 5, H = 1 + rng() % 70;
      Buf x = random_buf(rng, dt, {B, S, H}, -4, 4), bias = random_buf(rng, dt, {H});
      std::vector<double> y(x.v.size());
      for (size_t i = 0; i < y.size(); i++) {
        const double v = x.v[i] + bias.v[i % (size_t)H];
        y[i] = 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
      }
      auto res = NodeRun("com.microsoft", "FastGelu").input("x", x.t).constant("bias", bias.t)
                     .registry(cpu::register_unary).run();
      // fp32: the tanh form in fp32 (a few ulp of values up to ~4) -> 1e-5 on top of the shared tolerance.
      Tol t = tol_for(dt);
      expect_close(res[0], y, Tol{t.atol + 1e-5, t.rtol}, "FastGelu(x + bias)");
    }
}

}  // namespace
}  // namespace ogx::test
