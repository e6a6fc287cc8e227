// Next-token choice on the Vulkan provider's device (Generator with DecodeRun::sampling): only token
// ids come back per step. Greedy must give the CPU's tokens on a golden fp32 model; the logits of a
// device-sampled step, fetched on demand, must equal the CPU's; seeded top-k sampling must repeat itself and
// top_k = 1 must be greedy. On lavapipe in CI (validation on); skipped without a Vulkan device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>

#include "genai/batch_step.h"
#include "genai/generator.h"
#include "shared_dir.h"
#include "vulkan_test_config.h"

namespace ogx::test {
namespace {

std::shared_ptr<genai::Model> load(const std::string& dir, bool vulkan) {
  genai::Config c = genai::Config::load(dir);
  c.clear_providers();
  if (vulkan) select_vulkan(c, /*validation=*/true);
  return genai::Model::load(c);
}

std::vector<int32_t> generate(const std::shared_ptr<genai::Model>& m, genai::GeneratorParams p, int n,
                              bool* on_device = nullptr) {
  p.search.max_length = 4 + n;
  genai::Generator g(m, p);
  if (on_device) *on_device = g.samples_on_device();
  g.append_tokens({1, 450, 496, 1735});
  while (!g.is_done()) g.generate_next_token();
  return std::vector<int32_t>(g.sequence().begin() + 4, g.sequence().end());
}

// max |a - b| over the common length (callers check the lengths first).
double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); i++) worst = std::max(worst, (double)std::fabs(a[i] - b[i]));
  return worst;
}

class DeviceSampling : public ::testing::Test {
 protected:
  void SetUp() override {
    OGX_REQUIRE_SHARED();
    dir_ = shared_dir() + "/golden/models/llama/fp32-cpu";
    try {
      vk_ = load(dir_, true);
    } catch (const Error& e) {
      if (no_vulkan_device(e)) GTEST_SKIP() << "no Vulkan device: " << e.what();
      throw;
    }
    cpu_ = load(dir_, false);
  }
  std::string dir_;
  std::shared_ptr<genai::Model> vk_, cpu_;
};

TEST_F(DeviceSampling, vulkan_greedy_gives_the_cpu_tokens) {
  genai::GeneratorParams p(*vk_);
  bool on_device = false;
  std::vector<int32_t> a = generate(vk_, p, 24, &on_device);
  EXPECT_TRUE(on_device) << "the Vulkan provider should pick greedy tokens on the device";
  EXPECT_EQ(a, generate(cpu_, genai::GeneratorParams(*cpu_), 24));
}

TEST_F(DeviceSampling, vulkan_logits_of_a_device_step_are_fetched_on_demand) {
  genai::GeneratorParams pv(*vk_), pc(*cpu_);
  pv.search.max_length = pc.search.max_length = 32;
  genai::Generator gv(vk_, pv), gc(cpu_, pc);
  for (auto* g : {&gv, &gc}) g->append_tokens({1, 450, 496, 1735});
  for (int step = 0; step < 3; step++) {
    gv.generate_next_token();
    gc.generate_next_token();
  }
  gv.generate_next_token();  // runs the pending token on the device and samples there
  gc.generate_next_token();
  const std::vector<float>& a = gv.logits();
  const std::vector<float>& b = gc.logits();
  ASSERT_EQ(a.size(), b.size());
  EXPECT_LE(max_abs_diff(a, b), 1e-4) << "fp32 logits of the same step on both providers";
  EXPECT_EQ(gv.sequence(), gc.sequence());
}

double stat(const genai::Model& m, const std::string& name) {
  for (auto& [k, v] : m.session().stats())
    if (k == name) return v;
  return -1;
}

// Drives `queued` (generate_next_token: each step queues the next) and `alone` (decode_together one step at a time:
// never queued) through the same turns — the prompt and `first` tokens, a rewind of 3 and 6 tokens, an appended turn
// and the rest up to max_length — with equal sequences after each (a dropped queued step leaves no trace).
void expect_queued_equals_unqueued(genai::Generator& queued, genai::Generator& alone, const std::vector<int32_t>& prompt,
                                   int first) {
  auto step = [&](int n) {
    for (int i = 0; i < n && !queued.is_done(); i++) queued.generate_next_token();
    for (int i = 0; i < n && !alone.is_done(); i++) genai::decode_together({&alone});  // no step queued ahead
    ASSERT_EQ(queued.sequence(), alone.sequence());
  };
  for (auto* g : {&queued, &alone}) g->append_tokens(prompt);
  step(first);
  for (auto* g : {&queued, &alone}) g->rewind_to(g->token_count() - 3);
  step(6);
  for (auto* g : {&queued, &alone}) g->append_tokens({322, 1139});
  step(1 << 20);
}

