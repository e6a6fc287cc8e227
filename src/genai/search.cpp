#include "genai/search.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "common/error.h"

namespace ogx::genai {

namespace {
int32_t argmax_scalar(const float* v, size_t n) {
  int32_t best = 0;
  float top = v[0];
  for (size_t i = 1; i < n; i++)
    if (v[i] > top) {
      top = v[i];
      best = (int32_t)i;
    }
  return best;
}

// Two vector passes: the maximum (NaN-free input assumed: a NaN anywhere falls back to the scalar rule), then the
// first index holding it — the same answer as the scalar loop.
__attribute__((target("avx2"))) int32_t argmax_avx2(const float* v, size_t n) {
  size_t i = 0;
  __m256 m = _mm256_set1_ps(-INFINITY);
  __m256 nan = _mm256_setzero_ps();
  for (; i + 8 <= n; i += 8) {
    __m256 x = _mm256_loadu_ps(v + i);
    m = _mm256_max_ps(m, x);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
  }
  if (_mm256_movemask_ps(nan)) return argmax_scalar(v, n);
  float lanes[8];
  _mm256_storeu_ps(lanes, m);
  float top = lanes[0];
  for (int k = 1; k < 8; k++) top = std::max(top, lanes[k]);
  for (; i < n; i++) {
    if (std::isnan(v[i])) return argmax_scalar(v, n);
    top = std::max(top, v[i]);
  }
  __m256 t = _mm256_set1_ps(top);
  for (i = 0; i + 8 <= n; i += 8) {
    int mask = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(v + i), t, _CMP_EQ_OQ));
    if (mask) return (int32_t)(i + __builtin_ctz((unsigned)mask));
  }
  for (; i < n; i++)
    if (v[i] == top) return (int32_t)i;
  return argmax_scalar(v, n);
}
}  // namespace

int32_t argmax(const float* v, size_t n) {
  if (n == 0) return 0;
  if (__builtin_cpu_supports("avx2")) return argmax_avx2(v, n);
  return argmax_scalar(v, n);
}

int32_t argmax(const std::vector<float>& v) { return argmax(v.data(), v.size()); }

bool penalizes_sequence(const SearchConfig& s) {
  return s.repetition_penalty != 1.0 || s.presence_penalty != 0.0 || s.frequency_penalty != 0.0 ||
         s.no_repeat_ngram_size > 0;
}

bool Sampler::greedy_without_processing(const std::vector<int32_t>& seq) const {
  return !s_.do_sample && !processes_logits(seq);
}

bool Sampler::processes_logits(const std::vector<int32_t>& seq) const {
  return penalizes_sequence(s_) || (int)seq.size() < s_.min_length;
}

Sampler::Sampler(const SearchConfig& search, std::vector<int> eos_ids) : s_(search), eos_(std::move(eos_ids)) {
  uint64_t seed = s_.random_seed >= 0 ? (uint64_t)s_.random_seed : std::random_device{}();
  rng_.seed(seed);
}

bool Sampler::is_eos(int32_t id) const { return std::find(eos_.begin(), eos_.end(), id) != eos_.end(); }

void Sampler::process_logits(std::vector<float>& logits, const std::vector<int32_t>& seq) const {
  process_logits(logits.data(), (int64_t)logits.size(), seq);
}

namespace {

constexpr uint32_t kRepetition = 1u << 31, kCount = (1u << 30) - 1;

}  // namespace

