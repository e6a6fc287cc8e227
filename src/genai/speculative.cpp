#include "genai/speculative.h"

#include <algorithm>
#include <random>

#include "genai/generator.h"
#include "genai/model.h"

namespace ogx::genai {

void SpeculativeOptions::set_number(const std::string& name, double v) {
  auto as_int = [&](int lo, int hi) {
    OGX_CHECK(v == (double)(int64_t)v && v >= lo && v <= hi, "speculative option '", name, "' must be an integer in [",
              lo, ", ", hi, "], got ", v);
    return (int)v;
  };
  if (name == "ngram_size") ngram_size = as_int(0, 16);
  else if (name == "max_draft_tokens") max_draft_tokens = as_int(1, 16);
  else if (name == "min_adaptive_k") {
    min_adaptive_k = as_int(0, 16);
    OGX_CHECK(min_adaptive_k == 0, "speculative option min_adaptive_k: adaptive draft widths are not supported by ogx "
              "(use 0)");
  } else throw_error("unknown speculative option '", name, "' (numeric: ngram_size, max_draft_tokens, min_adaptive_k)");
}

void SpeculativeOptions::set_bool(const std::string& name, bool v) {
  if (name == "ngram_chained_lookup") {
    OGX_CHECK(!v, "speculative option ngram_chained_lookup: chained lookup is not supported by ogx");
    ngram_chained_lookup = v;
  } else if (name == "cooldown") {
    OGX_CHECK(!v, "speculative option cooldown is not supported by ogx");
    cooldown = v;
  } else {
    throw_error("unknown speculative option '", name, "' (boolean: ngram_chained_lookup, cooldown)");
  }
}

double SpeculativeOptions::number(const std::string& name) const {
  if (name == "ngram_size") return ngram_size;
  if (name == "max_draft_tokens") return max_draft_tokens;
  if (name == "min_adaptive_k") return min_adaptive_k;
  throw_error("unknown speculative option '", name, "' (numeric: ngram_size, max_draft_tokens, min_adaptive_k)");
}

bool SpeculativeOptions::boolean(const std::string& name) const {
  if (name == "ngram_chained_lookup") return ngram_chained_lookup;
  if (name == "cooldown") return cooldown;
  throw_error("unknown speculative option '", name, "' (boolean: ngram_chained_lookup, cooldown)");
}

std::vector<std::pair<std::string, double>> SpeculativeStats::items() const {
  std::vector<std::pair<std::string, double>> v = {
      {"rounds", (double)rounds},
      {"draft_tokens_proposed", (double)draft_tokens_proposed},
      {"draft_tokens_evaluated", (double)draft_tokens_proposed},
      {"draft_tokens_accepted", (double)draft_tokens_accepted},
      {"bonus_tokens", (double)bonus_tokens},
      {"correction_tokens", (double)correction_tokens},
      {"tokens_emitted", (double)tokens_emitted},
      {"tokens_discarded", (double)tokens_discarded},
      {"target_forward_passes", (double)target_forward_passes},
      {"ngram_lookup_hits", (double)ngram_lookup_hits},
      {"ngram_lookup_misses", (double)ngram_lookup_misses},
      {"draft_forward_passes", (double)draft_forward_passes},
  };
  v.emplace_back("acceptance_rate",
                 draft_tokens_proposed ? (double)draft_tokens_accepted / (double)draft_tokens_proposed : 0.0);
  v.emplace_back("observed_speedup",
                 target_forward_passes ? (double)tokens_emitted / (double)target_forward_passes : 0.0);
  return v;
}

DraftVerdict verify_sampled_draft(const std::vector<double>& p, const std::vector<double>& q, int32_t d,
                                  std::mt19937_64& rng) {
  OGX_CHECK(p.size() == q.size() && d >= 0 && (size_t)d < p.size(), "speculative sampling: bad distributions");
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double pd = p[(size_t)d], qd = q[(size_t)d];
  if (qd > 0 && u(rng) * qd < pd) return {d, true};  // u < p/q, written without the division
  std::vector<double> residual(p.size());
  double sum = 0;
  for (size_t i = 0; i < p.size(); i++) sum += residual[i] = std::max(0.0, p[i] - q[i]);
  if (!(sum > 0)) residual = p;  // p == q up to rounding: nothing left to correct, draw from p
  std::discrete_distribution<size_t> dist(residual.begin(), residual.end());
  return {(int32_t)dist(rng), false};
}

SpeculativeDecoder::SpeculativeDecoder(const SpeculativeOptions& options, std::shared_ptr<const Model> draft,
                                       const SearchConfig& search, int max_length)
    : opt_(options), sampling_(search.do_sample) {
  rng_.seed(search.random_seed >= 0 ? (uint64_t)search.random_seed + 0x5eed : std::random_device{}());
  if (!draft) return;
  // The draft generator: the target's search settings, greedy (it picks on its device when it can) unless drafts
  // are sampled, which the decoder does itself from the draft's logits.
  GeneratorParams dp(*draft);
  dp.search = search;
  dp.search.max_length = max_length;
  dp.search.do_sample = false;
  dp.search.num_beams = 1;
  dp.search.batch_size = 1;
  dp.speculative = SpeculativeOptions();
  dp.speculative.ngram_size = 0;
  draft_gen_ = std::make_unique<Generator>(draft, dp);
  draft_sampler_ = std::make_unique<Sampler>(search, draft->config().model.eos_token_ids);
}

SpeculativeDecoder::~SpeculativeDecoder() = default;

void SpeculativeDecoder::sync_draft(const std::vector<int32_t>& seq) {
  Generator& d = *draft_gen_;
  const std::vector<int32_t>& have = d.seqs_[0];
  size_t c = 0;
  while (c < have.size() && c < seq.size() && have[c] == seq[c]) c++;
  if (c < have.size()) d.rewind_to(c);
  if (c < seq.size()) {
    const int64_t before = d.kv_.length();
    d.append_tokens(std::vector<int32_t>(seq.begin() + (std::ptrdiff_t)c, seq.end()));
    if (d.kv_.length() != before) stats_.draft_forward_passes++;
  }
}

std::vector<int32_t> SpeculativeDecoder::draft_with_model(const std::vector<int32_t>& seq, int max_tokens,
                                                          std::vector<std::vector<double>>* q) {
  std::vector<int32_t> out;
  if (max_tokens <= 0) return out;
  sync_draft(seq);
  Generator& d = *draft_gen_;
  for (int j = 0; j < max_tokens && !d.is_done(); j++) {
    const int64_t before = d.kv_.length();
    int32_t t;
    if (!sampling_) {
      d.generate_next_token();  // greedy, on the draft's device where it can
      t = d.last_token();
    } else {
      std::vector<float> lg = d.logits();
      q->push_back(draft_sampler_->distribution(lg.data(), (int64_t)lg.size(), d.seqs_[0]));
      std::discrete_distribution<size_t> dist(q->back().begin(), q->back().end());
      t = (int32_t)dist(rng_);
      d.append_row_tokens({t});  // pending: run at the next draft step or the next round's sync
    }
    if (d.kv_.length() != before) stats_.draft_forward_passes++;
    out.push_back(t);
    if (draft_sampler_->is_eos(t)) break;  // nothing to draft after an end
  }
  return out;
}

std::vector<int32_t> SpeculativeDecoder::draft(const std::vector<int32_t>& seq, int max_tokens) {
  const int64_t n = opt_.ngram_size, L = (int64_t)seq.size();
  if (max_tokens <= 0 || L <= n) return {};
  // The latest earlier occurrence of the last n tokens, followed by at least one token.
  for (int64_t j = L - n - 1; j >= 0; j--) {
    if (!std::equal(seq.begin() + j, seq.begin() + j + n, seq.end() - n)) continue;
    const int64_t from = j + n, to = std::min<int64_t>(L, from + max_tokens);
    stats_.ngram_lookup_hits++;
    return std::vector<int32_t>(seq.begin() + from, seq.begin() + to);
  }
  stats_.ngram_lookup_misses++;
  return {};
}

void SpeculativeDecoder::discard_buffered(Generator& g) {
  if (buffered_.empty()) return;
  stats_.tokens_discarded += (int64_t)buffered_.size();
  buffered_.clear();
  if (g.kv_.length() > (int64_t)g.token_count()) g.kv_.rewind((int64_t)g.token_count());
  g.logits_.clear();
}

void SpeculativeDecoder::hand_out(Generator& g) {
  const int32_t t = buffered_.front();
  buffered_.erase(buffered_.begin());
  // The last buffered token was picked from the round's last logits and not run yet: it becomes pending, as a
  // plain pick does. The others are in the KV cache already.
  if (buffered_.empty() && !last_in_kv_) {
    g.append_row_tokens({t});
  } else {
    g.seqs_[0].push_back(t);
    if (g.sampler_.is_eos(t)) g.eos_seen_[0] = true;
  }
  stats_.tokens_emitted++;
  if (g.is_done()) discard_buffered(g);
}

void SpeculativeDecoder::generate_next_token(Generator& g) {
  if (!buffered_.empty()) return hand_out(g);
  if (g.pending_.empty()) {
    // After a prompt, a rewind or set_logits the next token comes from logits the generator has (or recomputes):
    // a plain pick; the next call verifies drafts after it.
    const int64_t before = g.kv_.length();
    g.logits();
    if (g.kv_.length() != before) stats_.target_forward_passes++;
    g.pick_host();
    stats_.tokens_emitted++;
    return;
  }
  // A round: the pending token (picked, not yet run) and the drafts after it in one forward pass. The logits after
  // position i pick the token after it; drafts are accepted while they equal those picks (greedy) or pass the
  // rejection test (sampling).
  std::vector<int32_t>& seq = g.seqs_[0];
  const int room = g.max_length_ - (int)g.token_count() - 1;  // accepted drafts + the token picked after them
  const int k = std::min(opt_.max_draft_tokens, room);
  std::vector<std::vector<double>> q;  // sampled draft-model drafts: the distribution each came from
  std::vector<int32_t> drafts = draft_gen_ ? draft_with_model(seq, k, &q) : draft(seq, k);
  std::vector<int32_t> ids = g.pending_;
  ids.insert(ids.end(), drafts.begin(), drafts.end());
  const int64_t S = (int64_t)ids.size(), base = g.kv_.length();
  OGX_CHECK(S == 1 || g.vocab_ > 0, "speculative decoding needs model.vocab_size in genai_config.json");
  g.extra_io_.want_full_logits();
  g.run(ids, 1, S);
  g.pending_.clear();
  stats_.target_forward_passes++;
  if (!drafts.empty()) stats_.rounds++;
  stats_.draft_tokens_proposed += (int64_t)drafts.size();
  const Tensor* all = g.extra_io_.output(g.model_->config().model.decoder.logits);
  OGX_CHECK(all && all->rank() == 3 && all->dim(1) == S, "speculative decoding: the model did not return the logits "
            "of every drafted position");
  const int64_t V = all->dim(2);
  std::vector<int32_t> prefix = seq;  // ends with the pending token
  std::vector<float> row((size_t)V);
  size_t accepted = 0;
  int32_t next = -1;
  for (int64_t i = 0; i < S; i++) {
    all->read_f32(i * V, V, row.data());
    const bool has_draft = i + 1 < S;
    if (sampling_) {
      std::vector<double> p = g.sampler_.distribution(row.data(), V, prefix);
      if (has_draft) {
        const int32_t d = drafts[(size_t)i];
        std::vector<double> point;  // n-gram drafts: a draw from a point mass at d
        if (q.empty()) {
          point.assign((size_t)V, 0.0);
          point[(size_t)d] = 1.0;
        }
        DraftVerdict v = verify_sampled_draft(p, q.empty() ? point : q[(size_t)i], d, rng_);
        if (v.accepted) {
          accepted++;
          prefix.push_back(d);
          if (g.sampler_.is_eos(d)) break;
          continue;
        }
        next = v.token;
        stats_.correction_tokens++;
        break;
      }
      std::discrete_distribution<size_t> dist(p.begin(), p.end());
      next = (int32_t)dist(rng_);
      if (!drafts.empty()) stats_.bonus_tokens++;
      break;
    }
    const int32_t pick = g.sampler_.greedy_without_processing(prefix) ? argmax(row.data(), V)
                                                                         : g.sampler_.next(row.data(), V, prefix);
    if (has_draft && pick == drafts[(size_t)i]) {
      accepted++;
      prefix.push_back(pick);
      if (g.sampler_.is_eos(pick)) break;  // an accepted EOS ends the sequence: nothing after it
      continue;
    }
    next = pick;
    if (has_draft) stats_.correction_tokens++;
    else if (!drafts.empty()) stats_.bonus_tokens++;
    break;
  }
  stats_.draft_tokens_accepted += (int64_t)accepted;
  g.kv_.rewind(base + 1 + (int64_t)accepted);  // the pending token and the accepted drafts
  g.logits_.clear();
  buffered_.assign(drafts.begin(), drafts.begin() + (std::ptrdiff_t)accepted);
  last_in_kv_ = next < 0;  // the round ended on an accepted EOS
  if (next >= 0) buffered_.push_back(next);
  hand_out(g);
}

void Generator::start_speculative(const SpeculativeOptions& options) {
  OGX_CHECK(batch_ == 1 && beams_ == 1, "speculative decoding supports batch_size 1 without beam search in ogx "
            "(batch_size ", batch_, ", num_beams ", beams_, ")");
  OGX_CHECK(!options.ngram_chained_lookup, "speculative option ngram_chained_lookup is not supported by ogx");
  OGX_CHECK(options.min_adaptive_k == 0, "speculative option min_adaptive_k (adaptive draft widths) is not supported "
            "by ogx (use 0)");
  OGX_CHECK(!options.cooldown, "speculative option cooldown is not supported by ogx");
  spec_ = std::make_unique<SpeculativeDecoder>(options, model_->draft(), search_, max_length_);
}

}  // namespace ogx::genai
