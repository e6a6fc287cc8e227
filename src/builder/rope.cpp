#include "builder/rope.h"

#include <cmath>

namespace ogx::builder {

namespace {

// transformers' _compute_llama3_parameters, in fp32.
void llama3_rescale(const RopeConfig& r, std::vector<float>& inv) {
  const float factor = (float)r.factor, lo = (float)r.low_freq_factor, hi = (float)r.high_freq_factor;
  const float old_len = (float)r.original_max_position;
  const float low_wavelen = old_len / lo, high_wavelen = old_len / hi;
  for (float& f : inv) {
    float wavelen = 2.0f * (float)M_PI / f;
    float scaled = wavelen > low_wavelen ? f / factor : f;
    float smooth = (old_len / wavelen - lo) / (hi - lo);
    bool medium = !(wavelen < high_wavelen) && !(wavelen > low_wavelen);
    f = medium ? (1.0f - smooth) * scaled / factor + smooth * scaled : scaled;
  }
}

}  // namespace

std::vector<float> rope_inv_freq(const HfConfig& c) {
  const int64_t dim = (int64_t)(c.head_dim * c.rope.partial_factor);
  std::vector<float> inv(dim / 2);
  for (int64_t i = 0; i < dim / 2; i++) {
    float e = (float)(2 * i) / (float)dim;
    inv[i] = 1.0f / std::pow((float)c.rope.theta, e);
  }
  if (c.rope.type == "llama3") llama3_rescale(c.rope, inv);
  return inv;
}

void rope_rows(const std::vector<float>& inv, bool sin, int64_t row0, int64_t n, float* out) {
  const int64_t half = (int64_t)inv.size();
  for (int64_t t = 0; t < n; t++)
    for (int64_t i = 0; i < half; i++) {
      float f = (float)(row0 + t) * inv[i];
      out[t * half + i] = (float)(sin ? std::sin((double)f) : std::cos((double)f));
    }
}

}  // namespace ogx::builder
