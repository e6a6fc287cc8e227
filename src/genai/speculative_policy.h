// The policies of speculative decoding that ONNX Runtime GenAI documents (docs/SpeculativeDecoding.md upstream), as
// ogx implements them:
//  - NGramIndex: prompt-lookup drafting. ngram_size N matches the sequence's last N - 1 tokens (the key) against
//    their latest earlier occurrence that a token followed, and proposes the tokens after it (up to K, as far as the
//    sequence goes). Chained lookup proposes the token after the occurrence, shifts it into the key and looks the
//    new key up again, until K tokens or a miss (periodic text fills the whole budget).
//  - AdaptiveWidth: min_adaptive_k > 0 starts K there and learns, per K, a smoothed committed-tokens-per-millisecond
//    and acceptance from rounds that filled their budget (new rounds weigh 25%); with acceptance < 50% above the
//    floor it probes K - 1, with >= 75% below 16 it probes K + 1; a probe is kept after two rounds if its throughput
//    is >= 97% of the width it left (and, going up, acceptance stays >= 75%), dropped at once below 80%; then it
//    waits 1 round (kept) or 6 (dropped) before the next probe. min_adaptive_k 0: K = max_draft_tokens throughout.
//  - Cooldown: at the minimum K, three completed rounds in a row that accepted nothing make the next step a
//    standard one (no drafts).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace ogx::genai {

class NGramIndex {
 public:
  explicit NGramIndex(int ngram_size);  // >= 2
  // Makes the index hold exactly `seq` (appends when it extends what the index holds, else rebuilds).
  // Returns the tokens appended (a rebuild counts all of them).
  size_t sync(const std::vector<int32_t>& seq);
  // Up to max_tokens proposed tokens after the held sequence (empty on a miss). chained: tokens found by lookups
  // after the first are counted in *chained_tokens.
  std::vector<int32_t> propose(size_t max_tokens, bool chained, int64_t* chained_tokens) const;
  int64_t synced_tokens() const { return synced_; }

 private:
  struct KeyHash {
    size_t operator()(const std::vector<int32_t>& k) const noexcept;
  };
  void append(int32_t token);
  size_t key_ = 0;                // N - 1
  std::vector<int32_t> history_;  // the held sequence
  std::unordered_map<std::vector<int32_t>, size_t, KeyHash> latest_;  // key -> latest start with a token after it
  int64_t synced_ = 0;            // tokens appended over the index's life
};

class AdaptiveWidth {
 public:
  static constexpr int kMaxK = 16;
  AdaptiveWidth(int fixed_k, int min_adaptive_k);
  int k() const { return k_; }
  int minimum() const { return min_k_; }
  // A completed round at width k: drafts evaluated / accepted, tokens it committed, whether it proposed k drafts,
  // and its proposer and target time.
  void record(int k, int evaluated, int accepted, int committed, bool filled, double propose_ms, double target_ms);
  double throughput() const;  // the current width's smoothed tokens per millisecond (0 before any)
  void reset();               // back to the starting width, nothing learnt (the counters below stay)
  int64_t increases = 0, decreases = 0, observations = 0, probes = 0;

 private:
  struct Estimate {
    double tokens = 0, ms = 0, acceptance = 0;
    int samples = 0;
    void update(double t, double m, double a);
    double rate() const { return ms > 0 ? tokens / ms : 0.0; }
  };
  void move_to(int k);
  void start_probe(int k);
  void finish_probe(bool keep);
  int min_k_, max_k_;
  bool enabled_;
  int k_;
  std::array<Estimate, kMaxK + 1> est_{};
  int probe_from_ = 0;      // the width a probe left (0: not probing)
  int probe_rounds_ = 0, stable_rounds_ = 0, wait_ = 0;
};

class Cooldown {
 public:
  explicit Cooldown(bool enabled) : enabled_(enabled) {}
  void record(int k, int minimum_k, int evaluated, int accepted);
  bool due() const { return remaining_ > 0; }
  void standard_step_done();
  void reset() { zero_rounds_ = remaining_ = 0; }
  int64_t entries = 0, steps = 0;
  int remaining() const { return remaining_; }

 private:
  bool enabled_;
  int zero_rounds_ = 0, remaining_ = 0;
};

}  // namespace ogx::genai
