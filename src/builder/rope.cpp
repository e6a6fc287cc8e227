#include "builder/rope.h"

#include <algorithm>
#include <cmath>

namespace ogx::builder {

namespace {

// theta^(2i / dim) for i < dim / 2, in fp32 (torch: base ** (arange(0, dim, 2).float() / dim)).
std::vector<float> pos_freqs(const HfConfig& c, int64_t dim) {
  std::vector<float> p(dim / 2);
  for (int64_t i = 0; i < dim / 2; i++) p[i] = std::pow((float)c.rope.theta, (float)(2 * i) / (float)dim);
  return p;
}

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

// transformers' get_mscale: the attention factor YaRN derives from the scaling factor.
double yarn_get_mscale(double scale, double mscale) { return scale <= 1 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0; }

// transformers' _compute_yarn_parameters: interpolated (inv / factor) frequencies below the ramp, extrapolated
// (unchanged) above it, the ramp between the dimensions that rotate beta_fast and beta_slow times over the
// pretrained context. (The reference builder leaves the ramp's bounds unrounded; transformers floors/ceils them
// unless truncate is false, and ogx follows transformers, whose numbers the model was trained with.)
RopeCache yarn(const HfConfig& c, int64_t dim) {
  const RopeConfig& r = c.rope;
  const double base = r.theta, orig = (double)r.original_max_position;
  auto correction_dim = [&](double rotations) {
    return (double)dim * std::log(orig / (rotations * 2 * M_PI)) / (2 * std::log(base));
  };
  double low = correction_dim(r.beta_fast), high = correction_dim(r.beta_slow);
  if (r.truncate) low = std::floor(low), high = std::ceil(high);
  low = std::max(low, 0.0);
  high = std::min(high, (double)(dim - 1));
  if (low == high) high += 0.001;  // transformers: no singular ramp
  std::vector<float> p = pos_freqs(c, dim);
  RopeCache out;
  out.inv.resize(p.size());
  const float factor = (float)r.factor;
  for (size_t i = 0; i < p.size(); i++) {
    float ramp = std::clamp(((float)i - (float)low) / ((float)high - (float)low), 0.0f, 1.0f);
    float extrapolation = 1.0f - ramp;
    float inv_interp = 1.0f / (factor * p[i]), inv_extrap = 1.0f / p[i];
    out.inv[i] = inv_interp * (1.0f - extrapolation) + inv_extrap * extrapolation;
  }
  double attention = r.attention_factor ? *r.attention_factor
                     : r.mscale != 0 && r.mscale_all_dim != 0
                         ? yarn_get_mscale(r.factor, r.mscale) / yarn_get_mscale(r.factor, r.mscale_all_dim)
                         : yarn_get_mscale(r.factor, 1.0);
  out.scale = (float)attention;
  out.rows = c.max_position;
  return out;
}

// transformers' _compute_longrope_parameters for one set of factors: inv = 1 / (factor_i * theta^(2i / dim)),
// scaled by sqrt(1 + ln(factor) / ln(original context)) unless the config gives the scale.
RopeCache longrope(const HfConfig& c, int64_t dim, bool long_factors) {
  const RopeConfig& r = c.rope;
  const std::vector<double>& f = long_factors ? r.long_factor : r.short_factor;
  std::vector<float> p = pos_freqs(c, dim);
  RopeCache out;
  out.inv.resize(p.size());
  for (size_t i = 0; i < p.size(); i++) out.inv[i] = 1.0f / ((float)f[i] * p[i]);
  double attention = r.factor <= 1 ? 1.0
                                   : std::sqrt(1 + std::log(r.factor) / std::log((double)r.original_max_position));
  if (r.attention_factor) attention = *r.attention_factor;
  if (const auto& m = long_factors ? r.long_mscale : r.short_mscale) attention = *m;
  out.scale = (float)attention;
  out.rows = long_factors ? c.max_position : r.original_max_position;
  return out;
}

}  // namespace

std::vector<RopeCache> rope_caches(const HfConfig& c) {
  const int64_t dim = c.rotary_dim();
  if (c.rope.type == "yarn") return {yarn(c, dim)};
  if (c.rope.type == "longrope") return {longrope(c, dim, false), longrope(c, dim, true)};
  RopeCache one;
  std::vector<float> p = pos_freqs(c, dim);
  one.inv.resize(p.size());
  for (size_t i = 0; i < p.size(); i++) one.inv[i] = 1.0f / p[i];
  if (c.rope.type == "linear")
    for (float& f : one.inv) f /= (float)c.rope.factor;
  if (c.rope.type == "llama3") llama3_rescale(c.rope, one.inv);
  one.rows = c.max_position;
  return {one};
}

void rope_rows(const RopeCache& cache, bool sin, int64_t row0, int64_t n, float* out) {
  const int64_t half = (int64_t)cache.inv.size();
  for (int64_t t = 0; t < n; t++)
    for (int64_t i = 0; i < half; i++) {
      float f = (float)(row0 + t) * cache.inv[i];
      float v = (float)(sin ? std::sin((double)f) : std::cos((double)f));
      out[t * half + i] = cache.scale == 1.0f ? v : v * cache.scale;
    }
}

}  // namespace ogx::builder
