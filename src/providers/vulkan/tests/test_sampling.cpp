// Argmax and top-k / top-p / temperature sampling on the device: exact argmax with ties, support of the sampled
// tokens, and frequencies against the softmax probabilities over many rows sampled in one dispatch.
#include "providers/vulkan/kernels/sampling.h"
#include "providers/vulkan/tests/vk_test_util.h"

#include <algorithm>
#include <random>
#include <limits>
#include <cmath>
#include <cstring>
#include <numeric>
#include <set>

namespace ogx::vk::test {
namespace {

struct SpreadDraws {
  std::vector<int64_t> tokens;   // [calls * B]
  std::vector<uint32_t> states;  // each row's random state after the last call
};

class VulkanSamplingTest : public VulkanTest {
 protected:
  // Rejection sampling (top-p alone, top-k alone, spread over chunks with a scratch): B rows of one logit vector,
  // `calls` calls with each row's state carried.
  SpreadDraws spread_draws(const kernels::SamplingParams& sp, const std::vector<float>& row, int64_t B, int calls,
                           DType dt, uint64_t seed);
  std::vector<int64_t> run(const kernels::SamplingParams& params, const std::vector<float>& logits, int64_t B,
                           int64_t V, DType dt, uint64_t seed = 1) {
    TensorView lv = upload(logits, dt, {B, V}), tokens = empty(DType::i64, {B});
    auto state = kernels::seed_sampling_state(seed, B);
    TensorView rng = upload_i32(std::vector<int32_t>(state.begin(), state.end()), {B});
    CommandRecorder rec(ctx());
    rec.begin();
    kernels::sample_tokens(rec, params, lv, tokens, rng);
    rec.end();
    rec.run();
    Tensor h = ctx().transfers().download_tensor(tokens);
    return std::vector<int64_t>(h.data<int64_t>(), h.data<int64_t>() + B);
  }
};

TEST_F(VulkanSamplingTest, ArgmaxLowestIndexOnTies) {
  for (DType dt : {DType::f32, DType::f16}) {
    int64_t B = 3, V = 5003;
    auto logits = round_to(random_values(B * V, 90, -10, 10), dt);
    logits[0 * V + 4000] = 20, logits[0 * V + 17] = 20;  // tie: 17 wins
    logits[1 * V + 5002] = 30;
    logits[2 * V + 0] = 25;
    auto got = run({}, logits, B, V, dt);
    EXPECT_EQ(got, (std::vector<int64_t>{17, 5002, 0})) << dtype_name(dt);
  }
}

// The argmax spread over many workgroups per row (a scratch for the chunks' results) against the CPU, ties placed
// in different chunks and at chunk edges; calls of batches 5, 3, 3, 4 on one scratch (its counters must return to
// zero, and a smaller batch after a larger one must not read the larger one's results as counters: that gave
// garbage tokens to ogx serve when a request left), each also writing the host-visible copy of the tokens.
TEST_F(VulkanSamplingTest, SpreadArgmaxMatchesTheCpuAndWritesTheHostCopy) {
  for (DType dt : {DType::f32, DType::f16}) {
    const int64_t maxB = 5, V = 128256 + 37;
    ASSERT_GT(kernels::argmax_chunks(V), 1u);
    int64_t words = kernels::argmax_scratch_words(maxB, V);
    TensorView scratch = empty(DType::i32, {words});
    HostVisibleBuffer host(ctx().memory(), "host tokens", (VkDeviceSize)maxB * 8, true);
    int call = 0;
    for (int64_t B : {5, 3, 3, 4}) {
      TensorView host_tokens = host.view(DType::i64, {B});
      auto logits = round_to(random_values(B * V, 93 + call, -10, 10), dt);
      int64_t per = (V + kernels::argmax_chunks(V) - 1) / kernels::argmax_chunks(V);
      logits[0 * V + 3 * per + 5] = 40, logits[0 * V + 2 * per - 1] = 40;  // tie in two chunks: the lower wins
      logits[1 * V + V - 1] = 40;                                           // the last logit
      logits[2 * V + per] = 40, logits[2 * V + per + 1] = 40;               // tie at a chunk's first element
      TensorView lv = upload(logits, dt, {B, V}), tokens = empty(DType::i64, {B});
      CommandRecorder rec(ctx());
      rec.begin();
      kernels::sample_tokens(rec, {}, lv, tokens, tokens, &host_tokens, &scratch);
      rec.end();
      rec.run();
      Tensor h = ctx().transfers().download_tensor(tokens);
      std::vector<int64_t> got(h.data<int64_t>(), h.data<int64_t>() + B), host_got(B);
      host.read(host_got.data(), (VkDeviceSize)B * 8);
      std::vector<int64_t> want(B);
      for (int64_t b = 0; b < B; b++)
        want[b] = std::max_element(logits.begin() + b * V, logits.begin() + (b + 1) * V) - (logits.begin() + b * V);
      EXPECT_EQ(std::vector<int64_t>(want.begin(), want.begin() + 3), (std::vector<int64_t>{2 * per - 1, V - 1, per}));
      EXPECT_EQ(got, want) << dtype_name(dt) << " call " << call << " batch " << B;
      EXPECT_EQ(host_got, want) << dtype_name(dt) << " call " << call << " batch " << B;
      call++;
    }
    Tensor left = ctx().transfers().download_tensor(scratch);
    for (int64_t b = 0; b < kernels::kArgmaxMaxRows; b++)
      EXPECT_EQ(left.data<int32_t>()[b], 0) << "counter of row " << b << " not reset";
  }
}

// A token mask (structured output): masked argmax equals the CPU's argmax over the allowed tokens (single and
// spread over chunks), and sampling never picks a masked token.
TEST_F(VulkanSamplingTest, TokenMaskLeavesOnlyAllowedTokens) {
  for (int64_t V : {int64_t(5003), int64_t(128256 + 37)}) {
    const int64_t B = 3, W = (V + 31) / 32;
    auto logits = random_values(B * V, 77, -10, 10);
    std::vector<int32_t> mask(B * W, 0);
    std::vector<int64_t> want(B, -1);
    for (int64_t b = 0; b < B; b++) {
      for (int64_t i = b; i < V; i += 7 + b) mask[b * W + i / 32] |= (int32_t)(1u << (i % 32));  // sparse allowed set
      float best = -1e30f;
      for (int64_t i = 0; i < V; i++)
        if ((mask[b * W + i / 32] >> (i % 32) & 1) && logits[b * V + i] > best) best = logits[b * V + i], want[b] = i;
      logits[b * V + (want[b] + 1) % V] = 50;  // a larger logit on a masked token must lose
    }
    TensorView mv = upload_i32(mask, {B, W});
    int64_t words = kernels::argmax_scratch_words(B, V);
    TensorView scratch = empty(DType::i32, {words});
    for (bool spread : {false, true}) {
      TensorView lv = upload(logits, DType::f32, {B, V}), tokens = empty(DType::i64, {B});
      CommandRecorder rec(ctx());
      rec.begin();
      kernels::sample_tokens(rec, {}, lv, tokens, tokens, nullptr, spread ? &scratch : nullptr, &mv);
      rec.end();
      rec.run();
      Tensor h = ctx().transfers().download_tensor(tokens);
      EXPECT_EQ(std::vector<int64_t>(h.data<int64_t>(), h.data<int64_t>() + B), want) << "V " << V << " spread " << spread;
    }
    kernels::SamplingParams sp;
    sp.greedy = false;
    sp.top_k = 50;
    for (uint64_t seed = 1; seed <= 5; seed++) {
      TensorView lv = upload(logits, DType::f32, {B, V}), tokens = empty(DType::i64, {B});
      auto state = kernels::seed_sampling_state(seed, B);
      TensorView rng = upload_i32(std::vector<int32_t>(state.begin(), state.end()), {B});
      CommandRecorder rec(ctx());
      rec.begin();
      kernels::sample_tokens(rec, sp, lv, tokens, rng, nullptr, nullptr, &mv);
      rec.end();
      rec.run();
      Tensor h = ctx().transfers().download_tensor(tokens);
      for (int64_t b = 0; b < B; b++) {
        int64_t t = h.data<int64_t>()[b];
        ASSERT_TRUE(t >= 0 && t < V && (mask[b * W + t / 32] >> (t % 32) & 1)) << "row " << b << " picked " << t;
      }
    }
  }
}

// Per-row settings (generators decoding together): one dispatch over rows that each pick their own way — argmax
// (spread over the scratch's chunks), top-k 1, top-k / top-p / temperature sampling — equals each row picked alone
// with its settings and random state, over three calls on one scratch (random states advance only on sampling
// rows, the argmax counters return to zero).
TEST_F(VulkanSamplingTest, PerRowSettingsEqualEachRowAlone) {
  const int64_t B = 6, V = 128256 + 37;
  std::vector<kernels::SamplingParams> rows(B);
  rows[1].greedy = false, rows[1].top_k = 1;
  rows[2].greedy = false, rows[2].top_k = 50, rows[2].top_p = 0.9f, rows[2].temperature = 0.7f;
  rows[3].greedy = false, rows[3].top_p = 0.95f, rows[3].temperature = 1.3f;  // top-p alone: rejection sampling
  rows[4].greedy = false, rows[4].top_k = 40, rows[4].temperature = 0.5f;  // top-k alone: rejection sampling
  rows[5].greedy = false, rows[5].temperature = 0.8f;  // the whole distribution (Gumbel argmax over the chunks)
  std::vector<uint32_t> words(B * 4);
  for (int64_t b = 0; b < B; b++) kernels::write_row_params(rows[b], &words[b * 4]);
  TensorView params = upload_i32(std::vector<int32_t>(words.begin(), words.end()), {B, 4});
  TensorView scratch = empty(DType::i32, {kernels::argmax_scratch_words(B, V)});
  auto seeds = kernels::seed_sampling_state(42, B);
  std::vector<uint32_t> state(seeds.begin(), seeds.end());  // each row's random state, as the host tracks it
  TensorView rng = upload_i32(std::vector<int32_t>(seeds.begin(), seeds.end()), {B});
  for (int call = 0; call < 3; call++) {
    auto logits = random_values(B * V, 200 + call, -6, 6);
    TensorView lv = upload(logits, DType::f32, {B, V}), tokens = empty(DType::i64, {B});
    CommandRecorder rec(ctx());
    rec.begin();
    kernels::sample_tokens(rec, {}, lv, tokens, rng, nullptr, &scratch, nullptr, &params);
    rec.end();
    rec.run();
    Tensor h = ctx().transfers().download_tensor(tokens);
    for (int64_t b = 0; b < B; b++) {
      std::vector<float> one(logits.begin() + b * V, logits.begin() + (b + 1) * V);
      std::vector<int64_t> alone = run(rows[b], one, 1, V, DType::f32);  // seed 1: replaced below for sampling rows
      if (!rows[b].greedy) {
        TensorView l1 = upload(one, DType::f32, {1, V}), t1 = empty(DType::i64, {1});
        TensorView r1 = upload_i32({(int32_t)state[b]}, {1});
        TensorView s1 = empty(DType::i32, {kernels::argmax_scratch_words(1, V)});
        CommandRecorder r(ctx());
        r.begin();
        kernels::sample_tokens(r, rows[b], l1, t1, r1, nullptr, &s1);  // spread as the rows are
        r.end();
        r.run();
        alone = {ctx().transfers().download_tensor(t1).data<int64_t>()[0]};
        state[b] = (uint32_t)ctx().transfers().download_tensor(r1).data<int32_t>()[0];
      }
      EXPECT_EQ(h.data<int64_t>()[b], alone[0]) << "row " << b << " call " << call;
    }
    Tensor after = ctx().transfers().download_tensor(rng);
    for (int64_t b = 0; b < B; b++) EXPECT_EQ((uint32_t)after.data<int32_t>()[b], state[b]) << "random state of row " << b;
  }
  Tensor left = ctx().transfers().download_tensor(scratch);
  for (int64_t b = 0; b < kernels::kArgmaxMaxRows; b++) EXPECT_EQ(left.data<int32_t>()[b], 0) << "counter " << b;
}

TEST_F(VulkanSamplingTest, TopKOneIsArgmax) {
  int64_t B = 4, V = 777;
  auto logits = random_values(B * V, 91, -5, 5);
  kernels::SamplingParams sp;
  sp.greedy = false, sp.top_k = 1, sp.temperature = 0.7f;
  auto got = run(sp, logits, B, V, DType::f32);
  for (int64_t b = 0; b < B; b++)
    EXPECT_EQ(got[b], std::max_element(logits.begin() + b * V, logits.begin() + (b + 1) * V) - (logits.begin() + b * V));
}

// Rows share one logit vector; each row has its own random state, so B rows are B independent draws.
std::vector<double> frequencies(const std::vector<int64_t>& tokens, int64_t V) {
  std::vector<double> f(V, 0.0);
  for (auto t : tokens) f[t] += 1.0 / tokens.size();
  return f;
}

TEST_F(VulkanSamplingTest, TopKTemperatureFrequencies) {
  int64_t V = 300, B = 2000, K = 5;
  float temp = 0.8f;
  auto row = random_values(V, 92, -3, 3);
  std::vector<float> logits;
  for (int64_t b = 0; b < B; b++) logits.insert(logits.end(), row.begin(), row.end());
  kernels::SamplingParams sp;
  sp.greedy = false, sp.top_k = (uint32_t)K, sp.temperature = temp;
  auto f = frequencies(run(sp, logits, B, V, DType::f32, 7), V);
  std::vector<int64_t> order(V);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return row[a] > row[b]; });
  double z = 0;
  for (int64_t i = 0; i < K; i++) z += std::exp(row[order[i]] / temp);
  double outside = 1.0;
  for (int64_t i = 0; i < K; i++) {
    double p = std::exp(row[order[i]] / temp) / z;
    outside -= f[order[i]];
    EXPECT_NEAR(f[order[i]], p, 4 * std::sqrt(p * (1 - p) / B) + 1e-3) << "rank " << i;  // ~4 sigma
  }
  EXPECT_NEAR(outside, 0.0, 1e-9) << "tokens outside the top-k were sampled";
}

