// Rotary embedding caches cos_cache/sin_cache [context_length, rotary_dim / 2], computed in fp32 like the
// reference builder (inv_freq, optional Llama-3 frequency rescaling, t * inv_freq, cos/sin).
#pragma once
#include <vector>

#include "builder/hf_config.h"

namespace ogx::builder {

std::vector<float> rope_inv_freq(const HfConfig& c);
// cos (sin == false) or sin cache, row-major [c.max_position, head_dim / 2].
std::vector<float> rope_cache(const HfConfig& c, bool sin);

}  // namespace ogx::builder
