#include "genai/speculative.h"

#include <algorithm>
#include <chrono>
#include <functional>
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
      // Greedy, on the draft's device where it can; each step queues the next but the round's last (which would
      // run a pass the next round's sync discards, ahead of the target's verify pass on the same device).
      d.queue_ahead_ = j + 1 < max_tokens;
      try {
        d.generate_next_token();
      } catch (...) {
        d.queue_ahead_ = true;
        throw;
      }
      d.queue_ahead_ = true;
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

namespace {
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }
}  // namespace

void SpeculativeDecoder::reset(Generator& g) {
  discard_buffered(g);
  width_.reset();
  cooldown_.reset();
}

void SpeculativeDecoder::discard_buffered(Generator& g) {
  anchor_ = false;  // another call runs the pending token as it needs (upstream: a reconciliation, not a re-anchor)
  if (buffered_.empty()) return;
  stats_.tokens_discarded += (int64_t)buffered_.size();
  buffered_.clear();
  rng_after_.clear();  // the sampler's state is already the last handed-out token's
  // The handed-out tokens are in the KV cache (the last of them an accepted draft); the verified ones after go.
  if (g.kv_.length() > (int64_t)g.token_count()) g.kv_.rewind((int64_t)g.token_count());
  g.logits_.clear();
  close_round(/*interrupted=*/true);
}

void SpeculativeDecoder::close_round(bool interrupted) {
  if (!open_round_) return;
  const RoundRecord r = *open_round_;
  open_round_.reset();
  if (interrupted) {
    stats_.interrupted_rounds++;
    return;
  }
  stats_.completed_rounds++;
  if (r.evaluated > 0) {
    if (r.accepted == 0) stats_.zero_accept_rounds++;
    else if (r.accepted == r.evaluated) stats_.full_accept_rounds++;
    else stats_.partial_accept_rounds++;
  }
  cooldown_.record(r.width, width_.minimum(), r.evaluated, r.accepted);
  width_.record(r.width, r.evaluated, r.accepted, r.emitted, r.filled, r.propose_ms, r.target_ms);
}

void SpeculativeDecoder::settle_logits(Generator& g) {
  const bool anchor = anchor_;
  anchor_ = false;
  const int64_t before = g.kv_.length();
  const auto t0 = Clock::now();
  g.logits();  // runs the pending token, or recomputes the last position after a rewind; else nothing
  if (!anchor || g.kv_.length() == before) return;
  const double ms = ms_since(t0);
  stats_.target_forward_passes++;
  stats_.target_reanchor_forward_passes++;
  stats_.total_target_reanchor_ms += ms;
  if (open_round_) open_round_->target_ms += ms;
}

void SpeculativeDecoder::standard_step(Generator& g) {
  settle_logits(g);
  g.pick_host();
  stats_.standard_fallback_steps++;
}

void SpeculativeDecoder::hand_out(Generator& g) {
  const int32_t t = buffered_.front();
  buffered_.erase(buffered_.begin());
  if (!rng_after_.empty()) {
    g.sampler_.set_rng(rng_after_.front());
    rng_after_.erase(rng_after_.begin());
  }
  // The round's last token was picked from the last logits row and not run: it becomes pending, as a plain pick
  // does. The others (accepted drafts) are in the KV cache already. An EOS ends the only row: as a plain step's, it
  // is not appended (upstream's EmitToken: not emitted, discarded), and the rest of the round goes below.
  if (g.sampler_.is_eos(t)) {
    g.append_row_tokens({t});  // appends nothing: the row ends
    stats_.tokens_discarded++;
  } else {
    if (buffered_.empty()) {
      g.append_row_tokens({t});
    } else {
      g.seqs_[0].push_back(t);
      g.last_picks_ = {t};
    }
    stats_.tokens_emitted++;
    if (open_round_) open_round_->emitted++;
  }
  // EOS or max_length, or the long-RoPE switch (the next call runs the sequence again): the rest of the round goes
  // (upstream's DrainOne), and the round's last token is not run now.
  if (g.is_done() || g.at_rope_switch()) {
    discard_buffered(g);
    close_round(/*interrupted=*/false);  // when nothing was left to discard
    return;
  }
  if (buffered_.empty()) finish_round(g);
}

