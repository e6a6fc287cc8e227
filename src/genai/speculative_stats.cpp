// SpeculativeStats::items(): the counters of speculative decoding and the figures upstream derives from them
// (docs/SpeculativeDecoding.md "Statistics" in ONNX Runtime GenAI), by upstream's names.
#include "genai/speculative.h"

namespace ogx::genai {

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
  // Every round follows the geometric formula (upstream leaves out guided rounds, which ogx does not have); the
  // speed-up estimates need a measured one-token baseline (a re-anchor pass) too.
  const bool formula = rounds > 0;
  const bool timed = formula && baseline > 0;
  if (!formula || draft_tokens_evaluated == 0) expected = 0;
  const double overhead = timed ? target_ms_per_round / baseline - 1 : 0.0;
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
                     {"estimated_speedup", timed && denominator > 0 ? ratio(expected, denominator) : 0.0},
                     {"observed_speedup", timed && denominator > 0 ? ratio(emitted_per_round, denominator) : 0.0},
                     {"adaptive_k_throughput", adaptive_k_throughput}});
  return v;
}

}  // namespace ogx::genai