// top_k 0 and top_p 1: an exact draw from softmax(logits / T) over the whole vocabulary (every token reachable,
// frequencies within ~4 sigma), at T 0.8 and 1.5, f32 and f16 logits.
TEST_F(VulkanSamplingTest, WholeDistributionFrequencies) {
  const int64_t V = 300, B = 4000;
  for (DType dt : {DType::f32, DType::f16})
    for (float temp : {0.8f, 1.5f}) {
      auto row = round_to(random_values(V, 94, -3, 3), dt);
      row[17] = 4.0f;  // one likely token
      std::vector<float> logits;
      for (int64_t b = 0; b < B; b++) logits.insert(logits.end(), row.begin(), row.end());
      kernels::SamplingParams sp;
      sp.greedy = false, sp.temperature = temp;
      auto f = frequencies(run(sp, logits, B, V, dt, 13), V);
      double z = 0;
      for (float x : row) z += std::exp(x / temp);
      double chi2 = 0;
      for (int64_t i = 0; i < V; i++) {
        double p = std::exp(row[i] / temp) / z;
        EXPECT_NEAR(f[i], p, 4.5 * std::sqrt(p * (1 - p) / B) + 1e-3) << "token " << i << " T " << temp;
        chi2 += B * (f[i] - p) * (f[i] - p) / p;
      }
      // V - 1 = 299 degrees of freedom: mean 299, sd ~24.5; 420 is ~5 sd.
      EXPECT_LT(chi2, 420.0) << dtype_name(dt) << " T " << temp;
    }
}

