// The generator's hook for guidance: one Matcher per row (batch rows; beams: one per beam, copied when beams are
// reordered). apply() sets the logits of the tokens a row may not pick to the lowest float before the pick (as
// the other logit processors ban tokens); consume() advances each row by the token picked.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "genai/guidance/matcher.h"

namespace ogx::genai::guidance {

class LogitMask {
 public:
  LogitMask(std::shared_ptr<CompiledGrammar> g, int rows);
  // logits: [vocab], the logits of row r.
  void apply_row(int r, float* logits, int64_t vocab);
  // One token per row (rows that ended are skipped). strict: throws naming the row and token when a token is not
  // allowed; otherwise such a row stops being constrained (beam search's pad tokens for a prompt that is done).
  void consume(const std::vector<int32_t>& tokens, const std::vector<bool>& ended, bool strict = true);
  void reorder(const std::vector<int32_t>& src);  // row r continues row src[r] (beam search)
  void reset();                                   // every row back to the start of the constraint
  // Row r's allowed tokens as a packed bit mask (bit t of word t/32) over `vocab` tokens, for a device sampler.
  void packed(int row, int64_t vocab, std::vector<uint32_t>& bits);

 private:
  std::shared_ptr<CompiledGrammar> g_;
  std::vector<Matcher> rows_;     // [rows]
  std::vector<bool> off_;         // [rows]: no longer constrained
  std::vector<uint64_t> scratch_; // [mask words]
};

}  // namespace ogx::genai::guidance
