// Next-token selection for one sequence: logits processing (repetition penalty, presence / frequency penalties,
// no-repeat n-gram, min length) then greedy argmax or sampling (temperature, top-k, top-p) with a seeded generator.
// Presence / frequency penalties follow OpenAI: logit[t] -= presence * (count[t] > 0) + frequency * count[t], with
// count[t] the occurrences of t among the tokens generated after the prompt (set_prompt_length), not the prompt.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "exec/session.h"
#include "genai/config.h"

namespace ogx::genai {

// True when the options change logits according to the sequence so far (repetition, presence and frequency
// penalties, n-gram bans): such a generator picks its tokens on the host.
bool penalizes_sequence(const SearchConfig& s);

// One token's change by a row's logit processing (exec/session.h TokenEdit: what process_logits does, token by
// token, for a device to do the same).
using LogitEdit = TokenEdit;

class Sampler {
 public:
  Sampler(const SearchConfig& search, std::vector<int> eos_ids);
  // Tokens [0, n) of a sequence are its prompt (the latest one appended): presence / frequency penalties count only
  // the tokens after them.
  void set_prompt_length(size_t n) { prompt_length_ = n; }
  size_t prompt_length() const { return prompt_length_; }
  // True when next() would be a plain argmax of the logits (greedy, no penalties, EOS not suppressed).
  bool greedy_without_processing(const std::vector<int32_t>& seq) const;
  // Whether process_logits would change any logit of a row with this sequence (penalties, EOS before min_length).
  bool processes_logits(const std::vector<int32_t>& seq) const;
  // logits: [vocab] (modified in place); sequence: all tokens so far (prompt + generated).
  int32_t next(std::vector<float>& logits, const std::vector<int32_t>& sequence);
  int32_t next(float* logits, int64_t vocab, const std::vector<int32_t>& sequence);
  // Repetition penalty, presence / frequency penalties, no-repeat n-gram bans and EOS suppression before
  // min_length (banned tokens get the lowest float, as in ONNX Runtime GenAI).
  void process_logits(std::vector<float>& logits, const std::vector<int32_t>& sequence) const;
  void process_logits(float* logits, int64_t vocab, const std::vector<int32_t>& sequence) const;
  // What process_logits does to a row with this sequence, as edits of single tokens (ascending token ids, each
  // once; tokens outside [0, vocab) are left out): a device applies them to its logits (DecodeSession::
  // set_logit_edits) and gets the logits process_logits gives.
  std::vector<LogitEdit> logit_edits(int64_t vocab, const std::vector<int32_t>& sequence) const;
  // The same as one row's RowEdits; with `pending`, for a step whose token after `sequence` is picked on the device
  // (queued before the host has it): the edits take it into account there (edits_take_pending() must hold).
  RowEdits row_edits(int64_t vocab, const std::vector<int32_t>& sequence, bool pending) const;
  // Whether the edits can take a pending token (not with no-repeat n-gram bans: they depend on the last tokens).
  bool edits_take_pending() const;
  float repetition_penalty() const { return (float)s_.repetition_penalty; }
  bool is_eos(int32_t id) const;
  // The distribution next() draws from, dense [vocab] (logits processed in place): greedy gives 1 at the argmax;
  // sampling the softmax of logits / temperature over the top-k, cut to top-p and renormalized. Speculative
  // decoding's acceptance test compares the target's and the draft's.
  std::vector<double> distribution(float* logits, int64_t vocab, const std::vector<int32_t>& sequence) const;
  // The random state next() draws from: speculative decoding puts it back over draws whose tokens it discards, so
  // a seed gives the tokens plain sampling gives.
  const std::mt19937_64& rng() const { return rng_; }
  void set_rng(const std::mt19937_64& state) { rng_ = state; }

 private:
  int32_t sample(float* logits, int64_t vocab);
  // logits / temperature, then the top-k indices (largest first) and their softmax, cut to the top-p prefix.
  void filter(float* logits, int64_t vocab, std::vector<int32_t>& idx, std::vector<double>& p) const;
  SearchConfig s_;
  std::vector<int> eos_;
  std::mt19937_64 rng_;
  size_t prompt_length_ = 0;
  // logit_edits' marks of recent sequences (repetition bit | generated count per token), so that a sequence one
  // step longer than one seen before (the next step of a row, or of a beam that extends another row) costs the new
  // token, not the whole sequence.
  struct Marks {
    std::vector<int32_t> seq;                          // the sequence they reflect
    size_t prompt_length = 0;                          // (counts start after it)
    std::vector<std::pair<int32_t, uint32_t>> marks;  // ascending token: repetition bit | generated count
    uint64_t used = 0;                                 // recency (the least recent is replaced)
  };
  const Marks& marks_of(int64_t vocab, const std::vector<int32_t>& seq) const;
  mutable std::vector<Marks> marks_;
  mutable uint64_t marks_clock_ = 0;
};

// Index of the largest value; the first one on ties (as torch.argmax). AVX2 when present.
int32_t argmax(const std::vector<float>& v);
int32_t argmax(const float* v, size_t n);

}  // namespace ogx::genai