// Greedy steps queued one ahead (Session::queue_next): the tokens must not change when the caller rewinds,
// appends tokens or reaches max_length while a step is queued (the queued step is dropped and its token re-run).
TEST_F(DeviceSampling, vulkan_queued_steps_keep_the_tokens_across_rewind_append_and_max_length) {
  genai::GeneratorParams pv(*vk_), pc(*cpu_);
  pv.search.max_length = pc.search.max_length = 30;
  genai::Generator gv(vk_, pv), gc(cpu_, pc);
  double queued0 = stat(*vk_, "queued_runs"), dropped0 = stat(*vk_, "dropped_runs");
  auto both = [&](auto&& f) {
    f(gv);
    f(gc);
    ASSERT_EQ(gv.sequence(), gc.sequence());
  };
  both([](genai::Generator& g) { g.append_tokens({1, 450, 496, 1735}); });
  for (int i = 0; i < 6; i++) both([](genai::Generator& g) { g.generate_next_token(); });
  both([](genai::Generator& g) { g.rewind_to(g.token_count() - 3); });
  for (int i = 0; i < 4; i++) both([](genai::Generator& g) { g.generate_next_token(); });
  both([](genai::Generator& g) { g.append_tokens({322, 1139}); });
  while (!gc.is_done()) both([](genai::Generator& g) { g.generate_next_token(); });
  EXPECT_TRUE(gv.is_done());
  EXPECT_EQ(gv.token_count(), 30u);
  EXPECT_GT(stat(*vk_, "queued_runs"), queued0 + 10) << "the greedy decode steps should run queued";
  EXPECT_GE(stat(*vk_, "dropped_runs"), dropped0 + 2) << "the rewind and the append each drop a queued step";
}

// Sampled steps queued one ahead (a seeded top-p / temperature row, as an OpenAI request samples): the tokens equal
// the same generator's never queued (decode_together: one step at a time), also when a rewind, an appended turn and
// the end drop a queued step, which advanced the device's random state (the drop puts it back).
TEST_F(DeviceSampling, vulkan_queued_sampled_steps_equal_unqueued_ones_across_drops) {
  genai::GeneratorParams p(*vk_);
  p.search.max_length = 40;
  p.search.do_sample = true;
  p.search.temperature = 0.8;
  p.search.top_k = 0;
  p.search.top_p = 1.0;
  p.search.random_seed = 7;
  p.search.repetition_penalty = 1.0;
  genai::Generator queued(vk_, p), alone(vk_, p);
  ASSERT_TRUE(queued.samples_on_device());
  double queued0 = stat(*vk_, "queued_runs"), dropped0 = stat(*vk_, "dropped_runs");
  expect_queued_equals_unqueued(queued, alone, {1, 450, 496, 1735}, 8);
  EXPECT_TRUE(queued.is_done());
  EXPECT_GT(stat(*vk_, "queued_runs"), queued0 + 10) << "the sampled decode steps should run queued";
  EXPECT_GE(stat(*vk_, "dropped_runs"), dropped0 + 2) << "the rewind and the append each drop a queued step";
}

// A greedy batch of prompts of different lengths (right-padded) picks its B tokens per step on the device, with
// the steps queued: each row's tokens equal the CPU's batch (host argmax), rows that end get pad tokens alike.
TEST_F(DeviceSampling, vulkan_greedy_batch_picks_every_row_on_the_device) {
  const std::vector<std::vector<int32_t>> prompts{{1, 450, 496, 1735}, {1, 1532, 338}, {1, 290, 13, 7, 450, 496}};
  auto run = [&](const std::shared_ptr<genai::Model>& m, bool* on_device) {
    genai::GeneratorParams p(*m);
    p.search.batch_size = (int)prompts.size();
    p.search.max_length = 26;
    genai::Generator g(m, p);
    if (on_device) *on_device = g.samples_on_device();
    g.append_token_sequences(prompts);
    while (!g.is_done()) g.generate_next_token();
    std::vector<std::vector<int32_t>> rows;
    for (size_t i = 0; i < prompts.size(); i++) rows.push_back(g.sequence(i));
    return rows;
  };
  double queued0 = stat(*vk_, "queued_runs");
  bool on_device = false;
  auto got = run(vk_, &on_device);
  EXPECT_TRUE(on_device) << "a greedy batch should pick its tokens on the device";
  EXPECT_EQ(got, run(cpu_, nullptr));
  EXPECT_GT(stat(*vk_, "queued_runs"), queued0 + 10) << "the batch's decode steps should run queued";
}