// The whole-distribution draw depends only on the row's state and the logits, not on how the row is split into
// chunks: spread over a scratch it picks what one workgroup per row picks, and the state advances the same.
TEST_F(VulkanSamplingTest, WholeDistributionSpreadEqualsOneWorkgroup) {
  const int64_t B = 4, V = 128256 + 37;
  ASSERT_GT(kernels::argmax_chunks(V), 1u);
  TensorView scratch = empty(DType::i32, {kernels::argmax_scratch_words(B, V)});
  kernels::SamplingParams sp;
  sp.greedy = false, sp.temperature = 0.9f;
  auto seeds = kernels::seed_sampling_state(77, B);
  TensorView rng_spread = upload_i32(std::vector<int32_t>(seeds.begin(), seeds.end()), {B});
  TensorView rng_one = upload_i32(std::vector<int32_t>(seeds.begin(), seeds.end()), {B});
  std::set<int64_t> seen;
  for (int call = 0; call < 4; call++) {
    auto logits = random_values(B * V, 300 + call, -2, 2);
    TensorView lv = upload(logits, DType::f32, {B, V});
    TensorView t_spread = empty(DType::i64, {B}), t_one = empty(DType::i64, {B});
    CommandRecorder rec(ctx());
    rec.begin();
    kernels::sample_tokens(rec, sp, lv, t_spread, rng_spread, nullptr, &scratch);
    kernels::sample_tokens(rec, sp, lv, t_one, rng_one);
    rec.end();
    rec.run();
    Tensor a = ctx().transfers().download_tensor(t_spread), b = ctx().transfers().download_tensor(t_one);
    for (int64_t r = 0; r < B; r++) {
      EXPECT_EQ(a.data<int64_t>()[r], b.data<int64_t>()[r]) << "row " << r << " call " << call;
      seen.insert(a.data<int64_t>()[r]);
    }
  }
  EXPECT_GT(seen.size(), 12u) << "16 draws from a nearly flat distribution over 128k tokens repeat";
  Tensor sa = ctx().transfers().download_tensor(rng_spread), sb = ctx().transfers().download_tensor(rng_one);
  for (int64_t r = 0; r < B; r++) EXPECT_EQ(sa.data<int32_t>()[r], sb.data<int32_t>()[r]) << "state of row " << r;
  Tensor left = ctx().transfers().download_tensor(scratch);
  for (int64_t b = 0; b < kernels::kArgmaxMaxRows; b++) EXPECT_EQ(left.data<int32_t>()[b], 0) << "counter " << b;
}

