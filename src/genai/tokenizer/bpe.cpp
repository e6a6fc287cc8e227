// BPE model (Hugging Face semantics): merges applied lowest rank first (leftmost on ties) with a priority queue
// over a linked list of symbols, so a word of n characters costs O(n log n). Supports byte_fallback, fuse_unk,
// ignore_merges, continuing_subword_prefix and end_of_word_suffix. A small cache keeps the ids of short words.
#include <cstdio>
#include <mutex>
#include <queue>

#include "common/error.h"
#include "genai/tokenizer/components.h"
#include "genai/tokenizer/json_util.h"
#include "genai/tokenizer/unicode.h"
#include "genai/tokenizer/vocab.h"

namespace ogx::tok {

namespace {

struct MergeInfo {
  int32_t rank;
  int32_t new_id;
};

class Bpe : public Model {
 public:
  Bpe(const json& j, const std::string& path);
  void tokenize(std::string_view word, std::vector<int32_t>& out) const override;
  int32_t token_to_id(std::string_view t) const override { return vocab_.find(t); }
  const std::string* id_to_token(int32_t id) const override { return vocab_.token(id); }
  size_t vocab_size() const override { return vocab_.size(); }

 private:
  void merge_word(std::string_view word, std::vector<int32_t>& out) const;
  static uint64_t key(int32_t a, int32_t b) { return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b); }

  Vocab vocab_;
  std::unordered_map<uint64_t, MergeInfo> merges_;
  int32_t unk_id_ = -1;
  bool byte_fallback_ = false, fuse_unk_ = false, ignore_merges_ = false;
  std::string prefix_, suffix_;
  int32_t byte_ids_[256];

  static constexpr size_t kCacheMaxWord = 64, kCacheMaxEntries = 50000;
  mutable std::mutex cache_mu_;
  mutable std::unordered_map<std::string, std::vector<int32_t>, StrHash, std::equal_to<>> cache_;
};

Bpe::Bpe(const json& j, const std::string& path) {
  const auto& v = jreq(j, "vocab", path);
  if (!v.is_object()) throw_error("tokenizer.json: ", jpath(path, "vocab"), ": expected an object of token -> id");
  for (auto it = v.begin(); it != v.end(); ++it) {
    vocab_.add(it.key(), jtoken_id(it.value(), jpath(path, "vocab") + "[\"" + it.key() + "\"]"));
  }
  prefix_ = jstr_or(j, "continuing_subword_prefix", path, "");
  suffix_ = jstr_or(j, "end_of_word_suffix", path, "");
  byte_fallback_ = jbool_or(j, "byte_fallback", path, false);
  fuse_unk_ = jbool_or(j, "fuse_unk", path, false);
  ignore_merges_ = jbool_or(j, "ignore_merges", path, false);
  std::string unk = jstr_or(j, "unk_token", path, "");
  if (!unk.empty()) {
    unk_id_ = vocab_.find(unk);
    if (unk_id_ < 0) throw_error("tokenizer.json: ", jpath(path, "unk_token"), ": '", unk, "' is not in the vocabulary");
  }
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    byte_ids_[b] = vocab_.find(name);
  }
  if (j.contains("merges") && !j["merges"].is_null()) {
    const auto& m = jarr(j, "merges", path);
    merges_.reserve(m.size() * 2);
    std::string mp = jpath(path, "merges");
    for (size_t i = 0; i < m.size(); ++i) {
      std::string a, b;
      if (m[i].is_string()) {
        const std::string& s = m[i].get_ref<const std::string&>();
        size_t sp = s.find(' ');
        if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
          throw_error("tokenizer.json: ", jpath(mp, i), ": merge '", s, "' is not two tokens separated by one space");
        a = s.substr(0, sp);
        b = s.substr(sp + 1);
      } else if (m[i].is_array() && m[i].size() == 2 && m[i][0].is_string() && m[i][1].is_string()) {
        a = m[i][0].get<std::string>();
        b = m[i][1].get<std::string>();
      } else {
        throw_error("tokenizer.json: ", jpath(mp, i), ": expected \"a b\" or [\"a\", \"b\"]");
      }
      int32_t ia = vocab_.find(a), ib = vocab_.find(b);
      std::string_view bb = b;
      if (!prefix_.empty() && bb.substr(0, prefix_.size()) == prefix_) bb.remove_prefix(prefix_.size());
      int32_t in = vocab_.find(a + std::string(bb));
      if (ia < 0 || ib < 0 || in < 0)
        throw_error("tokenizer.json: ", jpath(mp, i), ": merge '", a, " ", b, "' uses a token missing from the vocabulary");
      merges_.emplace(key(ia, ib), MergeInfo{static_cast<int32_t>(i), in});
    }
  }
}

