#include "genai/speculative.h"

#include <algorithm>

#include "genai/generator.h"

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
  };
  v.emplace_back("acceptance_rate",
                 draft_tokens_proposed ? (double)draft_tokens_accepted / (double)draft_tokens_proposed : 0.0);
  v.emplace_back("observed_speedup",
                 target_forward_passes ? (double)tokens_emitted / (double)target_forward_passes : 0.0);
  return v;
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
  // position i pick the token after it; drafts are accepted while they equal those picks.
  std::vector<int32_t>& seq = g.seqs_[0];
  const int room = g.max_length_ - (int)g.token_count() - 1;  // accepted drafts + the token picked after them
  std::vector<int32_t> drafts = draft(seq, std::min(opt_.max_draft_tokens, room));
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
    const int32_t pick = g.sampler_.greedy_without_processing(prefix) ? argmax(row.data(), V)
                                                                         : g.sampler_.next(row.data(), V, prefix);
    if (i + 1 < S && pick == drafts[(size_t)i]) {
      accepted++;
      prefix.push_back(pick);
      if (g.sampler_.is_eos(pick)) break;  // an accepted EOS ends the sequence: nothing after it
      continue;
    }
    next = pick;
    if (i + 1 < S) stats_.correction_tokens++;
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
  OGX_CHECK(batch_ == 1 && beams_ == 1 && !search_.do_sample, "speculative decoding (ngram_size ",
            options.ngram_size, ") supports batch_size 1 greedy search (do_sample false, num_beams 1) in ogx");
  // Verification reads the logits of every drafted position; the vulkan session returns the last position's only.
  OGX_CHECK(model_->provider() == "cpu", "speculative decoding runs on the cpu provider in ogx (the ",
            model_->provider(), " provider returns the logits of the last position only)");
  spec_ = std::make_unique<SpeculativeDecoder>(options);
}

}  // namespace ogx::genai
