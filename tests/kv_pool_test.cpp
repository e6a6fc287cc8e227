// Generator-owned KV caches (exec/decode_session.h) and many generators decoding together (genai/batch_step.h):
//  - generators of one Vulkan model interleaved step by step give the tokens each gives alone, and nothing is run
//    twice (the session's run count is exactly one run per generated token after the first, per generator); seeded
//    sampling generators keep their own device random state;
//  - decode_together of 1..8 generators of different prompt lengths (1, 7, 33, ...: rows crossing the pool's
//    16-position blocks at different steps) gives each generator's tokens alone, in one model run per step on
//    Vulkan (on the CPU provider: one run per generator, the same tokens); generators join and leave between steps
//    (blocks returned to the pool and taken again); a host-picked generator (repetition penalty) and a beam search
//    share the run with greedy device-sampled ones;
//  - a KV pool budget too small for a prompt is a clear error naming the budget; the process stays usable;
//  - a prompt run in chunks (provider option prefill_chunk_tokens) gives the tokens and logits of the whole prompt in
//    one run.
// Golden llama (fp32 and the fp16 DirectML folder) from ../shared; Vulkan on lavapipe, skipped without a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "genai/batch_step.h"
#include "genai/generator.h"
#include "shared_dir.h"
#include "vulkan_test_config.h"