void SpeculativeDecoder::finish_round(Generator& g) {
  // Upstream's FinalizeRound: with two or more drafts the last token waits for the next round's verify pass (the
  // fold); with one it runs now, so that a one-draft round is plain decoding's one-token steps.
  const int width = open_round_ ? open_round_->width : 0;
  const bool before_switch = g.rope_switch_at_ > 0 && (int64_t)g.token_count() + 1 == g.rope_switch_at_;
  anchor_ = true;
  if (width < 2 || before_switch) settle_logits(g);
  close_round(/*interrupted=*/false);
}

void SpeculativeDecoder::generate_next_token(Generator& g) {
  if (!buffered_.empty()) return hand_out(g);
  if (cooldown_.due()) {
    standard_step(g);
    cooldown_.standard_step_done();
    return;
  }
  run_round(g);
}

SpeculativeDecoder::Verdict SpeculativeDecoder::judge(Generator& g, const std::vector<int32_t>& drafts,
                                                      const std::vector<std::vector<double>>& q,
                                                      const std::function<void(int, std::vector<float>&)>& read_row,
                                                      int64_t V) {
  const int K = (int)drafts.size();
  // N-gram drafts under sampling: each position draws with the generator's sampler (plain sampling's stream);
  // the state after each draw is kept, and the stream is put back to the round's start until tokens are handed out.
  const bool drawn = sampling_ && q.empty();
  const std::mt19937_64 rng_start = g.sampler_.rng();
  std::vector<std::mt19937_64> after;
  std::vector<int32_t> prefix = g.seqs_[0];
  std::vector<float> row((size_t)V);
  Verdict v;
  for (int i = 0; i <= K && v.next < 0; i++) {
    read_row(i, row);
    const bool has_draft = i < K;
    if (has_draft) v.evaluated++;
    int32_t pick;
    bool accepted;
    if (sampling_ && !q.empty()) {  // draft-model sampling: the rejection test against q
      std::vector<double> p = g.sampler_.distribution(row.data(), V, prefix);
      if (has_draft) {
        const DraftVerdict d = verify_sampled_draft(p, q[(size_t)i], drafts[(size_t)i], rng_);
        pick = d.token, accepted = d.accepted;
      } else {
        std::discrete_distribution<size_t> dist(p.begin(), p.end());
        pick = (int32_t)dist(rng_), accepted = false;
      }
    } else {
      pick = g.sampler_.greedy_without_processing(prefix) ? argmax(row.data(), V)
                                                          : g.sampler_.next(row.data(), V, prefix);
      if (drawn) after.push_back(g.sampler_.rng());
      accepted = has_draft && pick == drafts[(size_t)i];
    }
    if (accepted) {  // verification goes on past an accepted EOS, as upstream's
      v.accepted++;
      prefix.push_back(pick);
      continue;
    }
    v.next = pick;
    if (has_draft) stats_.correction_tokens++;
    else stats_.bonus_tokens++;
  }
  if (drawn) {
    g.sampler_.set_rng(rng_start);  // each handed-out token sets the state after its draw
    rng_after_ = std::move(after);
  }
  return v;
}