TEST_F(VulkanSamplingTest, TopPKeepsTheNucleus) {
  int64_t V = 64, B = 2000;
  std::vector<float> row(V);
  for (int64_t i = 0; i < V; i++) row[i] = (float)std::log(1.0 / (i + 1));  // p ~ 1 / (i + 1), descending
  std::vector<float> logits;
  for (int64_t b = 0; b < B; b++) logits.insert(logits.end(), row.begin(), row.end());
  kernels::SamplingParams sp;
  sp.greedy = false, sp.top_p = 0.5f;
  auto f = frequencies(run(sp, logits, B, V, DType::f16, 11), V);
  std::vector<double> p(V);
  double z = 0;
  for (int64_t i = 0; i < V; i++) z += (p[i] = 1.0 / (i + 1));
  double cum = 0;
  int64_t keep = 0;
  while (cum < 0.5) cum += p[keep++] / z;
  double kept = 0;
  for (int64_t i = 0; i < keep; i++) kept += p[i];
  for (int64_t i = 0; i < V; i++) {
    double want = i < keep ? p[i] / kept : 0.0;
    EXPECT_NEAR(f[i], want, 4 * std::sqrt(want * (1 - want) / B) + 1e-3) << "token " << i << " keep " << keep;
  }
}

TEST_F(VulkanSamplingTest, TopPWithoutTopKUsesTheWholeVocabulary) {
  // 50 tokens at logit 5 and 4950 at 0: the first 42 hold half the full mass (renormalising over only the top 1024
  // candidates would cut at 29); ties are ordered by index.
  int64_t V = 5000, B = 1000;
  std::vector<float> row(V, 0.0f);
  for (int i = 0; i < 50; i++) row[i] = 5.0f;
  std::vector<float> logits;
  for (int64_t b = 0; b < B; b++) logits.insert(logits.end(), row.begin(), row.end());
  kernels::SamplingParams sp;
  sp.greedy = false, sp.top_p = 0.5f;
  auto got = run(sp, logits, B, V, DType::f32, 5);
  double z = 50 * std::exp(5.0) + 4950;
  int64_t keep = (int64_t)std::ceil(0.5 * z / std::exp(5.0));
  ASSERT_EQ(keep, 42);
  int64_t max_seen = 0;
  for (auto t : got) {
    EXPECT_LT(t, keep);
    max_seen = std::max(max_seen, t);
  }
  EXPECT_GE(max_seen, 35) << "the nucleus looks cut short";
}