// A batch's prompt step computes logits at each row's last real position only (the rows gathered before the
// lm_head by the attention's lengths, not B x S x vocab logits), for prompts of one length and for right-padded ones
// of different lengths: the CPU provider's logits (all positions there for the padded batch) and tokens, the first
// picks also made on the device.
TEST_F(DeviceSampling, vulkan_batch_prompt_computes_only_each_rows_last_real_logits) {
  const std::vector<std::vector<std::vector<int32_t>>> batches{
      {{1, 450, 496, 1735, 871, 13}, {1, 1532, 338, 263, 1243, 889}, {1, 290, 13, 7, 450, 496}},
      {{1, 450, 496, 1735, 871, 13}, {1, 1532, 338}, {1, 290, 13, 7, 450}, {1, 29}}};
  for (const auto& prompts : batches) {
    auto first = [&](const std::shared_ptr<genai::Model>& m, std::vector<float>* logits) {
      genai::GeneratorParams p(*m);
      p.search.batch_size = (int)prompts.size();
      p.search.max_length = 16;
      genai::Generator g(m, p);
      g.append_token_sequences(prompts);
      if (logits) *logits = g.logits();
      while (!g.is_done()) g.generate_next_token();
      std::vector<std::vector<int32_t>> rows;
      for (size_t i = 0; i < prompts.size(); i++) rows.push_back(g.sequence(i));
      return rows;
    };
    const double gathers0 = stat(*vk_, "last_rows_gathers");
    std::vector<float> got, want;
    auto rows = first(vk_, &got);
    EXPECT_GT(stat(*vk_, "last_rows_gathers"), gathers0) << "the batch's prompt step should gather its last rows";
    EXPECT_EQ(rows, first(cpu_, &want));
    ASSERT_EQ(got.size(), want.size());
    EXPECT_LT(max_abs_diff(got, want), 1e-3) << "fp32 logits of each row's last real position";
    EXPECT_EQ(first(vk_, nullptr), rows);  // without reading the logits: the prompt step's picks on the device
  }
}

// Beam search on the device (DeviceSampling::beam_candidates: each row's log-softmax statistics and best logits come
// back, not its logits): the same sequences and scores as beam search from the logits read back — the CPU provider's
// (the statistics are summed in another order on the device: scores within 1e-5; the fp32 model has no near-ties
// here) — at batch 1 and 2, 4 beams, 2 returned, length penalty 0.5; every step after the prompt's picks on the
// device (host_picks 1: the first), also below min_length (EOS banned by a token mask on the device) and with a
// repetition penalty (the rows' logit edits applied on the device).
TEST_F(DeviceSampling, vulkan_beam_search_takes_candidates_from_the_device) {
  const std::vector<std::vector<int32_t>> prompts{{1, 450, 496, 1735}, {1, 1532, 338}};
  struct Case {
    double penalty;
    int min_length;
  };
  for (int batch : {1, 2})
    for (const Case& c : {Case{1.0, 0}, Case{1.3, 0}, Case{1.0, 14}}) {
      SCOPED_TRACE("batch " + std::to_string(batch) + " repetition penalty " + std::to_string(c.penalty) +
                   " min_length " + std::to_string(c.min_length));
      int64_t steps = 0;
      auto run = [&](const std::shared_ptr<genai::Model>& m, int64_t* host_picks, bool* on_device) {
        genai::GeneratorParams p(*m);
        p.search.batch_size = batch;
        p.search.num_beams = 4;
        p.search.num_return_sequences = 2;
        p.search.length_penalty = 0.5;
        p.search.repetition_penalty = c.penalty;
        p.search.min_length = c.min_length;
        p.search.max_length = 20;
        genai::Generator g(m, p);
        if (on_device) *on_device = g.samples_on_device();
        g.append_token_sequences(std::vector<std::vector<int32_t>>(prompts.begin(), prompts.begin() + batch));
        for (steps = 0; !g.is_done(); steps++) g.generate_next_token();
        if (host_picks) *host_picks = g.host_picks();
        std::vector<std::pair<std::vector<int32_t>, float>> out;
        for (size_t i = 0; i < g.sequence_count(); i++) out.emplace_back(g.sequence(i), g.sequence_score(i));
        return out;
      };
      int64_t host_picks = -1;
      bool on_device = false;
      auto got = run(vk_, &host_picks, &on_device);
      EXPECT_EQ(host_picks, 1) << "steps picked from logits read back, of " << steps;
      auto want = run(cpu_, nullptr, nullptr);
      EXPECT_TRUE(on_device);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); i++) {
        EXPECT_EQ(got[i].first, want[i].first) << "sequence " << i;
        EXPECT_NEAR(got[i].second, want[i].second, 1e-5) << "sequence " << i;
      }
    }
}