// The marks of `seq` (tokens in [0, V)): extended from the longest sequence seen before that is a prefix of it when
// it adds at most a few tokens (inserts into the sorted list), else made in one pass over a dense per-thread [vocab]
// array (the tokens first marked listed, then sorted). Sequences of a batch differ from their first tokens on and
// beams only after the prompt, so the prefix search compares little. (A std::map per call took ~0.9 ms for a
// 2,048-token sequence: per row and step, longer than a 1B model's decode step.)
const Sampler::Marks& Sampler::marks_of(int64_t V, const std::vector<int32_t>& seq) const {
  const bool rep = s_.repetition_penalty != 1.0, counts = s_.presence_penalty != 0.0 || s_.frequency_penalty != 0.0;
  auto add = [&](uint32_t& w, size_t i) {  // token at position i
    if (rep) w |= kRepetition;
    if (counts && i >= prompt_length_ && (w & kCount) != kCount) w += 1;
  };
  const Marks* best = nullptr;
  for (const Marks& m : marks_)
    if (m.prompt_length == prompt_length_ && m.seq.size() <= seq.size() && (!best || m.seq.size() > best->seq.size()) &&
        std::equal(m.seq.begin(), m.seq.end(), seq.begin()))
      best = &m;
  Marks cur;
  constexpr size_t kMaxExtend = 64;  // beyond: one dense pass
  if (best && seq.size() - best->seq.size() <= kMaxExtend) {
    cur.marks = best->marks;
    for (size_t i = best->seq.size(); i < seq.size(); i++) {
      const int32_t t = seq[i];
      if (t < 0 || t >= V || (!rep && !(counts && i >= prompt_length_))) continue;  // (nothing to mark)
      auto it = std::lower_bound(cur.marks.begin(), cur.marks.end(), std::make_pair(t, 0u));
      if (it == cur.marks.end() || it->first != t) it = cur.marks.insert(it, {t, 0u});
      add(it->second, i);
    }
  } else {
    thread_local std::vector<uint32_t> dense;  // [vocab], zero between calls
    if ((int64_t)dense.size() < V) dense.assign((size_t)V, 0u);
    std::vector<int32_t> touched;
    for (size_t i = 0; i < seq.size(); i++) {
      const int32_t t = seq[i];
      if (t < 0 || t >= V) continue;
      if (dense[(size_t)t] == 0) touched.push_back(t);
      add(dense[(size_t)t], i);
      if (dense[(size_t)t] == 0) touched.pop_back();  // (neither penalty: nothing marked)
    }
    std::sort(touched.begin(), touched.end());
    cur.marks.reserve(touched.size());
    for (int32_t t : touched) {
      cur.marks.emplace_back(t, dense[(size_t)t]);
      dense[(size_t)t] = 0;
    }
  }
  cur.seq = seq;
  cur.prompt_length = prompt_length_;
  cur.used = ++marks_clock_;
  constexpr size_t kMaxMarks = 64;  // sequences remembered (rows, beams)
  if (marks_.size() < kMaxMarks) {
    marks_.push_back(std::move(cur));
    return marks_.back();
  }
  Marks& oldest = *std::min_element(marks_.begin(), marks_.end(),
                                    [](const Marks& a, const Marks& b) { return a.used < b.used; });
  oldest = std::move(cur);
  return oldest;
}

std::vector<LogitEdit> Sampler::logit_edits(int64_t V, const std::vector<int32_t>& seq) const {
  return row_edits(V, seq, false).edits;
}

bool Sampler::edits_take_pending() const { return s_.no_repeat_ngram_size <= 0; }

RowEdits Sampler::row_edits(int64_t V, const std::vector<int32_t>& seq, bool pending) const {
  OGX_CHECK(!pending || edits_take_pending(), "logit edits with a pending token: no-repeat n-gram bans need it");
  std::vector<int32_t> bans;
  int n = s_.no_repeat_ngram_size;
  if (n > 0 && (int)seq.size() >= n) {  // ban tokens that would repeat an n-gram already in the sequence
    const size_t k = (size_t)n - 1, end = seq.size();
    for (size_t i = 0; i + n <= end; i++)
      if (std::equal(seq.begin() + (std::ptrdiff_t)(end - k), seq.end(), seq.begin() + (std::ptrdiff_t)i) &&
          seq[i + k] >= 0 && seq[i + k] < V)
        bans.push_back(seq[i + k]);
  }
  if ((int64_t)seq.size() + (pending ? 1 : 0) < s_.min_length)  // (the pending token counts toward the length)
    for (int t : eos_)
      if (t >= 0 && t < V) bans.push_back(t);
  std::sort(bans.begin(), bans.end());
  bans.erase(std::unique(bans.begin(), bans.end()), bans.end());
  static const std::vector<std::pair<int32_t, uint32_t>> kNone;
  const bool rep = s_.repetition_penalty != 1.0;
  const bool counts = s_.presence_penalty != 0.0 || s_.frequency_penalty != 0.0;
  const auto& marks = rep || counts ? marks_of(V, seq).marks : kNone;
  // The pending token sits at position seq.size(): counted when past the prompt (it always is: the device picked it).
  const uint32_t pending_count = counts && seq.size() >= prompt_length_ ? 1u : 0u;
  auto subtract = [&](uint32_t count) { return count ? s_.presence_penalty + s_.frequency_penalty * count : 0.0; };
  RowEdits out;
  out.repetition_penalty = (float)s_.repetition_penalty;
  out.pending = pending && (rep || counts);
  out.fresh.repetition = rep;
  out.fresh.subtract = subtract(pending_count);
  out.edits.reserve(marks.size() + bans.size());
  auto add = [&](int32_t t, uint32_t w, bool ban) {
    LogitEdit e;
    e.token = t;
    e.repetition = (w & kRepetition) != 0;
    e.subtract = subtract(w & kCount);
    e.ban = ban;
    if (out.pending) {
      e.pending_repetition = rep;
      e.pending_subtract = subtract(std::min((w & kCount) + pending_count, kCount));
    }
    out.edits.push_back(e);
  };
  size_t b = 0;
  for (const auto& [t, w] : marks) {
    for (; b < bans.size() && bans[b] < t; b++) add(bans[b], 0u, true);
    const bool banned = b < bans.size() && bans[b] == t;
    if (banned) b++;
    add(t, w, banned);
  }
  for (; b < bans.size(); b++) add(bans[b], 0u, true);
  return out;
}

