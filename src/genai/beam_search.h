// Beam search over batch x num_beams rows, with ONNX Runtime GenAI's semantics (its search.cpp BeamSearch_Cpu and
// beam_search_scorer.cpp, themselves after Hugging Face's BeamSearchScorer):
//  - each step the processed logits of every row are log-softmaxed and added to the row's beam score; the best
//    2 x num_beams (beam, token) candidates of each prompt are taken in score order;
//  - a candidate ending in EOS (among the first num_beams) becomes a finished hypothesis: the row's sequence
//    WITHOUT the EOS, scored sum of log-probs (EOS step included) / length ^ length_penalty, length counting the
//    (padded) prompt; the other candidates continue as the next step's beams until num_beams are taken;
//  - a prompt is done once it holds num_beams hypotheses and, with early_stopping off, no running beam can beat the
//    worst of them; its rows then continue with pad tokens (ignored);
//  - at the end, every running beam of an unfinished prompt is added as a hypothesis with its beam score.
// Beam scores start at 0 for each prompt's first beam and -1e9 for the others, so the first step (whose rows are
// copies of one prompt) picks from the first beam only.
#pragma once
#include <cstdint>
#include <vector>

#include "common/thread_pool.h"
#include "exec/decode_session.h"
#include "genai/config.h"

namespace ogx::genai {

struct Hypothesis {
  std::vector<int32_t> tokens;  // prompt (padded) + generated, without the EOS that ended it
  float score = 0;
};

class BeamSearch {
 public:
  struct Candidate {  // a (beam, token) continuation of a prompt
    float score;      // the beam's score with the token's log-prob
    int64_t index;    // beam * V + token
  };
  BeamSearch(const SearchConfig& search, std::vector<int> eos_ids, int pad_token_id);

  // One step. logits: [batch * num_beams x vocab], processed (min length, penalties). sequences: each row's tokens
  // so far (all the same length). Returns per row the token it appends (`tokens`, [rows]) and the row whose sequence
  // and KV cache it continues (`source_rows`, [rows]). Candidates of equal score rank by (beam, token).
  void step(const std::vector<float>& logits, const std::vector<std::vector<int32_t>>& sequences,
            std::vector<int32_t>& tokens, std::vector<int32_t>& source_rows);
  // The same step from each row's log-softmax statistics and best logits, computed where the logits are (a device:
  // DecodeSession::beam_candidates; at least min(2 x num_beams, V) per row, V the vocabulary): the candidates' scores
  // are those the whole row gives, with the row's own max and sum.
  void step(const std::vector<BeamRow>& rows, int64_t V, const std::vector<std::vector<int32_t>>& sequences,
            std::vector<int32_t>& tokens, std::vector<int32_t>& source_rows);
  // Rows of a step scan in parallel on `pool` (not owned; null: on the calling thread). The same results either way.
  void set_pool(ThreadPool* pool) { pool_ = pool; }
  // Every prompt has its hypotheses (with early_stopping, as soon as it has num_beams of them).
  bool done() const { return not_done_ == 0; }
  // The final hypotheses as they stand now (running beams of unfinished prompts added with their scores), best first:
  // [batch][num_return_sequences]. Does not change the search, so generation may continue afterwards.
  std::vector<std::vector<Hypothesis>> finalize(const std::vector<std::vector<int32_t>>& sequences) const;

 private:
  // The step after every row has its best candidates ([rows], best first, ties to the lower index).
  void select(const std::vector<std::vector<Candidate>>& row_best, int64_t V,
              const std::vector<std::vector<int32_t>>& sequences, std::vector<int32_t>& tokens,
              std::vector<int32_t>& source_rows);
  struct Hypotheses {  // one prompt's finished hypotheses, best first, at most num_beams
    std::vector<Hypothesis> best;
    bool done = false;
    void add(const std::vector<int32_t>& tokens, float sum_logprobs, float length_penalty, int num_beams);
    bool can_improve(float best_sum_logprobs, int length, float length_penalty) const;
  };
  int batch_, beams_, pad_;
  int num_return_;
  float length_penalty_;
  bool early_stopping_;
  std::vector<int> eos_;
  std::vector<float> beam_scores_;  // [batch * num_beams] sum of log-probs of each running beam
  std::vector<Hypotheses> hyps_;    // [batch]
  int not_done_;
  ThreadPool* pool_ = nullptr;
};

// In place: x - log(sum(exp(x - max))) - max, in fp32 in ONNX Runtime GenAI's order of operations.
void log_softmax(float* x, int64_t n);

}  // namespace ogx::genai