SpreadDraws VulkanSamplingTest::spread_draws(const kernels::SamplingParams& sp, const std::vector<float>& row,
                                             int64_t B, int calls, DType dt, uint64_t seed) {
  const int64_t V = (int64_t)row.size();
  std::vector<float> logits;
  for (int64_t b = 0; b < B; b++) logits.insert(logits.end(), row.begin(), row.end());
  TensorView lv = upload(logits, dt, {B, V});
  TensorView scratch = empty(DType::i32, {kernels::argmax_scratch_words(B, V)});
  auto seeds = kernels::seed_sampling_state(seed, B);
  TensorView rng = upload_i32(std::vector<int32_t>(seeds.begin(), seeds.end()), {B});
  SpreadDraws d;
  for (int c = 0; c < calls; c++) {
    TensorView tokens = empty(DType::i64, {B});
    CommandRecorder rec(ctx());
    rec.begin();
    kernels::sample_tokens(rec, sp, lv, tokens, rng, nullptr, &scratch);
    rec.end();
    rec.run();
    Tensor h = ctx().transfers().download_tensor(tokens);
    d.tokens.insert(d.tokens.end(), h.data<int64_t>(), h.data<int64_t>() + B);
  }
  Tensor s = ctx().transfers().download_tensor(rng);
  for (int64_t b = 0; b < B; b++) d.states.push_back((uint32_t)s.data<int32_t>()[b]);
  Tensor left = ctx().transfers().download_tensor(scratch);
  for (int64_t b = 0; b < kernels::kArgmaxMaxRows; b++) EXPECT_EQ(left.data<int32_t>()[b], 0) << "counter " << b;
  return d;
}

// The exact distribution: softmax(row / T) over the first `keep` tokens of the order (logit desc, index asc), where
// keep is top_k, or the shortest prefix whose probability reaches top_p.
std::vector<double> cut_softmax(const std::vector<float>& row, float temp, uint32_t top_k, float top_p) {
  const int64_t V = (int64_t)row.size();
  std::vector<int64_t> order(V);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return row[a] > row[b]; });
  double mx = row[order[0]] / temp, z = 0;
  for (float x : row) z += std::exp(x / temp - mx);
  int64_t keep = top_k ? std::min<int64_t>(top_k, V) : 0;
  for (double cum = 0; !top_k && cum < top_p && keep < V; keep++) cum += std::exp(row[order[keep]] / temp - mx) / z;
  std::vector<double> want(V, 0.0);
  double kept = 0;
  for (int64_t i = 0; i < keep; i++) kept += std::exp(row[order[i]] / temp - mx);
  for (int64_t i = 0; i < keep; i++) want[order[i]] = std::exp(row[order[i]] / temp - mx) / kept;
  return want;
}

uint32_t lcg_steps(uint32_t s, int n) {  // sample.comp's lcg_step, n times: every sampling call advances a row once
  for (int i = 0; i < n; i++) s = s * 747796405u + 2891336453u;
  return s;
}

// top-p alone, spread: frequencies of 1,536 draws against the exact nucleus (top_p 0.9: mostly one round; 0.3: several
// and the one-workgroup fallback for ~17% of the rows), f32 and f16 logits, 3 chunks of a shuffled Zipf-like row;
// each call advances a row's state once.
TEST_F(VulkanSamplingTest, TopPSpreadFrequenciesEqualTheNucleus) {
  const int64_t V = 5000, B = 256;
  const int calls = 6;
  ASSERT_GT(kernels::argmax_chunks(V), 1u);
  std::vector<float> row(V);
  auto noise = random_values(V, 95, 0, 1);
  for (int64_t i = 0; i < V; i++) row[(i * 7919) % V] = (float)std::log(1.0 / (i + 1)) * 1.5f + 0.01f * noise[i];
  for (auto [dt, top_p] : {std::pair<DType, float>{DType::f32, 0.9f}, {DType::f16, 0.9f}, {DType::f32, 0.3f}}) {
    auto r = round_to(row, dt);
    kernels::SamplingParams sp;
    sp.greedy = false, sp.top_p = top_p, sp.temperature = 0.9f;
    SpreadDraws d = spread_draws(sp, r, B, calls, dt, 21);
    auto f = frequencies(d.tokens, V);
    auto want = cut_softmax(r, sp.temperature, 0, top_p);
    const double n = (double)d.tokens.size();
    double chi2 = 0;
    int64_t support = 0;
    for (int64_t i = 0; i < V; i++) {
      if (want[i] == 0) {
        EXPECT_EQ(f[i], 0.0) << "token " << i << " outside the nucleus, top_p " << top_p;
        continue;
      }
      support++;
      EXPECT_NEAR(f[i], want[i], 4.5 * std::sqrt(want[i] * (1 - want[i]) / n) + 2e-3) << "token " << i;
      chi2 += n * (f[i] - want[i]) * (f[i] - want[i]) / want[i];
    }
    // Tokens with expected counts under ~5 inflate chi-square; the bound is ~5 sd over support - 1 dof.
    EXPECT_LT(chi2, support + 5 * std::sqrt(2.0 * support) + 20) << dtype_name(dt) << " top_p " << top_p;
    auto seeds = kernels::seed_sampling_state(21, B);
    for (int64_t b = 0; b < B; b++) EXPECT_EQ(d.states[b], lcg_steps(seeds[b], calls)) << "state of row " << b;
  }
}

