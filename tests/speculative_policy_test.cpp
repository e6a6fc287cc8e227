// The speculative-decoding policies (genai/speculative_policy.h) against hand-worked cases: n-gram lookup (the key is
// the last N - 1 tokens; the latest earlier occurrence with a token after it; chained lookup), the adaptive width
// controller's probes on scripted rounds, and the cooldown after three zero-accept rounds.
#include <gtest/gtest.h>

#include "genai/speculative_policy.h"

namespace ogx::genai {
namespace {

using V = std::vector<int32_t>;

TEST(NGramIndex, MatchesTheLastNMinusOneTokensAtTheirLatestOccurrence) {
  NGramIndex ix(3);  // key: 2 tokens
  ix.sync({1, 2, 3, 9, 1, 2, 4, 5, 1, 2});
  // (1, 2) occurs at 0 (then 3) and at 4 (then 4): the latest wins; the continuation runs to the end of the history.
  EXPECT_EQ(ix.propose(8, false, nullptr), (V{4, 5, 1, 2}));
  EXPECT_EQ(ix.propose(2, false, nullptr), (V{4, 5}));
  ix.sync({1, 2, 3, 9, 1, 2, 4, 5, 1, 2, 7});  // extends: key (2, 7) has no earlier occurrence
  EXPECT_TRUE(ix.propose(4, false, nullptr).empty());
  ix.sync({5, 6, 5});  // not an extension: rebuilt
  EXPECT_TRUE(ix.propose(4, false, nullptr).empty());  // (6, 5) has not been followed by anything yet
  NGramIndex two(2);  // key: 1 token
  two.sync({5, 6, 5});
  EXPECT_EQ(two.propose(4, false, nullptr), (V{6, 5}));
  EXPECT_EQ(two.synced_tokens(), 3);
}

TEST(NGramIndex, ChainedLookupFillsTheBudgetOnPeriodicText) {
  NGramIndex ix(3);
  ix.sync({7, 8, 9, 7, 8});  // (7, 8) -> 9 at 0; the plain continuation is 9, 7, 8 (to the end)
  EXPECT_EQ(ix.propose(6, false, nullptr), (V{9, 7, 8}));
  int64_t chained = 0;
  // Chained: 9 after (7, 8); (8, 9) -> 7; (9, 7) -> 8; (7, 8) -> 9; ... up to the budget.
  EXPECT_EQ(ix.propose(6, true, &chained), (V{9, 7, 8, 9, 7, 8}));
  EXPECT_EQ(chained, 5);
  NGramIndex miss(3);
  miss.sync({1, 2, 3, 1, 2});
  chained = 0;
  EXPECT_EQ(miss.propose(6, true, &chained), (V{3, 1, 2, 3, 1, 2}));
  miss.sync({1, 2, 3, 4, 1, 2});  // rebuilt: (1, 2) -> 3, (2, 3) -> 4, (3, 4) -> 1, (4, 1) -> 2
  EXPECT_EQ(miss.propose(3, true, nullptr), (V{3, 4, 1}));
  NGramIndex stop(3);
  stop.sync({1, 2, 3, 5, 1, 2});  // (1, 2) -> 3; (2, 3) -> 5; (3, 5) -> 1; (5, 1) -> 2; ...
  EXPECT_EQ(stop.propose(2, true, nullptr), (V{3, 5}));
  NGramIndex end(3);
  end.sync({1, 2, 3, 1, 2, 9});  // key (2, 9): never followed
  EXPECT_TRUE(end.propose(4, true, nullptr).empty());
}

TEST(AdaptiveWidth, FixedWithoutMinAdaptiveK) {
  AdaptiveWidth w(5, 0);
  for (int i = 0; i < 20; i++) w.record(5, 5, 5, 6, true, 1.0, 1.0);
  EXPECT_EQ(w.k(), 5);
  EXPECT_EQ(w.observations, 0);
  EXPECT_EQ(w.minimum(), 5);
}

TEST(AdaptiveWidth, ProbesUpWhileAcceptanceIsHighAndKeepsAProbeThatIsNotSlower) {
  AdaptiveWidth w(4, 2);  // starts at 2
  EXPECT_EQ(w.k(), 2);
  // Every draft accepted, time per round growing slower than the tokens: each probe up is kept.
  auto round = [&](double ms) { w.record(w.k(), w.k(), w.k(), w.k() + 1, true, 0.1 * w.k(), ms); };
  round(1.0);
  EXPECT_EQ(w.k(), 2);  // one sample: no decision
  round(1.0);
  EXPECT_EQ(w.k(), 3);  // two samples at >= 75% acceptance: probe K + 1
  EXPECT_EQ(w.probes, 1);
  round(1.0);
  round(1.0);  // the probe's second round: 4 tokens / 1.3 ms beats 3 / 1.2 -> kept
  EXPECT_EQ(w.k(), 3);
  EXPECT_EQ(w.increases, 1);
  EXPECT_EQ(w.decreases, 0);
  EXPECT_GT(w.throughput(), 0.0);
  // Each further step up takes 4 rounds: the wait after a kept probe, a second stable round, the probe's two.
  for (int i = 0; i < 13 * 4; i++) round(1.0);
  EXPECT_EQ(w.k(), AdaptiveWidth::kMaxK);  // keeps growing to the ceiling
  round(1.0);
  EXPECT_EQ(w.k(), AdaptiveWidth::kMaxK);
}

TEST(AdaptiveWidth, DropsAProbeThatIsMuchSlowerAndWaitsSixRounds) {
  AdaptiveWidth w(4, 3);
  auto rec = [&](int accepted, double ms) { w.record(w.k(), w.k(), accepted, accepted + 1, true, 0.0, ms); };
  rec(3, 1.0);
  rec(3, 1.0);
  ASSERT_EQ(w.k(), 4);  // probing up
  rec(4, 4.0);          // 5 tokens in 4 ms against 4 in 1 ms: below 80% -> dropped at once
  EXPECT_EQ(w.k(), 3);
  EXPECT_EQ(w.decreases, 1);
  for (int i = 0; i < 6; i++) {
    rec(3, 1.0);
    EXPECT_EQ(w.k(), 3) << "waiting, round " << i;
  }
  rec(3, 1.0);
  EXPECT_EQ(w.k(), 4);  // probes again
  EXPECT_EQ(w.probes, 2);
}

TEST(AdaptiveWidth, ProbesDownWhenAcceptanceIsLowButNotBelowTheFloor) {
  AdaptiveWidth w(4, 2);
  w.record(2, 2, 2, 3, true, 0, 1);
  w.record(2, 2, 2, 3, true, 0, 1);
  ASSERT_EQ(w.k(), 3);
  w.record(3, 3, 3, 4, true, 0, 1);
  w.record(3, 3, 3, 4, true, 0, 1);  // kept
  ASSERT_EQ(w.k(), 3);
  // Nothing accepted from here on: the first such round still averages 75% (a probe up, dropped for its acceptance),
  // then the estimate falls below 50% and K steps down to the floor, never below it.
  for (int i = 0; i < 40; i++) w.record(w.k(), w.k(), 0, 1, true, 0, 1);
  EXPECT_EQ(w.k(), 2);
  EXPECT_GE(w.decreases, 2);
  // Rounds that did not fill their budget, or at another width, teach nothing.
  const int64_t seen = w.observations;
  w.record(2, 1, 1, 2, false, 0, 1);
  w.record(5, 5, 5, 6, true, 0, 1);
  EXPECT_EQ(w.observations, seen);
}

TEST(Cooldown, ThreeZeroAcceptRoundsAtTheMinimumWidthMakeOneStandardStep) {
  Cooldown c(true);
  c.record(4, 4, 4, 0);
  c.record(4, 4, 4, 0);
  EXPECT_FALSE(c.due());
  c.record(4, 4, 4, 0);
  EXPECT_TRUE(c.due());
  EXPECT_EQ(c.entries, 1);
  c.standard_step_done();
  EXPECT_FALSE(c.due());
  EXPECT_EQ(c.steps, 1);
  c.record(4, 4, 4, 0);
  c.record(4, 4, 4, 1);  // an accepted draft resets the count
  c.record(4, 4, 4, 0);
  c.record(4, 4, 4, 0);
  EXPECT_FALSE(c.due());
  c.record(5, 4, 5, 0);  // above the minimum width: resets too
  c.record(4, 4, 4, 0);
  EXPECT_FALSE(c.due());
  Cooldown off(false);
  for (int i = 0; i < 5; i++) off.record(4, 4, 4, 0);
  EXPECT_FALSE(off.due());
}

}  // namespace
}  // namespace ogx::genai