void Bpe::tokenize(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  if (ignore_merges_) {
    int32_t id = vocab_.find(word);
    if (id >= 0) { out.push_back(id); return; }
  }
  if (word.size() <= kCacheMaxWord) {
    {
      std::lock_guard<std::mutex> lock(cache_mu_);
      auto it = cache_.find(word);
      if (it != cache_.end()) { out.insert(out.end(), it->second.begin(), it->second.end()); return; }
    }
    std::vector<int32_t> ids;
    merge_word(word, ids);
    out.insert(out.end(), ids.begin(), ids.end());
    std::lock_guard<std::mutex> lock(cache_mu_);
    if (cache_.size() >= kCacheMaxEntries) cache_.clear();
    cache_.emplace(std::string(word), std::move(ids));
    return;
  }
  merge_word(word, out);
}

void Bpe::merge_word(std::string_view word, std::vector<int32_t>& out) const {
  struct Sym { int32_t id; int32_t prev, next; bool alive; };
  std::vector<Sym> syms;
  syms.reserve(word.size());
  bool prev_unk = false;
  std::string buf;
  for (size_t i = 0; i < word.size();) {
    size_t st = i;
    i += utf8_len(static_cast<unsigned char>(word[i]));
    if (i > word.size()) i = word.size();
    std::string_view ch = word.substr(st, i - st);
    int32_t id;
    if (prefix_.empty() && suffix_.empty()) {
      id = vocab_.find(ch);
    } else {
      buf.clear();
      if (st > 0) buf += prefix_;
      buf += ch;
      if (i == word.size()) buf += suffix_;
      id = vocab_.find(buf);
    }
    if (id >= 0) {
      syms.push_back({id, 0, 0, true});
      prev_unk = false;
      continue;
    }
    if (byte_fallback_) {
      bool all = true;
      for (char c : ch) all = all && byte_ids_[static_cast<unsigned char>(c)] >= 0;
      if (all) {
        for (char c : ch) syms.push_back({byte_ids_[static_cast<unsigned char>(c)], 0, 0, true});
        prev_unk = false;
        continue;
      }
    }
    if (unk_id_ >= 0) {
      if (!(fuse_unk_ && prev_unk)) syms.push_back({unk_id_, 0, 0, true});
      prev_unk = true;
    }
  }
  const int32_t n = static_cast<int32_t>(syms.size());
  for (int32_t k = 0; k < n; ++k) {
    syms[k].prev = k - 1;
    syms[k].next = k + 1 < n ? k + 1 : -1;
  }
  struct Cand {
    int32_t rank, pos, new_id;
    bool operator>(const Cand& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  std::vector<Cand> heap_storage;
  heap_storage.reserve(n);
  std::priority_queue<Cand, std::vector<Cand>, std::greater<Cand>> pq(std::greater<Cand>(), std::move(heap_storage));
  auto push_pair = [&](int32_t l) {
    if (l < 0) return;
    int32_t r = syms[l].next;
    if (r < 0) return;
    auto it = merges_.find(key(syms[l].id, syms[r].id));
    if (it != merges_.end()) pq.push({it->second.rank, l, it->second.new_id});
  };
  for (int32_t k = 0; k + 1 < n; ++k) push_pair(k);
  while (!pq.empty()) {
    Cand c = pq.top();
    pq.pop();
    Sym& left = syms[c.pos];
    if (!left.alive || left.next < 0) continue;
    Sym& right = syms[left.next];
    auto it = merges_.find(key(left.id, right.id));
    if (it == merges_.end() || it->second.new_id != c.new_id) continue;
    left.id = c.new_id;
    right.alive = false;
    left.next = right.next;
    if (right.next >= 0) syms[right.next].prev = c.pos;
    push_pair(left.prev);
    push_pair(c.pos);
  }
  for (int32_t k = n > 0 ? 0 : -1; k >= 0; k = syms[k].next) out.push_back(syms[k].id);
}

}  // namespace

std::unique_ptr<Model> make_bpe(const json& j, const std::string& path) { return std::make_unique<Bpe>(j, path); }

}  // namespace ogx::tok