namespace ogx::test {
namespace {

using Seq = std::vector<int32_t>;

struct Loaded {
  std::shared_ptr<genai::Model> model;
  std::string skip;  // non-empty: why the test skips
};

Loaded load(const std::string& variant, bool vulkan, const std::string& budget_mb = "",
            const std::string& prefill_chunk = "") {
  Loaded l;
  if (shared_dir().empty()) {
    l.skip = "../shared is absent (reference material): test skipped";
    return l;
  }
  genai::Config c = genai::Config::load(shared_dir() + "/golden/models/llama/" + variant);
  c.clear_providers();
  if (vulkan) {
    select_vulkan(c, /*validation=*/true);
    if (!budget_mb.empty()) c.set_provider_option("dml", "kv_cache_budget_mb", budget_mb);
    if (!prefill_chunk.empty()) c.set_provider_option("dml", "prefill_chunk_tokens", prefill_chunk);
  }
  try {
    l.model = genai::Model::load(c);
  } catch (const std::exception& e) {
    if (!vulkan || !no_vulkan_device(e)) throw;
    l.skip = std::string("no Vulkan device: ") + e.what();
  }
  return l;
}

double stat(const genai::Model& m, const std::string& name) {
  for (auto& [k, v] : m.session().stats())
    if (k == name) return v;
  return -1;
}

Seq prompt(int length, uint32_t seed) {
  std::mt19937 rng(seed);
  Seq p(length);
  for (int32_t& t : p) t = 3 + (int32_t)(rng() % 2000);  // not EOS / pad (2)
  return p;
}

struct Request {
  Seq prompt;
  double repetition_penalty = 1.0;
  int beams = 1;
  Seq second;  // non-empty: a batch of two prompts (padded on the right)
};

genai::GeneratorParams params_of(const genai::Model& m, const Request& r, int new_tokens) {
  genai::GeneratorParams p(m);
  p.search.do_sample = false;
  p.search.max_length = (int)r.prompt.size() + new_tokens;
  p.search.repetition_penalty = r.repetition_penalty;
  p.search.num_beams = r.beams;
  if (!r.second.empty()) {
    p.search.batch_size = 2;
    p.search.max_length = (int)std::max(r.prompt.size(), r.second.size()) + new_tokens;
  }
  return p;
}

void append(genai::Generator& g, const Request& r) {
  if (r.second.empty()) g.append_tokens(r.prompt);
  else g.append_token_sequences({r.prompt, r.second});
}

// Every row's sequence.
std::vector<Seq> rows_of(const genai::Generator& g) {
  std::vector<Seq> out;
  for (size_t i = 0; i < g.sequence_count(); i++) out.push_back(g.sequence(i));
  return out;
}

// The request's sequence generated alone with these parameters.
Seq alone_with(const std::shared_ptr<genai::Model>& m, const genai::GeneratorParams& p, const Request& r) {
  genai::Generator g(m, p);
  append(g, r);
  while (!g.is_done()) g.generate_next_token();
  return g.sequence(0);
}

Seq alone(const std::shared_ptr<genai::Model>& m, const Request& r, int new_tokens) {
  return alone_with(m, params_of(*m, r, new_tokens), r);
}

std::vector<Seq> alone_rows(const std::shared_ptr<genai::Model>& m, const Request& r, int new_tokens) {
  genai::Generator g(m, params_of(*m, r, new_tokens));
  append(g, r);
  while (!g.is_done()) g.generate_next_token();
  return rows_of(g);
}

std::vector<Request> requests(int n) {
  const int lengths[] = {1, 7, 33, 16, 17, 2, 40, 15};
  std::vector<Request> r;
  for (int i = 0; i < n; i++) r.push_back({prompt(lengths[i % 8], 100 + i)});
  return r;
}

class KvPool : public ::testing::TestWithParam<bool> {};  // the parameter: on the Vulkan provider

TEST_P(KvPool, InterleavedGeneratorsEqualAloneWithoutRerunning) {
  Loaded l = load("fp32-cpu", GetParam());
  if (!l.skip.empty()) GTEST_SKIP() << l.skip;
  const int N = 20;
  std::vector<Request> reqs = requests(3);
  std::vector<Seq> want;
  for (const Request& r : reqs) want.push_back(alone(l.model, r, N));
  const double runs_before = stat(*l.model, "runs");
  std::vector<std::unique_ptr<genai::Generator>> gens;
  for (const Request& r : reqs) {
    gens.push_back(std::make_unique<genai::Generator>(l.model, params_of(*l.model, r, N)));
    gens.back()->append_tokens(r.prompt);
  }
  for (bool any = true; any;) {
    any = false;
    for (auto& g : gens)
      if (!g->is_done()) {
        g->generate_next_token();
        any = true;
      }
  }
  double generated = 0;
  for (size_t i = 0; i < gens.size(); i++) {
    EXPECT_EQ(gens[i]->sequence(0), want[i]) << "generator " << i;
    EXPECT_EQ(gens[i]->rerun_tokens(), 0) << "generator " << i;
    generated += (double)(gens[i]->token_count() - reqs[i].prompt.size());
    if (gens[i]->token_count() < (size_t)gens[i]->max_length()) generated += 1;  // the EOS pick (not appended)
  }
  if (GetParam())  // one run per prompt and per generated token after the first: nothing replayed
    EXPECT_EQ(stat(*l.model, "runs") - runs_before, generated);
}

// Seeded top-k sampling on the device: each generator's random state stays its own while others sample in between.
TEST_P(KvPool, InterleavedSamplingGeneratorsEqualAlone) {
  Loaded l = load("fp32-cpu", GetParam());
  if (!l.skip.empty()) GTEST_SKIP() << l.skip;
  const int N = 12;
  std::vector<Request> reqs = requests(3);
  auto params = [&](size_t i) {
    genai::GeneratorParams p = params_of(*l.model, reqs[i], N);
    p.search.do_sample = true;
    p.search.top_k = 20;
    p.search.temperature = 1.5;
    p.search.random_seed = 11 + (int)i;
    return p;
  };
  std::vector<Seq> want;
  for (size_t i = 0; i < reqs.size(); i++) want.push_back(alone_with(l.model, params(i), reqs[i]));
  std::vector<std::unique_ptr<genai::Generator>> gens;
  for (size_t i = 0; i < reqs.size(); i++) {
    gens.push_back(std::make_unique<genai::Generator>(l.model, params(i)));
    gens.back()->append_tokens(reqs[i].prompt);
  }
  for (bool any = true; any;) {
    any = false;
    for (auto& g : gens)
      if (!g->is_done()) {
        g->generate_next_token();
        any = true;
      }
  }
  for (size_t i = 0; i < gens.size(); i++) EXPECT_EQ(gens[i]->sequence(0), want[i]) << "generator " << i;
}

// Generators that sample on the device decode together with greedy ones: one run per step for all of them (each
// row picks with its own top-k / top-p / temperature and random state), the tokens each generator samples alone.
TEST_P(KvPool, DecodeTogetherOfSamplingGeneratorsEqualsAlone) {
  Loaded l = load("fp32-cpu", GetParam());
  if (!l.skip.empty()) GTEST_SKIP() << l.skip;
  const int N = 12;
  std::vector<Request> reqs = requests(5);
  auto params = [&](size_t i) {
    genai::GeneratorParams p = params_of(*l.model, reqs[i], N);
    if (i == 2) return p;  // greedy
    p.search.do_sample = true;
    p.search.top_k = i == 3 ? 0 : 10 + (int)i;
    p.search.top_p = i == 3 ? 0.9 : 1.0;
    p.search.temperature = 0.8 + 0.3 * (double)i;
    p.search.random_seed = 21 + (int)i;
    return p;
  };
  std::vector<Seq> want;
  for (size_t i = 0; i < reqs.size(); i++) want.push_back(alone_with(l.model, params(i), reqs[i]));
  std::vector<std::unique_ptr<genai::Generator>> gens;
  std::vector<genai::Generator*> ptrs;
  for (size_t i = 0; i < reqs.size(); i++) {
    gens.push_back(std::make_unique<genai::Generator>(l.model, params(i)));
    gens.back()->append_tokens(reqs[i].prompt);
    ptrs.push_back(gens.back().get());
  }
  const double runs_before = stat(*l.model, "runs");
  int calls = 0;
  for (bool any = true; any; calls++) {
    genai::decode_together(ptrs);
    any = false;
    for (auto* g : ptrs) any = any || !g->is_done();
  }
  for (size_t i = 0; i < gens.size(); i++) EXPECT_EQ(gens[i]->sequence(0), want[i]) << "generator " << i;
  if (GetParam()) EXPECT_LE(stat(*l.model, "runs") - runs_before, calls);  // prompts ran before: one run per step
}

TEST_P(KvPool, DecodeTogetherEqualsAloneForOneToEightGenerators) {
  for (const char* variant : {"fp32-cpu", "fp16-dml"}) {
    if (!GetParam() && std::string(variant) == "fp16-dml") continue;  // a DirectML folder: Vulkan only
    SCOPED_TRACE(variant);
    Loaded l = load(variant, GetParam());
    if (!l.skip.empty()) GTEST_SKIP() << l.skip;
    const int N = 16;  // prompts of 1, 7, 33, 16, 17, 2, 40, 15: rows cross blocks of 16 at different steps
    std::vector<Request> all = requests(8);
    std::vector<Seq> want;
    for (const Request& r : all) want.push_back(alone(l.model, r, N));
    const bool fp16 = std::string(variant) == "fp16-dml";
    for (int G : fp16 ? std::vector<int>{5} : std::vector<int>{1, 8}) {
      SCOPED_TRACE("G = " + std::to_string(G));
      const double runs_before = stat(*l.model, "runs");
      std::vector<std::unique_ptr<genai::Generator>> gens;
      std::vector<genai::Generator*> ptrs;
      for (int i = 0; i < G; i++) {
        gens.push_back(std::make_unique<genai::Generator>(l.model, params_of(*l.model, all[i], N)));
        gens.back()->append_tokens(all[i].prompt);
        ptrs.push_back(gens.back().get());
      }
      int calls = 0;
      for (bool any = true; any; calls++) {
        genai::decode_together(ptrs);
        any = false;
        for (auto* g : ptrs) any = any || !g->is_done();
      }
      for (int i = 0; i < G; i++) {
        EXPECT_EQ(gens[i]->sequence(0), want[i]) << "generator " << i;
        EXPECT_EQ(gens[i]->rerun_tokens(), 0);
      }
      if (GetParam() && G > 1)  // one run per prompt, then at most one per step for all
        EXPECT_LE(stat(*l.model, "runs") - runs_before, G + calls);
    }
  }
}

TEST_P(KvPool, GeneratorsJoinAndLeaveBetweenSteps) {
  Loaded l = load("fp32-cpu", GetParam());
  if (!l.skip.empty()) GTEST_SKIP() << l.skip;
  const int N = 30;
  std::vector<Request> reqs = requests(6);
  reqs[2].repetition_penalty = 1.3;  // picks on the host from its logits
  reqs[4].beams = 2;                 // beam search: rows reordered on the device each step
  reqs[5].second = prompt(3, 77);    // a batch of two prompts of 2 and 3 tokens: its own padding, two rows
  std::vector<std::vector<Seq>> want;
  for (const Request& r : reqs) want.push_back(alone_rows(l.model, r, N));
  std::vector<std::unique_ptr<genai::Generator>> gens(reqs.size());
  auto start = [&](size_t i) {
    gens[i] = std::make_unique<genai::Generator>(l.model, params_of(*l.model, reqs[i], N));
    append(*gens[i], reqs[i]);
  };
  auto step = [&] {
    std::vector<genai::Generator*> ptrs;
    for (auto& g : gens)
      if (g) ptrs.push_back(g.get());
    genai::decode_together(ptrs);
  };
  for (size_t i : {0, 1, 2}) start(i);
  for (int s = 0; s < 5; s++) step();
  // Generator 1 leaves half way (its blocks go back to the pool); 3, 4 and 5 join and take blocks again.
  Seq partial = gens[1]->sequence(0);
  EXPECT_EQ(Seq(want[1][0].begin(), want[1][0].begin() + (std::ptrdiff_t)partial.size()), partial);
  const double held = stat(*l.model, "kv_pool_blocks_held");
  gens[1].reset();
  if (GetParam()) EXPECT_LT(stat(*l.model, "kv_pool_blocks_held"), held);
  for (size_t i : {3, 4, 5}) start(i);
  for (int s = 0; s < N + 2; s++) step();
  for (size_t i : {0, 2, 3, 4, 5}) {
    EXPECT_TRUE(gens[i]->is_done()) << "generator " << i;
    EXPECT_EQ(rows_of(*gens[i]), want[i]) << "generator " << i;
  }
  gens.clear();
  if (GetParam()) EXPECT_EQ(stat(*l.model, "kv_pool_blocks_held"), 0);
}

// The logits of a step decoded together, read afterwards: the generator's rows of the device's copy (no re-run), as
// the generator's own step gives them.
TEST_P(KvPool, LogitsAfterDecodeTogetherAreTheGeneratorsRows) {
  Loaded l = load("fp32-cpu", GetParam());
  if (!l.skip.empty()) GTEST_SKIP() << l.skip;
  const int N = 8, steps = 3;
  std::vector<Request> reqs = requests(3);
  std::vector<std::vector<float>> want;
  for (const Request& r : reqs) {
    genai::Generator g(l.model, params_of(*l.model, r, N));
    g.append_tokens(r.prompt);
    for (int s = 0; s < steps; s++) g.generate_next_token();
    want.push_back(g.logits());
  }
  std::vector<std::unique_ptr<genai::Generator>> gens;
  std::vector<genai::Generator*> ptrs;
  for (const Request& r : reqs) {
    gens.push_back(std::make_unique<genai::Generator>(l.model, params_of(*l.model, r, N)));
    gens.back()->append_tokens(r.prompt);
    ptrs.push_back(gens.back().get());
  }
  for (int s = 0; s < steps; s++) genai::decode_together(ptrs);
  for (size_t i = 0; i < gens.size(); i++) {
    const std::vector<float>& got = gens[i]->logits();
    ASSERT_EQ(got.size(), want[i].size());
    double worst = 0;  // rows of a batched projection may sum in another order than one row's: fp32 rounding only
    for (size_t k = 0; k < got.size(); k++) worst = std::max(worst, (double)std::abs(got[k] - want[i][k]));
    EXPECT_LT(worst, 1e-3) << "generator " << i;
    EXPECT_EQ(gens[i]->rerun_tokens(), 0) << "generator " << i;
  }
}

// More rows than a generator's batch may have (kMaxBatchSize 32): 36 one-row generators picked on the device in one
// run per step.
TEST_P(KvPool, DecodeTogetherOfMoreThanThirtyTwoGenerators) {
  Loaded l = load("fp32-cpu", GetParam());
  if (!l.skip.empty()) GTEST_SKIP() << l.skip;
  const int G = 36, N = 3;
  const int lengths[] = {1, 5, 17};
  std::vector<std::unique_ptr<genai::Generator>> gens;
  std::vector<genai::Generator*> ptrs;
  std::vector<Seq> want;
  for (int i = 0; i < G; i++) {
    Request r{prompt(lengths[i % 3], 300 + i)};
    want.push_back(alone(l.model, r, N));
    gens.push_back(std::make_unique<genai::Generator>(l.model, params_of(*l.model, r, N)));
    gens.back()->append_tokens(r.prompt);
    ptrs.push_back(gens.back().get());
  }
  const double runs_before = stat(*l.model, "runs");
  for (int s = 0; s < N; s++) genai::decode_together(ptrs);
  for (int i = 0; i < G; i++) EXPECT_EQ(gens[i]->sequence(0), want[i]) << "generator " << i;
  if (GetParam()) EXPECT_EQ(stat(*l.model, "runs") - runs_before, N - 1);
}

// On the CPU provider generators decoded together run node by node together (Session::run_together): each
// projection with constant weights once over every generator's rows. Each generator's tokens are those it gives
// alone: in fp32 the panel GEMM's sums do not depend on the row count; in int4 MatMulNBits stacks only where each row
// sums alike wherever it sits (blocks < 64, fewer rows than the AMX kernel takes; this folder's blocks are larger,
// so its projections run per generator and only its fp32 nodes stack).
TEST(KvPoolCpuTogether, GeneratorsStepInOneStackedRunAndEqualAlone) {
  for (const char* variant : {"fp32-cpu", "int4-cpu"}) {
    Loaded l = load(variant, false);
    if (!l.skip.empty()) GTEST_SKIP() << l.skip;
    const int N = 12;
    std::vector<Request> reqs = requests(5);
    reqs[3].beams = 2;  // two rows of one generator
    std::vector<std::vector<Seq>> want;
    for (const Request& r : reqs) want.push_back(alone_rows(l.model, r, N));
    std::vector<std::unique_ptr<genai::Generator>> gens;
    std::vector<genai::Generator*> ptrs;
    for (const Request& r : reqs) {
      gens.push_back(std::make_unique<genai::Generator>(l.model, params_of(*l.model, r, N)));
      append(*gens.back(), r);
      ptrs.push_back(gens.back().get());
    }
    double most_runs = 0, stacked = 0;
    for (int s = 0; s < N + 2; s++) {
      genai::decode_together(ptrs);
      most_runs = std::max(most_runs, stat(*l.model, "runs_together"));
      stacked = std::max(stacked, stat(*l.model, "stacked_nodes"));
    }
    for (size_t i = 0; i < gens.size(); i++) EXPECT_EQ(rows_of(*gens[i]), want[i]) << variant << " generator " << i;
    EXPECT_GE(most_runs, 4) << variant << ": the generators' steps should run together";
    if (std::string(variant) == "fp32-cpu") EXPECT_GT(stacked, 0) << "projections should run once over the stacked rows";
  }
}

INSTANTIATE_TEST_SUITE_P(Provider, KvPool, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? std::string("vulkan") : std::string("cpu"); });

TEST(KvPoolBudget_vulkan, ExhaustionIsAClearErrorAndTheProcessStaysUsable) {
  // A block of this model: 2 layers x key and value x 16 positions x 16 x 4 bytes = 4 KiB per KV head; a budget of
  // 0.05 MiB holds 12 blocks: 6 positions-blocks of its 2 heads (96 positions).
  Loaded l = load("fp32-cpu", true, "0.05");
  if (!l.skip.empty()) GTEST_SKIP() << l.skip;
  Request big{prompt(120, 7)}, small{prompt(20, 8)};
  {
    genai::Generator g(l.model, params_of(*l.model, big, 4));
    try {
      g.append_tokens(big.prompt);
      FAIL() << "a 120-token prompt fit a 96-position budget";
    } catch (const Error& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find("budget"), std::string::npos) << msg;
      EXPECT_NE(msg.find("kv_cache_budget_mb"), std::string::npos) << msg;
    }
  }
  EXPECT_EQ(stat(*l.model, "kv_pool_blocks_held"), 0);
  Seq want;
  {
    Loaded roomy = load("fp32-cpu", true);
    want = alone(roomy.model, small, 10);
  }
  EXPECT_EQ(alone(l.model, small, 10), want);  // the same model after the error
}

