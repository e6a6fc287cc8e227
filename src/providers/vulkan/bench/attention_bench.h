// ogx_vulkan_bench's attention measurements (kernel_bench.cpp parses the command line): one-token attention over a
// cache (split decode and the one-dispatch kernel) and prompt attention, at the 1B's attention shape.
#pragma once
#include <cstdint>
#include <vector>

#include "providers/vulkan/bench/bench_util.h"

namespace ogx::vk::bench {

// GPU time of one-token attention (Hq query heads over Hkv 8, D 64, fp16) over kv_len cached positions, n layers.
void bench_attention(Context& ctx, Timer& timer, int64_t Hq, int64_t D, int64_t B, int kv_len, int n);
// --attention-only: one-token attention over long caches and prompt attention over long prompts.
void bench_long_attention(Context& ctx, Timer& timer, const std::vector<int>& kv_lens,
                          const std::vector<int>& prompt_lens, bool quick);

}  // namespace ogx::vk::bench
