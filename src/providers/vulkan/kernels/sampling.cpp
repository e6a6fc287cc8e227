#include "providers/vulkan/kernels/sampling.h"

#include "providers/vulkan/kernels/kernel_util.h"

namespace ogx::vk::kernels {

void sample_tokens(CommandRecorder& rec, const SamplingParams& params, const TensorView& logits,
                   const TensorView& tokens, const TensorView& rng_state) {
  const char* t = storage_suffix(logits.dtype, "sampling");
  OGX_CHECK(logits.shape.size() >= 1, "sampling: logits must be [B, V]");
  int64_t V = logits.shape.back(), B = logits.numel() / V;
  OGX_CHECK(tokens.dtype == DType::i64 && tokens.numel() == B, "sampling: tokens must be int64 [", B, "]");
  OGX_CHECK(params.greedy || (rng_state.numel() == B && dtype_size(rng_state.dtype) == 4),
            "sampling: rng_state must be uint32 [", B, "]");
  OGX_CHECK(params.greedy || (params.top_p > 0.0f && params.top_p <= 1.0f && params.temperature > 0.0f),
            "sampling: top_p must be in (0, 1] and temperature > 0");
  struct {
    uint64_t logits, tokens, rng;
    uint32_t V, mode, top_k;
    float top_p, temperature;
  } p{addr(logits), addr(tokens), params.greedy ? 0 : addr(rng_state), (uint32_t)V, params.greedy ? 0u : 1u,
      params.top_k, params.top_p, params.temperature};
  const Pipeline& pl = rec.context().pipelines().get(std::string("sample_") + t);
  BufferSlice rng = params.greedy ? tokens.mem : rng_state.mem;
  rec.dispatch(pl, &p, sizeof(p), (uint32_t)B, 1, 1, {logits.mem, rng}, {tokens.mem, rng});
}

std::vector<uint32_t> seed_sampling_state(uint64_t seed, int64_t B) {
  std::vector<uint32_t> s(B);
  uint64_t x = seed ? seed : 0x9e3779b97f4a7c15ull;
  for (auto& v : s) {  // splitmix64
    x += 0x9e3779b97f4a7c15ull;
    uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    v = (uint32_t)(z ^ (z >> 31));
  }
  return s;
}

}  // namespace ogx::vk::kernels
