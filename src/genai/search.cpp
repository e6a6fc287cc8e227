#include "genai/search.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include "common/error.h"

namespace ogx::genai {

int32_t argmax(const std::vector<float>& v) {
  if (v.empty()) return 0;
  int32_t best = 0;
  float top = v[0];
  for (size_t i = 1; i < v.size(); i++)
    if (v[i] > top) {
      top = v[i];
      best = (int32_t)i;
    }
  return best;
}

Sampler::Sampler(const SearchConfig& search, std::vector<int> eos_ids) : s_(search), eos_(std::move(eos_ids)) {
  uint64_t seed = s_.random_seed >= 0 ? (uint64_t)s_.random_seed : std::random_device{}();
  rng_.seed(seed);
}

bool Sampler::is_eos(int32_t id) const { return std::find(eos_.begin(), eos_.end(), id) != eos_.end(); }

void Sampler::process_logits(std::vector<float>& logits, const std::vector<int32_t>& seq) const {
  const int64_t V = (int64_t)logits.size();
  if (s_.repetition_penalty != 1.0) {  // Hugging Face rule: divide positive scores, multiply negative ones
    std::set<int32_t> seen(seq.begin(), seq.end());
    float p = (float)s_.repetition_penalty;
    for (int32_t t : seen)
      if (t >= 0 && t < V) logits[t] = logits[t] < 0 ? logits[t] * p : logits[t] / p;
  }
  int n = s_.no_repeat_ngram_size;
  if (n > 0 && (int)seq.size() >= n) {  // ban tokens that would repeat an n-gram already in the sequence
    std::vector<int32_t> prefix(seq.end() - (n - 1), seq.end());
    for (size_t i = 0; i + n <= seq.size(); i++)
      if (std::equal(prefix.begin(), prefix.end(), seq.begin() + i)) {
        int32_t banned = seq[i + n - 1];
        if (banned >= 0 && banned < V) logits[banned] = -INFINITY;
      }
  }
  if ((int)seq.size() < s_.min_length)
    for (int e : eos_)
      if (e >= 0 && e < V) logits[e] = -INFINITY;
}

int32_t Sampler::sample(std::vector<float>& logits) {
  const size_t V = logits.size();
  float t = (float)s_.temperature;
  for (auto& x : logits) x /= t;
  std::vector<int32_t> idx(V);
  std::iota(idx.begin(), idx.end(), 0);
  size_t k = s_.top_k > 0 ? std::min<size_t>((size_t)s_.top_k, V) : V;
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  });
  idx.resize(k);
  float mx = logits[idx[0]];
  std::vector<double> p(k);
  double sum = 0;
  for (size_t i = 0; i < k; i++) sum += p[i] = std::exp((double)logits[idx[i]] - mx);
  for (auto& x : p) x /= sum;
  if (s_.top_p < 1.0) {  // smallest prefix whose mass reaches top_p (at least one token)
    double cum = 0;
    size_t keep = 0;
    while (keep < k) {
      cum += p[keep++];
      if (cum >= s_.top_p) break;
    }
    idx.resize(keep);
    p.resize(keep);
  }
  std::discrete_distribution<size_t> dist(p.begin(), p.end());
  return idx[dist(rng_)];
}

int32_t Sampler::next(std::vector<float>& logits, const std::vector<int32_t>& seq) {
  OGX_CHECK(!logits.empty(), "no logits to choose a token from");
  process_logits(logits, seq);
  if (!s_.do_sample) return argmax(logits);
  return sample(logits);
}

}  // namespace ogx::genai
