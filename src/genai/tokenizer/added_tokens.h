// Added tokens (tokenizer.json "added_tokens"): matched in the text before the model runs, leftmost-longest,
// honouring lstrip / rstrip / single_word. Tokens with normalized=false are matched in the raw text, those with
// normalized=true in the normalized text.
#pragma once
#include <array>
#include <memory>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ogx::tok {

struct AddedToken {
  std::string content;
  int32_t id = -1;
  bool special = false, lstrip = false, rstrip = false, normalized = false, single_word = false;
};

// Result of splitting: text runs and matched token ids, in order.
struct Segment {
  int32_t id = -1;        // >= 0: an added token
  size_t begin = 0, end = 0;  // text run [begin, end) when id < 0
};

class AddedTokenMatcher {
 public:
  void add(const AddedToken& t, std::string match_text);
  bool empty() const { return count_ == 0; }
  void split(std::string_view text, std::vector<Segment>& out) const;

 private:
  struct Entry { std::string text; const AddedToken* tok; };
  std::array<std::vector<Entry>, 256> by_first_{};  // sorted longest first
  std::vector<std::unique_ptr<AddedToken>> owned_;
  size_t count_ = 0;
};

}  // namespace ogx::tok
