// How a generator's next tokens are picked (generator.h): on the host from logits read back (pick_host: greedy,
// sampling, beam search), or on the provider's device (DecodeSession): sampled tokens, the token mask of guidance and
// of EOS below min_length, the logit edits of penalties and bans, beam candidates, and the next step queued ahead.
#include <algorithm>
#include <chrono>

#include "genai/generator.h"
#include "genai/guidance/logit_mask.h"

namespace ogx::genai {

void Generator::drop_queued() const {
  if (queued_ == 0) return;
  queued_ = 0;
  // Another generator's run may have dropped them already (and queued its own, which stay).
  if (kv_.decoder()->has_queued(*kv_.state())) kv_.decoder()->drop_queued();
}

bool Generator::queue_step() {
  // The step of the token the next sampling returns: one position after the pending token's step.
  int64_t past = kv_.length() + (queued_ > 0 ? 1 : 0), total = past + 1;
  if (!device_sampling_ || total > max_length_ || !kv_.on_provider() || batched_ || guidance_ || !edits_allow_queue() ||
      (!sampling_.logit_edits && (int)token_count() < search_.min_length) || extra_io_.takes_hidden_states())
    return false;  // (guidance: the next step's token mask needs this step's token; n-gram bans too; below
                   // min_length without edits: EOS masked; a hidden_states input: the caller sets it before each step)
  // Penalties and bans: the edits of the sequence the host has; while a step is queued its token is not there yet,
  // and the device adds it (RowEdits::pending).
  if (sampling_.logit_edits && !upload_logit_edits(queued_ > 0)) return false;
  std::vector<int32_t> placeholder(rows(), 0);  // replaced on the device by the sampled tokens
  DecodeRun r;
  r.kv.push_back({kv_.state(), total});
  r.sampling = &sampling_;
  try {
    return kv_.decoder()->queue_next(step_inputs(placeholder, rows(), 1, past),
                                     model_->config().model.decoder.input_ids, r);
  } catch (const Error&) {  // e.g. the KV pool is full: the step runs synchronously and reports it there
    return false;
  }
}

void Generator::append_device_tokens() {
  std::vector<int64_t> t = kv_.decoder()->sampled_tokens(*kv_.state());
  OGX_CHECK(t.size() == (size_t)rows(), "the provider returned ", t.size(), " sampled tokens for ", rows(), " rows");
  std::vector<int32_t> tokens(rows());
  for (int r = 0; r < rows(); r++) {
    OGX_CHECK(t[r] >= 0, "the provider did not return a sampled token for row ", r);
    // A row that ended gets pad tokens, as on the host (the device's pick for it feeds only that row's next step).
    tokens[r] = eos_seen_[r] ? pad_token() : (int32_t)t[r];
  }
  if (guidance_) guidance_->consume(tokens, eos_seen_);
  append_row_tokens(tokens);
}

void Generator::pick_host() {
  const int R = rows();
  const size_t V = logits_.size() / R;
  OGX_CHECK(V > 0 && logits_.size() == R * V, "no logits to choose the next tokens from");
  if (beam_) {
    bool processed = guidance_ != nullptr;  // else the beam step reads logits_ as they are (no copy of R x V)
    for (int r = 0; r < R && !processed; r++) processed = sampler_.processes_logits(seqs_[r]);
    std::vector<float> l;
    if (processed) {
      l = logits_;
      for (int r = 0; r < R; r++) sampler_.process_logits(l.data() + r * V, (int64_t)V, seqs_[r]);
      if (guidance_)
        for (int r = 0; r < R; r++) guidance_->apply_row(r, l.data() + r * V, (int64_t)V);
    }
    std::vector<int32_t> tokens, src;
    beam_->step(processed ? l : logits_, seqs_, tokens, src);
    if (guidance_) {  // each beam continues the matcher of the row it extends; a finished prompt's pads are not
      guidance_->reorder(src);
      guidance_->consume(tokens, {}, false);
    }
    continue_beams(tokens, src);
    return;
  }
  std::vector<int32_t> tokens(R);
  std::vector<float> l;
  for (int r = 0; r < R; r++) {
    const float* row = logits_.data() + r * V;
    if (eos_seen_[r]) {
      tokens[r] = pad_token();  // the row ended: pad tokens until every row has
    } else if (sampler_.greedy_without_processing(seqs_[r]) && !guidance_) {
      tokens[r] = argmax(row, V);  // no copy: nothing to change in the logits
    } else {
      l.assign(row, row + V);
      if (guidance_) guidance_->apply_row(r, l.data(), (int64_t)V);
      tokens[r] = sampler_.next(l.data(), (int64_t)V, seqs_[r]);
    }
  }
  if (guidance_) guidance_->consume(tokens, eos_seen_);
  append_row_tokens(tokens);
}

bool Generator::beam_step_on_device() {
  if (pending_.empty() || guidance_) return false;  // (guidance masks each row on the host)
  const bool below_min = (int)token_count() < search_.min_length;  // EOS banned: by the edits, or a token mask
  if (beam_sampling_->logit_edits) {
    if (!upload_logit_edits()) return false;
  } else if (below_min && !(beam_mask_sampling_ && upload_token_mask(true))) {
    return false;
  }
  drop_queued();
  step_sampling_ = below_min && !beam_sampling_->logit_edits ? &*beam_mask_sampling_ : &*beam_sampling_;
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  const auto t0 = Clock::now();
  try {
    run_pending(/*want_logits=*/false);
  } catch (...) {
    step_sampling_ = nullptr;
    throw;
  }
  step_sampling_ = nullptr;
  const auto t1 = Clock::now();
  std::vector<BeamRow> rows_best = kv_.decoder()->beam_candidates(*kv_.state());
  if (rows_best.size() != (size_t)rows()) {  // the provider made none after all: the logits, on the host
    logits();
    pick_host();
    return true;
  }
  const auto t2 = Clock::now();
  std::vector<int32_t> tokens, src;
  beam_->step(rows_best, rows_best[0].vocab, seqs_, tokens, src);
  const auto t3 = Clock::now();
  continue_beams(tokens, src);
  const auto t4 = Clock::now();
  beam_times_.steps++;
  beam_times_.run_ms += ms(t0, t1);
  beam_times_.candidates_ms += ms(t1, t2);
  beam_times_.select_ms += ms(t2, t3);
  beam_times_.reorder_ms += ms(t3, t4);
  return true;
}

void Generator::continue_beams(const std::vector<int32_t>& tokens, const std::vector<int32_t>& src) {
  std::vector<std::vector<int32_t>> next(rows());
  for (int r = 0; r < rows(); r++) next[r] = seqs_[src[r]];
  seqs_ = std::move(next);
  kv_.reorder_rows(src, final_kv_positions());  // each beam continues the cache of the row it extends
  append_row_tokens(tokens);
}

void Generator::add_logit_edits(std::vector<RowEdits>& out, bool pending) const {
  const bool on = sampling_.logit_edits || (beam_sampling_ && beam_sampling_->logit_edits);
  for (int r = 0; r < rows(); r++)  // (a row that ended: any pick, no edits)
    out.push_back(eos_seen_[r] || !on ? RowEdits{} : sampler_.row_edits(vocab_, seqs_[r], pending));
}

bool Generator::upload_logit_edits(bool pending) {
  if (vocab_ <= 0) return false;  // the edits name tokens of the logits' width (genai_config.json model.vocab_size)
  std::vector<RowEdits> rows;
  add_logit_edits(rows, pending);
  return kv_.decoder() && kv_.decoder()->set_logit_edits(rows);
}

void Generator::append_mask_rows(bool ban_eos, int64_t words, std::vector<uint32_t>& bits) const {
  const int64_t V = vocab_;
  std::vector<uint32_t> row;
  for (int r = 0; r < rows(); r++) {
    row.assign((size_t)words, ~0u);  // a row that ended: any pick (it gets a pad token); no guidance: every token
    if (!eos_seen_[r]) {
      if (guidance_) guidance_->packed(r, V, row);
      if (ban_eos)  // below min_length, as the host's logit processing does
        for (int id : model_->config().model.eos_token_ids)
          if (id >= 0 && id < V) row[(size_t)id / 32] &= ~(1u << (id % 32));
    }
    bits.insert(bits.end(), row.begin(), row.end());
  }
}

bool Generator::upload_token_mask(bool ban_eos) {
  if (vocab_ <= 0) return false;  // the mask's width is the logits' (genai_config.json model.vocab_size)
  const int64_t words = (vocab_ + 31) / 32;
  std::vector<uint32_t> all;
  append_mask_rows(ban_eos, words, all);
  return kv_.decoder() && kv_.decoder()->set_token_mask(*kv_.state(), all, words);
}

}  // namespace ogx::genai
