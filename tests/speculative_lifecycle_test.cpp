// The round lifecycle of speculative decoding as ONNX Runtime GenAI runs it (speculative.h), counter by counter, on
// tiny table models (tiny_table_model.h) whose next token is known: the first token comes from a round verified
// against the prompt's logits, a miss is a standard step, K is clamped to what max_length leaves, verification goes
// on past an accepted EOS, a one-draft round re-anchors at once while a longer one keeps its last token for the next
// verify pass, cooldown, adaptive width, mid-round calls, n-gram sampling with plain sampling's random stream, and a
// draft model. Every output is also compared with plain decoding's.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "genai/generator.h"
#include "tiny_table_model.h"

namespace ogx::test {
namespace {

struct Spec {
  int ngram = 0, k = 4, min_adaptive_k = 0;
  bool chained = false, cooldown = false;
};

std::unique_ptr<genai::Generator> start(const std::shared_ptr<genai::Model>& m, const std::vector<int32_t>& prompt,
                                        int max_length, const Spec& s, bool sample = false, int seed = 0) {
  genai::GeneratorParams p(*m);
  p.search.do_sample = sample;
  p.search.top_k = 4;
  p.search.temperature = 0.8;
  p.search.random_seed = seed;
  p.search.max_length = max_length;
  p.speculative.ngram_size = s.ngram;
  p.speculative.max_draft_tokens = s.k;
  p.speculative.min_adaptive_k = s.min_adaptive_k;
  p.speculative.ngram_chained_lookup = s.chained;
  p.speculative.cooldown = s.cooldown;
  auto g = std::make_unique<genai::Generator>(m, p);
  g->append_tokens(prompt);
  return g;
}

std::vector<int32_t> finish(genai::Generator& g) {
  while (!g.is_done()) g.generate_next_token();
  return g.sequence(0);
}

std::vector<int32_t> plain(const std::shared_ptr<genai::Model>& m, const std::vector<int32_t>& prompt, int max_length,
                           bool sample = false, int seed = 0) {
  auto g = start(m, prompt, max_length, Spec{}, sample, seed);
  return finish(*g);
}

const genai::SpeculativeStats& stats(const genai::Generator& g) { return *g.speculative_stats(); }

// The invariants upstream's tests check after every scenario.
void expect_consistent(const genai::SpeculativeStats& s) {
  EXPECT_EQ(s.rounds, s.completed_rounds + s.interrupted_rounds + s.active_rounds);
  EXPECT_LE(s.draft_tokens_accepted, s.draft_tokens_evaluated);
  EXPECT_LE(s.draft_tokens_evaluated, s.draft_tokens_proposed);
  EXPECT_EQ(s.tokens_queued, s.tokens_emitted + s.tokens_discarded + s.tokens_buffered);
  EXPECT_LE(s.full_accept_rounds + s.partial_accept_rounds + s.zero_accept_rounds, s.completed_rounds);
  EXPECT_EQ(s.target_forward_passes,
            s.target_verify_forward_passes + s.target_reanchor_forward_passes + s.target_reconciliation_forward_passes);
}

std::shared_ptr<genai::Model> table_model(const std::string& name, const std::map<int, int>& transitions) {
  return genai::Model::load(write_table_model(name, transition_table(transitions)));
}

TEST(SpeculativeLifecycle, FirstTokenComesFromARoundVerifiedAgainstThePromptLogits) {
  auto m = table_model("all_accept", {{1, 2}, {2, 1}});
  const std::vector<int32_t> prompt = {1, 2, 1, 2};
  auto g = start(m, prompt, 7, Spec{.ngram = 3, .k = 2});
  for (int32_t want : {1, 2, 1}) {
    g->generate_next_token();
    EXPECT_EQ(g->last_token(), want);
  }
  const auto& s = stats(*g);
  EXPECT_EQ(s.rounds, 1);
  EXPECT_EQ(s.completed_rounds, 1);
  EXPECT_EQ(s.draft_tokens_proposed, 2);
  EXPECT_EQ(s.draft_tokens_accepted, 2);
  EXPECT_EQ(s.bonus_tokens, 1);
  EXPECT_EQ(s.tokens_queued, 3);
  EXPECT_EQ(s.tokens_emitted, 3);
  EXPECT_EQ(s.target_forward_passes, 1);  // the drafts alone: the prompt's logits judge the first one
  EXPECT_EQ(s.full_accept_rounds, 1);
  expect_consistent(s);
  EXPECT_EQ(g->sequence(0), plain(m, prompt, 7));
}

TEST(SpeculativeLifecycle, LookupMissIsAStandardStep) {
  auto m = table_model("miss", {{1, 2}});
  auto g = start(m, {1, 2, 3, 4}, 5, Spec{.ngram = 3, .k = 2});
  g->generate_next_token();
  const auto& s = stats(*g);
  EXPECT_EQ(g->last_token(), 5);
  EXPECT_EQ(s.rounds, 0);
  EXPECT_EQ(s.ngram_lookup_misses, 1);
  EXPECT_EQ(s.standard_fallback_steps, 1);
  EXPECT_EQ(s.ngram_history_syncs, 1);
  EXPECT_EQ(s.ngram_history_tokens_synced, 4);
  EXPECT_EQ(s.tokens_emitted, 0);  // as upstream: tokens_emitted counts the tokens of rounds
  expect_consistent(s);
}

TEST(SpeculativeLifecycle, MaxLengthClampsTheWidthAndDiscardsTheBonus) {
  auto m = table_model("max_length", {{1, 2}, {2, 1}});
  auto g = start(m, {1, 2, 1, 2}, 5, Spec{.ngram = 3, .k = 4});
  EXPECT_EQ(finish(*g), (std::vector<int32_t>{1, 2, 1, 2, 1}));
  const auto& s = stats(*g);
  EXPECT_EQ(s.draft_tokens_proposed, 1);  // K = min(4, max_length - length)
  EXPECT_EQ(s.draft_tokens_accepted, 1);
  EXPECT_EQ(s.bonus_tokens, 1);
  EXPECT_EQ(s.tokens_queued, 2);
  EXPECT_EQ(s.tokens_emitted, 1);
  EXPECT_EQ(s.tokens_discarded, 1);
  EXPECT_EQ(s.interrupted_rounds, 1);
  expect_consistent(s);
}

TEST(SpeculativeLifecycle, VerificationGoesOnPastAnAcceptedEos) {
  auto m = table_model("accepted_eos", {{2, 9}, {9, 5}});  // 9 is the EOS
  const std::vector<int32_t> prompt = {1, 2, 9, 4, 1, 2};
  auto g = start(m, prompt, 10, Spec{.ngram = 3, .k = 2});
  const std::vector<int32_t> got = finish(*g);
  EXPECT_EQ(got, plain(m, prompt, 10));  // the EOS that ends the row is not appended, in plain decoding as here
  EXPECT_EQ(got, prompt);
  EXPECT_EQ(g->last_token(), 9);  // but it is the step's pick
  const auto& s = stats(*g);
  EXPECT_EQ(s.draft_tokens_accepted, 1);
  EXPECT_EQ(s.correction_tokens, 1);  // the draft after the EOS was judged too
  EXPECT_EQ(s.tokens_queued, 2);
  EXPECT_EQ(s.tokens_emitted, 0);    // upstream: the EOS is not emitted (EmitToken is false), it is discarded
  EXPECT_EQ(s.tokens_discarded, 2);
  EXPECT_EQ(s.interrupted_rounds, 1);
  expect_consistent(s);
}

TEST(SpeculativeLifecycle, OneDraftRoundReanchorsAtOnceLongerOnesKeepTheirLastToken) {
  auto m = table_model("reanchor", {{1, 2}, {2, 1}});
  const std::vector<int32_t> prompt = {1, 2, 1, 2};
  auto k1 = start(m, prompt, 12, Spec{.ngram = 3, .k = 1});
  k1->generate_next_token();
  k1->generate_next_token();  // the round's bonus: handed out, then run alone
  EXPECT_EQ(stats(*k1).target_verify_forward_passes, 1);
  EXPECT_EQ(stats(*k1).target_reanchor_forward_passes, 1);
  EXPECT_EQ(finish(*k1), plain(m, prompt, 12));
  expect_consistent(stats(*k1));

  auto k2 = start(m, prompt, 12, Spec{.ngram = 3, .k = 2});
  for (int i = 0; i < 6; i++) k2->generate_next_token();  // two rounds of three tokens
  EXPECT_EQ(stats(*k2).rounds, 2);
  EXPECT_EQ(stats(*k2).target_forward_passes, 2);  // the second verify pass starts with the first round's bonus
  EXPECT_EQ(stats(*k2).target_reanchor_forward_passes, 0);
  EXPECT_EQ(finish(*k2), plain(m, prompt, 12));
}

TEST(SpeculativeLifecycle, CooldownSkipsOneStepAfterThreeZeroAcceptRounds) {
  auto m = table_model("cooldown", {{1, 2}, {2, 3}, {3, 1}});
  const std::vector<int32_t> prompt = {1, 4, 2, 4, 3, 4, 1};
  auto g = start(m, prompt, 12, Spec{.ngram = 2, .k = 2, .cooldown = true});
  for (int i = 0; i < 3; i++) g->generate_next_token();
  EXPECT_EQ(stats(*g).rounds, 3);
  EXPECT_EQ(stats(*g).draft_tokens_accepted, 0);
  EXPECT_EQ(stats(*g).cooldown_entries, 1);
  EXPECT_EQ(stats(*g).cooldown_remaining, 1);
  g->generate_next_token();
  EXPECT_EQ(stats(*g).rounds, 3);
  EXPECT_EQ(stats(*g).cooldown_steps, 1);
  EXPECT_EQ(stats(*g).standard_fallback_steps, 1);
  EXPECT_EQ(stats(*g).target_reanchor_forward_passes, 1);  // the third round's correction, run before the pick
  EXPECT_EQ(finish(*g), plain(m, prompt, 12));
  EXPECT_EQ(stats(*g).rounds, 4);
  expect_consistent(stats(*g));
}

TEST(SpeculativeLifecycle, AdaptiveWidthProbesUpAfterTwoFullRounds) {
  auto m = table_model("adaptive", {{1, 2}, {2, 1}});
  auto g = start(m, {1, 2, 1, 2}, 16, Spec{.ngram = 3, .k = 4, .min_adaptive_k = 2});
  EXPECT_EQ(stats(*g).effective_k, 2);
  for (int i = 0; i < 3; i++) g->generate_next_token();
  EXPECT_EQ(stats(*g).completed_rounds, 1);
  EXPECT_EQ(stats(*g).adaptive_k_observations, 1);
  EXPECT_EQ(stats(*g).effective_k, 2);
  for (int i = 0; i < 3; i++) g->generate_next_token();
  EXPECT_EQ(stats(*g).completed_rounds, 2);
  EXPECT_EQ(stats(*g).draft_tokens_proposed, 4);
  EXPECT_EQ(stats(*g).effective_k, 3);
  EXPECT_EQ(stats(*g).adaptive_k_probes, 1);
  g->rewind_to(0);  // a rewind starts the policies over
  g->append_tokens({1, 2, 1, 2});
  EXPECT_EQ(stats(*g).effective_k, 2);
  EXPECT_EQ(stats(*g).adaptive_k_throughput, 0.0);
}

TEST(SpeculativeLifecycle, MidRoundCallsDiscardTheBufferedTokens) {
  auto m = table_model("mid_round", {{1, 2}, {2, 1}, {7, 1}});
  const std::vector<int32_t> prompt = {1, 2, 1, 2};
  auto g = start(m, prompt, 16, Spec{.ngram = 3, .k = 4});
  g->generate_next_token();
  const genai::SpeculativeStats before = stats(*g);
  EXPECT_EQ(before.active_rounds, 1);
  EXPECT_GT(before.tokens_buffered, 0);
  g->rewind_to(prompt.size() - 1);
  EXPECT_EQ(stats(*g).active_rounds, 0);
  EXPECT_EQ(stats(*g).interrupted_rounds, before.interrupted_rounds + 1);
  EXPECT_EQ(stats(*g).tokens_discarded, before.tokens_discarded + before.tokens_buffered);
  EXPECT_EQ(finish(*g), plain(m, prompt, 16));

  auto a = start(m, prompt, 16, Spec{.ngram = 3, .k = 4});
  a->generate_next_token();
  std::vector<int32_t> committed = a->sequence(0);
  a->append_tokens({7, 1, 2});
  committed.insert(committed.end(), {7, 1, 2});
  EXPECT_EQ(finish(*a), plain(m, committed, 16));
  EXPECT_EQ(stats(*a).interrupted_rounds, 1);
  expect_consistent(stats(*a));
}

// Logits rows that leave tokens 1..4 to chance (top_k 4): sampling with n-gram drafts draws each position with the
// generator's sampler and puts back the draws of tokens never handed out, so a seed gives plain sampling's tokens.
std::vector<float> sampling_table() {
  std::vector<float> t(100, -20.0f);
  for (int r = 0; r < 10; r++)
    for (int c = 1; c <= 4; c++) t[(size_t)r * 10 + c] = 0.2f * (float)(c - 1);
  return t;
}

TEST(SpeculativeLifecycle, NgramSamplingGivesPlainSamplingTokensForASeed) {
  auto m = genai::Model::load(write_table_model("sampling", sampling_table()));
  const std::vector<int32_t> prompt = {1, 2, 1, 2};
  std::set<std::vector<int32_t>> outputs;
  for (int seed = 0; seed < 12; seed++) {
    const std::vector<int32_t> want = plain(m, prompt, 14, true, seed);
    for (Spec s : {Spec{.ngram = 3, .k = 4}, Spec{.ngram = 2, .k = 8, .chained = true}}) {
      auto g = start(m, prompt, 14, s, true, seed);
      EXPECT_EQ(finish(*g), want) << "seed " << seed;
      expect_consistent(stats(*g));
    }
    // A mid-round append: the draws of the discarded tokens are put back.
    auto p = start(m, prompt, 14, Spec{}, true, seed);
    auto g = start(m, prompt, 14, Spec{.ngram = 3, .k = 4}, true, seed);
    p->generate_next_token();
    g->generate_next_token();
    p->append_tokens({7});
    g->append_tokens({7});
    EXPECT_EQ(finish(*g), finish(*p)) << "seed " << seed;
    outputs.insert(want);
  }
  EXPECT_GT(outputs.size(), 1u);
}

// A target that repeats its token and a draft that always proposes 4: every round rejects its first draft.
TEST(SpeculativeLifecycle, DraftModelRoundsAndCooldown) {
  std::vector<float> eye(100, 0.0f), fours(100, 0.0f);
  for (int t = 0; t < 10; t++) eye[(size_t)t * 10 + t] = 1.0f, fours[(size_t)t * 10 + 4] = 1.0f;
  const std::string plain_dir = write_table_model("draft_plain", eye);
  const std::string dir =
      write_table_model("draft_target", eye, 10, false, nullptr, table_decoder_config("draft.onnx"));
  write_table_onnx(dir + "/draft.onnx", fours, 10);
  auto m = genai::Model::load(dir);
  auto g = start(m, {1}, 7, Spec{.k = 2, .cooldown = true});
  for (int i = 0; i < 3; i++) g->generate_next_token();
  EXPECT_EQ(stats(*g).rounds, 3);
  EXPECT_EQ(stats(*g).draft_tokens_accepted, 0);
  EXPECT_EQ(stats(*g).cooldown_entries, 1);
  g->generate_next_token();
  EXPECT_EQ(stats(*g).rounds, 3);
  EXPECT_EQ(stats(*g).standard_fallback_steps, 1);
  EXPECT_EQ(finish(*g), plain(genai::Model::load(plain_dir), {1}, 7));
  EXPECT_EQ(stats(*g).rounds, 5);
  expect_consistent(stats(*g));

  // Itself as its draft: every draft accepted, K drafts and a bonus a round.
  const std::string self = write_table_model("draft_self", eye, 10, false, nullptr, table_decoder_config());
  auto s = start(genai::Model::load(self), {3}, 16, Spec{.k = 4, .min_adaptive_k = 2});
  for (int i = 0; i < 6; i++) s->generate_next_token();
  EXPECT_EQ(stats(*s).rounds, 2);
  EXPECT_EQ(stats(*s).draft_tokens_accepted, 4);
  EXPECT_EQ(stats(*s).effective_k, 3);
}

}  // namespace
}  // namespace ogx::test
