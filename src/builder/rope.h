// Rotary embedding caches cos_cache/sin_cache [context_length, rotary_dim / 2], computed in fp32 like the
// reference builder (inv_freq, optional Llama-3 frequency rescaling, t * inv_freq, cos/sin).
#pragma once
#include <vector>

#include "builder/hf_config.h"

namespace ogx::builder {

std::vector<float> rope_inv_freq(const HfConfig& c);
// Rows [row0, row0 + n) of the cos (sin == false) or sin cache, row-major [max_position, inv.size()].
// cos/sin of the fp32 angle are correctly rounded (PyTorch's kernels, used by the reference, are within 1 ulp).
void rope_rows(const std::vector<float>& inv, bool sin, int64_t row0, int64_t n, float* out);

}  // namespace ogx::builder