// top-k alone, spread: the support is the top k and the frequencies are softmax over it, for a peaked row (accepted
// in the rounds) and a flat one (top 20 of 5,000: the one-workgroup fallback).
TEST_F(VulkanSamplingTest, TopKSpreadFrequenciesEqualTheTopK) {
  const int64_t V = 5000, B = 256;
  for (bool peaked : {true, false}) {
    const int calls = peaked ? 8 : 4;
    auto row = random_values(V, 96, -1, 1);
    if (peaked)
      for (int64_t i = 0; i < 12; i++) row[(i * 389) % V] = 9.0f - 0.4f * (float)i;
    kernels::SamplingParams sp;
    sp.greedy = false, sp.top_k = 20, sp.temperature = 1.0f;
    SpreadDraws d = spread_draws(sp, row, B, calls, DType::f32, 31);
    auto f = frequencies(d.tokens, V);
    auto want = cut_softmax(row, 1.0f, 20, 1.0f);
    const double n = (double)d.tokens.size();
    for (int64_t i = 0; i < V; i++) {
      if (want[i] == 0) EXPECT_EQ(f[i], 0.0) << "token " << i << " outside the top-k, peaked " << peaked;
      else EXPECT_NEAR(f[i], want[i], 4.5 * std::sqrt(want[i] * (1 - want[i]) / n) + 2e-3) << "token " << i;
    }
    auto seeds = kernels::seed_sampling_state(31, B);
    for (int64_t b = 0; b < B; b++) EXPECT_EQ(d.states[b], lcg_steps(seeds[b], calls)) << "state of row " << b;
  }
}

TEST_F(VulkanSamplingTest, LargeVocabTopKSupport) {
  for (auto [V, K] : {std::pair<int64_t, int64_t>{32000, 40}, {128256 + 37, 50}, {128256 + 37, 1}, {128256 + 37, 1024}}) {
  const int64_t B = 64;
  auto row = random_values(V, 93, -8, 8);
  std::vector<float> logits;
  for (int64_t b = 0; b < B; b++) logits.insert(logits.end(), row.begin(), row.end());
  kernels::SamplingParams sp;
  sp.greedy = false, sp.top_k = (uint32_t)K, sp.temperature = 5.0f;
  auto got = run(sp, logits, B, V, DType::f32, 3);
  std::vector<float> sorted = row;
  std::nth_element(sorted.begin(), sorted.begin() + (K - 1), sorted.end(), std::greater<float>());
  float kth = sorted[K - 1];
  for (auto t : got) EXPECT_GE(row[t], kth) << "token " << t << " is not in the top " << K << " of " << V;
  }
}

