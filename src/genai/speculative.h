// Speculative decoding with n-gram (prompt-lookup) drafting, as ONNX Runtime GenAI's set_speculative_options
// (ngram_size, max_draft_tokens) configures it: each round looks up the latest earlier occurrence of the sequence's
// last ngram_size tokens, drafts the max_draft_tokens that followed it, and runs the last picked token and the
// drafts through the model in one forward pass. Each draft is accepted while it equals the token the search would
// pick at that position (the same logits processing as plain decoding, so greedy output is identical to plain
// decoding); the first mismatch yields the corrected token (the "bonus" when every draft is accepted). The KV cache
// is cut back to the accepted tokens. A round costs one forward pass and yields accepted + 1 tokens. Verified tokens are handed out one
// per generate_next_token call, so streaming code sees the same token sequence as without speculation; any other
// call (logits, set_logits, append_tokens, rewind_to) discards tokens verified but not yet handed out.
// Supported: batch_size 1, greedy search (do_sample false), no beams, the cpu provider; other settings are errors
// naming the option.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ogx::genai {

class Generator;

struct SpeculativeOptions {
  int ngram_size = 0;          // 0: speculative decoding off
  int max_draft_tokens = 4;    // drafted tokens per round, 1..16
  bool ngram_chained_lookup = false;  // not supported (must stay false)
  int min_adaptive_k = 0;      // accepted: 0 (no adaptive draft width) only
  bool cooldown = false;       // not supported (must stay false)

  void set_number(const std::string& name, double value);  // throws for unknown names and bad values
  void set_bool(const std::string& name, bool value);
  double number(const std::string& name) const;
  bool boolean(const std::string& name) const;
};

// Counters of a generator's speculative rounds (names as ONNX Runtime GenAI's speculative statistics).
struct SpeculativeStats {
  int64_t rounds = 0;                 // forward passes that verified at least one drafted token
  int64_t draft_tokens_proposed = 0;  // drafted tokens run through the model
  int64_t draft_tokens_accepted = 0;  // drafted tokens equal to what the search picked
  int64_t bonus_tokens = 0;           // tokens picked after a fully accepted draft
  int64_t correction_tokens = 0;      // tokens picked in place of a rejected draft
  int64_t tokens_emitted = 0;         // tokens handed out by generate_next_token
  int64_t tokens_discarded = 0;       // verified tokens dropped by another call before being handed out
  int64_t target_forward_passes = 0;  // model runs made by generate_next_token
  int64_t ngram_lookup_hits = 0, ngram_lookup_misses = 0;
  // (name, value) pairs, counters then derived rates.
  std::vector<std::pair<std::string, double>> items() const;
};

class SpeculativeDecoder {
 public:
  explicit SpeculativeDecoder(const SpeculativeOptions& options) : opt_(options) {}
  // One generate_next_token call: hands out a verified token, or runs a round. Always handles the call.
  void generate_next_token(Generator& g);
  // Drops verified tokens not yet handed out, cutting the KV cache back to the handed-out sequence.
  void discard_buffered(Generator& g);
  const SpeculativeStats& stats() const { return stats_; }

 private:
  std::vector<int32_t> draft(const std::vector<int32_t>& seq, int max_tokens);
  void hand_out(Generator& g);  // the next buffered token becomes part of the sequence
  SpeculativeOptions opt_;
  SpeculativeStats stats_;
  std::vector<int32_t> buffered_;  // verified tokens to hand out, in order (all but the last are in the KV cache)
  bool last_in_kv_ = false;        // the last buffered token is in the KV cache too (an accepted EOS)
};

}  // namespace ogx::genai
