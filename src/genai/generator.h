// Generator: runs the decoder over growing sequences, as onnxruntime_genai's Generator does.
// append_tokens runs the model on new tokens; generate_next_token picks a token from the current logits and
// feeds it back on the next call.
// Rows: batch_size prompts x num_beams. Prompts of different lengths are padded on the right with pad_token_id to
// the longest (ONNX Runtime GenAI's AppendTokenSequences; with batch_size > 1 trailing pad ids of a prompt are
// padding too): a row's attention mask is 0 over its padding, its positions continue from its real length, and
// the attention kernels place its new keys right after its real ones (seqlens_k), so each row computes what its
// prompt alone would. Every row's sequence has the same length (padded prompt + generated); a row that reached EOS
// continues with pad tokens until all are done. Beam search (num_beams > 1): beam_search.h.
// With batch_size > 1 or beams, tokens are appended once (before generation); rewind_to only to 0 with
// batch_size > 1, not at all with beams (as ONNX Runtime GenAI).
// With picking on the device (greedy, or one row sampling with its own random state there), a provider that can
// (DecodeSession::queue_next) runs one step ahead: each generate_next_token queues the step of the token it is
// about to return before it waits for that token, so the device does not wait for the host between tokens. A
// queued step past the end (after EOS, at max_length) or before any other call (append_tokens, set_logits,
// rewind_to, logits) is dropped, its random state put back: tokens are the same either way.
#pragma once
#include <memory>
#include <optional>
#include <vector>

#include "genai/beam_search.h"
#include "genai/extra_io.h"
#include "genai/kv_cache.h"
#include "genai/model.h"
#include "genai/search.h"
#include "genai/speculative.h"

namespace ogx::genai {

namespace guidance {
class CompiledGrammar;
class LogitMask;
}  // namespace guidance

class Adapters;
class AdapterLease;

struct GeneratorParams {
  SearchConfig search;
  SpeculativeOptions speculative;  // speculative decoding (speculative.h): genai_config's section by default
  explicit GeneratorParams(const Model& m);
  // Sets a numeric or boolean search option by its genai_config.json name; throws for unknown names.
  void set_search_option(const std::string& name, double value);
  // Structured output (guidance/guidance.h): type "json_schema", "regex", "lark_grammar" or "json_object",
  // compiled now against the model's vocabulary (an invalid constraint throws here); an empty type clears it.
  // enable_ff_tokens is accepted as upstream's: a token the constraint forces is the only one allowed, so it is
  // picked in its own step.
  void set_guidance(const std::string& type, const std::string& data, bool enable_ff_tokens = false);
  std::shared_ptr<guidance::CompiledGrammar> guidance;  // null: unconstrained
  std::string guidance_type, guidance_data;

 private:
  std::string model_dir_;
  int vocab_size_ = 0;
  std::vector<int> eos_ids_;
};

class Generator {
 public:
  static constexpr int kMaxBatchSize = 32;  // as ONNX Runtime GenAI
  static constexpr int kMaxBeams = 32;

  Generator(std::shared_ptr<const Model> model, const GeneratorParams& params);
  ~Generator();
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;