// Greedy decoding with penalties and bans (repetition, presence / frequency, no-repeat n-gram, min_length) picks on
// the device from logits the rows' edits were applied to (DeviceSampling::logit_edits): the CPU's tokens, at batch 1
// and 3, every step after the prompt's on the device (host_picks 1), and the logits the generator returns are the
// model's own (unprocessed: equal to the CPU's raw logits).
TEST_F(DeviceSampling, vulkan_greedy_penalties_are_applied_on_the_device) {
  const std::vector<std::vector<int32_t>> prompts{{1, 450, 496, 1735}, {1, 1532, 338}, {1, 290, 13, 7, 450, 496}};
  for (int batch : {1, 3}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    auto run = [&](const std::shared_ptr<genai::Model>& m, int64_t* host_picks, bool* on_device,
                   std::vector<float>* last_logits) {
      genai::GeneratorParams p(*m);
      p.search.batch_size = batch;
      p.search.repetition_penalty = 1.3;
      p.search.presence_penalty = 0.4;
      p.search.frequency_penalty = 0.3;
      p.search.no_repeat_ngram_size = 3;
      p.search.min_length = 12;
      p.search.max_length = 30;
      genai::Generator g(m, p);
      if (on_device) *on_device = g.samples_on_device();
      g.append_token_sequences(std::vector<std::vector<int32_t>>(prompts.begin(), prompts.begin() + batch));
      while (!g.is_done()) {
        g.generate_next_token();
        if (last_logits && g.token_count() == 20) *last_logits = g.logits();
      }
      if (host_picks) *host_picks = g.host_picks();
      std::vector<std::vector<int32_t>> out;
      for (int i = 0; i < batch; i++) out.push_back(g.sequence(i));
      return out;
    };
    int64_t host_picks = -1;
    bool on_device = false;
    std::vector<float> vk_logits, cpu_logits;
    auto got = run(vk_, &host_picks, &on_device, &vk_logits);
    auto want = run(cpu_, nullptr, nullptr, &cpu_logits);
    EXPECT_TRUE(on_device);
    EXPECT_EQ(got, want);
    ASSERT_EQ(vk_logits.size(), cpu_logits.size());
    EXPECT_LT(max_abs_diff(vk_logits, cpu_logits), 1e-3) << "the logits returned are the model's, not the edited ones";
    // Reading the logits (token 20) makes that step's pick a host one: 2 host picks with it.
    EXPECT_EQ(host_picks, 2) << "steps picked from logits read back";
  }
}

// Penalties and min_length's EOS ban (no n-gram bans) run queued like plain steps: a queued step's edits reflect the
// sequence without the token the step before it is still picking, and the device adds that token (RowEdits::
// pending: the repetition penalty, one more count for presence / frequency). Greedy at batch 1 and 3 gives the CPU's
// tokens with most steps queued; a seeded sampling generator with penalties gives the tokens it gives never queued
// (decode_together: one step at a time), across a rewind and an appended turn; three penalized generators decoding
// together with their steps queued (decode_together's queue_ahead, the pending tokens of several generators' rows)
// give the CPU's tokens.
TEST_F(DeviceSampling, vulkan_penalized_steps_run_queued) {
  const std::vector<std::vector<int32_t>> prompts{{1, 450, 496, 1735}, {1, 1532, 338}, {1, 290, 13, 7, 450, 496}};
  bool encourage = false;  // penalties that make repeats likelier: the pending token's own edit then decides picks
  auto params = [&](const std::shared_ptr<genai::Model>& m, int batch) {
    genai::GeneratorParams p(*m);
    p.search.batch_size = batch;
    p.search.repetition_penalty = encourage ? 0.9 : 1.3;
    p.search.presence_penalty = encourage ? -1.0 : 0.4;
    p.search.frequency_penalty = encourage ? -2.0 : 0.3;
    p.search.min_length = 12;
    p.search.max_length = 32;
    return p;
  };
  for (int batch : {1, 3, -1}) {
    encourage = batch < 0;
    batch = std::abs(batch);
    SCOPED_TRACE("batch " + std::to_string(batch) + (encourage ? ", penalties encouraging repeats" : ""));
    auto run = [&](const std::shared_ptr<genai::Model>& m) {
      genai::Generator g(m, params(m, batch));
      g.append_token_sequences(std::vector<std::vector<int32_t>>(prompts.begin(), prompts.begin() + batch));
      while (!g.is_done()) g.generate_next_token();
      std::vector<std::vector<int32_t>> out;
      for (int i = 0; i < batch; i++) out.push_back(g.sequence(i));
      EXPECT_EQ(g.host_picks(), m == vk_ ? 1 : 0);
      return out;
    };
    const double queued0 = stat(*vk_, "queued_runs");
    EXPECT_EQ(run(vk_), run(cpu_));
    EXPECT_GT(stat(*vk_, "queued_runs"), queued0 + 15) << "the penalized decode steps should run queued";
  }
  encourage = true;
  {  // sampling with penalties: queued against never queued, across drops
    genai::GeneratorParams p = params(vk_, 1);
    p.search.max_length = 44;
    p.search.do_sample = true;
    p.search.temperature = 0.9;
    p.search.top_k = 30;
    p.search.random_seed = 5;
    genai::Generator queued(vk_, p), alone(vk_, p);
    ASSERT_TRUE(queued.samples_on_device());
    const double queued0 = stat(*vk_, "queued_runs");
    expect_queued_equals_unqueued(queued, alone, prompts[0], 9);
    EXPECT_TRUE(queued.is_done());
    EXPECT_GT(stat(*vk_, "queued_runs"), queued0 + 15) << "the sampled penalized steps should run queued";
  }
  {  // generators together, queued ahead
    std::vector<std::vector<int32_t>> want;
    for (int i = 0; i < 3; i++) {
      genai::GeneratorParams p = params(cpu_, 1);
      if (i == 1) p.search.repetition_penalty = 1.0;  // generator 1: presence / frequency only
      genai::Generator g(cpu_, p);
      g.append_tokens(prompts[i]);
      while (!g.is_done()) g.generate_next_token();
      want.push_back(g.sequence());
    }
    std::vector<std::unique_ptr<genai::Generator>> gens;
    std::vector<genai::Generator*> ptrs;
    for (int i = 0; i < 3; i++) {
      genai::GeneratorParams p = params(vk_, 1);
      if (i == 1) p.search.repetition_penalty = 1.0;
      gens.push_back(std::make_unique<genai::Generator>(vk_, p));
      gens.back()->append_tokens(prompts[i]);
      ptrs.push_back(gens.back().get());
    }
    const double queued0 = stat(*vk_, "queued_runs");
    while (std::any_of(ptrs.begin(), ptrs.end(), [](genai::Generator* g) { return !g->is_done(); })) {
      std::vector<genai::Generator*> active;
      for (genai::Generator* g : ptrs)
        if (!g->is_done()) active.push_back(g);
      genai::decode_together(active, /*queue_ahead=*/true);
    }
    for (int i = 0; i < 3; i++) EXPECT_EQ(gens[i]->sequence(), want[i]) << "generator " << i;
    EXPECT_GT(stat(*vk_, "queued_runs"), queued0 + 10) << "the group's penalized steps should run queued";
  }
}

