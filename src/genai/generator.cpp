#include "genai/generator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

#include "common/checked.h"
#include "common/half.h"
#include "genai/adapters.h"
#include "genai/guidance/guidance.h"
#include "genai/guidance/logit_mask.h"

namespace ogx::genai {

GeneratorParams::GeneratorParams(const Model& m)
    : search(m.config().search),
      speculative(m.config().speculative),
      model_dir_(m.config().model_dir),
      vocab_size_(m.io().vocab_size),
      eos_ids_(m.config().model.eos_token_ids) {}

void GeneratorParams::set_guidance(const std::string& type, const std::string& data, bool /*enable_ff_tokens*/) {
  if (type.empty()) {
    guidance.reset();
    guidance_type.clear();
    guidance_data.clear();
    return;
  }
  guidance = guidance::compile_guidance(
      type, data, guidance::TokenTrie::for_model(model_dir_, vocab_size_, eos_ids_));
  guidance_type = type;
  guidance_data = data;
}

void GeneratorParams::set_search_option(const std::string& name, double v) {
  SearchConfig s = search;  // a rejected value leaves the params unchanged
  // Integer options are range-checked in the type the core uses (int): 2**40 or -2**31 is an error, not a cast.
  auto as_int = [&](int& dst, int lo) {
    int x = 0;
    OGX_CHECK(double_to_int(v, x), "search option '", name, "' must be an integer in the int32 range, got ", v);
    OGX_CHECK(x >= lo, "search option '", name, "' must be >= ", lo, ", got ", x);
    dst = x;
  };
  if (name == "max_length") as_int(s.max_length, 0);
  else if (name == "min_length") as_int(s.min_length, 0);
  else if (name == "top_k") as_int(s.top_k, 0);
  else if (name == "num_beams") as_int(s.num_beams, 1);
  else if (name == "num_return_sequences") as_int(s.num_return_sequences, 1);
  else if (name == "no_repeat_ngram_size") as_int(s.no_repeat_ngram_size, 0);
  else if (name == "batch_size") as_int(s.batch_size, 1);
  else if (name == "top_p") s.top_p = v;
  else if (name == "temperature") s.temperature = v;
  else if (name == "repetition_penalty") s.repetition_penalty = v;
  else if (name == "presence_penalty") s.presence_penalty = v;
  else if (name == "frequency_penalty") s.frequency_penalty = v;
  else if (name == "length_penalty") s.length_penalty = v;
  else if (name == "diversity_penalty") s.diversity_penalty = v;
  else if (name == "random_seed") {
    int64_t seed = 0;
    OGX_CHECK(double_to_int(v, seed) && seed >= -1, "search option 'random_seed' must be an integer >= -1, got ", v);
    s.random_seed = seed;
  }
  else if (name == "do_sample") s.do_sample = v != 0;
  else if (name == "past_present_share_buffer") s.past_present_share_buffer = v != 0;
  else if (name == "early_stopping") s.early_stopping = v != 0;
  else throw_error("unknown search option '", name, "'");
  OGX_CHECK(s.max_length >= 0 && s.min_length >= 0 && s.top_k >= 0, "search option '", name, "' must be >= 0");
  OGX_CHECK(s.top_p > 0 && s.top_p <= 1, "top_p must be in (0, 1]");
  check_temperature(s.temperature, "search option 'temperature'");
  OGX_CHECK(s.repetition_penalty > 0 && std::isfinite(s.repetition_penalty),
            "repetition_penalty must be a finite number > 0");
  check_token_penalties(s, "search option ");
  search = s;
}

namespace {
int resolve_max_length(const Model& m, const SearchConfig& s) {
  int ml = s.max_length > 0 ? s.max_length : m.config().model.context_length;
  OGX_CHECK(ml > 0, "max_length is not set (search.max_length and model.context_length are 0)");
  if (m.config().model.context_length > 0) ml = std::min(ml, m.config().model.context_length);
  return ml;
}

Tensor int_tensor(DType dt, Shape shape, const std::vector<int64_t>& values) {
  Tensor t(dt, std::move(shape));
  for (size_t i = 0; i < values.size(); i++) {
    if (dt == DType::i64) t.data<int64_t>()[i] = values[i];
    else t.data<int32_t>()[i] = (int32_t)values[i];
  }
  return t;
}

const SearchConfig& checked(const SearchConfig& s) {
  OGX_CHECK(s.batch_size >= 1 && s.batch_size <= Generator::kMaxBatchSize, "batch_size (", s.batch_size,
            ") must be in [1, ", Generator::kMaxBatchSize, "]");
  OGX_CHECK(s.num_beams >= 1 && s.num_beams <= Generator::kMaxBeams, "num_beams (", s.num_beams, ") must be in [1, ",
            Generator::kMaxBeams, "]");
  OGX_CHECK(s.num_return_sequences >= 1 && s.num_return_sequences <= s.num_beams, "num_return_sequences (",
            s.num_return_sequences, ") must be in [1, num_beams (", s.num_beams, ")]");
  OGX_CHECK(s.num_beams == 1 || !s.do_sample, "beam search (num_beams ", s.num_beams,
            ") does not sample: set do_sample to false");
  return s;
}
}  // namespace

Generator::Generator(std::shared_ptr<const Model> model, const GeneratorParams& params)
    : model_(std::move(model)),
      search_(checked(params.search)),
      max_length_(resolve_max_length(*model_, params.search)),
      batch_(search_.batch_size),
      beams_(search_.num_beams),
      vocab_(model_->io().vocab_size),
      kv_(*model_, search_.batch_size, max_length_, params.search.past_present_share_buffer),
      extra_io_(*model_),
      sampler_(params.search, model_->config().model.eos_token_ids),
      seqs_(rows()),
      eos_seen_(rows(), false) {
  if (beams_ > 1) {
    beam_ = std::make_unique<BeamSearch>(search_, model_->config().model.eos_token_ids, pad_token());
    // With the model on a device the host is idle during a pick: the beams' rows (128k logits each) scan in
    // parallel. (With the CPU provider its own threads have the cores.)
    const int threads = std::clamp(std::min(rows(), (int)std::thread::hardware_concurrency() / 2), 1, 8);
    if (kv_.on_provider() && threads > 1) {
      beam_pool_ = std::make_unique<ThreadPool>(threads);
      beam_->set_pool(beam_pool_.get());
    }
    DeviceSampling ds;
    ds.beam_candidates = 2 * beams_;
    ds.logit_edits = penalizes_sequence(search_);  // penalties and bans: each row's edits, applied on the device
    if (kv_.decoder() && kv_.decoder()->can_sample(ds, rows())) {
      beam_sampling_ = ds;
      ds.token_mask = true;  // else EOS below min_length: a token mask
      if (!ds.logit_edits && search_.min_length > 0 && vocab_ > 0 && kv_.decoder()->can_sample(ds, rows()))
        beam_mask_sampling_ = ds;
    }
  }
  // Logit processing that needs the sequence stays on the host; EOS suppression before min_length is handled per
  // step (such steps read the logits back). One row, or greedy rows of a batch (beams need the log-probs).
  if (params.speculative.ngram_size > 0 || params.speculative.ngram_chained_lookup || model_->draft())
    start_speculative(params.speculative);  // host picks
  const std::string& type = model_->config().model.type;
  if (batch_ == 1 && beams_ == 1)
    rope_switch_at_ = type == "phi3" || type == "phimoe" ? 4097 : type == "phi3small" ? 8193 : 0;
  if (params.guidance) {  // masks the logits before each pick: on the host, or on the device (a packed bit mask)
    OGX_CHECK(!spec_, "guidance with speculative decoding is not supported");
    guidance_ = std::make_unique<guidance::LogitMask>(params.guidance, rows());
  }
  // Penalties and n-gram bans: applied on the device (edits of the tokens they name, uploaded each step; steps are
  // queued ahead but with n-gram bans, which need the latest token), also under guidance's token mask (the picks
  // read the edited logits through the mask).
  const bool edits = penalizes_sequence(search_);
  if (beams_ == 1 && (rows() == 1 || !search_.do_sample) && !spec_) {
    DeviceSampling ds;
    ds.greedy = !search_.do_sample;
    ds.top_k = search_.top_k;
    ds.top_p = (float)search_.top_p;
    ds.temperature = (float)search_.temperature;
    ds.seed = search_.random_seed >= 0 ? (uint64_t)search_.random_seed : std::random_device{}();
    ds.token_mask = guidance_ != nullptr;
    ds.logit_edits = edits;
    device_sampling_ = kv_.decoder() && kv_.decoder()->can_sample(ds, rows());
    sampling_ = ds;
    if (device_sampling_ && !guidance_ && !edits && search_.min_length > 0 && vocab_ > 0) {
      ds.token_mask = true;  // the steps below min_length pick on the device with EOS masked out
      if (kv_.decoder()->can_sample(ds, rows())) eos_mask_sampling_ = ds;
    }
  }
}

Generator::~Generator() {
  try {
    drop_queued();
  } catch (...) {  // a lost device: nothing left to wait for
  }
}

int32_t Generator::pad_token() const {
  const ModelConfig& m = model_->config().model;
  if (m.pad_token_id >= 0) return m.pad_token_id;
  return m.eos_token_ids.empty() ? 0 : m.eos_token_ids[0];
}

int64_t Generator::pads_of(int row, int n_rows) const {
  if (prompt_pads_.empty()) return 0;
  return prompt_pads_[n_rows == batch_ ? row : row / beams_];
}

int64_t Generator::final_kv_positions() const {
  int64_t most = 0;
  for (int64_t p : prompt_pads_) most = std::max(most, p);
  return std::max<int64_t>(0, kv_.length() - most);
}

std::vector<NamedTensor> Generator::step_inputs(const std::vector<int32_t>& ids, int n_rows, int64_t S,
                                                int64_t past) const {
  const DecoderConfig& d = model_->config().model.decoder;
  const DecoderIO& io = model_->io();
  const int64_t total = past + S, P = prompt_length_;
  std::vector<NamedTensor> in;
  in.emplace_back(d.input_ids, int_tensor(io.input_ids_dtype, {n_rows, S}, std::vector<int64_t>(ids.begin(), ids.end())));
  if (io.has_attention_mask) {  // 0 over a row's prompt padding
    std::vector<int64_t> mask((size_t)(n_rows * total), 1);
    for (int r = 0; r < n_rows; r++)
      for (int64_t t = P - pads_of(r, n_rows); t < std::min(P, total); t++) mask[r * total + t] = 0;
    in.emplace_back(d.attention_mask, int_tensor(io.mask_dtype, {n_rows, total}, mask));
  }
  if (io.has_position_ids) {  // a row's positions continue from its real prompt length; padding is at 0
    std::vector<int64_t> pos((size_t)(n_rows * S));
    for (int r = 0; r < n_rows; r++) {
      const int64_t pads = pads_of(r, n_rows);
      for (int64_t s = 0; s < S; s++) {
        int64_t t = past + s;
        pos[r * S + s] = t < P ? (t < P - pads ? t : 0) : t - pads;
      }
    }
    in.emplace_back(d.position_ids, int_tensor(io.position_dtype, {n_rows, S}, pos));
  }
  extra_io_.check_hidden_states(n_rows, S);
  extra_io_.add_inputs(in);
  return in;
}

void Generator::set_hidden_states(const Tensor& hidden_states) {
  if (!extra_io_.takes_hidden_states()) return;  // as upstream: nothing to feed
  drop_queued();  // a queued step would run with the previous tensor
  extra_io_.set_hidden_states(hidden_states);
}

void Generator::run(const std::vector<int32_t>& ids, int n_rows, int64_t S, bool want_logits, bool sample) {
  // A provider that bounds its runs (DecodeSession::prefill_chunk) takes a long prompt in chunks, in order; the
  // logits (and a device pick) come from the last. Padded rows and all-position logits need the prompt in one run.
  const int64_t chunk = kv_.on_provider() ? kv_.decoder()->prefill_chunk() : 0;
  if (chunk > 0 && S > chunk && prompt_pads_.empty() && !extra_io_.full_logits() &&
      !extra_io_.takes_hidden_states()) {  // (the caller's hidden states cover the whole run)
    const int64_t past = kv_.length();
    const bool on_device = logits_on_device_;
    try {
      for (int64_t c0 = 0; c0 < S; c0 += chunk) {
        const int64_t n = std::min(chunk, S - c0);
        std::vector<int32_t> part((size_t)(n_rows * n));
        for (int r = 0; r < n_rows; r++) std::copy_n(ids.begin() + r * S + c0, n, part.begin() + r * n);
        const bool last = c0 + n == S;
        run(part, n_rows, n, last && want_logits, last && sample);
      }
    } catch (...) {  // as a failed whole run: none of the prompt stays in the cache
      kv_.rewind(past);
      logits_on_device_ = on_device;
      throw;
    }
    return;
  }
  ModelRun m = prepare_run(ids, n_rows, S, want_logits, sample);
  kv_.run_model(m.in, m.out, m.total, m.picks);
  complete_run(m);
}

Generator::ModelRun Generator::prepare_run(const std::vector<int32_t>& ids, int n_rows, int64_t S, bool want_logits,
                                           bool sample) {
  const DecoderConfig& d = model_->config().model.decoder;
  const DecoderIO& io = model_->io();
  ModelRun m;
  m.ids = &ids;
  m.n_rows = n_rows;
  m.S = S;
  m.want_logits = want_logits;
  int64_t past = kv_.length();
  m.total = past + S;
  OGX_CHECK(m.total <= max_length_, "sequence of ", m.total, " tokens exceeds max_length ", max_length_);
  if (rope_switch_at_ > 0) long_rope_cache_ = m.total >= rope_switch_at_ && (past == 0 || long_rope_cache_);
  OGX_CHECK(kv_.rows() == n_rows, "internal: a run of ", n_rows, " rows on a KV cache of ", kv_.rows());
  // A padded prompt's rows end at different positions: the session returns every position's logits, or on a
  // provider that finds each row's last real position itself (DecodeSession::last_real_positions) those only.
  if (want_logits && S > 1 && m.total == prompt_length_)
    for (int r = 0; r < n_rows; r++) m.padded = m.padded || pads_of(r, n_rows) > 0;
  const bool full = S > 1 && extra_io_.full_logits();
  m.row_ends = m.padded && !full && kv_.on_provider() && kv_.decoder()->last_real_positions();
  m.in = step_inputs(ids, n_rows, S, past);
  if (want_logits) {
    Tensor bound;
    if ((m.padded && !m.row_ends) || full) {  // every position's logits
      OGX_CHECK(vocab_ > 0, "genai_config.json has no model.vocab_size (needed for prompts of different lengths)");
      bound = Tensor(io.logits_dtype, {n_rows, S, vocab_});
    }
    m.out.emplace_back(d.logits, bound);
  }
  kv_.bind(m.total, m.in, m.out);
  extra_io_.add_outputs(m.out);
  m.picks = step_sampling_ ? step_sampling_ : device_sampling_ ? &sampling_ : nullptr;
  if (!sample || (m.picks && m.picks->logit_edits && want_logits)) m.picks = nullptr;  // (edits: the host picks)
  return m;
}

void Generator::complete_run(ModelRun& m) {
  const int n_rows = m.n_rows;
  const int64_t S = m.S;
  kv_.commit(m.out, m.total);
  extra_io_.keep(m.in, m.out);
  logits_on_device_ = !m.want_logits;
  if (!m.want_logits) return;
  const Tensor& lg = m.out[0].second;
  if (m.padded && !m.row_ends && lg.rank() == 3 && lg.dim(1) == 1 && S > 1)
    return rerun_last_real(*m.ids, n_rows, S);
  // A session asked for the last position only (SessionOptions::last_position_output) may return [rows, 1, vocab].
  OGX_CHECK(lg.rank() == 3 && lg.dim(0) == n_rows &&
                (lg.dim(1) == S || (lg.dim(1) == 1 && (!m.padded || m.row_ends))),
            "logits output has shape ", shape_str(lg.shape()), ", expected [", n_rows, ",", S, ",vocab]");
  const int64_t V = lg.dim(2), L = lg.dim(1);
  logits_.resize((size_t)(n_rows * V));
  for (int r = 0; r < n_rows; r++) {
    int64_t at = L - 1 - (m.padded && L == S ? pads_of(r, n_rows) : 0);  // the row's last real position
    lg.read_f32((r * L + at) * V, V, logits_.data() + r * V);
  }
}

void Generator::rerun_last_real(const std::vector<int32_t>& ids, int n_rows, int64_t S) {
  // The session filled the padded prompt's KV cache but returned the last position only: one more step runs each
  // row's last real token at its own position (a mask of its real length, so it rewrites those keys and values)
  // for the logits there.
  const DecoderConfig& d = model_->config().model.decoder;
  const DecoderIO& io = model_->io();
  const int64_t total = kv_.length();
  rerun_tokens_ += n_rows;
  std::vector<int64_t> tok(n_rows), mask((size_t)(n_rows * total), 0), pos(n_rows);
  for (int r = 0; r < n_rows; r++) {
    const int64_t real = S - pads_of(r, n_rows);
    tok[r] = ids[r * S + real - 1];
    pos[r] = real - 1;
    std::fill_n(mask.begin() + r * total, real, 1);
  }
  std::vector<NamedTensor> in, out;
  in.emplace_back(d.input_ids, int_tensor(io.input_ids_dtype, {n_rows, 1}, tok));
  if (io.has_attention_mask) in.emplace_back(d.attention_mask, int_tensor(io.mask_dtype, {n_rows, total}, mask));
  if (io.has_position_ids) in.emplace_back(d.position_ids, int_tensor(io.position_dtype, {n_rows, 1}, pos));
  extra_io_.check_hidden_states(n_rows, 1);
  extra_io_.add_inputs(in);
  out.emplace_back(d.logits, Tensor());
  kv_.bind(total, in, out);
  extra_io_.add_outputs(out);
  kv_.run_model(in, out, total, device_sampling_ ? &sampling_ : nullptr);
  kv_.commit(out, total);
  extra_io_.keep(in, out);
  const Tensor& lg = out[0].second;
  OGX_CHECK(lg.rank() == 3 && lg.dim(0) == n_rows && lg.dim(1) == 1, "logits output has shape ",
            shape_str(lg.shape()), ", expected [", n_rows, ",1,vocab]");
  const int64_t V = lg.dim(2);
  logits_.resize((size_t)(n_rows * V));
  lg.read_f32(0, n_rows * V, logits_.data());
}

void Generator::run_pending(bool want_logits) {
  if (pending_.empty()) return;
  run(pending_, rows(), 1, want_logits);
  pending_.clear();
}

void Generator::rerun_at_rope_switch() {
  // The sequence (its last pick included, not run yet) from position 0: the graph's long-RoPE switch now rotates
  // every key with the long factors. The sampler, guidance and counters stay as they are: only the cache is redone.
  drop_queued();
  const std::vector<int32_t> ids = seqs_[0];
  kv_.rewind(0);
  pending_.clear();
  logits_.clear();
  logits_on_device_ = false;
  rerun_tokens_ += (int64_t)ids.size();
  run(ids, 1, (int64_t)ids.size(), true, /*sample=*/false);
}

void Generator::recompute_last() {
  // The last position's forward pass again, every row (after a rewind, or when the device's logits of it are gone).
  kv_.rewind((int64_t)token_count() - 1);
  rerun_tokens_ += rows();
  run(sequence_tails(), rows(), 1, true, /*sample=*/false);
}

const std::vector<float>& Generator::logits() {
  if (spec_) spec_->discard_buffered(*this);
  drop_queued();
  if (!pending_.empty()) run_pending(true);
  else if (logits_.empty() && !logits_on_device_ && token_count() > 0) recompute_last();
  if (logits_on_device_) {
    Tensor t;
    logits_on_device_ = false;
    if (!kv_.decoder()->read_last_output(*kv_.state(), &t)) {
      recompute_last();  // another generator's run came after this one's: its logits are gone from the device
      return logits_;
    }
    logits_.resize(t.numel());
    t.read_f32(0, t.numel(), logits_.data());
  }
  return logits_;
}

void Generator::append_tokens(const std::vector<int32_t>& ids) {
  OGX_CHECK(!ids.empty(), "append_tokens: no tokens given (empty prompt)");
  if (batch_ == 1) return append_token_sequences({ids});
  OGX_CHECK(ids.size() % batch_ == 0, "append_tokens: ", ids.size(), " token ids are not batch_size (", batch_,
            ") rows of equal length");
  const size_t n = ids.size() / batch_;
  std::vector<std::vector<int32_t>> prompts;
  for (int b = 0; b < batch_; b++) prompts.emplace_back(ids.begin() + b * n, ids.begin() + (b + 1) * n);
  append_token_sequences(prompts);
}

void Generator::append_token_sequences(const std::vector<std::vector<int32_t>>& prompts) {
  OGX_CHECK(prompts.size() == (size_t)batch_, "append_tokens: expected ", batch_, batch_ == 1 ? " sequence" : " sequences",
            " (batch_size), got ", prompts.size());
  const int vocab = model_->io().vocab_size;
  size_t longest = 0;
  for (size_t b = 0; b < prompts.size(); b++) {
    OGX_CHECK(!prompts[b].empty(), "append_tokens: sequence ", b, " has no tokens (empty prompt)");
    for (int32_t id : prompts[b])
      OGX_CHECK(id >= 0 && (vocab <= 0 || id < vocab), "token id ", id, " is out of range [0, ", vocab, ")");
    longest = std::max(longest, prompts[b].size());
  }
  drop_queued();
  if (spec_) spec_->discard_buffered(*this);
  OGX_CHECK(token_count() + longest <= (size_t)max_length_, "max_length ", max_length_, " is smaller than the ",
            token_count() + longest, " tokens of the sequence");
  std::fill(eos_seen_.begin(), eos_seen_.end(), false);
  final_step_ = -1;
  last_picks_.clear();
  if (guidance_) guidance_->reset();  // the constrained output starts after the prompt
  guided_from_ = token_count() + longest;
  sampler_.set_prompt_length(guided_from_);  // presence / frequency penalties count what follows
  if (rows() == 1) {  // one sequence: appended to what it holds (a later chat turn)
    std::vector<int32_t> run_ids = pending_;
    run_ids.insert(run_ids.end(), prompts[0].begin(), prompts[0].end());
    // The first token is picked on the host from these logits. A greedy device pick here is harmless (and lets the
    // next step be queued); a sampling one would advance the device's random state once per append, so a prompt
    // appended in chunks (the engine's prefill) would sample other tokens than the same prompt appended at once.
    run(run_ids, 1, (int64_t)run_ids.size(), true, /*sample=*/sampling_.greedy);
    seqs_[0].insert(seqs_[0].end(), prompts[0].begin(), prompts[0].end());
    pending_.clear();
    return;
  }
  OGX_CHECK(token_count() == 0, "append_tokens: with batch_size > 1 or beam search, prompts are appended once (",
            "rewind_to(0) starts over)");
  // Right padding with pad_token_id; with batch_size > 1 a prompt's trailing pad ids are padding too.
  const int32_t pad = model_->config().model.pad_token_id;
  std::vector<int32_t> ids;
  std::vector<int64_t> pads(batch_, 0);
  for (int b = 0; b < batch_; b++) {
    std::vector<int32_t> p = prompts[b];
    if (p.size() < longest)
      OGX_CHECK(pad >= 0, "genai_config.json has no model.pad_token_id: needed to pad prompts of different lengths");
    p.resize(longest, pad);
    if (batch_ > 1 && pad >= 0)
      while (pads[b] < (int64_t)longest && p[longest - 1 - pads[b]] == pad) pads[b]++;
    OGX_CHECK(pads[b] < (int64_t)longest, "append_tokens: sequence ", b, " holds only pad tokens (", pad, ")");
    ids.insert(ids.end(), p.begin(), p.end());
  }
  prompt_length_ = (int64_t)longest;
  bool any = std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p > 0; });
  prompt_pads_ = any ? pads : std::vector<int64_t>();
  run(ids, batch_, prompt_length_);
  for (int r = 0; r < rows(); r++) {
    int b = r / beams_;
    seqs_[r].assign(ids.begin() + b * longest, ids.begin() + (b + 1) * longest);
  }
  if (beams_ > 1) {  // each prompt's row becomes its beams: KV cache rows and logits
    std::vector<int32_t> src(rows());
    for (int r = 0; r < rows(); r++) src[r] = r / beams_;
    kv_.reorder_rows(src, final_kv_positions());
    const size_t V = logits_.size() / batch_;
    std::vector<float> expanded(rows() * V);
    for (int r = 0; r < rows(); r++) std::copy_n(logits_.begin() + src[r] * V, V, expanded.begin() + r * V);
    logits_ = std::move(expanded);
  }
}