// Beam search's candidates (beam_candidates.comp) against a host reference: each row's max and sum of exp(x - max)
// (fp32 in index order on the host, a tree on the device: relative 1e-5, ~2^-17, for sums of up to 128k terms each
// <= 1), and its K largest logits with their ids exactly, by value descending then id ascending. Rows with ties at
// the top, ties straddling the K-th place (the kept ones are the K best by (value, id) only when the ties fit, so
// those rows check values and that the ids hold those values), -inf entries (masked tokens), V from 1 to past 128k,
// K from 1 to 64, fp32 and fp16 logits.
TEST_F(VulkanSamplingTest, BeamCandidatesMatchTheHost) {
  struct Case {
    int64_t B, V, K;
  };
  for (DType dt : {DType::f32, DType::f16})
    for (const Case& c : {Case{1, 1, 1}, Case{3, 7, 7}, Case{4, 5003, 8}, Case{2, 128256 + 37, 64}, Case{5, 300, 6},
                          Case{16, 2048, 2}}) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " B " + std::to_string(c.B) + " V " + std::to_string(c.V) + " K " +
                   std::to_string(c.K));
      auto logits = round_to(random_values(c.B * c.V, (uint32_t)(c.V + c.K), -12, 12), dt);
      if (c.V >= 300) {
        logits[0 * c.V + c.V / 2] = 40, logits[0 * c.V + 3] = 40;  // a tie at the top: id 3 first
        for (int64_t i = 10; i < 20; i++) logits[(c.B - 1) * c.V + i] = -INFINITY;  // masked tokens
      }
      if (c.B >= 2 && c.V >= 300)  // row 1: more ties at one value than fit after the K - 2 larger ones
        for (int64_t i = 0; i < c.V; i += c.V / (c.K + 3)) logits[1 * c.V + i] = i < c.V / 3 ? 30 : 25;
      if (c.B >= 3 && c.V >= 2048)  // row 2: every logit equal (more than the threshold pass keeps: the radix select)
        std::fill(logits.begin() + 2 * c.V, logits.begin() + 3 * c.V, 1.5f);
      TensorView lv = upload(logits, dt, {c.B, c.V});
      TensorView out = empty(DType::i32, {c.B * kernels::beam_candidate_words(c.K)});
      CommandRecorder rec(ctx());
      rec.begin();
      kernels::beam_candidates(rec, lv, c.K, out);
      rec.end();
      rec.run();
      Tensor h = ctx().transfers().download_tensor(out);
      const uint32_t* w = h.data<uint32_t>();
      for (int64_t b = 0; b < c.B; b++) {
        const float* x = logits.data() + b * c.V;
        const uint32_t* row = w + b * kernels::beam_candidate_words(c.K);
        float mx = -INFINITY, sum = 0.0f;
        for (int64_t i = 0; i < c.V; i++) mx = std::max(mx, x[i]);
        for (int64_t i = 0; i < c.V; i++) sum += std::exp(x[i] - mx);
        float got_max, got_sum;
        std::memcpy(&got_max, &row[0], 4);
        std::memcpy(&got_sum, &row[1], 4);
        EXPECT_EQ(got_max, mx) << "row " << b;
        EXPECT_NEAR(got_sum, sum, 1e-5 * sum) << "row " << b;
        std::vector<int64_t> order(c.V);
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return x[i] > x[j]; });
        const float kth = x[order[c.K - 1]];
        int64_t above = 0;  // candidates strictly above the K-th value: exactly determined
        while (above < c.K && x[order[above]] > kth) above++;
        const bool ties_fit = above + (int64_t)std::count(x, x + c.V, kth) <= c.K;
        for (int64_t i = 0; i < c.K; i++) {
          float v;
          std::memcpy(&v, &row[2 + i], 4);
          const uint32_t id = row[2 + c.K + i];
          ASSERT_LT(id, (uint32_t)c.V) << "row " << b << " candidate " << i;
          EXPECT_EQ(v, x[order[i]]) << "row " << b << " candidate " << i;
          EXPECT_EQ(x[id], v) << "row " << b << " candidate " << i << ": the id does not hold its value";
          if (i < above || ties_fit) {
            EXPECT_EQ((int64_t)id, order[i]) << "row " << b << " candidate " << i;
          }
          if (i > 0 && v == x[row[2 + c.K + i - 1]]) {
            EXPECT_GT(id, row[2 + c.K + i - 1]) << "ties: ids ascending";
          }
        }
      }
    }
}

// With a token mask (beam steps below min_length ban EOS): a banned token counts as -3e38 — out of the sum and of the
// candidates (the top logit and a tie partner banned here), exactly as the host's lowest-float ban.
TEST_F(VulkanSamplingTest, BeamCandidatesHonourTheTokenMask) {
  const int64_t B = 2, V = 4099, K = 8, words = (V + 31) / 32;
  auto logits = random_values(B * V, 7, -5, 5);
  logits[0 * V + 100] = 30, logits[0 * V + 4098] = 20, logits[0 * V + 7] = 20;  // 100 and 7 banned: 4098 first
  std::vector<int32_t> mask((size_t)(B * words), -1);
  auto ban = [&](int64_t b, int64_t t) { mask[(size_t)(b * words + t / 32)] &= ~(int32_t)(1u << (t % 32)); };
  ban(0, 100), ban(0, 7), ban(1, 0), ban(1, 4098);
  TensorView lv = upload(logits, DType::f32, {B, V}), mv = upload_i32(mask, {B * words});
  TensorView out = empty(DType::i32, {B * kernels::beam_candidate_words(K)});
  CommandRecorder rec(ctx());
  rec.begin();
  kernels::beam_candidates(rec, lv, K, out, &mv);
  rec.end();
  rec.run();
  Tensor h = ctx().transfers().download_tensor(out);
  const uint32_t* w = h.data<uint32_t>();
  for (int64_t b = 0; b < B; b++) {
    std::vector<float> x(logits.begin() + b * V, logits.begin() + (b + 1) * V);
    for (int64_t t = 0; t < V; t++)
      if (!((uint32_t)mask[(size_t)(b * words + t / 32)] >> (t % 32) & 1u)) x[(size_t)t] = -3.0e38f;
    float mx = *std::max_element(x.begin(), x.end()), sum = 0.0f;
    for (float v : x) sum += std::exp(v - mx);
    std::vector<int64_t> order(V);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return x[i] > x[j]; });
    const uint32_t* row = w + b * kernels::beam_candidate_words(K);
    float got_max, got_sum;
    std::memcpy(&got_max, &row[0], 4);
    std::memcpy(&got_sum, &row[1], 4);
    EXPECT_EQ(got_max, mx) << "row " << b;
    EXPECT_NEAR(got_sum, sum, 1e-5 * sum) << "row " << b;
    for (int64_t i = 0; i < K; i++) EXPECT_EQ((int64_t)row[2 + K + i], order[i]) << "row " << b << " candidate " << i;
  }
  EXPECT_EQ(w[2 + K], 4098u) << "the banned top logits are not candidates";
}