// Generators decoding together (decode_together, the Engine's step) with and without penalties in one run: the
// penalized ones' edits go with the run (rows without edits keep their logits), so every row picks on the device
// (host_picks 1: the first); each greedy generator gets the tokens it gets alone on the CPU, and one sampling with
// penalties (top-k, seeded: its random state on the device) the tokens it gets alone on the device.
TEST_F(DeviceSampling, vulkan_penalized_generators_decode_together_on_the_device) {
  const std::vector<std::vector<int32_t>> prompts{{1, 450, 496, 1735}, {1, 1532, 338}, {1, 290, 13, 7, 450, 496}};
  auto params = [](const std::shared_ptr<genai::Model>& m, int i) {
    genai::GeneratorParams p(*m);
    p.search.max_length = 24;
    if (i != 1) p.search.repetition_penalty = 1.5;  // generator 1: none
    if (i == 2) {
      p.search.frequency_penalty = 0.5;
      p.search.no_repeat_ngram_size = 2;
      p.search.min_length = 14;
    }
    return p;
  };
  std::vector<std::vector<int32_t>> want;
  for (int i = 0; i < 3; i++) {
    genai::Generator g(cpu_, params(cpu_, i));
    g.append_tokens(prompts[i]);
    while (!g.is_done()) g.generate_next_token();
    want.push_back(g.sequence());
  }
  genai::GeneratorParams sampled = params(vk_, 0);
  sampled.search.do_sample = true;
  sampled.search.top_k = 20;
  sampled.search.random_seed = 11;
  sampled.search.presence_penalty = 0.7;
  {
    genai::Generator g(vk_, sampled);
    g.append_tokens(prompts[1]);
    while (!g.is_done()) g.generate_next_token();
    want.push_back(g.sequence());
    EXPECT_TRUE(g.samples_on_device());
    EXPECT_EQ(g.host_picks(), 1) << "sampling with penalties alone";
  }
  std::vector<std::unique_ptr<genai::Generator>> gens;
  std::vector<genai::Generator*> ptrs;
  for (int i = 0; i < 4; i++) {
    gens.push_back(std::make_unique<genai::Generator>(vk_, i < 3 ? params(vk_, i) : sampled));
    gens.back()->append_tokens(prompts[i < 3 ? i : 1]);
    ptrs.push_back(gens.back().get());
  }
  auto all_done = [&] {
    return std::all_of(ptrs.begin(), ptrs.end(), [](genai::Generator* g) { return g->is_done(); });
  };
  while (!all_done()) {
    std::vector<genai::Generator*> active;
    for (genai::Generator* g : ptrs)
      if (!g->is_done()) active.push_back(g);
    genai::decode_together(active);
  }
  for (int i = 0; i < 4; i++) {
    EXPECT_EQ(gens[i]->sequence(), want[i]) << "generator " << i;
    EXPECT_EQ(gens[i]->host_picks(), 1) << "generator " << i << ": steps picked from logits read back";
  }
}