void Generator::append_row_tokens(const std::vector<int32_t>& tokens) {
  last_picks_ = tokens;
  final_step_ = -1;
  bool all_ended = true;
  for (int r = 0; r < rows(); r++) {
    if (sampler_.is_eos(tokens[r])) eos_seen_[r] = true;
    all_ended = all_ended && eos_seen_[r];
  }
  // The step that ends the last row appends nothing (its EOS is neither in the sequences nor run through the model),
  // as ONNX Runtime GenAI's greedy and sampling search; beams keep their hypotheses' own bookkeeping.
  if (all_ended && !beam_) {
    pending_.clear();
    return;
  }
  for (int r = 0; r < rows(); r++) seqs_[r].push_back(tokens[r]);
  pending_ = tokens;
}

void Generator::generate_next_token() {
  OGX_CHECK(token_count() > 0, "generate_next_token: append a prompt first");
  OGX_CHECK(!is_done(), "generate_next_token: generation is done (EOS or max_length reached)");
  if (rope_rerun_due()) rerun_at_rope_switch();
  if (spec_) return spec_->generate_next_token(*this);
  if (beam_sampling_ && beam_step_on_device()) return;
  // On the device when nothing needs the logits on the host. EOS is suppressed until min_length by a token mask on
  // the device (a guided generator's, or one banning only EOS), else on the host.
  const bool below_min = (int)token_count() < search_.min_length;
  const bool eos_mask = below_min && !guidance_ && eos_mask_sampling_ && !pending_.empty();
  bool device =
      device_sampling_ && (sampling_.logit_edits || !below_min || (guidance_ && !pending_.empty()) || eos_mask);
  if (queued_ > 0 && device) {
    // The pending token's step is queued: queue the next one first (its token comes from the device), then wait.
    bool next = queue_ahead_ && queue_step();
    if (!kv_.decoder()->finish_queued(*kv_.state())) {  // another run dropped it: run the pending token below
      drop_queued();
      return generate_next_token();
    }
    kv_.commit({}, kv_.length() + 1);
    logits_on_device_ = true;
    queued_ = next ? 1 : 0;
    append_device_tokens();
    return;  // a step queued past EOS or max_length is dropped by the next call (or the destructor)
  }
  drop_queued();
  if (device && guidance_ && !pending_.empty()) device = upload_token_mask(below_min);  // else applied on the host
  if (device && sampling_.logit_edits) device = upload_logit_edits();  // penalties and bans of each row
  if (device && eos_mask && (device = upload_token_mask(true))) step_sampling_ = &*eos_mask_sampling_;
  if (!pending_.empty()) {
    try {
      run_pending(!device);
    } catch (...) {
      step_sampling_ = nullptr;
      throw;
    }
    step_sampling_ = nullptr;
  } else if (logits_.empty() && !logits_on_device_) {  // after a rewind: recompute the last position
    kv_.rewind((int64_t)token_count() - 1);
    rerun_tokens_ += rows();
    run(sequence_tails(), rows(), 1, !device);
  } else {
    device = false;  // logits set by the caller (set_logits) or from append_tokens / logits(): on the host
  }
  if (device && logits_on_device_) {
    append_device_tokens();
  } else {
    if (logits_on_device_) logits();  // a device step whose token is chosen on the host after all
    if (device_sampling_ || beam_sampling_) host_picks_++;
    pick_host();
  }
  if (device && !is_done() && queue_ahead_ && queue_step()) queued_ = 1;
}

