#include "genai/kv_cache.h"

#include <cstring>

#include "common/checked.h"

namespace ogx::genai {
namespace {
constexpr int64_t kChunk = 256;  // shared-mode capacity grows in multiples of this many positions
}  // namespace

KvCache::KvCache(const Model& model, int batch, int max_length, bool shared)
    : model_(model), batch_(batch), max_length_(max_length), shared_(shared),
      session_owned_(model.session().owns_kv_cache()) {
  if (session_owned_) return;
  const DecoderConfig& d = model.config().model.decoder;
  const DecoderIO& io = model.io();
  for (int i = 0; i < io.num_layers; i++) {
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
  if (session_owned_) return;
  if (shared_) grow(total);
  for (size_t i = 0; i < k_.size(); i++) {
    inputs.emplace_back(past_k_[i], k_[i]);
    inputs.emplace_back(past_v_[i], v_[i]);
    outputs.emplace_back(present_k_[i], shared_ ? k_[i] : Tensor());
    outputs.emplace_back(present_v_[i], shared_ ? v_[i] : Tensor());
  }
}

void KvCache::commit(const std::vector<NamedTensor>& outputs, int64_t total) {
  if (!shared_ && !session_owned_) {
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
  if (!shared_ && !session_owned_ && length < length_) {
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

}  // namespace ogx::genai