// Generators sampling with their own settings decode together (per-row settings read when the step runs, as ogx
// serve's requests do), with penalties: the recorded step must carry the logit edits kernel and room for the run's
// edits. Four sampled generators without penalties first record a step of their batch; four with penalties after
// them (prompts of 240 distinct tokens each: ~960 edits, past 1,024 as they generate, so the edits' room grows) must
// each give the tokens they give alone. (The steps of per-row settings were recorded without the edits in their key:
// the penalized group reused the unpenalized step and sampled unedited logits, and once the edits grew past the
// step's room, decode_together threw and ogx serve stepped each request alone: half the throughput at 32 clients.)
TEST_F(DeviceSampling, vulkan_sampled_generators_with_penalties_decode_together_with_their_edits) {
  auto params = [&](bool penalized, int i) {
    genai::GeneratorParams p(*vk_);
    p.search.max_length = 240 + 40;
    p.search.do_sample = true;
    p.search.top_k = 20;
    p.search.temperature = 0.8;
    p.search.random_seed = 100 + i;
    if (penalized) {
      p.search.repetition_penalty = 1.3;
      p.search.frequency_penalty = 0.8;
    }
    return p;
  };
  auto prompt = [](int i) {
    std::vector<int32_t> ids{1};
    for (int k = 0; k < 239; k++) ids.push_back(2 + (i * 239 + k * 7) % 2040);  // distinct within a prompt
    return ids;
  };
  auto together = [&](bool penalized, int steps) {
    std::vector<std::unique_ptr<genai::Generator>> gens;
    std::vector<genai::Generator*> ptrs;
    for (int i = 0; i < 4; i++) {
      gens.push_back(std::make_unique<genai::Generator>(vk_, params(penalized, i)));
      gens.back()->append_tokens(prompt(i));
      ptrs.push_back(gens.back().get());
    }
    for (int s = 0; s < steps; s++) {
      std::vector<genai::Generator*> active;
      for (genai::Generator* g : ptrs)
        if (!g->is_done()) active.push_back(g);
      if (active.empty()) break;
      genai::decode_together(active, /*queue_ahead=*/true);
    }
    std::vector<std::vector<int32_t>> out;
    for (auto& g : gens) out.push_back(g->sequence());
    return out;
  };
  together(false, 6);  // records the sampled step of batch 4 without edits
  const std::vector<std::vector<int32_t>> got = together(true, 1000);
  for (int i = 0; i < 4; i++) {
    genai::Generator alone(vk_, params(true, i));
    ASSERT_TRUE(alone.samples_on_device());
    alone.append_tokens(prompt(i));
    while (!alone.is_done()) alone.generate_next_token();
    EXPECT_EQ(got[i], alone.sequence()) << "generator " << i;
  }
}

// The Vulkan session keeps one sequence's KV cache: two generators of one model, interleaved (two chats served
// by one model), must each get the tokens they get alone — a generator re-runs its positions when the other used
// the cache in between.
TEST_F(DeviceSampling, vulkan_interleaved_generators_each_get_their_own_tokens) {
  const std::vector<int32_t> a_prompt{1, 450, 496, 1735}, b_prompt{1, 1532, 338, 263, 1243};
  auto alone = [&](const std::shared_ptr<genai::Model>& m, const std::vector<int32_t>& prompt) {
    genai::GeneratorParams p(*m);
    p.search.max_length = 20;
    genai::Generator g(m, p);
    g.append_tokens(prompt);
    while (!g.is_done()) g.generate_next_token();
    return g.sequence();
  };
  std::vector<int32_t> want_a = alone(cpu_, a_prompt), want_b = alone(cpu_, b_prompt);
  genai::GeneratorParams p(*vk_);
  p.search.max_length = 20;
  genai::Generator a(vk_, p), b(vk_, p);
  a.append_tokens(a_prompt);
  b.append_tokens(b_prompt);
  while (!a.is_done() || !b.is_done()) {
    if (!a.is_done()) a.generate_next_token();
    if (!b.is_done()) b.generate_next_token();
    if (!b.is_done()) b.generate_next_token();  // uneven turns
  }
  EXPECT_EQ(a.sequence(), want_a);
  EXPECT_EQ(b.sequence(), want_b);
  // A greedy generator interleaved with a sampling one keeps picking greedily (the session samples the way the
  // generator that runs asks).
  genai::GeneratorParams ps(*vk_);
  ps.search.max_length = 20;
  ps.search.do_sample = true;
  ps.search.top_k = 50;
  ps.search.random_seed = 7;
  genai::Generator g(vk_, p), sampler(vk_, ps);
  g.append_tokens(a_prompt);
  sampler.append_tokens(b_prompt);
  while (!g.is_done()) {
    g.generate_next_token();
    if (!sampler.is_done()) sampler.generate_next_token();
  }
  EXPECT_EQ(g.sequence(), want_a);
  // The logits of a generator's last step, after another used the cache, are its own: those of a lone run.
  genai::GeneratorParams pc(*cpu_);
  pc.search.max_length = 20;
  genai::Generator c(cpu_, pc), a2(vk_, p), b2(vk_, p);
  c.append_tokens(a_prompt);
  a2.append_tokens(a_prompt);
  for (int i = 0; i < 3; i++) {
    c.generate_next_token();
    a2.generate_next_token();
  }
  b2.append_tokens(b_prompt);
  b2.generate_next_token();
  const std::vector<float>& la = a2.logits();
  const std::vector<float>& lc = c.logits();
  ASSERT_EQ(la.size(), lc.size());
  EXPECT_LE(max_abs_diff(la, lc), 1e-4);
}

