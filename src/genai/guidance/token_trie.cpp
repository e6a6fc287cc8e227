#include "genai/guidance/token_trie.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <numeric>

#include "common/error.h"
#include "genai/tokenizer/tokenizer.h"

namespace ogx::genai::guidance {

namespace {
constexpr size_t kMaxTokenBytes = 1024;
}

TokenTrie::TokenTrie(std::vector<std::string> token_bytes, std::vector<int32_t> eos)
    : bytes_(std::move(token_bytes)), eos_(std::move(eos)) {
  std::sort(eos_.begin(), eos_.end());
  eos_.erase(std::unique(eos_.begin(), eos_.end()), eos_.end());
  for (int32_t e : eos_)
    if (e >= 0 && (size_t)e < bytes_.size()) bytes_[e].clear();  // EOS is allowed by the grammar's acceptance only
  std::vector<int32_t> order;
  for (int32_t t = 0; t < (int32_t)bytes_.size(); t++)
    if (!bytes_[t].empty() && bytes_[t].size() <= kMaxTokenBytes) order.push_back(t);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return bytes_[a] < bytes_[b]; });
  // Depth-first preorder from the sorted byte strings: a node per distinct prefix.
  std::vector<uint32_t> open;  // indices of the nodes on the current path
  std::string prev;
  for (int32_t t : order) {
    const std::string& s = bytes_[t];
    if (s == prev && !nodes_.empty()) {  // same bytes as the previous token
      duplicates_.push_back({nodes_[open.back()].token, t});
      continue;
    }
    size_t common = 0;
    while (common < prev.size() && common < s.size() && prev[common] == s[common]) common++;
    while (open.size() > common) {
      nodes_[open.back()].subtree_end = (uint32_t)nodes_.size();
      open.pop_back();
    }
    for (size_t i = common; i < s.size(); i++) {
      open.push_back((uint32_t)nodes_.size());
      nodes_.push_back({(uint8_t)s[i], (uint16_t)(i + 1), -1, 0});
    }
    nodes_[open.back()].token = t;
    max_depth_ = std::max(max_depth_, (int)s.size());
    prev = s;
  }
  for (uint32_t i : open) nodes_[i].subtree_end = (uint32_t)nodes_.size();
}

bool TokenTrie::is_eos(int32_t t) const { return std::binary_search(eos_.begin(), eos_.end(), t); }

std::vector<std::string> TokenTrie::tokenizer_bytes(const tok::Tokenizer& t, int vocab_size) {
  const int n = vocab_size > 0 ? vocab_size : (int)t.vocab_size();
  std::vector<std::string> out((size_t)n);
  // A reference token decoded before each piece keeps SentencePiece's leading space (which a decoder strips at
  // the start of the text).
  int32_t ref = t.token_to_id("a");
  std::string ref_text = ref >= 0 ? t.decode_bytes(std::vector<int32_t>{ref}) : "";
  if (ref_text.empty()) ref = -1;
  for (int32_t id = 0; id < n && id < (int32_t)t.vocab_size(); id++) {
    if (t.is_special(id)) continue;
    std::string piece;
    try {
      piece = t.id_to_token(id);
    } catch (const Error&) {
      continue;  // a hole in the vocabulary
    }
    if (piece.size() == 6 && piece.compare(0, 3, "<0x") == 0 && piece[5] == '>' &&
        std::isxdigit((unsigned char)piece[3]) && std::isxdigit((unsigned char)piece[4])) {  // byte fallback
      out[id] = std::string(1, (char)std::stoi(piece.substr(3, 2), nullptr, 16));
      continue;
    }
    if (ref >= 0) {
      std::string both = t.decode_bytes(std::vector<int32_t>{ref, id});
      if (both.compare(0, ref_text.size(), ref_text) == 0) {
        out[id] = both.substr(ref_text.size());
        continue;
      }
    }
    out[id] = t.decode_bytes(std::vector<int32_t>{id});
  }
  return out;
}

std::shared_ptr<const TokenTrie> TokenTrie::for_model(const std::string& model_dir, int vocab_size,
                                                      const std::vector<int>& eos_ids) {
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<const TokenTrie>> cache;
  std::string key = model_dir + "\n" + std::to_string(vocab_size);
  for (int e : eos_ids) key += "," + std::to_string(e);
  std::lock_guard<std::mutex> lock(mu);
  if (auto hit = cache[key].lock()) return hit;
  std::shared_ptr<tok::Tokenizer> tk;
  try {
    tk = tok::Tokenizer::load(model_dir);
  } catch (const Error& e) {
    throw_error("guidance needs the model's tokenizer: ", e.what());
  }
  auto trie = std::make_shared<const TokenTrie>(tokenizer_bytes(*tk, vocab_size),
                                                std::vector<int32_t>(eos_ids.begin(), eos_ids.end()));
  cache[key] = trie;
  return trie;
}

}  // namespace ogx::genai::guidance
