// Size planning for the builder: how many parameters and bytes a config's shape means, computed with checked
// arithmetic BEFORE any graph node, weight buffer or file byte exists, so an absurd shape (1e9 layers, a vocabulary
// of 2e9) fails at once with the computed size in the message instead of after gigabytes of allocation or writing.
#pragma once
#include <cstdint>
#include <string>

#include "builder/builder.h"
#include "builder/hf_config.h"
#include "common/checked.h"  // host_memory_bytes

namespace ogx::builder {

// More layers than this cannot be an ONNX graph: model.onnx is a protobuf under 2 GiB and a decoder layer's nodes
// take a few KiB of it (the largest published models have under 200 layers).
inline constexpr int64_t kMaxLayers = 100000;

struct SizePlan {
  uint64_t params = 0;       // parameters of the checkpoint (matrices, embeddings, norms, biases)
  uint64_t weight_bytes = 0;  // bytes of those parameters at the planned precision (int4: half a byte, no scales)
};

// Checked plan for cfg's shape; throws naming the config field whose size overflows.
SizePlan plan_sizes(const HfConfig& cfg, Precision precision);
// Throws "<what> needs N bytes (P parameters ...) but only L bytes of <where> are available" when bytes > limit.
void check_fits(uint64_t bytes, uint64_t params, uint64_t limit, const std::string& what, const std::string& where);
// Free bytes on the file system that holds path (or its nearest existing parent); 0 when unknown.
uint64_t free_disk_bytes(const std::string& path);

}  // namespace ogx::builder
