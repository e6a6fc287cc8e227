// Speculative decoding, as ONNX Runtime GenAI configures it and runs its rounds: drafts come from n-gram
// (prompt-lookup) matching (set_speculative_options ngram_size, max_draft_tokens) or from a draft model
// (genai_config.json model.draft, see Model::draft()).
//  - n-gram: the latest earlier occurrence of the sequence's last ngram_size - 1 tokens; the tokens that followed it.
//  - draft model: a second Generator over the draft model follows the target's sequence (rewound to the common
//    prefix each round) and picks the drafts one step at a time: greedily (on its device when it can) under greedy
//    search, else sampled from its processed distribution q.
// A round (upstream's RunRound) drafts K = min(width, max_length - length) tokens right after the sequence and runs
// them through the target in one forward pass, preceded by the sequence's last token when that one is not in the
// KV cache yet. The first draft is judged by the logits of the sequence's last position (after a prompt: the
// prompt's own forward pass, so the first new token comes from a round too), draft i + 1 by the row after draft i.
// Acceptance. Greedy search: a draft is accepted while it equals the token the search would pick at that position
// (the same logits processing as plain decoding), so the output is plain decoding's. Sampling with n-gram drafts:
// each position draws its token with the generator's sampler (one draw per emitted token, as plain sampling) and a
// draft is accepted when it equals the draw; draws of tokens that are never handed out are put back, so a seed
// gives plain sampling's tokens. Sampling with a draft model: the standard rejection test (Leviathan et al. 2023):
// draft d drawn from q is accepted with probability min(1, p(d) / q(d)), p being the target's processed
// distribution; on rejection the token is drawn from max(0, p - q) renormalized. Verification goes on past an
// accepted EOS, as upstream's. The first rejected position yields the correction token; after a fully accepted
// draft the bonus token comes from the last row. The KV caches (the target's, and the draft model's at the next
// round) are cut back to the accepted tokens. The round's last token is not run: with K >= 2 it is the first
// token of the next round's verify pass (upstream's fold), with K = 1 it runs at once (a re-anchor pass).
// A round that proposes nothing (an n-gram miss), and one step after three rounds in a row that accepted nothing
// at the minimum width (cooldown), is a standard step: the token is picked from the logits of the sequence.
// Verified tokens are handed out one per generate_next_token call, so streaming code sees the same token sequence
// as without speculation; any other call (logits, set_logits, append_tokens, rewind_to) discards tokens verified
// but not yet handed out. Where ogx differs from upstream: an EOS is appended to the sequence as in ogx's plain
// decoding (upstream's search drops it at batch size 1), get_logits mid-round discards the buffered tokens
// (upstream serves them from the verify pass), and no phi3 re-prefill at the long-RoPE threshold.
// Supported: batch_size 1, no beams, cpu and vulkan providers; other settings are errors naming the option.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "genai/config.h"
#include "genai/search.h"
#include "genai/speculative_policy.h"

namespace ogx::genai {

class Generator;
class Model;

// genai_config.json's speculative section, settable by name (ngram_size 0: no n-gram drafting; a model with a draft
// drafts with it whatever ngram_size says).
struct SpeculativeOptions : SpeculativeConfig {
  SpeculativeOptions() = default;
  explicit SpeculativeOptions(const SpeculativeConfig& c) : SpeculativeConfig(c) {}

