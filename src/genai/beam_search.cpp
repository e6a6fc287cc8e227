#include "genai/beam_search.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"

namespace ogx::genai {

namespace {

// The largest of x[0..n) (n >= 1), in 16 independent lanes (std::max_element kept its running maximum in memory:
// ~10 cycles per logit); exact, as any order of taking maxima is.
float max_of(const float* x, int64_t n) {
  float m[16];
  for (int j = 0; j < 16; j++) m[j] = x[0];
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int j = 0; j < 16; j++) m[j] = x[i + j] > m[j] ? x[i + j] : m[j];
  float r = m[0];
  for (int j = 1; j < 16; j++) r = m[j] > r ? m[j] : r;
  for (; i < n; i++) r = x[i] > r ? x[i] : r;
  return r;
}

}  // namespace

void log_softmax(float* x, int64_t n) {
  const float mx = max_of(x, n);
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

namespace {

// The best `k` (score, flat index) candidates of a row, best first, ties to the lower flat index: tokens are fed in
// order, so a newcomer equal to a kept candidate ranks after it and one equal to the k-th is not taken.
struct TopCandidates {
  using Item = BeamSearch::Candidate;
  std::vector<Item> items;
  size_t k;
  explicit TopCandidates(size_t k_) : k(k_) { items.reserve(k_ + 1); }
  float threshold() const { return items.size() < k ? -INFINITY : items.back().score; }
  void take(float score, int64_t index) {
    auto at = std::upper_bound(items.begin(), items.end(), score,
                               [](float s, const Item& it) { return s > it.score; });
    items.insert(at, Item{score, index});
    if (items.size() > k) items.pop_back();
  }
};

}  // namespace

// A candidate's score is ((x - max) - log(sum)) + beam score, the value log_softmax and the beam score give it, in the
// same fp32 operations; only each row's best 2 x num_beams are kept (a filter on the running k-th score), so the
// log-probs of the whole vocabulary are never written. Rows are independent: with a pool they run in parallel.
void BeamSearch::step(const std::vector<float>& logits, const std::vector<std::vector<int32_t>>& seqs,
                      std::vector<int32_t>& tokens, std::vector<int32_t>& source_rows) {
  const int64_t rows = (int64_t)batch_ * beams_, V = (int64_t)logits.size() / rows;
  OGX_CHECK((int64_t)logits.size() == rows * V && (int64_t)seqs.size() == rows, "beam search: expected ", rows,
            " rows of logits, got ", logits.size(), " values");
  OGX_CHECK(V >= 2, "beam search needs a vocabulary of at least 2 tokens, got ", V);
  const int top_k = 2 * beams_;
  // Each row alone (in parallel when a pool is given): its log-softmax statistics and its best top_k candidates.
  std::vector<TopCandidates> row_best((size_t)rows, TopCandidates((size_t)top_k));
  auto scan_row = [&](int64_t r) {
    if (hyps_[r / beams_].done) return;
    const float* x = logits.data() + r * V;
    const float mx = max_of(x, V);
    float sum = 0.0f;
    for (int64_t i = 0; i < V; i++) sum += std::exp(x[i] - mx);
    const float log_sum = std::log(sum), beam = beam_scores_[r];
    const int64_t first = (r % beams_) * V;
    TopCandidates& best = row_best[r];
    float threshold = best.threshold();
    for (int64_t i = 0; i < V; i++) {
      const float score = ((x[i] - mx) - log_sum) + beam;
      if (score > threshold) {
        best.take(score, first + i);
        threshold = best.threshold();
      }
    }
  };
  if (pool_ && rows > 1)
    pool_->parallel_for(rows, 1, [&](int64_t a, int64_t b) {
      for (int64_t r = a; r < b; r++) scan_row(r);
    });
  else
    for (int64_t r = 0; r < rows; r++) scan_row(r);
  std::vector<std::vector<Candidate>> best((size_t)rows);
  for (int64_t r = 0; r < rows; r++) best[r] = std::move(row_best[r].items);
  select(best, V, seqs, tokens, source_rows);
}

// A candidate's score from the row's statistics: ((x - max) - log(sum)) + beam score, the operations of the scan above.
void BeamSearch::step(const std::vector<BeamRow>& in, int64_t V, const std::vector<std::vector<int32_t>>& seqs,
                      std::vector<int32_t>& tokens, std::vector<int32_t>& source_rows) {
  const int64_t rows = (int64_t)batch_ * beams_;
  OGX_CHECK((int64_t)in.size() == rows && (int64_t)seqs.size() == rows, "beam search: expected candidates of ", rows,
            " rows, got ", in.size());
  OGX_CHECK(V >= 2, "beam search needs a vocabulary of at least 2 tokens, got ", V);
  const size_t top_k = (size_t)std::min<int64_t>(2 * beams_, V);
  std::vector<std::vector<Candidate>> best((size_t)rows);
  for (int64_t r = 0; r < rows; r++) {
    if (hyps_[r / beams_].done) continue;
    const BeamRow& row = in[r];
    OGX_CHECK(row.logits.size() == row.tokens.size() && row.logits.size() >= top_k, "beam search: row ", r, " has ",
              row.logits.size(), " candidates, fewer than ", top_k);
    const float log_sum = std::log(row.sum), beam = beam_scores_[r];
    const int64_t first = (r % beams_) * V;
    std::vector<Candidate>& b = best[r];
    for (size_t i = 0; i < row.logits.size(); i++) {
      OGX_CHECK(row.tokens[i] >= 0 && row.tokens[i] < V, "beam search: candidate token ", row.tokens[i],
                " is out of range [0, ", V, ")");
      b.push_back({((row.logits[i] - row.max) - log_sum) + beam, first + row.tokens[i]});
    }
    std::sort(b.begin(), b.end(), [](const Candidate& x, const Candidate& y) {
      return x.score > y.score || (x.score == y.score && x.index < y.index);
    });
    b.resize(top_k);
  }
  select(best, V, seqs, tokens, source_rows);
}

void BeamSearch::select(const std::vector<std::vector<Candidate>>& row_best, int64_t V,
                        const std::vector<std::vector<int32_t>>& seqs, std::vector<int32_t>& tokens,
                        std::vector<int32_t>& source_rows) {
  const int64_t rows = (int64_t)batch_ * beams_;
  const int top_k = 2 * beams_;
  tokens.assign(rows, pad_);
  source_rows.assign(rows, 0);
  std::vector<float> next_scores(rows, 0.0f);
  for (int b = 0; b < batch_; b++) {
    Hypotheses& h = hyps_[b];
    const int64_t first_row = (int64_t)b * beams_;
    if (h.done) {  // pad tokens on the prompt's own first beam (ignored: the hypotheses are final)
      for (int j = 0; j < beams_; j++) source_rows[first_row + j] = (int32_t)first_row;
      continue;
    }
    // The prompt's best candidates: the union of its rows' best (each row's top k holds every candidate of the
    // prompt's top k from that row), ranked by score, ties to the lower (beam, token).
    std::vector<Candidate> all;
    for (int j = 0; j < beams_; j++)
      all.insert(all.end(), row_best[first_row + j].begin(), row_best[first_row + j].end());
    std::sort(all.begin(), all.end(), [](const Candidate& x, const Candidate& y) {
      return x.score > y.score || (x.score == y.score && x.index < y.index);
    });
    int taken = 0;
    for (int j = 0; j < top_k && j < (int)all.size() && taken < beams_; j++) {
      const int32_t token = (int32_t)(all[j].index % V);
      const int64_t row = first_row + all[j].index / V;
      const float score = all[j].score;
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
    if (!early_stopping_ && h.can_improve(all[0].score, (int)seqs[first_row].size(), length_penalty_)) continue;
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