void Sampler::process_logits(float* logits, int64_t V, const std::vector<int32_t>& seq) const {
  const float lowest = std::numeric_limits<float>::lowest(), p = (float)s_.repetition_penalty;
  for (const LogitEdit& x : logit_edits(V, seq)) {
    float& l = logits[x.token];
    if (x.repetition) l = l < 0 ? l * p : l / p;
    if (x.subtract != 0.0) l = (float)((double)l - x.subtract);
    if (x.ban) l = lowest;
  }
}

namespace {

// Reorders idx so that its first n entries are the shortest prefix of the order `before` (logit descending, lower
// id first on ties) whose mass, the sum of their weights w, reaches target; returns n (at least 1; all when rounding
// leaves the whole vocabulary short). A quickselect weighted by mass: each round partitions the undecided range
// around a pivot and keeps the side where the prefix ends, so the expected cost is linear in V. (The growing partial
// sorts it replaces sorted most of a flat 128k vocabulary: 35-43 ms a token, the served top-p requests' TTFT.)
template <typename Before>
size_t nucleus_size(const std::vector<double>& w, double target, std::vector<int32_t>& idx, Before before) {
  size_t lo = 0, hi = idx.size();  // [0, lo) is in the nucleus with mass `taken`; the end lies in [lo, hi)
  double taken = 0;
  while (lo < hi) {
    // Pivot: the median (by `before`) of the range's first, middle and last entries.
    int32_t a = idx[lo], b = idx[lo + (hi - lo) / 2], c = idx[hi - 1];
    int32_t pivot = before(a, b) ? (before(b, c) ? b : (before(a, c) ? c : a))
                                 : (before(a, c) ? a : (before(b, c) ? c : b));
    auto mid = std::partition(idx.begin() + (std::ptrdiff_t)lo, idx.begin() + (std::ptrdiff_t)hi,
                              [&](int32_t i) { return before(i, pivot); });
    size_t m = (size_t)(mid - idx.begin());  // [lo, m): before the pivot; the pivot is in [m, hi)
    double left = 0;
    for (size_t i = lo; i < m; i++) left += w[(size_t)idx[i]];
    if (m > lo && taken + left >= target) {  // the prefix ends before the pivot
      hi = m;
      continue;
    }
    taken += left;
    std::iter_swap(idx.begin() + (std::ptrdiff_t)m,
                   std::find(idx.begin() + (std::ptrdiff_t)m, idx.begin() + (std::ptrdiff_t)hi, pivot));
    taken += w[(size_t)pivot];
    if (taken >= target) return m + 1;  // the pivot completes it
    lo = m + 1;
  }
  return std::max<size_t>(lo, 1);
}

}  // namespace

