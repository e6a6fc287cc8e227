// Speculative decoding, as ONNX Runtime GenAI configures it: drafts come from n-gram (prompt-lookup) matching
// (set_speculative_options ngram_size, max_draft_tokens) or from a draft model (genai_config.json model.draft, see
// Model::draft()). Each round drafts up to max_draft_tokens tokens after the pending token (picked, not yet run) and
// runs the pending token and the drafts through the target in one forward pass (k + 1 positions).
//  - n-gram: the latest earlier occurrence of the sequence's last ngram_size tokens; the tokens that followed it.
//  - draft model: a second Generator over the draft model follows the target's sequence (rewound to the common
//    prefix each round) and picks k tokens one step at a time: greedily (on its device when it can) under greedy
//    search, else sampled from its processed distribution q.
// Acceptance. Greedy search: a draft is accepted while it equals the token the search would pick at that position
// (the same logits processing as plain decoding), so the output is plain decoding's. Sampling: the standard
// rejection test (Leviathan et al. 2023): draft d drawn from q is accepted with probability min(1, p(d) / q(d)), p
// being the target's processed distribution (temperature, top-k, top-p); on rejection the token is drawn from
// max(0, p - q) renormalized, and after a fully accepted draft from p, so every emitted token follows the target's
// distribution (n-gram drafts are draws from a point mass). The first rejected position yields the correction
// token (the "bonus" when every draft is accepted). The KV caches (the target's, and the draft model's at the next
// round) are cut back to the accepted tokens. A round costs one target forward pass and yields accepted + 1
// tokens. Verified tokens are handed out one per generate_next_token call, so streaming code sees the same token
// sequence as without speculation; any other call (logits, set_logits, append_tokens, rewind_to) discards tokens
// verified but not yet handed out.
// Supported: batch_size 1, no beams, cpu and vulkan providers; other settings are errors naming the option.
#pragma once
#include <cstdint>
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
  int64_t completed_rounds = 0;       // rounds whose verified tokens were all handed out
  int64_t interrupted_rounds = 0;     // rounds whose verified tokens another call discarded
  int64_t active_rounds = 0;          // 1 while a round has tokens to hand out
  int64_t draft_tokens_proposed = 0;  // drafted tokens run through the model
  int64_t draft_tokens_evaluated = 0;  // drafted tokens examined before acceptance stopped
  int64_t draft_tokens_accepted = 0;  // drafted tokens equal to what the search picked
  int64_t bonus_tokens = 0;           // tokens picked after a fully accepted draft
  int64_t correction_tokens = 0;      // tokens picked in place of a rejected draft
  int64_t tokens_queued = 0;          // verified tokens put in the hand-out queue
  int64_t tokens_emitted = 0;         // tokens handed out by generate_next_token
  int64_t tokens_discarded = 0;       // verified tokens dropped by another call before being handed out
  int64_t tokens_buffered = 0;        // tokens waiting to be handed out now
  int64_t draft_forward_passes = 0;   // draft model runs (draft model drafting)
  int64_t target_forward_passes = 0;  // model runs made by generate_next_token (the three kinds below)
  int64_t target_verify_forward_passes = 0;          // runs verifying drafts
  int64_t target_reanchor_forward_passes = 0;        // one-token runs of standard steps (misses, cooldown)
  int64_t target_reconciliation_forward_passes = 0;  // runs after a prompt, rewind or set_logits
  int64_t full_accept_rounds = 0, partial_accept_rounds = 0, zero_accept_rounds = 0;
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
  std::vector<int32_t> draft(const std::vector<int32_t>& seq, int max_tokens);
  // Draft model: up to max_tokens tokens after seq; with sampling q gets the distribution each was drawn from.
  std::vector<int32_t> draft_with_model(const std::vector<int32_t>& seq, int max_tokens,
                                        std::vector<std::vector<double>>* q);
  void sync_draft(const std::vector<int32_t>& seq);  // the draft generator holds exactly seq
  void hand_out(Generator& g);  // the next buffered token becomes part of the sequence
  SpeculativeOptions opt_;
  mutable SpeculativeStats stats_;
  std::unique_ptr<NGramIndex> ngram_;  // n-gram drafting (null with a draft model)
  AdaptiveWidth width_;                // K per round
  Cooldown cooldown_;
  bool sampling_ = false;                // search.do_sample: rejection sampling instead of exact matching
  std::mt19937_64 rng_;                  // acceptance draws and draft samples (search.random_seed)
  std::unique_ptr<Generator> draft_gen_;  // over the draft model; null for n-gram drafting
  std::unique_ptr<Sampler> draft_sampler_;  // the target's logits processing, applied to the draft's logits
  // A round's outcome for the policies, applied when its tokens have all been handed out (an interrupted round
  // teaches nothing).
  struct RoundRecord {
    int width = 0, evaluated = 0, accepted = 0, committed = 0;
    bool filled = false;
    double propose_ms = 0, target_ms = 0;
  };
  std::optional<RoundRecord> open_round_;
  std::vector<int32_t> buffered_;  // verified tokens to hand out, in order (all but the last are in the KV cache)
  bool last_in_kv_ = false;        // the last buffered token is in the KV cache too (an accepted EOS)
};

}  // namespace ogx::genai