// Logit edits (logit_edits.comp) against the host's processing of the same logits, bit for bit: repetition (a
// correctly rounded division for positive logits, a product for negative ones), presence / frequency subtraction in
// double precision (values like 0.1 x 3 that no float holds), bans (the lowest float), and their combinations —
// ~11,000 edits in row 0, a few hundred in rows 2 and 4; row 1 without edits, copied; fp32 and fp16 logits. Rows 3
// to 5 are pending (a queued step's): row 3's pending token is named by an edit (its pending values apply), rows 4 and
// 5's by none (the row's fresh edit applies; row 5 has no other edit); row 2's token slot holds a token it must not
// read (not pending).
TEST_F(VulkanSamplingTest, LogitEditsEqualTheHostProcessing) {
  for (DType dt : {DType::f32, DType::f16}) {
    const int64_t B = 6, V = 50000;
    auto logits = round_to(random_values(B * V, 11, -20, 20), dt);
    std::vector<RowEdits> rows(B);
    std::mt19937 rng(5);
    auto subtract = [&] { return rng() % 3 ? 0.0 : 0.4 + 0.1 * (double)(rng() % 7); };
    for (int64_t b : {0, 2, 3, 4})
      for (int32_t t = (int32_t)(rng() % 50); t < V; t += 1 + (int32_t)(rng() % (b == 0 ? 8 : 400))) {
        TokenEdit e;
        e.token = t;
        e.repetition = rng() % 2;
        e.ban = rng() % 11 == 0;
        e.subtract = subtract();
        e.pending_repetition = rng() % 2;
        e.pending_subtract = subtract();
        rows[b].edits.push_back(e);
      }
    for (int64_t b = 0; b < B; b++) rows[b].repetition_penalty = b == 4 ? 1.7f : 1.3f;
    std::vector<int64_t> pending(B, 7);  // (row 2 is not pending: the kernel must not read its 7)
    pending[3] = rows[3].edits[rows[3].edits.size() / 2].token;
    pending[4] = rows[4].edits[1].token + 1;  // between two edits (their spacing is at least 1; + 1 is free when 2+)
    if (pending[4] == rows[4].edits[2].token) rows[4].edits.erase(rows[4].edits.begin() + 2);
    pending[5] = V - 1;
    for (int64_t b : {3, 4, 5}) {
      rows[b].pending = true;
      rows[b].fresh.repetition = b != 5;
      rows[b].fresh.subtract = 0.7;
    }
    auto words = kernels::pack_logit_edits(rows);
    TensorView lv = upload(logits, dt, {B, V}), out = empty(DType::f32, {B, V});
    TensorView ev = upload_i32(std::vector<int32_t>(words.begin(), words.end()), {(int64_t)words.size()});
    TensorView pv = upload_i64(pending, {B});
    CommandRecorder rec(ctx());
    rec.begin();
    kernels::edit_logits(rec, lv, ev, pv, out);
    rec.end();
    rec.run();
    std::vector<float> got = download(out), want = logits;
    auto apply = [&](float& l, float penalty, bool repetition, double sub, bool ban) {
      if (repetition) l = l < 0 ? l * penalty : l / penalty;
      if (sub != 0.0) l = (float)((double)l - sub);
      if (ban) l = std::numeric_limits<float>::lowest();
    };
    for (int64_t b = 0; b < B; b++) {
      const RowEdits& r = rows[b];
      bool named = false;
      for (const TokenEdit& e : r.edits) {
        const bool p = r.pending && e.token == pending[b];
        named = named || p;
        apply(want[b * V + e.token], r.repetition_penalty, p ? e.pending_repetition : e.repetition,
              p ? e.pending_subtract : e.subtract, e.ban);
      }
      if (r.pending && !named)
        apply(want[b * V + pending[b]], r.repetition_penalty, r.fresh.repetition, r.fresh.subtract, false);
      EXPECT_EQ(named, b == 3) << "row " << b;
    }
    int64_t differ = 0;
    for (int64_t i = 0; i < B * V; i++) differ += got[i] != want[i];
    EXPECT_EQ(differ, 0) << dtype_name(dt) << ": logits that differ from the host's processing";
    for (int64_t b : {3, 4, 5})
      EXPECT_NE(got[b * V + pending[b]], logits[b * V + pending[b]]) << "row " << b << "'s pending token is edited";
  }
}

}  // namespace
}  // namespace ogx::vk::test
