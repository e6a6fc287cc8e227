// Unigram model: Viterbi segmentation maximising the sum of piece log-probabilities (as SentencePiece and
// Hugging Face). Characters no piece covers become the unk token (score = min score - 10), consecutive unks fused;
// with byte_fallback they become <0xXX> byte tokens instead.
#include <cstdio>
#include <limits>

#include "common/error.h"
#include "genai/tokenizer/components.h"
#include "genai/tokenizer/json_util.h"
#include "genai/tokenizer/unicode.h"
#include "genai/tokenizer/vocab.h"

namespace ogx::tok {

namespace {

class Unigram : public Model {
 public:
  Unigram(const json& j, const std::string& path) {
    const auto& v = jarr(j, "vocab", path);
    std::string vp = jpath(path, "vocab");
    min_score_ = std::numeric_limits<double>::max();
    for (size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_array() || v[i].size() != 2 || !v[i][0].is_string() || !v[i][1].is_number())
        throw_error("tokenizer.json: ", jpath(vp, i), ": expected [piece, score]");
      std::string piece = v[i][0].get<std::string>();
      double score = v[i][1].get<double>();
      vocab_.add(piece, static_cast<int32_t>(i));
      scores_.push_back(score);
      min_score_ = std::min(min_score_, score);
      max_len_ = std::max(max_len_, piece.size());
    }
    if (v.empty()) min_score_ = 0;
    unk_id_ = static_cast<int32_t>(jint_or(j, "unk_id", path, -1));
    if (unk_id_ >= static_cast<int32_t>(v.size())) throw_error("tokenizer.json: ", jpath(path, "unk_id"), ": out of range");
    byte_fallback_ = jbool_or(j, "byte_fallback", path, false);
    for (int b = 0; b < 256; ++b) {
      char name[8];
      std::snprintf(name, sizeof(name), "<0x%02X>", b);
      byte_ids_[b] = vocab_.find(name);
    }
  }

  void tokenize(std::string_view w, std::vector<int32_t>& out) const override {
    const size_t n = w.size();
    if (!n) return;
    const double unk_score = min_score_ - 10.0;
    struct Node { double score = -std::numeric_limits<double>::infinity(); size_t start = 0; int32_t id = -1; };
    std::vector<Node> best(n + 1);
    best[0].score = 0;
    for (size_t i = 0; i < n;) {
      size_t clen = utf8_len(static_cast<unsigned char>(w[i]));
      if (i + clen > n) clen = n - i;
      if (best[i].score == -std::numeric_limits<double>::infinity()) { i += clen; continue; }
      bool single = false;
      for (size_t len = 1; len <= max_len_ && i + len <= n; ++len) {
        if (i + len < n && (static_cast<unsigned char>(w[i + len]) & 0xC0) == 0x80) continue;
        int32_t id = vocab_.find(w.substr(i, len));
        if (id < 0) continue;
        if (len == clen) single = true;
        double s = best[i].score + scores_[static_cast<size_t>(id)];
        if (s > best[i + len].score) best[i + len] = {s, i, id};
      }
      if (!single) {
        double s = best[i].score + unk_score;
        if (s > best[i + clen].score) best[i + clen] = {s, i, -1};
      }
      i += clen;
    }
    std::vector<std::pair<size_t, int32_t>> seg;  // (start, id) backwards
    for (size_t e = n; e > 0;) {
      seg.emplace_back(best[e].start, best[e].id);
      e = best[e].start;
    }
    std::vector<int32_t> ids;
    bool prev_unk = false;
    for (size_t k = seg.size(); k-- > 0;) {
      auto [start, id] = seg[k];
      size_t end = k > 0 ? seg[k - 1].first : n;
      if (id >= 0) { out.push_back(id); prev_unk = false; continue; }
      if (byte_fallback_) {
        bool all = true;
        for (size_t b = start; b < end; ++b) all = all && byte_ids_[static_cast<unsigned char>(w[b])] >= 0;
        if (all) {
          for (size_t b = start; b < end; ++b) out.push_back(byte_ids_[static_cast<unsigned char>(w[b])]);
          prev_unk = false;
          continue;
        }
      }
      if (unk_id_ < 0) throw_error("Unigram: text needs the unknown token but the model has no unk_id");
      if (!prev_unk) out.push_back(unk_id_);
      prev_unk = true;
    }
  }
  int32_t token_to_id(std::string_view t) const override { return vocab_.find(t); }
  const std::string* id_to_token(int32_t id) const override { return vocab_.token(id); }
  size_t vocab_size() const override { return vocab_.size(); }

 private:
  Vocab vocab_;
  std::vector<double> scores_;
  double min_score_ = 0;
  size_t max_len_ = 1;
  int32_t unk_id_ = -1;
  bool byte_fallback_ = false;
  int32_t byte_ids_[256];
};

}  // namespace

std::unique_ptr<Model> make_unigram(const json& j, const std::string& path) { return std::make_unique<Unigram>(j, path); }

}  // namespace ogx::tok