  void set_number(const std::string& name, double value);  // throws for unknown names and bad values
  void set_bool(const std::string& name, bool value);
  double number(const std::string& name) const;
  bool boolean(const std::string& name) const;
};

// Counters of a generator's speculative rounds, with ONNX Runtime GenAI's names and meanings (upstream's
// docs/SpeculativeDecoding.md "Statistics"): items() lists every counter and derived figure it documents.
struct SpeculativeStats {
  int64_t rounds = 0;                 // rounds started (forward passes that verified at least one drafted token)
  int64_t completed_rounds = 0;       // rounds that ended without discarding a verified token
  int64_t interrupted_rounds = 0;     // rounds whose verified tokens were discarded (another call, EOS, max_length)
  int64_t active_rounds = 0;          // 1 while a round has tokens to hand out
  int64_t draft_tokens_proposed = 0;  // drafted tokens run through the model
  int64_t draft_tokens_evaluated = 0;  // drafted tokens examined before acceptance stopped
  int64_t draft_tokens_accepted = 0;  // drafted tokens equal to what the search picked
  int64_t bonus_tokens = 0;           // tokens picked after a fully accepted draft
  int64_t correction_tokens = 0;      // tokens picked in place of a rejected draft
  int64_t tokens_queued = 0;          // verified tokens put in the hand-out queue
  int64_t tokens_emitted = 0;         // round tokens handed out by generate_next_token (not standard steps')
  int64_t tokens_discarded = 0;       // verified tokens dropped by another call before being handed out
  int64_t tokens_buffered = 0;        // tokens waiting to be handed out now
  int64_t draft_forward_passes = 0;   // draft model runs (draft model drafting)
  int64_t target_forward_passes = 0;  // the three kinds below (as upstream: the run of a standard step's token, or
                                      // of the last position after a rewind, is not counted)
  int64_t target_verify_forward_passes = 0;          // runs verifying drafts
  int64_t target_reanchor_forward_passes = 0;        // one-token runs of a round's last token (K = 1, or before a
                                                     // standard step)
  int64_t target_reconciliation_forward_passes = 0;  // upstream's replays after an interrupted round: ogx cuts the
                                                     // KV cache back to the handed-out tokens instead (0)
  int64_t full_accept_rounds = 0, partial_accept_rounds = 0, zero_accept_rounds = 0;  // of the completed rounds
  int64_t standard_fallback_steps = 0;  // steps without drafts (n-gram misses, cooldown)
  int64_t ngram_lookup_hits = 0, ngram_lookup_misses = 0;
  int64_t ngram_lookup_tokens_proposed = 0;   // tokens n-gram lookups proposed
  int64_t ngram_chained_tokens_proposed = 0;  // ... found by chained lookups after the first
  int64_t ngram_history_syncs = 0, ngram_history_tokens_synced = 0;  // the lookup index catching up
  double total_draft_ms = 0, total_target_verify_ms = 0, total_target_reanchor_ms = 0, total_reconciliation_ms = 0;
  double total_ngram_history_sync_ms = 0, total_ngram_lookup_ms = 0;
  // Adaptive width and cooldown (speculative_policy.h), copied in by SpeculativeDecoder::stats().
  int64_t effective_k = 0, adaptive_k_increases = 0, adaptive_k_decreases = 0, adaptive_k_observations = 0;
  int64_t adaptive_k_probes = 0;
  double adaptive_k_throughput = 0;  // tokens per millisecond at the current width
  int64_t cooldown_entries = 0, cooldown_steps = 0, cooldown_remaining = 0;
  std::vector<int64_t> rounds_at_k = std::vector<int64_t>(17, 0);  // rounds per width (expected tokens per round)
  // (name, value) pairs: the counters, then the derived figures (acceptance, speed-up estimates) as upstream
  // computes them; "formula_supported" is 1 or 0.
  std::vector<std::pair<std::string, double>> items() const;
};

// The rejection test of speculative sampling for one drafted token d drawn from q: accepted with probability
// min(1, p[d] / q[d]); else the returned token is drawn from max(0, p - q) renormalized. p, q: dense [vocab].
struct DraftVerdict {
  int32_t token;
  bool accepted;
};
DraftVerdict verify_sampled_draft(const std::vector<double>& p, const std::vector<double>& q, int32_t d,
                                  std::mt19937_64& rng);

class SpeculativeDecoder {
 public:
  // draft: the draft model, or null for n-gram drafting. search: the target generator's search settings.
  SpeculativeDecoder(const SpeculativeOptions& options, std::shared_ptr<const Model> draft, const SearchConfig& search,
                     int max_length);
  ~SpeculativeDecoder();
  // One generate_next_token call: hands out a verified token, or runs a round. Always handles the call.
  void generate_next_token(Generator& g);
  // Drops verified tokens not yet handed out, cutting the KV cache back to the handed-out sequence.
  void discard_buffered(Generator& g);
  // rewind_to: the buffered tokens go and the policies start over (the width, the cooldown), as upstream's reset.
  void reset(Generator& g);
  const SpeculativeStats& stats() const;