// Beams of one prompt share the KV blocks of their common past instead of copying them at every reorder (blocks
// whose every position is final: below each row's own length, a padded prompt's pads excepted), and give the CPU
// provider's hypotheses: a batch of two prompts (40 and 29 tokens: 11 pads) x 3 beams.
TEST(KvPoolBeams_vulkan, BeamsShareTheirFinalBlocksAndGiveTheCpuHypotheses) {
  Loaded cpu = load("fp32-cpu", false), vk = load("fp32-cpu", true);
  if (!vk.skip.empty()) GTEST_SKIP() << vk.skip;
  const int N = 24, beams = 3;
  Request r{prompt(40, 11), 1.0, beams, prompt(29, 12)};
  const std::vector<Seq> want = alone_rows(cpu.model, r, N);
  genai::Generator g(vk.model, params_of(*vk.model, r, N));
  append(g, r);
  while (!g.is_done()) g.generate_next_token();
  EXPECT_EQ(rows_of(g), want);
  const int64_t heads = vk.model->io().kv_heads, rows = 2 * beams, blocks = ((int64_t)g.token_count() + 15) / 16;
  const double held = stat(*vk.model, "kv_pool_blocks_held");
  // Copying every row's blocks would hold rows x heads x blocks; the first prompt's first block (positions 0..15,
  // final in both prompts' rows) alone is held once per prompt instead of once per beam.
  EXPECT_LE(held, (double)(rows * heads * blocks - 2 * (beams - 1) * heads)) << "blocks held: " << held;
  EXPECT_GT(held, 0);
}

