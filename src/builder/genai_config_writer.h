// genai_config.json in the reference builder's layout; search defaults from generation_config.json.
#pragma once
#include <nlohmann/json.hpp>

#include "builder/builder.h"
#include "builder/hf_config.h"

namespace ogx::builder {

// max_length: 0 selects min(context_length, 4096) (the reference uses context_length, which for 128k-context
// models sizes a past/present shared KV buffer of many GB).
nlohmann::json make_genai_config(const HfConfig& c, Provider provider, int64_t max_length);

}  // namespace ogx::builder
