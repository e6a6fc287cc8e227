// Rotary caches of every rope_scaling type against a float64 transcription of transformers' modeling_rope_utils.py
// (_compute_default/linear/llama3/yarn/longrope_parameters, then cos/sin(t * inv_freq) * attention_factor), and
// the config parsing around them (Phi-3's top-level original_max_position_embeddings, "su", bad factor lists).
//
// Tolerance: ogx computes in fp32 as the reference builder does (inv_freq and the angle t * inv_freq rounded to
// fp32, cos/sin of that angle correctly rounded). The angle's rounding error is at most |t * inv| * 2^-23 <=
// 128 * 2^-23 = 1.5e-5 for the positions tested here (and inv_freq's own rounding adds as much), so cos/sin differ
// from the float64 values by <= ~3e-5 times the attention factor (<= 1.5 here): 1e-4 is safe and still fails on any
// formula error (the variants change values by 1e-2 and more).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include <nlohmann/json.hpp>

#include "builder/hf_config.h"
#include "builder/rope.h"
#include "common/error.h"

using nlohmann::json;

namespace ogx::builder {
namespace {

constexpr int kHeadDim = 32, kMaxPos = 128;

json base_config(const char* arch = "LlamaForCausalLM") {
  return {{"architectures", {arch}},   {"hidden_size", 128},       {"intermediate_size", 96},
          {"num_hidden_layers", 2},    {"num_attention_heads", 4}, {"num_key_value_heads", 2},
          {"vocab_size", 256},         {"max_position_embeddings", kMaxPos}, {"rope_theta", 10000.0}};
}

// float64 transcriptions of transformers' formulas: inv_freq [dim / 2] and the attention factor.
struct Ref {
  std::vector<double> inv;
  double attention = 1.0;
  int64_t rows = kMaxPos;
};

std::vector<double> default_inv(double theta) {
  std::vector<double> inv(kHeadDim / 2);
  for (int i = 0; i < kHeadDim / 2; i++) inv[i] = 1.0 / std::pow(theta, (2.0 * i) / kHeadDim);
  return inv;
}

Ref llama3_ref(double factor, double lo, double hi, double old_len) {
  Ref r;
  r.inv = default_inv(10000.0);
  for (double& f : r.inv) {
    double wavelen = 2 * M_PI / f;
    if (wavelen < old_len / hi) continue;
    if (wavelen > old_len / lo) {
      f /= factor;
      continue;
    }
    double smooth = (old_len / wavelen - lo) / (hi - lo);
    f = (1 - smooth) * f / factor + smooth * f;
  }
  return r;
}

double get_mscale(double s, double m) { return s <= 1 ? 1.0 : 0.1 * m * std::log(s) + 1.0; }

Ref yarn_ref(double factor, double orig, double beta_fast, double beta_slow, double mscale, double mscale_all_dim,
             bool truncate) {
  const double dim = kHeadDim, base = 10000.0;
  auto corr = [&](double rot) { return dim * std::log(orig / (rot * 2 * M_PI)) / (2 * std::log(base)); };
  double low = corr(beta_fast), high = corr(beta_slow);
  if (truncate) low = std::floor(low), high = std::ceil(high);
  low = std::max(low, 0.0), high = std::min(high, dim - 1);
  if (low == high) high += 0.001;
  Ref r;
  std::vector<double> ext = default_inv(base);
  r.inv.resize(ext.size());
  for (size_t i = 0; i < ext.size(); i++) {
    double ramp = std::clamp((i - low) / (high - low), 0.0, 1.0);
    double ef = 1 - ramp;
    r.inv[i] = ext[i] / factor * (1 - ef) + ext[i] * ef;
  }
  r.attention = mscale && mscale_all_dim ? get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim)
                                         : get_mscale(factor, 1);
  return r;
}

Ref longrope_ref(const std::vector<double>& ext, double factor, double orig, int64_t rows) {
  Ref r;
  std::vector<double> inv = default_inv(10000.0);
  for (size_t i = 0; i < inv.size(); i++) inv[i] /= ext[i];
  r.inv = inv;
  r.attention = factor <= 1 ? 1.0 : std::sqrt(1 + std::log(factor) / std::log(orig));
  r.rows = rows;
  return r;
}

void expect_cache(const RopeCache& got, const Ref& want, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(got.inv.size(), want.inv.size());
  ASSERT_EQ(got.rows, want.rows);
  EXPECT_NEAR(got.scale, want.attention, 1e-6);
  const int64_t half = (int64_t)got.inv.size();
  std::vector<float> c(got.rows * half), s(got.rows * half);
  rope_rows(got, false, 0, got.rows, c.data());
  rope_rows(got, true, 0, got.rows, s.data());
  double worst = 0;
  for (int64_t t = 0; t < got.rows; t++)
    for (int64_t i = 0; i < half; i++) {
      double a = (double)t * want.inv[i];
      worst = std::max(worst, std::fabs(c[t * half + i] - std::cos(a) * want.attention));
      worst = std::max(worst, std::fabs(s[t * half + i] - std::sin(a) * want.attention));
    }
  EXPECT_LE(worst, 1e-4);
  // Rows read from an offset equal rows read from 0.
  std::vector<float> part(3 * half);
  rope_rows(got, true, got.rows - 3, 3, part.data());
  for (int64_t k = 0; k < 3 * half; k++) EXPECT_EQ(part[k], s[(got.rows - 3) * half + k]);
}

std::vector<RopeCache> caches_of(const json& c) { return rope_caches(parse_hf_config(c, json())); }

TEST(Rope, DefaultAndLinear) {
  json c = base_config();
  auto d = caches_of(c);
  ASSERT_EQ(d.size(), 1u);
  expect_cache(d[0], Ref{default_inv(10000.0)}, "default");
  c["rope_scaling"] = {{"type", "linear"}, {"factor", 4.0}};
  Ref lin{default_inv(10000.0)};
  for (double& f : lin.inv) f /= 4.0;
  expect_cache(caches_of(c)[0], lin, "linear");
}

TEST(Rope, Llama3MatchesTransformers) {
  json c = base_config();
  c["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0},
                       {"high_freq_factor", 4.0}, {"original_max_position_embeddings", 64}};
  Ref want = llama3_ref(8.0, 1.0, 4.0, 64.0);
  // The three regimes all occur at this size (unchanged, divided, smoothed), so each branch is checked.
  int unchanged = 0, divided = 0, smoothed = 0;
  std::vector<double> d = default_inv(10000.0);
  for (size_t i = 0; i < d.size(); i++) {
    if (want.inv[i] == d[i]) unchanged++;
    else if (std::fabs(want.inv[i] - d[i] / 8.0) < 1e-15) divided++;
    else smoothed++;
  }
  EXPECT_GT(unchanged, 0);
  EXPECT_GT(divided, 0);
  EXPECT_GT(smoothed, 0);
  expect_cache(caches_of(c)[0], want, "llama3");
}

TEST(Rope, YarnQwenAndDeepSeekStyle) {
  json c = base_config("Qwen2ForCausalLM");
  c["rope_scaling"] = {{"type", "yarn"}, {"factor", 4.0}, {"original_max_position_embeddings", 32}};
  expect_cache(caches_of(c)[0], yarn_ref(4.0, 32, 32, 1, 0, 0, true), "qwen yarn");
  // DeepSeek: mscale / mscale_all_dim, explicit betas.
  c["rope_scaling"] = {{"type", "yarn"},       {"factor", 16.0}, {"original_max_position_embeddings", 64},
                       {"beta_fast", 16.0},    {"beta_slow", 2.0}, {"mscale", 0.707}, {"mscale_all_dim", 1.0}};
  expect_cache(caches_of(c)[0], yarn_ref(16.0, 64, 16, 2, 0.707, 1.0, true), "deepseek yarn");
  // gpt-oss: truncate false; explicit attention_factor wins.
  c["rope_scaling"] = {{"type", "yarn"}, {"factor", 8.0}, {"original_max_position_embeddings", 32},
                       {"truncate", false}, {"attention_factor", 1.25}};
  Ref r = yarn_ref(8.0, 32, 32, 1, 0, 0, false);
  r.attention = 1.25;
  expect_cache(caches_of(c)[0], r, "yarn truncate=false");
}

TEST(Rope, LongropeShortAndLongCaches) {
  json c = base_config("Phi3ForCausalLM");
  c["original_max_position_embeddings"] = 16;  // Phi-3 keeps it at the top level
  std::vector<double> sf(kHeadDim / 2), lf(kHeadDim / 2);
  for (int i = 0; i < kHeadDim / 2; i++) sf[i] = 1.0 + 0.05 * i, lf[i] = 1.0 + 0.9 * i;
  c["rope_scaling"] = {{"type", "longrope"}, {"short_factor", sf}, {"long_factor", lf}};
  auto caches = caches_of(c);
  ASSERT_EQ(caches.size(), 2u);
  const double factor = (double)kMaxPos / 16;
  expect_cache(caches[0], longrope_ref(sf, factor, 16, 16), "short");
  expect_cache(caches[1], longrope_ref(lf, factor, 16, kMaxPos), "long");
  // "su" is the same; short_mscale / long_mscale override the attention factor per cache.
  c["rope_scaling"]["type"] = "su";
  c["rope_scaling"]["short_mscale"] = 1.1;
  c["rope_scaling"]["long_mscale"] = 1.3;
  caches = caches_of(c);
  EXPECT_NEAR(caches[0].scale, 1.1, 1e-6);
  EXPECT_NEAR(caches[1].scale, 1.3, 1e-6);
}

TEST(Rope, BadConfigsNameTheProblem) {
  json c = base_config("Phi3ForCausalLM");
  c["rope_scaling"] = {{"type", "longrope"}, {"short_factor", {1.0, 2.0}}, {"long_factor", {1.0, 2.0}}};
  try {
    caches_of(c);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("short_factor"), std::string::npos) << e.what();
  }
  c["rope_scaling"] = {{"type", "dynamic"}, {"factor", 2.0}};
  try {
    caches_of(c);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("dynamic"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ogx::builder
