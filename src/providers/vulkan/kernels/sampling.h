// Next-token selection on the device (logits never leave it): argmax, or top-k / top-p / temperature sampling with
// a per-row random state in a device buffer. Token ids are written as int64 [B] for the next step's Gather.
#pragma once
#include "providers/vulkan/command_recorder.h"
#include "providers/vulkan/context.h"

namespace ogx::vk::kernels {

constexpr uint32_t kMaxSampleCandidates = 1024;  // sample.comp MAXK: top_p alone considers this many candidates

struct SamplingParams {
  bool greedy = true;        // argmax (lowest index among ties)
  uint32_t top_k = 0;        // 0: off (top-p over the whole vocabulary, nucleus capped at kMaxSampleCandidates)
  float top_p = 1.0f;
  float temperature = 1.0f;
};

// logits: [B, V] f32/f16; tokens: int64 [B]; rng_state: uint32 [B] (seed it with seed_sampling_state; advanced
// on each sampling call).
void sample_tokens(CommandRecorder& rec, const SamplingParams& params, const TensorView& logits,
                   const TensorView& tokens, const TensorView& rng_state);

// Host helper: initial PCG states for B rows from one seed.
std::vector<uint32_t> seed_sampling_state(uint64_t seed, int64_t B);

}  // namespace ogx::vk::kernels
