// Weight sources: Hugging Face tensors as row-readable fp32 matrices ([rows, cols], 1-D tensors are one row),
// read in row chunks so no full fp32 copy of a model is ever held. Providers: safetensors or seeded random.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ogx::builder {

class SafeTensors;

struct Source {
  std::string name;  // for messages
  int64_t rows = 0, cols = 0;
  std::function<void(int64_t row0, int64_t nrows, float* out)> read;
};

class WeightProvider {
 public:
  virtual ~WeightProvider() = default;
  // The HF tensor `name` with the expected shape; throws naming the tensor when missing or mis-shaped.
  virtual Source get(const std::string& name, const std::vector<int64_t>& shape) = 0;
  // Optional tensors (biases): present and not all zeros (the reference builder drops all-zero biases).
  virtual bool has_nonzero(const std::string& name, const std::vector<int64_t>& shape) = 0;
  // Checkpoint tensors never asked for by get/has_nonzero that hold a nonzero value (none for random weights).
  virtual std::vector<std::string> unused_nonzero() const { return {}; }
};

std::unique_ptr<WeightProvider> make_safetensors_provider(std::shared_ptr<SafeTensors> st);
// Seeded random weights; `with_biases`: the architecture has q/k/v biases (qwen2). Matrices and biases are
// uniform with standard deviation `stddev` (0.02: the initializer_range of most configs), norms 1 +- 0.1.
// repeating: the attention and MLP output projections (o_proj, down_proj) are zero, so the layers add nothing to
// the residual stream, and lm_head.weight equals model.embed_tokens.weight: greedy decoding repeats the last token
// (its embedding scores highest against itself). A model whose continuation is known, at any shape and cost, for
// speculative-decoding benchmarks.
std::unique_ptr<WeightProvider> make_random_provider(uint64_t seed, bool with_biases, float stddev = 0.02f,
                                                     bool repeating = false);

Source concat_rows(const std::vector<Source>& parts, const std::string& name);
Source concat_vectors(const std::vector<Source>& parts, const std::string& name);  // 1-D: one row
Source slice_rows(const Source& s, int64_t row0, int64_t nrows, const std::string& name);
Source add_constant(const Source& s, float c);  // (1 + w) norms
std::vector<float> read_all(const Source& s);

}  // namespace ogx::builder
