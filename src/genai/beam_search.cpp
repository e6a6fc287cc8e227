#include "genai/beam_search.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/error.h"

namespace ogx::genai {

void log_softmax(float* x, int64_t n) {
  const float mx = *std::max_element(x, x + n);
  float sum = 0.0f;
  for (int64_t i = 0; i < n; i++) {
    x[i] = x[i] - mx;
    sum += std::exp(x[i]);
  }
  const float log_sum = std::log(sum);
  for (int64_t i = 0; i < n; i++) x[i] -= log_sum;
}

void BeamSearch::Hypotheses::add(const std::vector<int32_t>& tokens, float sum_logprobs, float length_penalty,
                                 int num_beams) {
  const float score = sum_logprobs / std::pow((float)tokens.size(), length_penalty);
  if ((int)best.size() == num_beams && score <= best.back().score) return;  // full and no better than the worst
  // After every hypothesis of a higher or equal score (an equal newcomer ranks below).
  auto at = std::upper_bound(best.begin(), best.end(), score,
                             [](float s, const Hypothesis& h) { return s > h.score; });
  best.insert(at, Hypothesis{tokens, score});
  if ((int)best.size() > num_beams) best.pop_back();
}

bool BeamSearch::Hypotheses::can_improve(float best_sum_logprobs, int length, float length_penalty) const {
  return best.back().score < best_sum_logprobs / std::pow((float)length, length_penalty);
}

BeamSearch::BeamSearch(const SearchConfig& s, std::vector<int> eos_ids, int pad_token_id)
    : batch_(s.batch_size), beams_(s.num_beams), pad_(pad_token_id),
      num_return_(s.num_return_sequences), length_penalty_((float)s.length_penalty),
      early_stopping_(s.early_stopping), eos_(std::move(eos_ids)), hyps_(s.batch_size), not_done_(s.batch_size) {
  beam_scores_.assign((size_t)batch_ * beams_, 0.0f);
  for (int b = 0; b < batch_; b++)
    for (int j = 1; j < beams_; j++) beam_scores_[(size_t)b * beams_ + j] = -1e9f;
}

void BeamSearch::step(std::vector<float>& logits, const std::vector<std::vector<int32_t>>& seqs,
                      std::vector<int32_t>& tokens, std::vector<int32_t>& source_rows) {
  const int64_t rows = (int64_t)batch_ * beams_, V = (int64_t)logits.size() / rows;
  OGX_CHECK((int64_t)logits.size() == rows * V && (int64_t)seqs.size() == rows, "beam search: expected ", rows,
            " rows of logits, got ", logits.size(), " values");
  OGX_CHECK(V >= 2, "beam search needs a vocabulary of at least 2 tokens, got ", V);
  for (int64_t r = 0; r < rows; r++) {
    float* x = logits.data() + r * V;
    log_softmax(x, V);
    for (int64_t v = 0; v < V; v++) x[v] += beam_scores_[r];
  }
  const int top_k = 2 * beams_;
  const int64_t per_prompt = (int64_t)beams_ * V;
  tokens.assign(rows, pad_);
  source_rows.assign(rows, 0);
  std::vector<float> next_scores(rows, 0.0f);
  order_.resize(per_prompt);
  for (int b = 0; b < batch_; b++) {
    Hypotheses& h = hyps_[b];
    const int64_t first_row = (int64_t)b * beams_;
    if (h.done) {  // pad tokens on the prompt's own first beam (ignored: the hypotheses are final)
      for (int j = 0; j < beams_; j++) source_rows[first_row + j] = (int32_t)first_row;
      continue;
    }
    const float* scores = logits.data() + first_row * V;
    std::iota(order_.begin(), order_.end(), 0);
    std::partial_sort(order_.begin(), order_.begin() + top_k, order_.end(),
                      [scores](int32_t a, int32_t c) { return scores[a] > scores[c]; });
    int taken = 0;
    for (int j = 0; j < top_k && taken < beams_; j++) {
      const int32_t token = order_[j] % (int32_t)V;
      const int64_t row = first_row + order_[j] / V;
      const float score = scores[order_[j]];
      if (std::find(eos_.begin(), eos_.end(), token) != eos_.end()) {
        if (j >= beams_) continue;  // an EOS below the best num_beams candidates does not count
        h.add(seqs[row], score, length_penalty_, beams_);
      } else {
        tokens[first_row + taken] = token;
        source_rows[first_row + taken] = (int32_t)row;
        next_scores[first_row + taken] = score;
        taken++;
      }
    }
    OGX_CHECK(taken == beams_, "beam search: fewer than ", beams_, " candidates without EOS");
    if ((int)h.best.size() < beams_) continue;
    // Without early stopping, a prompt goes on while its best candidate could still beat its worst hypothesis.
    // (GenAI reads the candidates at batch * num_beams here, a slice of other prompts' candidates for batch > 1;
    // this is the prompt's own best candidate, as in Hugging Face.)
    if (!early_stopping_ && h.can_improve(scores[order_[0]], (int)seqs[first_row].size(), length_penalty_)) continue;
    h.done = true;
    not_done_--;
  }
  beam_scores_ = std::move(next_scores);
}

std::vector<std::vector<Hypothesis>> BeamSearch::finalize(const std::vector<std::vector<int32_t>>& seqs) const {
  std::vector<std::vector<Hypothesis>> out(batch_);
  for (int b = 0; b < batch_; b++) {
    Hypotheses h = hyps_[b];
    if (!h.done)
      for (int j = 0; j < beams_; j++) {
        size_t row = (size_t)b * beams_ + j;
        h.add(seqs[row], beam_scores_[row], length_penalty_, beams_);
      }
    h.best.resize(std::min<size_t>(h.best.size(), (size_t)num_return_));
    out[b] = std::move(h.best);
  }
  return out;
}

}  // namespace ogx::genai
