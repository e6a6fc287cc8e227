// Generator behaviour: KV modes agree, growth of the shared cache, rewind, seeded sampling, search options.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include <random>

#include "genai/beam_search.h"
#include "genai/generator.h"
#include "genai/search.h"
#include "shared_dir.h"

namespace ogx::test {
namespace {

// The sampler's candidate set (temperature, top-k, softmax, top-p nucleus) against a reference that sorts the whole
// vocabulary: the same dense distribution for random logits (with ties) over vocabularies from 1 to Llama 3's 128,256
// (below and above the sorted prefix the nucleus search starts with, 256) and k from 1 to past V. Probabilities
// within 1e-12.
std::vector<double> reference_distribution(std::vector<float> l, int top_k, double top_p, double temperature) {
  const size_t V = l.size();
  for (float& x : l) x /= (float)temperature;
  std::vector<int32_t> idx(V);
  for (size_t i = 0; i < V; i++) idx[i] = (int32_t)i;
  std::sort(idx.begin(), idx.end(), [&](int32_t a, int32_t b) { return l[a] > l[b] || (l[a] == l[b] && a < b); });
  size_t k = top_k > 0 ? std::min<size_t>((size_t)top_k, V) : V;
  double sum = 0;
  std::vector<double> p(k);
  for (size_t i = 0; i < k; i++) sum += p[i] = std::exp((double)l[idx[i]] - (double)l[idx[0]]);
  size_t keep = k;
  if (top_p < 1.0) {
    double cum = 0;
    keep = 0;
    while (keep < k) {
      cum += p[keep++] / sum;
      if (cum >= top_p) break;
    }
  }
  double kept = 0;
  for (size_t i = 0; i < keep; i++) kept += p[i];
  std::vector<double> dense(V, 0.0);
  for (size_t i = 0; i < keep; i++) dense[(size_t)idx[i]] = p[i] / kept;
  return dense;
}

TEST(SamplerFilter, MatchesAWholeVocabularySort) {
  std::mt19937 rng(11);
  for (size_t V : {size_t(1), size_t(7), size_t(300), size_t(5000), size_t(128256)}) {
    std::vector<float> logits(V);
    std::normal_distribution<float> n(0.0f, 3.0f);
    for (float& x : logits) x = std::round(n(rng) * 4.0f) / 4.0f;  // quarter steps: many ties
    for (int top_k : {0, 1, 5, 50, (int)V + 3}) {
      for (double top_p : {1.0, 0.999, 0.9, 0.3}) {
        for (double temperature : {0.5, 1.0, 2.0}) {
          genai::SearchConfig s;
          s.do_sample = true;
          s.top_k = top_k;
          s.top_p = top_p;
          s.temperature = temperature;
          genai::Sampler sampler(s, {0});
          std::vector<float> l = logits;
          std::vector<double> got = sampler.distribution(l.data(), (int64_t)V, {1});
          std::vector<double> want = reference_distribution(logits, top_k, top_p, temperature);
          ASSERT_EQ(got.size(), want.size());
          for (size_t t = 0; t < V; t++)
            ASSERT_NEAR(got[t], want[t], 1e-12) << "V " << V << " top_k " << top_k << " top_p " << top_p
                                                 << " temperature " << temperature << " token " << t;
        }
      }
    }
  }
}

std::string golden(const std::string& m = "llama") { return shared_dir() + "/golden/models/" + m + "/fp32-cpu"; }

std::vector<int32_t> run(const std::shared_ptr<genai::Model>& m, genai::GeneratorParams p, std::vector<int32_t> prompt,
                         int n) {
  genai::Generator g(m, p);
  g.append_tokens(prompt);
  for (int i = 0; i < n && !g.is_done(); i++) g.generate_next_token();
  return std::vector<int32_t>(g.sequence().begin() + prompt.size(), g.sequence().end());
}

TEST(Generator, SharedAndSeparateKvCacheGiveTheSameTokens) {
  OGX_REQUIRE_SHARED();
  auto m = genai::Model::load(golden());
  genai::GeneratorParams p(*m);
  p.search.min_length = 40;
  p.search.max_length = 300;  // forces the shared cache to grow past its first 256-position chunk
  p.search.past_present_share_buffer = true;
  auto a = run(m, p, {1, 7, 9}, 290);
  p.search.past_present_share_buffer = false;
  auto b = run(m, p, {1, 7, 9}, 290);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.size(), 290u);  // 3 + 290 positions: past the 256-position first chunk
}

TEST(Generator, KvCacheIsSizedByTheRequestNotTheContext) {
  OGX_REQUIRE_SHARED();
  auto m = genai::Model::load(golden());
  genai::GeneratorParams p(*m);  // max_length 4096 from genai_config.json
  genai::KvCache kv(*m, 1, 4096, true);
  std::vector<NamedTensor> in, out;
  kv.bind(10, in, out);
  EXPECT_LE(kv.capacity(), 256);
}

TEST(Generator, RewindThenContinueEqualsFreshRun) {
  OGX_REQUIRE_SHARED();
  auto m = genai::Model::load(golden());
  genai::GeneratorParams p(*m);
  p.search.max_length = 64;
  genai::Generator g(m, p);
  g.append_tokens({1, 100, 200});
  for (int i = 0; i < 6; i++) g.generate_next_token();
  g.rewind_to(3);
  for (int i = 0; i < 6; i++) g.generate_next_token();
  auto fresh = run(m, p, {1, 100, 200}, 6);
  EXPECT_EQ(std::vector<int32_t>(g.sequence().begin() + 3, g.sequence().end()), fresh);
}

TEST(Generator, SameSeedSameTokens) {
  OGX_REQUIRE_SHARED();
  auto m = genai::Model::load(golden());
  genai::GeneratorParams p(*m);
  p.search.max_length = 40;
  p.search.do_sample = true;
  p.search.top_k = 20;
  p.search.top_p = 0.9;
  p.search.temperature = 0.8;
  p.search.random_seed = 42;
  auto a = run(m, p, {1, 5}, 30), b = run(m, p, {1, 5}, 30);
  EXPECT_EQ(a, b);
  p.search.random_seed = 43;
  EXPECT_NE(a, run(m, p, {1, 5}, 30));
}

TEST(Generator, TopKOneIsGreedy) {
  OGX_REQUIRE_SHARED();
  auto m = genai::Model::load(golden());
  genai::GeneratorParams p(*m);
  p.search.max_length = 30;
  auto greedy = run(m, p, {1, 5}, 20);
  p.search.do_sample = true;
  p.search.top_k = 1;
  p.search.random_seed = 7;
  EXPECT_EQ(run(m, p, {1, 5}, 20), greedy);
}

TEST(Search, RepetitionPenaltyAndNgramFollowHuggingFace) {
  genai::SearchConfig s;
  s.repetition_penalty = 2.0;
  s.no_repeat_ngram_size = 2;
  genai::Sampler sm(s, {0});
  std::vector<float> l = {1.0f, 4.0f, -2.0f, 3.0f, 0.5f};
  sm.process_logits(l, {1, 2, 1});  // seen: 1, 2; bigram (1, 2) exists so after "1", token 2 is banned
  EXPECT_FLOAT_EQ(l[1], 2.0f);      // positive: divided
  EXPECT_EQ(l[2], std::numeric_limits<float>::lowest());  // banned: the lowest float, as ONNX Runtime GenAI
  EXPECT_FLOAT_EQ(l[3], 3.0f);
}

// Sampler::logit_edits remembers the marks of recent sequences and extends them: across steps of several rows,
// beams that continue other rows (the same prefix, different last tokens), a rewind to a shorter sequence, a jump of
// many tokens and a new prompt length, every call's edits equal those of a fresh sampler (no memory).
TEST(Search, LogitEditsFromRememberedSequencesEqualFreshOnes) {
  genai::SearchConfig s;
  s.repetition_penalty = 1.3;
  s.presence_penalty = 0.25;
  s.frequency_penalty = -0.4;
  s.no_repeat_ngram_size = 3;
  s.min_length = 40;
  genai::Sampler remembering(s, {0, 5});
  std::mt19937 rng(77);
  const int64_t V = 300;
  auto same = [&](const std::vector<int32_t>& seq, size_t prompt, const char* what) {
    genai::Sampler fresh(s, {0, 5});
    fresh.set_prompt_length(prompt);
    remembering.set_prompt_length(prompt);
    auto a = remembering.logit_edits(V, seq), b = fresh.logit_edits(V, seq);
    ASSERT_EQ(a.size(), b.size()) << what << " at length " << seq.size();
    for (size_t i = 0; i < a.size(); i++) {
      EXPECT_EQ(a[i].token, b[i].token) << what;
      EXPECT_EQ(a[i].repetition, b[i].repetition) << what;
      EXPECT_EQ(a[i].ban, b[i].ban) << what;
      EXPECT_EQ(a[i].subtract, b[i].subtract) << what;
    }
  };
  std::vector<std::vector<int32_t>> rows(4);
  for (auto& r : rows)
    for (int i = 0; i < 20; i++) r.push_back((int32_t)(rng() % 40) - 2);  // repeats, and ids out of [0, V)
  for (int step = 0; step < 30; step++) {
    if (step % 5 == 4) rows[3] = rows[(size_t)(rng() % 3)];  // a beam continues another row
    for (auto& r : rows) {
      r.push_back((int32_t)(rng() % 40));
      same(r, 20, "step");
    }
  }
  rows[0].resize(25);  // a rewind
  same(rows[0], 20, "rewind");
  for (int i = 0; i < 100; i++) rows[1].push_back((int32_t)(rng() % 60));  // many new tokens at once
  same(rows[1], 20, "jump");
  same(rows[1], 30, "another prompt length");
}

// OpenAI's rule on random logits: logit[t] -= presence * (count[t] > 0) + frequency * count[t], counts over the
// generated tokens only (after set_prompt_length), penalties of both signs; a token only in the prompt is untouched.
TEST(Search, PresenceAndFrequencyPenaltiesFollowOpenAI) {
  std::mt19937 rng(2024);
  std::uniform_real_distribution<float> logit(-8.0f, 8.0f);
  std::uniform_real_distribution<double> penalty(-2.0, 2.0);
  for (int trial = 0; trial < 50; trial++) {
    genai::SearchConfig s;
    s.presence_penalty = penalty(rng);
    s.frequency_penalty = penalty(rng);
    const int V = 40 + (int)(rng() % 60);
    const size_t prompt = 1 + rng() % 10, generated = rng() % 30;
    std::vector<int32_t> seq;
    for (size_t i = 0; i < prompt + generated; i++) seq.push_back((int32_t)(rng() % (V / 3)));  // many repeats
    std::vector<float> l(V);
    for (float& x : l) x = logit(rng);
    std::vector<int> count(V, 0);  // the reference: counts over the generated part
    for (size_t i = prompt; i < seq.size(); i++) count[seq[i]]++;
    std::vector<float> want = l;
    for (int t = 0; t < V; t++)
      want[t] = (float)((double)l[t] - (s.presence_penalty * (count[t] > 0) + s.frequency_penalty * count[t]));
    genai::Sampler sm(s, {V - 1});
    sm.set_prompt_length(prompt);
    EXPECT_FALSE(sm.greedy_without_processing(seq));
    std::vector<float> got = l;
    sm.process_logits(got, seq);
    for (int t = 0; t < V; t++) ASSERT_FLOAT_EQ(got[t], want[t]) << "trial " << trial << " token " << t;
    // The greedy pick is the reference's argmax.
    std::vector<float> again = l;
    EXPECT_EQ(sm.next(again, seq), genai::argmax(want));
  }
  // Neutral penalties: no processing, and the picks stay a plain argmax (the device path).
  genai::SearchConfig neutral;
  neutral.repetition_penalty = 1.0;
  EXPECT_FALSE(genai::penalizes_sequence(neutral));
  neutral.frequency_penalty = 0.1;
  EXPECT_TRUE(genai::penalizes_sequence(neutral));
}

TEST(Search, PenaltyOptionsAreRangeChecked) {
  auto m = genai::Model::load(std::string(OGX_SOURCE_DIR) + "/models/ogx-debian-10m/int4");  // checked in
  genai::GeneratorParams p(*m);
  p.set_search_option("presence_penalty", -2.0);
  p.set_search_option("frequency_penalty", 2.0);
  EXPECT_EQ(p.search.presence_penalty, -2.0);
  EXPECT_EQ(p.search.frequency_penalty, 2.0);
  EXPECT_THROW(p.set_search_option("presence_penalty", 2.5), Error);
  EXPECT_THROW(p.set_search_option("frequency_penalty", std::nan("")), Error);
  EXPECT_EQ(p.search.frequency_penalty, 2.0);  // a refused value leaves the params unchanged
}

TEST(Search, MinLengthSuppressesEos) {
  genai::SearchConfig s;
  s.min_length = 5;
  genai::Sampler sm(s, {3});
  std::vector<float> l = {0, 0, 0, 9};
  EXPECT_NE(sm.next(l, {1, 2}), 3);
  std::vector<float> l2 = {0, 0, 0, 9};
  EXPECT_EQ(sm.next(l2, {1, 2, 3, 4, 5}), 3);
}

}  // namespace
}  // namespace ogx::test

