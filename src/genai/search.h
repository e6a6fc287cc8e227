// Next-token selection for one sequence: logits processing (repetition penalty, no-repeat n-gram, min length)
// then greedy argmax or sampling (temperature, top-k, top-p) with a seeded generator.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "genai/config.h"

namespace ogx::genai {

class Sampler {
 public:
  Sampler(const SearchConfig& search, std::vector<int> eos_ids);
  // logits: [vocab] (modified in place); sequence: all tokens so far (prompt + generated).
  int32_t next(std::vector<float>& logits, const std::vector<int32_t>& sequence);
  void process_logits(std::vector<float>& logits, const std::vector<int32_t>& sequence) const;
  bool is_eos(int32_t id) const;

 private:
  int32_t sample(std::vector<float>& logits);
  SearchConfig s_;
  std::vector<int> eos_;
  std::mt19937_64 rng_;
};

// Index of the largest value; the first one on ties (as torch.argmax).
int32_t argmax(const std::vector<float>& v);

}  // namespace ogx::genai
