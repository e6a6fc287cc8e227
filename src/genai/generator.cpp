#include "genai/generator.h"

#include <cmath>
#include <cstring>

#include "common/checked.h"
#include "common/half.h"

namespace ogx::genai {

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
}  // namespace

Generator::Generator(std::shared_ptr<const Model> model, const GeneratorParams& params)
    : model_(std::move(model)),
      search_(params.search),
      max_length_(resolve_max_length(*model_, params.search)),
      kv_(*model_, 1, max_length_, params.search.past_present_share_buffer),
      sampler_(params.search, model_->config().model.eos_token_ids) {
  OGX_CHECK(search_.batch_size == 1, "batch_size ", search_.batch_size, " is not supported yet (only 1)");
  OGX_CHECK(search_.num_beams == 1, "beam search (num_beams=", search_.num_beams, ") is not supported yet");
  // Logit processing that needs the sequence stays on the host; EOS suppression before min_length is handled per
  // step (such steps read the logits back).
  if (search_.repetition_penalty == 1.0 && search_.no_repeat_ngram_size <= 0) {
    DeviceSampling ds;
    ds.greedy = !search_.do_sample;
    ds.top_k = search_.top_k;
    ds.top_p = (float)search_.top_p;
    ds.temperature = (float)search_.temperature;
    ds.seed = search_.random_seed >= 0 ? (uint64_t)search_.random_seed : std::random_device{}();
    device_sampling_ = model_->session().enable_device_sampling(ds);
    sampling_ = ds;
  }
}

Generator::~Generator() {
  try {
    drop_queued();
  } catch (...) {  // a lost device: nothing left to wait for
  }
  if (model_->kv_holder() == this) model_->set_kv_holder(nullptr);
}

void Generator::drop_queued() const {
  if (queued_ == 0) return;
  queued_ = 0;
  // Another generator's run has dropped them already (and may have queued its own).
  if (model_->kv_holder() == this) model_->session().drop_queued();
}

void Generator::take_kv_cache() const {
  if (!model_->session().owns_kv_cache() || model_->kv_holder() == this) return;
  queued_ = 0;  // dropped by the other generator's run
  // The session picks tokens the way the generator created last asked: this generator's way again.
  if (device_sampling_) model_->session().enable_device_sampling(sampling_);
  model_->set_kv_holder(this);
  int64_t n = kv_.length();
  if (n == 0) return;
  // The cache holds another sequence: run this one's cached positions again (one prompt pass). The logits state is
  // kept: the last position's logits are the ones this generator had.
  std::vector<int32_t> prefix(sequence_.begin(), sequence_.begin() + n);
  std::vector<float> saved = logits_;
  bool on_device = logits_on_device_;
  kv_.rewind(0);
  const_cast<Generator*>(this)->run(prefix, false);  // logits() is const to callers; the state is restored below
  logits_ = std::move(saved);
  logits_on_device_ = on_device;
}

const std::vector<float>& Generator::logits() const {
  take_kv_cache();
  drop_queued();
  if (logits_on_device_) {
    Tensor t;
    OGX_CHECK(model_->session().read_last_output(&t), "the provider cannot return the logits of the last step");
    logits_.resize(t.numel());
    t.read_f32(0, t.numel(), logits_.data());
    logits_on_device_ = false;
  }
  return logits_;
}

void Generator::append_tokens(const std::vector<int32_t>& ids) {
  OGX_CHECK(!ids.empty(), "append_tokens: no tokens given (empty prompt)");
  take_kv_cache();
  drop_queued();
  int vocab = model_->io().vocab_size;
  for (int32_t id : ids)
    OGX_CHECK(id >= 0 && (vocab <= 0 || id < vocab), "token id ", id, " is out of range [0, ", vocab, ")");
  OGX_CHECK(sequence_.size() + ids.size() <= (size_t)max_length_, "max_length ", max_length_, " is smaller than the ",
            sequence_.size() + ids.size(), " tokens of the sequence");
  std::vector<int32_t> run_ids = pending_;
  run_ids.insert(run_ids.end(), ids.begin(), ids.end());
  run(run_ids);
  sequence_.insert(sequence_.end(), ids.begin(), ids.end());
  pending_.clear();
}

std::vector<NamedTensor> Generator::step_inputs(const std::vector<int32_t>& ids, int64_t past) const {
  const DecoderConfig& d = model_->config().model.decoder;
  const DecoderIO& io = model_->io();
  int64_t S = (int64_t)ids.size(), total = past + S;
  std::vector<NamedTensor> in;
  in.emplace_back(d.input_ids, int_tensor(io.input_ids_dtype, {1, S}, std::vector<int64_t>(ids.begin(), ids.end())));
  if (io.has_attention_mask) in.emplace_back(d.attention_mask, int_tensor(io.mask_dtype, {1, total}, std::vector<int64_t>(total, 1)));
  if (io.has_position_ids) {
    std::vector<int64_t> pos(S);
    for (int64_t i = 0; i < S; i++) pos[i] = past + i;
    in.emplace_back(d.position_ids, int_tensor(io.position_dtype, {1, S}, pos));
  }
  return in;
}

