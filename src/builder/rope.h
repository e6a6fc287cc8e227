// Rotary embedding caches cos_cache/sin_cache [rows, rotary_dim / 2], computed in fp32 as the reference builder and
// transformers' modeling_rope_utils.py do: inverse frequencies per rope type (default, linear, llama3, yarn,
// longrope), t * inv_freq, cos/sin, times the type's attention factor.
#pragma once
#include <vector>

#include "builder/hf_config.h"

namespace ogx::builder {

// One cos/sin cache pair.
struct RopeCache {
  std::vector<float> inv;  // [rotary_dim / 2] inverse frequencies
  float scale = 1.0f;      // attention factor multiplied into cos and sin (yarn, longrope; else 1)
  int64_t rows = 0;        // positions it covers
};

// The caches a config needs: one, or for longrope two — [0] the short factors over original_max_position rows, [1]
// the long factors over max_position rows (the graph switches to [1] once a sequence exceeds the original context).
std::vector<RopeCache> rope_caches(const HfConfig& c);
// Rows [row0, row0 + n) of the cos (sin == false) or sin cache, row-major [rows, inv.size()].
// cos/sin of the fp32 angle are correctly rounded (PyTorch's kernels, used by the reference, are within 1 ulp).
void rope_rows(const RopeCache& cache, bool sin, int64_t row0, int64_t n, float* out);

}  // namespace ogx::builder