  // batch_size 1: new tokens for the one sequence (a prompt, or a later turn). batch_size B > 1: B x n ids, row by
  // row (trailing pad ids of a row are padding).
  void append_tokens(const std::vector<int32_t>& ids);
  // One prompt per batch row (batch_size of them), padded on the right to the longest.
  void append_token_sequences(const std::vector<std::vector<int32_t>>& prompts);
  void generate_next_token();
  // Every row ended (EOS; with beams, every prompt has its hypotheses) or the sequences reached max_length.
  bool is_done() const;
  int batch_size() const { return batch_; }
  int num_beams() const { return beams_; }
  int rows() const { return batch_ * beams_; }  // rows of each model run
  // Sequences sequence(i) offers: batch_size (greedy), batch_size x num_return_sequences (beam search).
  size_t sequence_count() const;
  // Greedy: row i (padded prompt + generated). Beam search: hypothesis i % num_return_sequences of prompt
  // i / num_return_sequences, best first (running beams count as hypotheses until the search ends).
  const std::vector<int32_t>& sequence(size_t i = 0) const;
  float sequence_score(size_t i) const;  // beam search: the score of sequence(i); greedy: 0
  // [rows]: the tokens the last step picked — an EOS that ended generation included, though a step that ends every
  // row appends nothing to the sequences (ONNX Runtime GenAI's search: `if (!done_) AppendNextTokensToSequences()`)
  // — else (after a prompt or a rewind) the last token of each row's sequence.
  std::vector<int32_t> next_tokens() const;
  int32_t last_token() const {
    if (!last_picks_.empty()) return last_picks_[0];
    return seqs_.empty() || seqs_[0].empty() ? -1 : seqs_[0].back();
  }
  size_t token_count() const { return seqs_.empty() ? 0 : seqs_[0].size(); }
  // Logits the next tokens are picked from, fp32 [rows x vocab]: of the last position after append_tokens; after
  // generate_next_token the model first runs the tokens it picked (fetched from the device when a step sampled
  // there).
  const std::vector<float>& logits();
  // True when next tokens are picked on the provider's device (one row: greedy or top-k/top-p/temperature; a
  // batch: greedy; no repetition penalty or n-gram bans): only token ids come back each step. Beam search: each
  // row's log-softmax statistics and 2 x num_beams best logits come back, the beams are chosen on the host.
  bool samples_on_device() const { return device_sampling_ || beam_sampling_.has_value(); }
  // Steps whose tokens were picked on the host (from logits read back) although samples_on_device(): the first
  // after a prompt, min_length where the device has no token mask, set_logits, a pick after logits() was read;
  // beam search: steps whose logits needed processing (penalties, n-gram bans, min_length, guidance).
  int64_t host_picks() const { return host_picks_; }
  // Where the beam steps picked on the device spent their wall time (ms, summed; `ogx bench --num-beams`): the
  // model run (submit and wait), reading back the rows' candidates, choosing the beams, reordering the KV cache
  // and the sequences.
  struct BeamStepTimes {
    int64_t steps = 0;
    double run_ms = 0, candidates_ms = 0, select_ms = 0, reorder_ms = 0;
  };
  const BeamStepTimes& beam_step_times() const { return beam_times_; }
  void set_logits(const std::vector<float>& logits);  // [rows x vocab]
  void rewind_to(size_t length);
  // ONNX Runtime GenAI's SnapshotState: captures recurrent (conv / linear-attention) state for a later rewind_to.
  // ogx runs no model with recurrent state (hybrid layer_types are refused at load), so, as upstream for such
  // models, it changes nothing.
  void snapshot_state() {}
  // ONNX Runtime GenAI's SetHiddenStates: the tensor the model's hidden_states input (genai_config
  // model.decoder.inputs.hidden_states) takes on the following runs, [rows, tokens of the run, hidden_size] of the
  // input's dtype (copied; checked against each run's size). A model without that input: nothing happens.
  void set_hidden_states(const Tensor& hidden_states);
  int max_length() const { return max_length_; }
  const Model& model() const { return *model_; }
  // Extra model inputs the caller sets, and the latest run's inputs and outputs (extra_io.h).
  ExtraIO& extra_io() { return extra_io_; }
  const ExtraIO& extra_io() const { return extra_io_; }
  // Activates loaded adapter `name` (adapters.h) for this generator's runs from now on; several may be active (a
  // later one's parameters replace an earlier one's of the same name). Throws when it is not loaded.
  void set_active_adapter(const std::shared_ptr<Adapters>& adapters, const std::string& name);  // adapters.cpp
  // Tokens run through the model a second time: a rewound sequence's last token, a padded prompt's last real
  // tokens (when the provider returned only the last position), logits read after another generator's run took
  // the device's copy. Generators of one model interleave without re-running anything else.
  int64_t rerun_tokens() const { return rerun_tokens_; }
  bool at_rope_switch() const { return rope_switch_at_ > 0 && (int64_t)token_count() == rope_switch_at_; }
  bool rope_rerun_due() const { return at_rope_switch() && !long_rope_cache_; }
  // Speculative decoding's counters; null when it is off.
  const SpeculativeStats* speculative_stats() const { return spec_ ? &spec_->stats() : nullptr; }

