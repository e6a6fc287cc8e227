#include "genai/speculative_policy.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"

namespace ogx::genai {

// ---- n-gram index ----

size_t NGramIndex::KeyHash::operator()(const std::vector<int32_t>& k) const noexcept {
  uint64_t h = 1469598103934665603ull;
  for (int32_t t : k) h = (h ^ (uint32_t)t) * 1099511628211ull;
  return (size_t)h;
}

NGramIndex::NGramIndex(int ngram_size) : key_((size_t)ngram_size - 1) {
  OGX_CHECK(ngram_size >= 2, "n-gram drafting needs ngram_size >= 2, got ", ngram_size);
}

void NGramIndex::append(int32_t token) {
  history_.push_back(token);
  synced_++;
  if (history_.size() <= key_) return;
  const size_t start = history_.size() - key_ - 1;  // this key now has a token after it
  latest_[std::vector<int32_t>(history_.begin() + (std::ptrdiff_t)start,
                               history_.begin() + (std::ptrdiff_t)(start + key_))] = start;
}

size_t NGramIndex::sync(const std::vector<int32_t>& seq) {
  const bool extends = seq.size() >= history_.size() && std::equal(history_.begin(), history_.end(), seq.begin());
  if (!extends) {
    history_.clear();
    latest_.clear();
  }
  const size_t from = history_.size();
  for (size_t i = from; i < seq.size(); i++) append(seq[i]);
  return seq.size() - from;
}

std::vector<int32_t> NGramIndex::propose(size_t max_tokens, bool chained, int64_t* chained_tokens) const {
  std::vector<int32_t> out;
  if (max_tokens == 0 || history_.size() < key_) return out;
  std::vector<int32_t> key(history_.end() - (std::ptrdiff_t)key_, history_.end());
  auto it = latest_.find(key);
  if (it == latest_.end()) return out;
  if (!chained) {
    const size_t from = it->second + key_, n = std::min(max_tokens, history_.size() - from);
    return std::vector<int32_t>(history_.begin() + (std::ptrdiff_t)from, history_.begin() + (std::ptrdiff_t)(from + n));
  }
  while (out.size() < max_tokens && it != latest_.end()) {
    const int32_t t = history_[it->second + key_];
    out.push_back(t);
    if (out.size() > 1 && chained_tokens) (*chained_tokens)++;
    std::rotate(key.begin(), key.begin() + 1, key.end());
    key.back() = t;
    it = latest_.find(key);
  }
  return out;
}

// ---- adaptive width ----

namespace {
constexpr double kNewWeight = 0.25, kHighAcceptance = 0.75, kLowAcceptance = 0.50;
constexpr double kKeepRatio = 0.97, kDropRatio = 0.80;
constexpr int kMinSamples = 2, kProbeRounds = 2, kWaitAfterKept = 1, kWaitAfterDropped = 6;
}  // namespace

void AdaptiveWidth::Estimate::update(double t, double m, double a) {
  if (samples == 0) {
    tokens = t, ms = m, acceptance = a;
  } else {
    tokens += kNewWeight * (t - tokens);
    ms += kNewWeight * (m - ms);
    acceptance += kNewWeight * (a - acceptance);
  }
  samples++;
}

AdaptiveWidth::AdaptiveWidth(int fixed_k, int min_adaptive_k)
    : min_k_(min_adaptive_k > 0 ? min_adaptive_k : fixed_k),
      max_k_(min_adaptive_k > 0 ? kMaxK : fixed_k),
      enabled_(min_adaptive_k > 0),
      k_(min_k_) {}

double AdaptiveWidth::throughput() const {
  if (est_[(size_t)k_].samples > 0) return est_[(size_t)k_].rate();
  return probe_from_ ? est_[(size_t)probe_from_].rate() : 0.0;
}

void AdaptiveWidth::reset() {
  k_ = min_k_;
  est_ = {};
  probe_from_ = probe_rounds_ = stable_rounds_ = wait_ = 0;
}

void AdaptiveWidth::move_to(int k) {
  if (k > k_) increases++;
  if (k < k_) decreases++;
  k_ = k;
}

void AdaptiveWidth::start_probe(int k) {
  probe_from_ = k_;
  probe_rounds_ = stable_rounds_ = 0;
  probes++;
  move_to(k);
}

void AdaptiveWidth::finish_probe(bool keep) {
  if (!keep) move_to(probe_from_);
  probe_from_ = probe_rounds_ = stable_rounds_ = 0;
  wait_ = keep ? kWaitAfterKept : kWaitAfterDropped;
}

void AdaptiveWidth::record(int k, int evaluated, int accepted, int committed, bool filled, double propose_ms,
                           double target_ms) {
  const double total = propose_ms + target_ms;
  if (!enabled_ || k != k_ || evaluated <= 0 || committed <= 0 || !filled || !std::isfinite(total) || total <= 0)
    return;
  Estimate& e = est_[(size_t)k];
  e.update(committed, total, (double)accepted / evaluated);
  observations++;
  if (probe_from_) {
    probe_rounds_++;
    const Estimate& from = est_[(size_t)probe_from_];
    if (from.rate() > 0 && e.rate() < from.rate() * kDropRatio) {
      finish_probe(false);
    } else if (probe_rounds_ >= kProbeRounds) {
      const bool fast = from.rate() <= 0 || e.rate() >= from.rate() * kKeepRatio;
      const bool accepts = k_ < probe_from_ || e.acceptance >= kHighAcceptance;
      finish_probe(fast && accepts);
    }
    return;
  }
  stable_rounds_++;
  if (wait_ > 0) {
    wait_--;
    return;
  }
  if (e.samples < kMinSamples) return;
  if (e.acceptance < kLowAcceptance && k_ > min_k_) start_probe(k_ - 1);
  else if (e.acceptance >= kHighAcceptance && k_ < max_k_ && stable_rounds_ >= kMinSamples) start_probe(k_ + 1);
}

// ---- cooldown ----

void Cooldown::record(int k, int minimum_k, int evaluated, int accepted) {
  if (!enabled_ || evaluated <= 0) return;
  if (accepted > 0 || k != minimum_k) {
    zero_rounds_ = 0;
    return;
  }
  if (++zero_rounds_ == 3) {
    remaining_ = 1;
    zero_rounds_ = 0;
    entries++;
  }
}

void Cooldown::standard_step_done() {
  if (remaining_ > 0) remaining_--, steps++;
}

}  // namespace ogx::genai