// Step values (positions, lengths) and a queued step's token ids are read in place from host-visible device-local
// memory where the device has it (lavapipe does); step_values_in_place=0 takes the copying path of devices without
// such memory. Both give the CPU's tokens, queued steps included.
TEST_F(DeviceSampling, vulkan_step_values_copied_or_read_in_place_give_the_cpu_tokens) {
  genai::Config c = genai::Config::load(dir_);
  select_vulkan(c, /*validation=*/true);
  c.set_provider_option("dml", "step_values_in_place", "0");
  std::shared_ptr<genai::Model> copying = genai::Model::load(c);
  std::vector<int32_t> want = generate(cpu_, genai::GeneratorParams(*cpu_), 24);
  EXPECT_EQ(generate(copying, genai::GeneratorParams(*copying), 24), want) << "step values copied";
  EXPECT_EQ(generate(vk_, genai::GeneratorParams(*vk_), 24), want) << "step values read in place";
}

TEST_F(DeviceSampling, vulkan_seeded_sampling_repeats_and_top_k_one_is_greedy) {
  genai::GeneratorParams p(*vk_);
  p.search.do_sample = true;
  p.search.top_k = 20;
  p.search.temperature = 0.8;
  p.search.random_seed = 42;
  std::vector<int32_t> a = generate(vk_, p, 16), b = generate(vk_, p, 16);
  EXPECT_EQ(a, b) << "same seed, same tokens";
  for (int32_t t : a) EXPECT_TRUE(t >= 0 && t < vk_->io().vocab_size);
  p.search.top_k = 1;
  EXPECT_EQ(generate(vk_, p, 16), generate(vk_, genai::GeneratorParams(*vk_), 16));
}

