#include "genai/speculative.h"

#include <algorithm>
#include <chrono>
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
  if (name == "ngram_size") {
    ngram_size = as_int(0, 16);
    OGX_CHECK(ngram_size != 1, "speculative option 'ngram_size' must be 0 (off) or 2..16 (it matches the last "
              "ngram_size - 1 tokens), got 1");
  } else if (name == "max_draft_tokens") {
    max_draft_tokens = as_int(1, 16);
  } else if (name == "min_adaptive_k") {
    min_adaptive_k = as_int(0, 16);
  } else throw_error("unknown speculative option '", name, "' (numeric: ngram_size, max_draft_tokens, min_adaptive_k)");
}

void SpeculativeOptions::set_bool(const std::string& name, bool v) {
  if (name == "ngram_chained_lookup") {
    ngram_chained_lookup = v;
  } else if (name == "cooldown") {
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
      {"completed_rounds", (double)completed_rounds},
      {"interrupted_rounds", (double)interrupted_rounds},
      {"active_rounds", (double)active_rounds},
      {"draft_tokens_proposed", (double)draft_tokens_proposed},
      {"draft_tokens_evaluated", (double)draft_tokens_evaluated},
      {"draft_tokens_accepted", (double)draft_tokens_accepted},
      {"correction_tokens", (double)correction_tokens},
      {"bonus_tokens", (double)bonus_tokens},
      {"tokens_queued", (double)tokens_queued},
      {"tokens_emitted", (double)tokens_emitted},
      {"tokens_discarded", (double)tokens_discarded},
      {"tokens_buffered", (double)tokens_buffered},
      {"draft_forward_passes", (double)draft_forward_passes},
      {"target_forward_passes", (double)target_forward_passes},
      {"effective_k", (double)effective_k},
      {"adaptive_k_increases", (double)adaptive_k_increases},
      {"adaptive_k_decreases", (double)adaptive_k_decreases},
      {"adaptive_k_observations", (double)adaptive_k_observations},
      {"adaptive_k_probes", (double)adaptive_k_probes},
      {"cooldown_entries", (double)cooldown_entries},
      {"cooldown_steps", (double)cooldown_steps},
      {"cooldown_remaining", (double)cooldown_remaining},
      {"standard_fallback_steps", (double)standard_fallback_steps},
      {"full_accept_rounds", (double)full_accept_rounds},
      {"partial_accept_rounds", (double)partial_accept_rounds},
      {"zero_accept_rounds", (double)zero_accept_rounds},
      {"target_verify_forward_passes", (double)target_verify_forward_passes},
      {"target_reanchor_forward_passes", (double)target_reanchor_forward_passes},
      {"target_reconciliation_forward_passes", (double)target_reconciliation_forward_passes},
      {"ngram_lookup_hits", (double)ngram_lookup_hits},
      {"ngram_lookup_misses", (double)ngram_lookup_misses},
      {"ngram_lookup_tokens_proposed", (double)ngram_lookup_tokens_proposed},
      {"ngram_chained_tokens_proposed", (double)ngram_chained_tokens_proposed},
      {"ngram_grammar_candidate_rejections", 0.0},  // guidance does not combine with speculation in ogx
      {"ngram_history_syncs", (double)ngram_history_syncs},
      {"ngram_history_tokens_synced", (double)ngram_history_tokens_synced},
  };
  // The derived figures as upstream documents them (estimates from a cost formula, not wall-clock speed-ups).
  auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  const double total_target_ms = total_target_verify_ms + total_target_reanchor_ms;
  const double acceptance = ratio((double)draft_tokens_accepted, (double)draft_tokens_evaluated);
  const double draft_ms_per_token = ratio(total_draft_ms, (double)draft_tokens_proposed);
  const double drafts_per_round = ratio((double)draft_tokens_proposed, (double)rounds);
  const double emitted_per_round = ratio((double)tokens_emitted, (double)rounds);
  double expected = 0, weighted = 0;
  for (size_t k = 1; k < rounds_at_k.size(); k++) {
    double e = 1, term = 1;
    for (size_t i = 0; i < k; i++) e += term *= acceptance;
    expected += e * (double)rounds_at_k[k];
    weighted += (double)rounds_at_k[k];
  }
  expected = ratio(expected, weighted);
  const double target_ms_per_round = ratio(total_target_ms, (double)rounds);
  const double baseline = ratio(total_target_reanchor_ms, (double)target_reanchor_forward_passes);
  const bool formula = rounds > 0 && baseline > 0;
  const double overhead = formula ? target_ms_per_round / baseline - 1 : 0.0;
  const double denominator = 1 + drafts_per_round * ratio(draft_ms_per_token, baseline) + overhead;
  v.insert(v.end(), {{"formula_supported", formula ? 1.0 : 0.0},
                     {"total_draft_ms", total_draft_ms},
                     {"total_target_ms", total_target_ms},
                     {"total_reconciliation_ms", total_reconciliation_ms},
                     {"total_target_verify_ms", total_target_verify_ms},
                     {"total_target_reanchor_ms", total_target_reanchor_ms},
                     {"total_ngram_history_sync_ms", total_ngram_history_sync_ms},
                     {"total_ngram_lookup_ms", total_ngram_lookup_ms},
                     {"avg_draft_ms_per_token", draft_ms_per_token},
                     {"acceptance_rate", acceptance},
                     {"avg_draft_tokens_per_round", drafts_per_round},
                     {"mean_emitted_tokens_per_round", emitted_per_round},
                     {"expected_tokens_per_round", expected},
                     {"avg_target_ms_per_round", target_ms_per_round},
                     {"target_baseline_ms_per_token", baseline},
                     {"target_overhead_ratio", overhead},
                     {"estimated_speedup", formula ? ratio(expected, denominator) : 0.0},
                     {"observed_speedup", formula ? ratio(emitted_per_round, denominator) : 0.0},
                     {"adaptive_k_throughput", adaptive_k_throughput}});
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
    : opt_(options),
      width_(options.max_draft_tokens, options.min_adaptive_k),
      cooldown_(options.cooldown),
      sampling_(search.do_sample) {
  rng_.seed(search.random_seed >= 0 ? (uint64_t)search.random_seed + 0x5eed : std::random_device{}());
  if (!draft) {
    ngram_ = std::make_unique<NGramIndex>(opt_.ngram_size);
    return;
  }
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

const SpeculativeStats& SpeculativeDecoder::stats() const {
  stats_.effective_k = width_.k();
  stats_.adaptive_k_increases = width_.increases;
  stats_.adaptive_k_decreases = width_.decreases;
  stats_.adaptive_k_observations = width_.observations;
  stats_.adaptive_k_probes = width_.probes;
  stats_.adaptive_k_throughput = width_.throughput();
  stats_.cooldown_entries = cooldown_.entries;
  stats_.cooldown_steps = cooldown_.steps;
  stats_.cooldown_remaining = cooldown_.remaining();
  stats_.tokens_buffered = (int64_t)buffered_.size();
  stats_.active_rounds = open_round_ ? 1 : 0;
  return stats_;
}

void SpeculativeDecoder::reset(Generator& g) {
  discard_buffered(g);
  width_.reset();
  cooldown_.reset();
}

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
  using clock = std::chrono::steady_clock;
  if (max_tokens <= 0) return {};
  const auto t0 = clock::now();
  if (const size_t n = ngram_->sync(seq)) {
    stats_.ngram_history_syncs++;
    stats_.ngram_history_tokens_synced += (int64_t)n;
  }
  const auto t1 = clock::now();
  std::vector<int32_t> out =
      ngram_->propose((size_t)max_tokens, opt_.ngram_chained_lookup, &stats_.ngram_chained_tokens_proposed);
  stats_.total_ngram_history_sync_ms += std::chrono::duration<double, std::milli>(t1 - t0).count();
  stats_.total_ngram_lookup_ms += std::chrono::duration<double, std::milli>(clock::now() - t1).count();
  if (out.empty()) {
    stats_.ngram_lookup_misses++;
  } else {
    stats_.ngram_lookup_hits++;
    stats_.ngram_lookup_tokens_proposed += (int64_t)out.size();
  }
  return out;
}

void SpeculativeDecoder::discard_buffered(Generator& g) {
  if (open_round_) stats_.interrupted_rounds++;
  open_round_.reset();
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
  if (buffered_.empty() && open_round_) {  // the round is complete: the policies learn from it
    const RoundRecord& r = *open_round_;
    width_.record(r.width, r.evaluated, r.accepted, r.committed, r.filled, r.propose_ms, r.target_ms);
    cooldown_.record(r.width, width_.minimum(), r.evaluated, r.accepted);
    stats_.completed_rounds++;
    open_round_.reset();
  }
  if (g.is_done()) discard_buffered(g);
}

void SpeculativeDecoder::generate_next_token(Generator& g) {
  if (!buffered_.empty()) return hand_out(g);
  if (g.pending_.empty()) {
    // After a prompt, a rewind or set_logits the next token comes from logits the generator has (or recomputes):
    // a plain pick; the next call verifies drafts after it.
    const int64_t before = g.kv_.length();
    const auto t0 = std::chrono::steady_clock::now();
    g.logits();
    if (g.kv_.length() != before) {
      stats_.target_forward_passes++;
      stats_.target_reconciliation_forward_passes++;
      stats_.total_reconciliation_ms +=
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
    g.pick_host();
    stats_.tokens_emitted++;
    return;
  }
  // A round: the pending token (picked, not yet run) and the drafts after it in one forward pass. The logits after
  // position i pick the token after it; drafts are accepted while they equal those picks (greedy) or pass the
  // rejection test (sampling).
  std::vector<int32_t>& seq = g.seqs_[0];
  using clock = std::chrono::steady_clock;
  const int room = g.max_length_ - (int)g.token_count() - 1;  // accepted drafts + the token picked after them
  const int width = width_.k();
  const int k = std::min(width, room);
  const bool cooldown_step = cooldown_.due();  // a standard step: no drafts this time
  std::vector<std::vector<double>> q;  // sampled draft-model drafts: the distribution each came from
  const auto t_propose = clock::now();
  std::vector<int32_t> drafts =
      cooldown_step ? std::vector<int32_t>{} : draft_gen_ ? draft_with_model(seq, k, &q) : draft(seq, k);
  const auto t_target = clock::now();
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
    // Sampled drafts of a draft model: the rejection test against the distribution q each was drawn from. N-gram
    // drafts (a point mass) under sampling take the path below: each position draws its token with the generator's
    // own sampler, as plain decoding would, and a draft is accepted when it equals the draw, so the tokens are plain
    // sampling's for the same seed (one draw per emitted token, as there).
    if (sampling_ && !q.empty()) {
      std::vector<double> p = g.sampler_.distribution(row.data(), V, prefix);
      if (has_draft) {
        const int32_t d = drafts[(size_t)i];
        DraftVerdict v = verify_sampled_draft(p, q[(size_t)i], d, rng_);
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
  // Drafts examined: the accepted ones and the one rejected (a correction), if any.
  const int evaluated = (int)accepted + (next >= 0 && accepted < drafts.size() ? 1 : 0);
  stats_.draft_tokens_evaluated += evaluated;
  const double propose_ms = std::chrono::duration<double, std::milli>(t_target - t_propose).count();
  const double target_ms = std::chrono::duration<double, std::milli>(clock::now() - t_target).count();
  stats_.total_draft_ms += propose_ms;
  if (drafts.empty()) {
    stats_.standard_fallback_steps++;
    stats_.target_reanchor_forward_passes++;
    stats_.total_target_reanchor_ms += target_ms;
    if (cooldown_step) cooldown_.standard_step_done();
  } else {
    stats_.target_verify_forward_passes++;
    stats_.total_target_verify_ms += target_ms;
    stats_.rounds_at_k[(size_t)std::clamp(width, 1, 16)]++;
    if (accepted == drafts.size()) stats_.full_accept_rounds++;
    else if (accepted > 0) stats_.partial_accept_rounds++;
    else stats_.zero_accept_rounds++;
    open_round_ = RoundRecord{width, evaluated, (int)accepted, (int)accepted + (next >= 0 ? 1 : 0),
                              (int)drafts.size() == width, propose_ms, target_ms};
  }
  g.kv_.rewind(base + 1 + (int64_t)accepted);  // the pending token and the accepted drafts
  g.logits_.clear();
  buffered_.assign(drafts.begin(), drafts.begin() + (std::ptrdiff_t)accepted);
  last_in_kv_ = next < 0;  // the round ended on an accepted EOS
  if (next >= 0) buffered_.push_back(next);
  stats_.tokens_queued += (int64_t)buffered_.size();
  hand_out(g);
}

void Generator::start_speculative(const SpeculativeOptions& options) {
  OGX_CHECK(batch_ == 1 && beams_ == 1, "speculative decoding supports batch_size 1 without beam search in ogx "
            "(batch_size ", batch_, ", num_beams ", beams_, ")");
  OGX_CHECK(!options.ngram_chained_lookup || options.ngram_size > 0 || model_->draft(), "speculative option "
            "ngram_chained_lookup needs n-gram drafting (ngram_size 2..16)");
  OGX_CHECK(model_->draft() || options.ngram_size >= 2, "speculative decoding needs a draft model or ngram_size 2..16 "
            "(got ", options.ngram_size, ")");
  spec_ = std::make_unique<SpeculativeDecoder>(options, model_->draft(), search_, max_length_);
}

}  // namespace ogx::genai
