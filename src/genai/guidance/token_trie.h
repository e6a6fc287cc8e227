// The model's vocabulary as bytes, in a trie laid out in depth-first order (a node's subtree is the index range
// that follows it), so the allowed tokens of a lexer/parser state are found in one pass that skips the subtrees
// of dead prefixes. Token bytes come from ogx's tokenizer: byte-level BPE tokens decode to their bytes,
// SentencePiece byte-fallback tokens (<0xHH>) are that byte, and other pieces are decoded after a reference token
// (so a SentencePiece leading space is kept). Special tokens (added tokens marked special) are not in the trie:
// they never match grammar text; the model's EOS ids end the output where the grammar accepts.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ogx::tok {
class Tokenizer;
}

namespace ogx::genai::guidance {

class TokenTrie {
 public:
  struct Node {
    uint8_t byte;
    uint16_t depth;        // 1 for the first byte of a token
    int32_t token;         // the token whose bytes end here, -1 none
    uint32_t subtree_end;  // index after the last node of this subtree
  };
  // tokens: [vocab] each token's bytes (empty: never allowed); eos: the ids that end generation.
  TokenTrie(std::vector<std::string> token_bytes, std::vector<int32_t> eos);
  // The vocabulary of a model folder's tokenizer (cached per folder for the life of the process while in use).
  static std::shared_ptr<const TokenTrie> for_model(const std::string& model_dir, int vocab_size,
                                                    const std::vector<int>& eos_ids);
  static std::vector<std::string> tokenizer_bytes(const tok::Tokenizer& t, int vocab_size);

  const std::vector<Node>& nodes() const { return nodes_; }
  size_t vocab_size() const { return bytes_.size(); }
  const std::string& bytes(int32_t token) const { return bytes_[token]; }
  const std::vector<int32_t>& eos() const { return eos_; }
  bool is_eos(int32_t t) const;
  int max_depth() const { return max_depth_; }

 private:
  std::vector<std::string> bytes_;  // [vocab]
  std::vector<int32_t> eos_;
  std::vector<Node> nodes_;
  int max_depth_ = 0;
  // Tokens that share their bytes with a token of lower id: allowed with it.
  std::vector<std::pair<int32_t, int32_t>> duplicates_;  // (token in the trie, same-bytes token)

 public:
  const std::vector<std::pair<int32_t, int32_t>>& duplicates() const { return duplicates_; }
};

}  // namespace ogx::genai::guidance
