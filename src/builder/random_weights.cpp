// Seeded random weights of a config's exact shape (benchmarks at real sizes without a checkpoint). Every
// element is a pure function of (seed, tensor name, index), so chunking and threading do not change values.
#include <cmath>

#include "builder/weight_source.h"

namespace ogx::builder {

namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t hash_name(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

class RandomProvider : public WeightProvider {
 public:
  RandomProvider(uint64_t seed, bool biases, float stddev, bool repeating)
      : seed_(seed), biases_(biases), std_(stddev), repeating_(repeating) {}

  Source get(const std::string& name, const std::vector<int64_t>& shape) override {
    Source s;
    s.name = name;
    s.rows = shape.size() == 1 ? 1 : shape[0];
    s.cols = shape.size() == 1 ? shape[0] : shape[1];
    bool norm = name.find("norm") != std::string::npos;
    // Norm weights near 1; matrices uniform with standard deviation std_.
    float center = norm ? 1.0f : 0.0f;
    float half_width = norm ? 0.1f : std_ * std::sqrt(3.0f);
    if (repeating_ && (ends_with(name, "o_proj.weight") || ends_with(name, "down_proj.weight")))
      half_width = 0.0f;  // the layer's outputs: zero
    const std::string& source = repeating_ && name == "lm_head.weight" ? kEmbedding : name;
    uint64_t key = splitmix64(seed_ ^ hash_name(source));
    int64_t cols = s.cols;
    s.read = [key, center, half_width, cols](int64_t r0, int64_t n, float* out) {
      for (int64_t i = 0; i < n * cols; i++) {
        uint64_t r = splitmix64(key + (uint64_t)(r0 * cols + i));
        float u = (float)(r >> 40) * (1.0f / 16777216.0f);  // [0, 1)
        out[i] = center + (2.0f * u - 1.0f) * half_width;
      }
    };
    return s;
  }

  bool has_nonzero(const std::string& name, const std::vector<int64_t>&) override {
    if (repeating_ && (ends_with(name, "o_proj.bias") || ends_with(name, "down_proj.bias"))) return false;
    return biases_ && name.find("bias") != std::string::npos;
  }

 private:
  static bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  }
  inline static const std::string kEmbedding = "model.embed_tokens.weight";
  uint64_t seed_;
  bool biases_;
  float std_;
  bool repeating_;
};

}  // namespace

std::unique_ptr<WeightProvider> make_random_provider(uint64_t seed, bool with_biases, float stddev, bool repeating) {
  return std::make_unique<RandomProvider>(seed, with_biases, stddev, repeating);
}

}  // namespace ogx::builder