TEST(KvPoolChunkedPrefill_vulkan, ChunkedPromptEqualsTheWholePrompt) {
  // A 45-token prompt in chunks of 7 (six full chunks and one of 3: chunks crossing the pool's 16-position blocks
  // and the recorded steps' table widths) against the prompt in one run: the same greedy tokens, and the prompt's
  // last logits within fp32 (1e-4 relative to the logit scale) or fp16 (2e-2, the folder's fp16 activations summed
  // in another grouping of keys) tolerance.
  for (const char* variant : {"fp32-cpu", "fp16-dml"}) {
    SCOPED_TRACE(variant);
    Loaded whole = load(variant, true, "", "0"), chunked = load(variant, true, "", "7");
    if (!whole.skip.empty()) GTEST_SKIP() << whole.skip;
    Request r{prompt(45, 11)};
    std::vector<float> logits[2];
    Seq tokens[2];
    for (int k = 0; k < 2; k++) {
      const std::shared_ptr<genai::Model>& m = k ? chunked.model : whole.model;
      genai::Generator g(m, params_of(*m, r, 12));
      g.append_tokens(r.prompt);
      logits[k] = g.logits();
      while (!g.is_done()) g.generate_next_token();
      tokens[k] = g.sequence(0);
    }
    EXPECT_EQ(tokens[1], tokens[0]);
    ASSERT_EQ(logits[1].size(), logits[0].size());
    double scale = 0, worst = 0;
    for (size_t i = 0; i < logits[0].size(); i++) {
      scale = std::max(scale, (double)std::fabs(logits[0][i]));
      worst = std::max(worst, (double)std::fabs(logits[1][i] - logits[0][i]));
    }
    EXPECT_LE(worst, (std::string(variant) == "fp32-cpu" ? 1e-4 : 2e-2) * scale) << "largest logit difference";
    EXPECT_GT(stat(*chunked.model, "runs"), stat(*whole.model, "runs"));  // the prompt ran in chunks
  }
}