void SpeculativeDecoder::run_round(Generator& g) {
  std::vector<int32_t>& seq = g.seqs_[0];
  const int length = (int)g.token_count();
  const int budget = width_.k();
  int k = std::min(budget, g.max_length_ - length);  // upstream: K = min(K, max_length - sequence length)
  if (g.rope_switch_at_ > 0 && length < g.rope_switch_at_)  // the verify pass stays below the long-RoPE switch
    k = std::min(k, std::max(1, (int)g.rope_switch_at_ - length - 1));
  std::vector<std::vector<double>> q;  // sampled draft-model drafts: the distribution each came from
  const auto t_propose = Clock::now();
  std::vector<int32_t> drafts = draft_gen_ ? draft_with_model(seq, k, &q) : draft(seq, k);
  const double propose_ms = ms_since(t_propose);
  stats_.total_draft_ms += propose_ms;
  if (drafts.empty()) return standard_step(g);
  const int K = (int)drafts.size();
  const auto t_target = Clock::now();
  // The pending token (not in the KV cache yet) leads the verify pass: its row judges the first draft. Without
  // one, the logits the generator holds (a prompt's, set_logits', a re-anchor's) judge it.
  const bool led = !g.pending_.empty();
  std::vector<float> first_row;
  if (!led) {
    settle_logits(g);
    first_row = g.logits_;
  }
  anchor_ = false;
  std::vector<int32_t> ids = g.pending_;
  ids.insert(ids.end(), drafts.begin(), drafts.end());
  const int64_t S = (int64_t)ids.size();
  OGX_CHECK(g.vocab_ > 0, "speculative decoding needs model.vocab_size in genai_config.json");
  g.extra_io_.want_full_logits();
  g.run(ids, 1, S);
  g.pending_.clear();
  stats_.target_forward_passes++;
  stats_.target_verify_forward_passes++;
  const Tensor* all = g.extra_io_.output(g.model_->config().model.decoder.logits);
  OGX_CHECK(all && all->rank() == 3 && all->dim(1) == S, "speculative decoding: the model did not return the logits "
            "of every drafted position");
  const int64_t V = all->dim(2);
  OGX_CHECK(led || (int64_t)first_row.size() == V, "speculative decoding: logits of ", first_row.size(),
            " values for a vocabulary of ", V);
  const auto read_row = [&](int i, std::vector<float>& row) {  // the logits that judge position length + i
    if (led) all->read_f32(i * V, V, row.data());
    else if (i == 0) row = first_row;
    else all->read_f32((i - 1) * V, V, row.data());
  };
  const auto [evaluated, accepted, next] = judge(g, drafts, q, read_row, V);
  g.kv_.rewind((int64_t)length + accepted);  // the sequence and the accepted drafts
  g.logits_.clear();
  buffered_.assign(drafts.begin(), drafts.begin() + accepted);
  buffered_.push_back(next);
  const double target_ms = ms_since(t_target);
  stats_.rounds++;
  stats_.draft_tokens_proposed += K;
  stats_.draft_tokens_evaluated += evaluated;
  stats_.draft_tokens_accepted += accepted;
  stats_.tokens_queued += (int64_t)buffered_.size();
  stats_.total_target_verify_ms += target_ms;
  stats_.rounds_at_k[(size_t)std::clamp(K, 1, AdaptiveWidth::kMaxK)]++;
  open_round_ = RoundRecord{K, evaluated, accepted, 0, k == budget && K == k, propose_ms, target_ms};
  hand_out(g);
}

// The settings a round cannot handle are refused here, with ONNX Runtime GenAI's reasons (its tests match them).
void Generator::start_speculative(const SpeculativeOptions& options) {
  const int n = options.ngram_size;
  OGX_CHECK(!options.ngram_chained_lookup || n > 0, "speculative option ngram_chained_lookup requires ngram_size "
            "2..16 (n-gram drafting)");
  OGX_CHECK(n == 0 || !model_->draft(), "n-gram decoding cannot be combined with draft-model speculative decoding "
            "(ngram_size ", n, ", and the model has model.draft)");
  OGX_CHECK(model_->draft() || n >= 2, "speculative decoding needs a draft model or ngram_size 2..16 (got ", n, ")");
  OGX_CHECK(batch_ == 1, "speculative decoding supports batch_size 1 only (batch_size ", batch_, ")");
  OGX_CHECK(beams_ == 1, "speculative decoding does not support beam search (num_beams ", beams_, ")");
  const DecoderConfig& d = model_->config().model.decoder;
  OGX_CHECK(!d.slide_key_value_cache && d.layer_types.empty(), "n-gram decoding requires a rewindable KV cache; "
            "sliding-window (model.decoder.sliding_window.slide_key_value_cache) and hybrid "
            "(model.decoder.layer_types) state are not supported");
  OGX_CHECK(!model_->io().pruned_logits, "speculative decoding requires target logits for every verified token; "
            "pruned last-token-only logits are not supported (the model's output '", d.logits, "' has one position)");
  spec_ = std::make_unique<SpeculativeDecoder>(options, model_->draft(), search_, max_length_);
}

}  // namespace ogx::genai