 private:
  // A round: drafts after the sequence verified in one forward pass; their tokens are buffered.
  void run_round(Generator& g);
  // A step without drafts (an n-gram miss, cooldown): the token picked from the logits after the sequence.
  void standard_step(Generator& g);
  // The logits after the sequence on the host: runs the pending token (a re-anchor pass when a round kept it for
  // the next verify pass) or, after a rewind, the last position again.
  void settle_logits(Generator& g);
  std::vector<int32_t> draft(const std::vector<int32_t>& seq, int max_tokens);
  // Draft model: up to max_tokens tokens after seq; with sampling q gets the distribution each was drawn from.
  std::vector<int32_t> draft_with_model(const std::vector<int32_t>& seq, int max_tokens,
                                        std::vector<std::vector<double>>* q);
  void sync_draft(const std::vector<int32_t>& seq);  // the draft generator holds exactly seq
  // A verify pass's decision: drafts examined and accepted, and the token after the accepted ones (the correction,
  // or the bonus after a fully accepted draft).
  struct Verdict {
    int evaluated = 0, accepted = 0;
    int32_t next = -1;
  };
  // read_row(i, row): the logits that judge position length + i (i = 0 .. drafts.size()).
  Verdict judge(Generator& g, const std::vector<int32_t>& drafts, const std::vector<std::vector<double>>& q,
                const std::function<void(int, std::vector<float>&)>& read_row, int64_t V);
  void hand_out(Generator& g);     // the next buffered token becomes part of the sequence
  void finish_round(Generator& g);  // after the round's last token: re-anchor (K = 1) or keep it pending
  void close_round(bool interrupted);  // the round's counters; a completed round teaches the policies
  SpeculativeOptions opt_;
  mutable SpeculativeStats stats_;
  std::unique_ptr<NGramIndex> ngram_;  // n-gram drafting (null with a draft model)
  AdaptiveWidth width_;                // K per round
  Cooldown cooldown_;
  bool sampling_ = false;                // search.do_sample: rejection sampling instead of exact matching
  std::mt19937_64 rng_;                  // draft-model sampling: acceptance draws and draft samples (random_seed)
  std::unique_ptr<Generator> draft_gen_;  // over the draft model; null for n-gram drafting
  std::unique_ptr<Sampler> draft_sampler_;  // the target's logits processing, applied to the draft's logits
  // The open round (tokens still to hand out), for the counters and the policies (an interrupted round teaches
  // nothing).
  struct RoundRecord {
    int width = 0, evaluated = 0, accepted = 0, emitted = 0;  // width: the drafts proposed (upstream's K)
    bool filled = false;                                     // the proposal filled the width's budget
    double propose_ms = 0, target_ms = 0;
  };
  std::optional<RoundRecord> open_round_;
  std::vector<int32_t> buffered_;  // verified tokens to hand out, in order (all but the last are in the KV cache)
  // N-gram drafts under sampling: the sampler's random state after each buffered token's draw (set as the token is
  // handed out; a discarded token's draws are thereby undone).
  std::vector<std::mt19937_64> rng_after_;
  bool anchor_ = false;  // the pending token is a round's last token, kept for the next verify pass
};

}  // namespace ogx::genai