bool Generator::is_done() const {
  if (token_count() >= (size_t)max_length_) return true;
  if (token_count() == 0) return false;
  if (beam_) return beam_->done();
  return std::all_of(eos_seen_.begin(), eos_seen_.end(), [](bool e) { return e; });
}

const std::vector<std::vector<Hypothesis>>& Generator::hypotheses() const {
  if (final_step_ != (int64_t)token_count()) {
    final_ = beam_->finalize(seqs_);
    final_step_ = (int64_t)token_count();
  }
  return final_;
}

size_t Generator::sequence_count() const {
  return beam_ ? (size_t)batch_ * search_.num_return_sequences : (size_t)batch_;
}

const std::vector<int32_t>& Generator::sequence(size_t i) const {
  OGX_CHECK(i < sequence_count(), "sequence index ", i, " is out of range (", sequence_count(), " sequences)");
  if (!beam_ || token_count() == 0) return seqs_[beam_ ? 0 : i];
  const size_t n = search_.num_return_sequences;
  return hypotheses()[i / n][i % n].tokens;
}

float Generator::sequence_score(size_t i) const {
  OGX_CHECK(i < sequence_count(), "sequence index ", i, " is out of range (", sequence_count(), " sequences)");
  if (!beam_ || token_count() == 0) return 0.0f;
  const size_t n = search_.num_return_sequences;
  return hypotheses()[i / n][i % n].score;
}