 private:
  friend class SpeculativeDecoder;
  friend void decode_together(const std::vector<Generator*>& generators, bool queue_ahead);  // batch_step.h
  friend struct DecodeGroup;  // batch_step.cpp: one run (and queued steps) for a group of generators
  // Whether a step of this generator can share a model run with others (batch_step.h).
  bool can_decode_together() const;
  void start_speculative(const SpeculativeOptions& options);  // speculative.cpp
  // Forward pass over `S` new tokens per row (ids: [n_rows x S]) after kv_.length() positions; n_rows is rows() or,
  // for the prompt of a beam search, batch_size (expanded to the beams afterwards).
  // sample: the provider also picks the next tokens on its device when the generator samples there (a recompute of
  // logits only does not, so a device random state is not advanced twice).
  void run(const std::vector<int32_t>& ids, int n_rows, int64_t S, bool want_logits = true, bool sample = true);
  // run()'s two halves around the model run (decode_together runs several generators' model runs at once).
  struct ModelRun {
    std::vector<NamedTensor> in, out;  // the step's inputs, the cache bound, and the outputs wanted
    int64_t total = 0, S = 0;
    int n_rows = 0;
    const std::vector<int32_t>* ids = nullptr;
    bool want_logits = true, padded = false, row_ends = false;
    const DeviceSampling* picks = nullptr;  // the device's picks, if any
  };
  ModelRun prepare_run(const std::vector<int32_t>& ids, int n_rows, int64_t S, bool want_logits, bool sample);
  void complete_run(ModelRun& m);
  // The inputs of such a pass after `past` positions (no KV bindings).
  std::vector<NamedTensor> step_inputs(const std::vector<int32_t>& ids, int n_rows, int64_t S, int64_t past) const;
  // After a padded prompt's run whose session returned only the last position's logits: each row's last real token
  // again, for its logits.
  void rerun_last_real(const std::vector<int32_t>& ids, int n_rows, int64_t S);
  int64_t pads_of(int row, int n_rows) const;  // trailing pad tokens of the row's prompt
  // Positions of the KV cache no row writes again: its length less the most trailing pads of any prompt.
  int64_t final_kv_positions() const;
  void run_pending(bool want_logits);          // the picked tokens not yet run through the model
  void recompute_last();                       // after a rewind: the last position's logits again
  std::vector<int32_t> sequence_tails() const;  // [rows]: the last token of each row's sequence
  void rerun_at_rope_switch();                 // the whole sequence through the model again (rope_switch_at_)
  int32_t pad_token() const;                   // pad_token_id (the first EOS id when the config has none)
  void pick_host();                            // next tokens from logits_ on the host (all rows)
  bool upload_token_mask(bool ban_eos);        // guidance on the device: each row's allowed tokens (EOS banned
                                               // below min_length); false: the mask applies on the host
  // Appends each row's packed mask (words_per_row uint32 of vocab_ bits) to `bits`: its constraint's tokens (all
  // without guidance, and for a row that ended), EOS cleared with ban_eos.
  void append_mask_rows(bool ban_eos, int64_t words_per_row, std::vector<uint32_t>& bits) const;
  void append_device_tokens();                 // the tokens the session picked on the device (pad: rows that ended)
  void append_row_tokens(const std::vector<int32_t>& tokens);  // one token per row: sequences, pending, EOS
  // Queues the forward pass of the token the next sampling returns (at position kv length + 1); false: not queued.
  bool queue_step();
  void drop_queued() const;  // waits for queued steps and forgets them (their tokens stay pending)
  const std::vector<std::vector<Hypothesis>>& hypotheses() const;  // beam search, finalized view