// The candidates and their probabilities: temperature, then the top_k largest logits (all when 0), softmax over them,
// then the smallest prefix (largest first) whose mass reaches top_p. Ties rank the lower id first. Only what a
// setting needs is sorted: with neither top-k nor top-p every token stays, in id order (no sort: the whole-vocabulary
// sort cost ~6 ms per token at 128k ids, paid by every OpenAI client's default temperature 1 / top_p 1); top-k selects
// its k (nth_element) and sorts those; top-p alone finds its nucleus by a mass-weighted quickselect (candidates in no
// particular order: the same distribution; a seed's draws differ from those of a sorted list).
void Sampler::filter(float* logits, int64_t vocab, std::vector<int32_t>& idx, std::vector<double>& p) const {
  const size_t V = (size_t)vocab;
  const float t = (float)s_.temperature;
  for (size_t i = 0; i < V; i++) logits[i] /= t;
  auto before = [&](int32_t a, int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); };
  idx.resize(V);
  std::iota(idx.begin(), idx.end(), 0);
  const bool nucleus = s_.top_p < 1.0;
  size_t k = s_.top_k > 0 ? std::min<size_t>((size_t)s_.top_k, V) : V;
  float mx = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < V; i++) mx = std::max(mx, logits[i]);
  if (k < V) {
    std::nth_element(idx.begin(), idx.begin() + (std::ptrdiff_t)(k - 1), idx.end(), before);
    idx.resize(k);
    std::sort(idx.begin(), idx.end(), before);
  }
  double sum = 0;  // the softmax denominator over the candidates (all V without top-k)
  if (k == V && nucleus) {  // top-p alone: the nucleus by a mass-weighted quickselect, O(V), left unsorted
    std::vector<double> w(V);
    for (size_t i = 0; i < V; i++) sum += w[i] = std::exp((double)logits[i] - mx);
    idx.resize(nucleus_size(w, s_.top_p * sum, idx, before));
    p.resize(idx.size());
    for (size_t i = 0; i < idx.size(); i++) p[i] = w[(size_t)idx[i]] / sum;
    return;
  }
  for (int32_t i : idx) sum += std::exp((double)logits[i] - mx);
  k = idx.size();
  p.assign(k, 0.0);
  for (size_t i = 0; i < k; i++) p[i] = std::exp((double)logits[idx[i]] - mx) / sum;
  if (nucleus) {  // after top-k: the smallest prefix whose mass reaches top_p (at least one token)
    double cum = 0;
    size_t keep = 0;
    while (keep < k) {
      cum += p[keep++];
      if (cum >= s_.top_p) break;
    }
    idx.resize(keep);
    p.resize(keep);
  }
}

int32_t Sampler::sample(float* logits, int64_t vocab) {
  std::vector<int32_t> idx;
  std::vector<double> p;
  filter(logits, vocab, idx, p);
  std::discrete_distribution<size_t> dist(p.begin(), p.end());
  return idx[dist(rng_)];
}

std::vector<double> Sampler::distribution(float* logits, int64_t vocab, const std::vector<int32_t>& seq) const {
  OGX_CHECK(vocab > 0, "no logits to choose a token from");
  process_logits(logits, vocab, seq);
  std::vector<double> dense((size_t)vocab, 0.0);
  if (!s_.do_sample) {
    dense[(size_t)argmax(logits, (size_t)vocab)] = 1.0;
    return dense;
  }
  std::vector<int32_t> idx;
  std::vector<double> p;
  filter(logits, vocab, idx, p);
  double sum = 0;  // the kept mass (top-p drops the tail): renormalized, as discrete_distribution does
  for (double x : p) sum += x;
  for (size_t i = 0; i < idx.size(); i++) dense[(size_t)idx[i]] = p[i] / sum;
  return dense;
}

int32_t Sampler::next(std::vector<float>& logits, const std::vector<int32_t>& seq) {
  return next(logits.data(), (int64_t)logits.size(), seq);
}

int32_t Sampler::next(float* logits, int64_t vocab, const std::vector<int32_t>& seq) {
  OGX_CHECK(vocab > 0, "no logits to choose a token from");
  process_logits(logits, vocab, seq);
  if (!s_.do_sample) return argmax(logits, (size_t)vocab);
  return sample(logits, vocab);
}

}  // namespace ogx::genai