namespace ogx::test {
namespace {
// The vectorized argmax against the plain first-maximum rule: random sizes (tails), ties, a NaN.
TEST(Argmax, MatchesFirstMaximumRule) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; trial++) {
    std::vector<float> v(1 + rng() % 300);
    for (auto& x : v) x = (float)(rng() % 50) * 0.5f - 10.0f;  // many ties
    if (trial % 50 == 49) v[rng() % v.size()] = NAN;
    int32_t want = 0;
    for (size_t i = 1; i < v.size(); i++)
      if (v[i] > v[want]) want = (int32_t)i;
    EXPECT_EQ(genai::argmax(v), want) << "size " << v.size();
  }
}
// BeamSearch::step keeps only the best 2 x num_beams candidates of a prompt while it scans: against a reference
// that log-softmaxes every row (log_softmax), adds the beam scores and sorts all beams x V candidates (ties to the
// lower beam, then token), the same tokens, source rows and beam scores step after step — random logits with
// repeated values (ties within and across beams), 2 prompts x 3 beams, V 50 and 700, no EOS in reach; the rows
// scanned on the calling thread and on a pool.
TEST(BeamSearchStep, KeepsTheCandidatesAWholeSortKeeps) {
  ThreadPool pool(3);
  for (ThreadPool* p : {(ThreadPool*)nullptr, &pool})  // rows scanned in turn, then in parallel
  for (int64_t V : {50, 700}) {
    genai::SearchConfig sc;
    sc.batch_size = 2, sc.num_beams = 3, sc.num_return_sequences = 3;
    const int rows = 6;
    genai::BeamSearch search(sc, {(int)V + 5}, 0);  // an EOS id no row can pick
    search.set_pool(p);
    std::vector<float> beam_scores(rows, 0.0f);
    for (int r = 0; r < rows; r++) beam_scores[r] = r % 3 ? -1e9f : 0.0f;
    std::vector<std::vector<int32_t>> seqs(rows, std::vector<int32_t>{1, 2});
    std::mt19937 rng(7);
    for (int step = 0; step < 5; step++) {
      std::vector<float> logits((size_t)rows * V);
      for (float& x : logits) x = (float)(rng() % 40) * 0.25f - 5.0f;  // 40 values: many ties
      std::vector<int32_t> tokens, src;
      search.step(logits, seqs, tokens, src);
      for (int b = 0; b < 2; b++) {
        std::vector<std::pair<float, int64_t>> all;
        for (int j = 0; j < 3; j++) {
          std::vector<float> l(logits.begin() + (b * 3 + j) * V, logits.begin() + (b * 3 + j + 1) * V);
          genai::log_softmax(l.data(), V);
          for (int64_t t = 0; t < V; t++) all.push_back({l[t] + beam_scores[b * 3 + j], j * V + t});
        }
        std::stable_sort(all.begin(), all.end(), [](auto& x, auto& y) { return x.first > y.first; });
        for (int j = 0; j < 3; j++) {
          EXPECT_EQ(tokens[b * 3 + j], all[j].second % V) << "V " << V << " step " << step << " beam " << j;
          EXPECT_EQ(src[b * 3 + j], b * 3 + all[j].second / V) << "V " << V << " step " << step << " beam " << j;
        }
        for (int j = 0; j < 3; j++) beam_scores[b * 3 + j] = all[j].first;
      }
      std::vector<std::vector<int32_t>> next(rows);
      for (int r = 0; r < rows; r++) (next[r] = seqs[src[r]]).push_back(tokens[r]);
      seqs = next;
    }
  }
}

}  // namespace
}  // namespace ogx::test
