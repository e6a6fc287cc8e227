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
};

std::unique_ptr<WeightProvider> make_safetensors_provider(std::shared_ptr<SafeTensors> st);
// Seeded random weights; `with_biases`: the architecture has q/k/v biases (qwen2).
std::unique_ptr<WeightProvider> make_random_provider(uint64_t seed, bool with_biases);

Source concat_rows(const std::vector<Source>& parts, const std::string& name);
Source concat_vectors(const std::vector<Source>& parts, const std::string& name);  // 1-D: one row
Source slice_rows(const Source& s, int64_t row0, int64_t nrows, const std::string& name);
Source add_constant(const Source& s, float c);  // (1 + w) norms
std::vector<float> read_all(const Source& s);

}  // namespace ogx::builder