std::vector<int32_t> Generator::next_tokens() const {
  if (!last_picks_.empty()) return last_picks_;
  return sequence_tails();
}

std::vector<int32_t> Generator::sequence_tails() const {
  std::vector<int32_t> t;
  for (auto& s : seqs_)
    if (!s.empty()) t.push_back(s.back());
  return t;
}

void Generator::set_logits(const std::vector<float>& values) {
  OGX_CHECK(token_count() > 0, "set_logits: append tokens first");
  const std::vector<float>& current = logits();  // runs the picked tokens: the KV cache stays in step
  OGX_CHECK(values.size() == current.size(), "set_logits: expected ", current.size(), " values (", rows(),
            " rows x vocabulary), got ", values.size());
  logits_ = values;
}

void Generator::rewind_to(size_t length) {
  OGX_CHECK(length <= token_count(), "rewind_to(", length, "): the sequence has ", token_count(), " tokens");
  if (length == token_count()) {  // nothing to drop; as upstream's RewindTo, ended rows may go on
    if (!beam_) std::fill(eos_seen_.begin(), eos_seen_.end(), false);
    last_picks_.clear();
    return;
  }
  OGX_CHECK(beams_ == 1, "rewind_to is not supported with beam search");
  OGX_CHECK(batch_ == 1 || length == 0, "rewind_to(", length, "): with batch_size > 1 only rewind_to(0) is supported");
  drop_queued();
  if (spec_) spec_->reset(*this);  // as upstream: a rewind restarts the speculative policies
  for (auto& s : seqs_) s.resize(length);
  pending_.clear();
  last_picks_.clear();
  logits_.clear();
  logits_on_device_ = false;
  std::fill(eos_seen_.begin(), eos_seen_.end(), false);
  kv_.rewind(std::min<int64_t>(kv_.length(), (int64_t)length));
  sampler_.set_prompt_length(std::min(sampler_.prompt_length(), length));
  if (guidance_) {  // the constraint again over the generated tokens kept
    guidance_->reset();
    guided_from_ = std::min(guided_from_, length);
    for (size_t t = guided_from_; t < length; t++) guidance_->consume({seqs_[0][t]}, {}, false);  // batch 1 here
  }
  if (length == 0) {
    prompt_length_ = 0;
    prompt_pads_.clear();
  }
}

}  // namespace ogx::genai
