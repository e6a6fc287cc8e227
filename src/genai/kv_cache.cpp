#include "genai/kv_cache.h"

#include <cstring>

#include "common/checked.h"

namespace ogx::genai {
namespace {
constexpr int64_t kChunk = 256;  // shared-mode capacity grows in multiples of this many positions
}  // namespace

KvCache::KvCache(const Model& model, int batch, int max_length, bool shared)
    : model_(model), batch_(batch), max_length_(max_length), shared_(shared),
      decoder_(model.session().decoder()) {
  if (decoder_) {
    state_ = decoder_->create_kv(batch, max_length);
    return;
  }
  const DecoderConfig& d = model.config().model.decoder;
  const DecoderIO& io = model.io();
  if (io.combined_kv) shared_ = false;  // the graph concatenates past and new positions itself
  for (int i = 0; i < io.num_layers; i++) {
    if (io.combined_kv) {
      past_k_.push_back(layer_name(d.past_names, i));
      present_k_.push_back(layer_name(d.present_names, i));
      continue;
    }
    past_k_.push_back(layer_name(d.past_key_names, i));
    past_v_.push_back(layer_name(d.past_value_names, i));
    present_k_.push_back(layer_name(d.present_key_names, i));
    present_v_.push_back(layer_name(d.present_value_names, i));
  }
  k_.resize(io.num_layers);
  v_.resize(io.num_layers);
  Shape empty{batch_, io.kv_heads, 0, io.head_size};
  for (int i = 0; i < io.num_layers; i++) {
    k_[i] = Tensor(io.kv_dtype, empty);
    v_[i] = Tensor(io.kv_dtype, empty);
  }
}

size_t KvCache::bytes() const {
  if (state_) return state_->bytes();
  size_t b = 0;
  for (size_t i = 0; i < k_.size(); i++) b += k_[i].bytes() + v_[i].bytes();
  return b;
}

void KvCache::grow(int64_t needed) {
  OGX_CHECK(needed <= max_length_, "sequence of ", needed, " tokens exceeds max_length ", max_length_);
  if (needed <= capacity_) return;
  int64_t cap = std::max<int64_t>(needed, capacity_ * 2);
  cap = (cap + kChunk - 1) / kChunk * kChunk;
  cap = std::min<int64_t>(cap, max_length_);
  const DecoderIO& io = model_.io();
  int64_t H = io.head_size, rows = (int64_t)batch_ * io.kv_heads;
  size_t es = dtype_size(io.kv_dtype);
  // The whole cache's size is checked before anything is allocated, and the error names the cache and its size.
  const Shape layer{batch_, io.kv_heads, cap, H};
  const uint64_t layer_bytes = bytes_checked(layer, io.kv_dtype, "KV cache layer");
  const uint64_t total = mul_checked(layer_bytes, (uint64_t)k_.size() * 2, "KV cache");
  OGX_CHECK(total <= kMaxBytes, "KV cache of ", k_.size(), " layers x 2 x ", dtype_name(io.kv_dtype), " ",
            shape_str(layer), " needs ", total, " bytes: too large (lower max_length)");
  for (size_t i = 0; i < k_.size(); i++) {
    for (Tensor* t : {&k_[i], &v_[i]}) {
      // Each tensor's own capacity is its dim 2: after an allocation failure part way, the layers already grown
      // and those not yet grown are both still consistent, and a later grow finishes the job.
      const int64_t old_cap = t->dim(2);
      if (old_cap >= cap) continue;
      Tensor n;
      try {
        n = Tensor::zeros(io.kv_dtype, layer);
      } catch (const Error& e) {
        throw_error("KV cache layer ", i, " (", total, " bytes for ", cap, " positions): ", e.what());
      }
      for (int64_t r = 0; r < rows && length_ > 0; r++)
        std::memcpy((char*)n.raw() + r * cap * H * es, (const char*)t->raw() + r * old_cap * H * es,
                    (size_t)(length_ * H) * es);
      *t = std::move(n);
    }
  }
  capacity_ = cap;
}

void KvCache::bind(int64_t total, std::vector<NamedTensor>& inputs, std::vector<NamedTensor>& outputs) {
  OGX_CHECK(total <= max_length_, "sequence of ", total, " tokens exceeds max_length ", max_length_);
  if (state_) return;
  if (shared_) grow(total);
  if (model_.io().combined_kv) return bind_combined(inputs, outputs);
  for (size_t i = 0; i < k_.size(); i++) {
    inputs.emplace_back(past_k_[i], k_[i]);
    inputs.emplace_back(past_v_[i], v_[i]);
    outputs.emplace_back(present_k_[i], shared_ ? k_[i] : Tensor());
    outputs.emplace_back(present_v_[i], shared_ ? v_[i] : Tensor());
  }
}

void KvCache::bind_combined(std::vector<NamedTensor>& inputs, std::vector<NamedTensor>& outputs) const {
  for (size_t i = 0; i < k_.size(); i++) {
    const Tensor &k = k_[i], &v = v_[i];
    Shape shape{2, k.dim(0), k.dim(1), k.dim(2), k.dim(3)};
    // After a run, key and value are the two halves of the layer's present output: passed on without a copy.
    if (k.storage() && k.storage() == v.storage() && v.offset() == k.offset() + k.bytes()) {
      inputs.emplace_back(past_k_[i], Tensor(k.dtype(), shape, k.storage(), k.offset()));
    } else {
      Tensor both(k.dtype(), shape);
      if (k.bytes()) std::memcpy(both.raw(), k.raw(), k.bytes());
      if (v.bytes()) std::memcpy((char*)both.raw() + k.bytes(), v.raw(), v.bytes());
      inputs.emplace_back(past_k_[i], both);
    }
    outputs.emplace_back(present_k_[i], Tensor());
  }
}

void KvCache::commit(const std::vector<NamedTensor>& outputs, int64_t total) {
  if (model_.io().combined_kv) {
    for (auto& [name, t] : outputs)
      for (size_t i = 0; i < k_.size(); i++) {
        if (name != present_k_[i]) continue;
        OGX_CHECK(t.rank() == 5 && t.dim(0) == 2 && t.dim(3) == total, "model returned '", name, "' of shape ",
                  shape_str(t.shape()), ", expected [2, batch, heads, ", total, ", head_size]");
        Shape half{t.dim(1), t.dim(2), t.dim(3), t.dim(4)};
        k_[i] = Tensor(t.dtype(), half, t.storage(), t.offset());
        v_[i] = Tensor(t.dtype(), half, t.storage(), t.offset() + t.bytes() / 2);
      }
    length_ = total;
    return;
  }
  if (!shared_ && !state_) {
    for (auto& [name, t] : outputs)
      for (size_t i = 0; i < k_.size(); i++) {
        if (name == present_k_[i]) k_[i] = t;
        if (name == present_v_[i]) v_[i] = t;
      }
    if (!k_.empty())
      OGX_CHECK(k_[0].dim(2) == total, "model returned a present cache of ", k_[0].dim(2), " positions, expected ",
                total);
  }
  length_ = total;
}

void KvCache::rewind(int64_t length) {
  OGX_CHECK(length >= 0 && length <= length_, "cannot rewind the cache to ", length, " (it holds ", length_, ")");
  if (state_) decoder_->rewind_kv(*state_, length);
  if (!shared_ && !state_ && length < length_) {
    const DecoderIO& io = model_.io();
    int64_t H = io.head_size, rows = (int64_t)batch_ * io.kv_heads;
    size_t es = dtype_size(io.kv_dtype);
    for (size_t i = 0; i < k_.size(); i++)
      for (Tensor* t : {&k_[i], &v_[i]}) {
        int64_t old = t->dim(2);
        Tensor n(io.kv_dtype, {batch_, io.kv_heads, length, H});
        for (int64_t r = 0; r < rows; r++)
          std::memcpy((char*)n.raw() + r * length * H * es, (const char*)t->raw() + r * old * H * es,
                      (size_t)(length * H) * es);
        *t = std::move(n);
      }
  }
  length_ = length;
}

void KvCache::reorder_rows(const std::vector<int32_t>& src, int64_t final_positions) {
  const int64_t R = batch_, n = (int64_t)src.size();
  OGX_CHECK(n > 0, "KV cache reorder: no rows");
  for (int32_t s : src) OGX_CHECK(s >= 0 && s < R, "KV cache reorder: source row ", s, " outside [0, ", R, ")");
  bool identity = n == R;
  for (int64_t r = 0; identity && r < n; r++) identity = src[r] == r;
  if (identity) return;
  if (state_) {
    decoder_->reorder_kv(*state_, src, final_positions);
    batch_ = (int)n;
    return;
  }
  const DecoderIO& io = model_.io();
  const size_t es = dtype_size(io.kv_dtype);
  for (size_t i = 0; i < k_.size(); i++) {
    for (Tensor* t : {&k_[i], &v_[i]}) {
      const int64_t positions = t->dim(2), H = io.head_size, Nkv = io.kv_heads;
      const size_t head_bytes = (size_t)(length_ * H) * es;  // the positions held, per (row, head)
      const size_t head_stride = (size_t)(positions * H) * es, row_stride = head_stride * (size_t)Nkv;
      auto copy_row = [&](char* dst, const char* from) {
        for (int64_t h = 0; h < Nkv; h++) std::memcpy(dst + h * head_stride, from + h * head_stride, head_bytes);
      };
      if (n != R) {  // a new row count: a new tensor
        Tensor fresh = Tensor::zeros(io.kv_dtype, {n, Nkv, positions, H});
        for (int64_t r = 0; r < n; r++)
          copy_row((char*)fresh.raw() + r * row_stride, (const char*)t->raw() + src[r] * row_stride);
        *t = std::move(fresh);
        continue;
      }
      // In place: save the rows that are read by another row and overwritten themselves.
      std::vector<char> saved;
      std::vector<int64_t> slot(R, -1);
      for (int64_t r = 0; r < n; r++) {
        int32_t s = src[r];
        if (s != r && src[s] != s && slot[s] < 0) {
          slot[s] = (int64_t)(saved.size() / row_stride);
          saved.resize(saved.size() + row_stride);
          copy_row(saved.data() + slot[s] * row_stride, (const char*)t->raw() + s * row_stride);
        }
      }
      for (int64_t r = 0; r < n; r++) {
        int32_t s = src[r];
        if (s == r) continue;
        const char* from = slot[s] >= 0 ? saved.data() + slot[s] * row_stride : (const char*)t->raw() + s * row_stride;
        copy_row((char*)t->raw() + r * row_stride, from);
      }
    }
  }
  batch_ = (int)n;
}

void KvCache::run_model(const std::vector<NamedTensor>& inputs, std::vector<NamedTensor>& outputs, int64_t total,
                        const DeviceSampling* sampling) {
  if (!state_) return model_.session().run(inputs, outputs);
  DecodeRun r;
  r.kv.push_back({state_.get(), total});
  r.sampling = sampling;
  decoder_->run(inputs, outputs, r);
}

}  // namespace ogx::genai
