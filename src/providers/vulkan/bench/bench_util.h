// Shared pieces of ogx_vulkan_bench: deterministic data and a GPU timer over a recorded command sequence.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "providers/vulkan/command_recorder.h"
#include "providers/vulkan/context.h"

namespace ogx::vk::bench {

struct Shape2 {
  const char* name;
  int64_t K, N;
};

inline uint32_t hash(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return (uint32_t)(x ^ (x >> 33));
}

// Deterministic pseudo-random fp16 in about [-0.25, 0.25] for element i of copy c.
inline uint16_t weight_half(uint64_t c, uint64_t i) { return (uint16_t)(0x3000 | (hash(c * 0x9e3779b97f4a7c15ull + i) & 0x83ff)); }

class Timer {
 public:
  explicit Timer(Context& ctx) : ctx_(ctx) {
    VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qi.queryCount = 2;
    OGX_VK(vkCreateQueryPool(ctx.device(), &qi, nullptr, &pool_));
  }
  ~Timer() { vkDestroyQueryPool(ctx_.device(), pool_, nullptr); }
  VkQueryPool pool() const { return pool_; }
  // Median of `runs` replays, in microseconds of GPU time between the two timestamps.
  double median_us(CommandRecorder& rec, int runs) {
    std::vector<double> t;
    for (int i = 0; i < runs + 2; i++) {
      rec.run();
      uint64_t ts[2];
      OGX_VK(vkGetQueryPoolResults(ctx_.device(), pool_, 0, 2, sizeof(ts), ts, 8,
                                   VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
      if (i >= 2) t.push_back((double)(ts[1] - ts[0]) * ctx_.info().timestamp_period * 1e-3);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }

 private:
  Context& ctx_;
  VkQueryPool pool_ = VK_NULL_HANDLE;
};

}  // namespace ogx::vk::bench