  std::shared_ptr<const Model> model_;
  SearchConfig search_;
  int max_length_;
  int batch_, beams_;
  int vocab_;
  mutable KvCache kv_;
  ExtraIO extra_io_;
  std::unique_ptr<SpeculativeDecoder> spec_;  // speculative decoding, when on (n-gram or a draft model)
  Sampler sampler_;
  std::unique_ptr<BeamSearch> beam_;  // num_beams > 1
  std::unique_ptr<guidance::LogitMask> guidance_;  // structured output: one matcher per row
  size_t guided_from_ = 0;  // token count where the constrained output starts (after the latest prompt)
  std::vector<std::vector<int32_t>> seqs_;  // [rows][length]: each row's tokens (padded prompt + generated)
  std::vector<int64_t> prompt_pads_;        // [batch]: trailing pad tokens of each prompt (empty: none)
  int64_t prompt_length_ = 0;               // padded prompt length (positions < it may be padding)
  std::vector<int32_t> pending_;            // [rows] or empty: the last picked token of each row, not yet run
  std::vector<int32_t> last_picks_;         // [rows] or empty: the last step's picks (next_tokens())
  std::vector<bool> eos_seen_;              // [rows]: the row picked an EOS (greedy / sampling)
  mutable std::vector<float> logits_;       // [rows x vocab]
  mutable bool logits_on_device_ = false;   // the latest run left its logits on the device
  bool device_sampling_ = false;
  DeviceSampling sampling_;  // what it asked the session for (device_sampling_)
  // Below min_length without guidance: sampling_ with a token mask that bans EOS (unset when the device cannot);
  // step_sampling_ points at it for the run of such a step (null: sampling_).
  std::optional<DeviceSampling> eos_mask_sampling_;
  const DeviceSampling* step_sampling_ = nullptr;
  // Beam search with the model on a device that makes beam candidates (DeviceSampling::beam_candidates): steps whose
  // logits need no processing on the host read back only each row's statistics and 2 x num_beams best logits.
  std::optional<DeviceSampling> beam_sampling_;
  std::optional<DeviceSampling> beam_mask_sampling_;  // the same with a token mask: steps below min_length ban EOS
  bool beam_step_on_device();  // runs the pending step so, and takes its beams' tokens; false: not this step
  // After a beam step: row r continues row src[r]'s sequence and KV cache with tokens[r].
  void continue_beams(const std::vector<int32_t>& tokens, const std::vector<int32_t>& src);
  // Each row's penalties and bans for the next device pick (DeviceSampling::logit_edits); `pending`: for a queued
  // step whose input tokens the host does not have yet (the step before it, still running, picks them).
  bool upload_logit_edits(bool pending = false);
  // Appends each row's edits (none where the generator has no logit_edits or the row ended).
  void add_logit_edits(std::vector<RowEdits>& rows, bool pending) const;
  // Whether a step can be queued ahead of the host with this generator's logit edits (all but no-repeat n-gram).
  bool edits_allow_queue() const { return !sampling_.logit_edits || sampler_.edits_take_pending(); }
  mutable int queued_ = 0;   // 1: the pending token's forward pass is queued (DecodeSession::queue_next)
  bool queue_ahead_ = true;  // a device step queues its successor (off for a draft model's last draft of a round)
  // phi3 / phimoe 4097, phi3small 8193 (one sequence, one beam; else 0): the length at which the whole sequence runs
  // again, so that every cached key is rotated with the long-RoPE factors the graph switches to past the original
  // context (upstream's re-prefill, StandardDecodingStrategy::Step).
  int64_t rope_switch_at_ = 0;
  bool long_rope_cache_ = false;  // every position in the KV cache came from a run past the switch (nothing to redo)
  int64_t rerun_tokens_ = 0;
  std::unique_ptr<ThreadPool> beam_pool_;  // beams on a device: the rows of a pick scan in parallel
  int64_t host_picks_ = 0;  // host_picks()
  BeamStepTimes beam_times_;  // beam_step_times()
  bool batched_ = false;     // decoded with others (decode_together, unless alone in it): no steps queued ahead
  mutable std::vector<std::vector<Hypothesis>> final_;  // hypotheses(), cached for final_step_
  mutable int64_t final_step_ = -1;
  std::vector<std::unique_ptr<AdapterLease>> adapter_leases_;  // the active adapters (released with the generator)
};

}  // namespace ogx::genai