bool Generator::queue_step() {
  // The step of the token the next sampling returns: one position after the pending token's step.
  int64_t past = kv_.length() + (queued_ > 0 ? 1 : 0), total = past + 1;
  if (!device_sampling_ || search_.do_sample || total > max_length_ || !model_->session().owns_kv_cache())
    return false;
  std::vector<int32_t> placeholder{0};  // replaced on the device by the sampled token
  return model_->session().queue_next(step_inputs(placeholder, past), model_->config().model.decoder.input_ids);
}

void Generator::run(const std::vector<int32_t>& ids, bool want_logits) {
  const DecoderConfig& d = model_->config().model.decoder;
  int64_t past = kv_.length(), S = (int64_t)ids.size(), total = past + S;
  OGX_CHECK(total <= max_length_, "sequence of ", total, " tokens exceeds max_length ", max_length_);
  std::vector<NamedTensor> in = step_inputs(ids, past), out;
  if (want_logits) out.emplace_back(d.logits, Tensor());
  kv_.bind(total, in, out);
  model_->session().run(in, out);
  kv_.commit(out, total);
  logits_on_device_ = !want_logits;
  if (!want_logits) return;
  const Tensor& lg = out[0].second;
  // A session asked for the last position only (SessionOptions::last_position_output) may return [1, 1, vocab].
  OGX_CHECK(lg.rank() == 3 && (lg.dim(1) == S || lg.dim(1) == 1), "logits output has shape ", shape_str(lg.shape()),
            ", expected [1,", S, ",vocab]");
  int64_t V = lg.dim(2);
  logits_.resize(V);
  lg.read_f32((lg.dim(1) - 1) * V, V, logits_.data());
}

void Generator::generate_next_token() {
  OGX_CHECK(!sequence_.empty(), "generate_next_token: append a prompt first");
  OGX_CHECK(!is_done(), "generate_next_token: generation is done (EOS or max_length reached)");
  take_kv_cache();
  // On the device when nothing needs the logits on the host (EOS is suppressed until min_length on the host).
  bool device = device_sampling_ && (int)sequence_.size() >= search_.min_length;
  if (queued_ > 0 && device) {
    // The pending token's step is queued: queue the next one first (its token comes from the device), then wait.
    bool next = queue_step();
    if (!model_->session().finish_queued()) {  // another caller's run dropped it: run the pending token below
      drop_queued();
      return generate_next_token();
    }
    kv_.commit({}, kv_.length() + 1);
    logits_on_device_ = true;
    queued_ = next ? 1 : 0;
    int64_t t = model_->session().sampled_token();
    OGX_CHECK(t >= 0, "the provider did not return a sampled token");
    sequence_.push_back((int32_t)t);
    pending_ = {(int32_t)t};
    return;  // a step queued past EOS or max_length is dropped by the next call (or the destructor)
  }
  drop_queued();
  if (!pending_.empty()) {
    run(pending_, !device);
    pending_.clear();
  } else if (logits_.empty() && !logits_on_device_) {  // after a rewind: recompute the last position
    kv_.rewind(sequence_.size() - 1);
    run({sequence_.back()}, !device);
  } else {
    device = false;  // logits set by the caller (set_logits) or from append_tokens: choose on the host
  }
  int32_t tok;
  if (device && logits_on_device_) {
    int64_t t = model_->session().sampled_token();
    OGX_CHECK(t >= 0, "the provider did not return a sampled token");
    tok = (int32_t)t;
  } else if (sampler_.greedy_without_processing(sequence_)) {
    tok = argmax(logits_);  // no copy: nothing to change in the logits
  } else {
    std::vector<float> l = logits_;
    tok = sampler_.next(l, sequence_);
  }
  sequence_.push_back(tok);
  pending_ = {tok};
  if (device && !is_done() && queue_step()) queued_ = 1;
}

bool Generator::is_done() const {
  if (sequence_.size() >= (size_t)max_length_) return true;
  return !pending_.empty() && sampler_.is_eos(sequence_.back());
}

void Generator::set_logits(const std::vector<float>& logits) {
  take_kv_cache();
  drop_queued();
  OGX_CHECK(logits_.empty() || logits.size() == logits_.size(), "set_logits: expected ", logits_.size(),
            " values, got ", logits.size());
  if (!pending_.empty()) {  // the pending token's forward pass is replaced by the caller's logits
    run(pending_);
    pending_.clear();
  }
  logits_ = logits;
}

void Generator::rewind_to(size_t length) {
  OGX_CHECK(length <= sequence_.size(), "rewind_to(", length, "): the sequence has ", sequence_.size(), " tokens");
  drop_queued();
  sequence_.resize(length);
  pending_.clear();
  logits_.clear();
  logits_on_device_ = false;
  kv_.rewind(std::min<int64_t>(kv_.length(), (int64_t)length));
}

}  // namespace ogx::genai