// Prompt steps (chunks of more than 16 positions) share one activation arena: a 600-token prompt in chunks of 150
// records several steps (block-table widths 256 to 1024 positions, the first chunk's without past keys), two of them
// kept at a time, yet holds about one chunk's activations, as a 150-token prompt of one recorded step does (each step
// had its own before: twice that), and about one chunk's scratch (norm outputs, gate/up products, the attention
// workspace: its split counts change with the block table, its buffers need not; chunks of more rows than the most
// splits, as the 2,048-token chunks of long prompts); its tokens equal the prompt in one run.
TEST(KvPoolChunkedPrefill_vulkan, PromptStepsShareOneActivationArenaAndScratch) {
  Loaded whole = load("fp32-cpu", true, "", "0"), chunked = load("fp32-cpu", true, "", "150");
  if (!whole.skip.empty()) GTEST_SKIP() << whole.skip;
  auto run = [&](const std::shared_ptr<genai::Model>& m, const Request& r) {
    genai::Generator g(m, params_of(*m, r, 8));
    g.append_tokens(r.prompt);
    while (!g.is_done()) g.generate_next_token();
    return g.sequence(0);
  };
  const Request short_prompt{prompt(150, 3)}, long_prompt{prompt(600, 4)};
  run(chunked.model, short_prompt);
  const double one_step = stat(*chunked.model, "prompt_arena_bytes"), recordings = stat(*chunked.model, "recordings");
  const double one_scratch = stat(*chunked.model, "prompt_scratch_bytes");
  EXPECT_GT(one_step, 0);
  EXPECT_GT(one_scratch, 0);
  EXPECT_EQ(run(chunked.model, long_prompt), run(whole.model, long_prompt));
  EXPECT_GE(stat(*chunked.model, "recordings"), recordings + 2) << "steps of wider block tables";
  EXPECT_LT(stat(*chunked.model, "prompt_arena_bytes"), 1.25 * one_step) << "one step's: " << one_step;
  EXPECT_LT(stat(*chunked.model, "prompt_scratch_bytes"), 1.25 * one_scratch) << "one step's: " << one_scratch;
}

}  // namespace
}  // namespace ogx::test
