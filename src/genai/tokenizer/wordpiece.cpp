// WordPiece model: greedy longest-match-first with a continuing-subword prefix ("##"); words longer than
// max_input_chars_per_word or with an unmatchable remainder become the unk token.
#include "common/error.h"
#include "genai/tokenizer/components.h"
#include "genai/tokenizer/json_util.h"
#include "genai/tokenizer/unicode.h"
#include "genai/tokenizer/vocab.h"

namespace ogx::tok {

namespace {

class WordPiece : public Model {
 public:
  WordPiece(const json& j, const std::string& path) {
    const auto& v = jreq(j, "vocab", path);
    if (!v.is_object()) throw_error("tokenizer.json: ", jpath(path, "vocab"), ": expected an object of token -> id");
    for (auto it = v.begin(); it != v.end(); ++it) {
      vocab_.add(it.key(), jtoken_id(it.value(), jpath(path, "vocab") + "[\"" + it.key() + "\"]"));
    }
    std::string unk = jstr_or(j, "unk_token", path, "[UNK]");
    unk_id_ = vocab_.find(unk);
    if (unk_id_ < 0) throw_error("tokenizer.json: ", jpath(path, "unk_token"), ": '", unk, "' is not in the vocabulary");
    prefix_ = jstr_or(j, "continuing_subword_prefix", path, "##");
    max_chars_ = static_cast<size_t>(jint_or(j, "max_input_chars_per_word", path, 100));
  }
  void tokenize(std::string_view w, std::vector<int32_t>& out) const override {
    size_t nchars = 0;
    for (size_t i = 0; i < w.size(); i += utf8_len(static_cast<unsigned char>(w[i]))) ++nchars;
    if (nchars > max_chars_) { out.push_back(unk_id_); return; }
    std::vector<int32_t> ids;
    std::string buf;
    for (size_t start = 0; start < w.size();) {
      int32_t found = -1;
      size_t found_end = start;
      for (size_t end = w.size(); end > start;) {
        buf.clear();
        if (start > 0) buf += prefix_;
        buf.append(w.substr(start, end - start));
        int32_t id = vocab_.find(buf);
        if (id >= 0) { found = id; found_end = end; break; }
        do { --end; } while (end > start && (static_cast<unsigned char>(w[end]) & 0xC0) == 0x80);
      }
      if (found < 0) { out.push_back(unk_id_); return; }
      ids.push_back(found);
      start = found_end;
    }
    out.insert(out.end(), ids.begin(), ids.end());
  }
  int32_t token_to_id(std::string_view t) const override { return vocab_.find(t); }
  const std::string* id_to_token(int32_t id) const override { return vocab_.token(id); }
  size_t vocab_size() const override { return vocab_.size(); }

 private:
  Vocab vocab_;
  int32_t unk_id_ = -1;
  std::string prefix_;
  size_t max_chars_ = 100;
};

}  // namespace

std::unique_ptr<Model> make_wordpiece(const json& j, const std::string& path) { return std::make_unique<WordPiece>(j, path); }

}  // namespace ogx::tok