// Top-p alone and top-k alone with a vocabulary spread over two argmax chunks (the default model's 4,096 ids): the
// device's rejection sampling (kernels/sampling.h). A seeded generator decodes on the device (every step after the
// prompt picks there, and the seed repeats its tokens); then each of its tokens is checked against the logits of its
// prefix (a prompt run of another generator of the same model): it lies in the top-k / the nucleus (a token within
// 2e-3 of the nucleus' edge counts as inside: the device sums the mass in fp32, in another order, over logits of the
// decode step rather than of a prompt run).
TEST(DeviceSamplingSpread, vulkan_top_p_and_top_k_tokens_lie_in_their_sets) {
  const std::string dir = std::string(OGX_SOURCE_DIR) + "/models/ogx-debian-10m/fp16";
  if (!std::filesystem::exists(dir + "/genai_config.json")) GTEST_SKIP() << "default model folder absent";
  std::shared_ptr<genai::Model> m;
  try {
    m = load(dir, true);
  } catch (const Error& e) {
    if (no_vulkan_device(e)) GTEST_SKIP() << "no Vulkan device: " << e.what();
    throw;
  }
  const std::vector<int32_t> prompt = {1, 450, 496, 1735};
  for (auto [top_k, top_p] : {std::pair<int, double>{0, 0.8}, {0, 0.3}, {12, 1.0}}) {
    SCOPED_TRACE("top_k " + std::to_string(top_k) + " top_p " + std::to_string(top_p));
    genai::GeneratorParams p(*m);
    p.search.max_length = (int)prompt.size() + 20;
    p.search.do_sample = true;
    p.search.temperature = 1.0;
    p.search.top_k = top_k;
    p.search.top_p = top_p;
    p.search.random_seed = 11;
    p.search.repetition_penalty = 1.0;
    std::vector<int32_t> seq[2];
    for (int run = 0; run < 2; run++) {
      genai::Generator g(m, p);
      ASSERT_TRUE(g.samples_on_device());
      g.append_tokens(prompt);
      while (!g.is_done()) g.generate_next_token();
      EXPECT_EQ(g.host_picks(), 1) << "steps after the prompt pick on the device (the first: on the host)";
      seq[run] = g.sequence();
      if ((int)seq[run].size() < p.search.max_length) seq[run].push_back(g.last_token());  // an EOS pick ended it
    }
    EXPECT_EQ(seq[0], seq[1]) << "the seed repeats its tokens";
    genai::GeneratorParams greedy(*m);
    greedy.search.max_length = p.search.max_length;
    int checked = 0, not_argmax = 0;
    for (size_t n = prompt.size() + 1; n < seq[0].size(); n++) {  // tokens picked on the device
      genai::Generator ref(m, greedy);
      ref.append_tokens(std::vector<int32_t>(seq[0].begin(), seq[0].begin() + (std::ptrdiff_t)n));
      const std::vector<float>& l = ref.logits();
      const int32_t t = seq[0][n];
      ASSERT_LT((size_t)t, l.size());
      double mx = *std::max_element(l.begin(), l.end()), z = 0, before = 0;
      int64_t n_before = 0;
      for (size_t i = 0; i < l.size(); i++) {
        double w = std::exp((double)l[i] - mx);
        z += w;
        if (l[i] > l[t] || (l[i] == l[t] && (int32_t)i < t)) before += w, n_before++;
      }
      if (top_k > 0) EXPECT_LT(n_before, top_k) << "token " << t << " at " << n << " is outside the top " << top_k;
      if (top_p < 1) EXPECT_LT(before / z, top_p + 2e-3) << "token " << t << " at " << n << " is outside the nucleus";
      checked++;
      not_argmax += std::max_element(l.begin(), l.end()) - l.begin() != t;
    }
    EXPECT_GE(checked, 10);
    if (top_p > 0.5) EXPECT_GE(not_argmax, 2) << "the draws look greedy";
  }
}

// Below min_length an unguided generator keeps picking on the device: a token mask bans EOS there (it used to read
// the logits back and pick on the host). Greedy with min_length past the point where the default model ends its
// unconstrained output: the Vulkan tokens equal the CPU provider's (which bans EOS in the logits), nothing but the
// first token after the prompt is picked on the host, and no EOS comes before min_length.
TEST(DeviceSamplingMinLength, vulkan_eos_is_masked_on_the_device_below_min_length) {
  const std::string dir = std::string(OGX_SOURCE_DIR) + "/models/ogx-debian-10m/fp16";
  if (!std::filesystem::exists(dir + "/genai_config.json")) GTEST_SKIP() << "default model folder absent";
  std::shared_ptr<genai::Model> gpu;
  try {
    gpu = load(dir, true);
  } catch (const Error& e) {
    if (no_vulkan_device(e)) GTEST_SKIP() << "no Vulkan device: " << e.what();
    throw;
  }
  auto cpu = load(dir, false);
  const std::vector<int32_t> prompt = {1, 300, 25, 911};
  auto generate = [&](const std::shared_ptr<genai::Model>& m, int max_length, int min_length, int64_t* host_picks) {
    genai::GeneratorParams p(*m);
    p.search.max_length = max_length;
    p.search.min_length = min_length;
    p.search.do_sample = false;  // greedy (the default model's genai_config samples)
    p.search.repetition_penalty = 1.0;
    genai::Generator g(m, p);
    g.append_tokens(prompt);
    while (!g.is_done()) g.generate_next_token();
    if (host_picks) *host_picks = g.host_picks();
    std::vector<int32_t> out = g.sequence();
    if ((int)out.size() < max_length) out.push_back(g.last_token());  // the EOS that ended it (not appended)
    return out;
  };
  const std::vector<int32_t> free = generate(cpu, 96, 0, nullptr);
  const int32_t eos = gpu->config().model.eos_token_ids.at(0);
  ASSERT_EQ(free.back(), eos) << "the unconstrained output should end with EOS (so min_length has one to ban)";
  const int min_length = (int)free.size() + 6;  // past the unconstrained output's end
  int64_t host_picks = -1;
  const std::vector<int32_t> want = generate(cpu, min_length + 8, min_length, nullptr),
                             got = generate(gpu, min_length + 8, min_length, &host_picks);
  EXPECT_EQ(got, want);
  EXPECT_EQ(host_picks, 1) << "below min_length the steps should pick on the device (the first token after the "
                              "prompt comes from the prompt run's logits)";
  ASSERT_GE(got.size(), (size_t)min_length);
  for (int i = (int)prompt.size(); i < min_length; i++) EXPECT_NE(got[(size_t)i], eos) << "EOS before min_length at " << i;
}

}  // namespace
}  // namespace ogx::test
