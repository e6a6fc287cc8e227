// SentencePiece tokenizer.model folders (no tokenizer.json), through Debian's libsentencepiece.
#include <sentencepiece_processor.h>

#include "common/error.h"
#include "genai/tokenizer/backend.h"

namespace ogx::tok {

namespace {

class SpBackend : public Backend {
 public:
  explicit SpBackend(const std::string& path) {
    auto st = sp_.Load(path);
    if (!st.ok()) throw_error(path, ": cannot load SentencePiece model: ", st.ToString());
  }
  std::vector<int32_t> encode(std::string_view text) const override {
    std::vector<int> ids;
    auto st = sp_.Encode(text, &ids);
    if (!st.ok()) throw_error("SentencePiece encode failed: ", st.ToString());
    return std::vector<int32_t>(ids.begin(), ids.end());
  }
  bool post_process(std::vector<int32_t>&) const override { return false; }
  std::string decode(std::span<const int32_t> ids, bool skip_special) const override {
    std::vector<int> v;
    v.reserve(ids.size());
    for (int32_t id : ids) {
      if (id < 0 || id >= sp_.GetPieceSize())
        throw_error("decode: token id ", id, " is out of range (vocabulary size ", sp_.GetPieceSize(), ")");
      if (skip_special && is_special(id)) continue;
      v.push_back(id);
    }
    std::string out;
    auto st = sp_.Decode(v, &out);
    if (!st.ok()) throw_error("SentencePiece decode failed: ", st.ToString());
    return out;
  }
  int32_t token_to_id(std::string_view token) const override {
    int id = sp_.PieceToId(token);
    if (id == sp_.unk_id() && sp_.IdToPiece(id) != token) return -1;
    return id;
  }
  std::optional<std::string> id_to_token(int32_t id) const override {
    if (id < 0 || id >= sp_.GetPieceSize()) return std::nullopt;
    return sp_.IdToPiece(id);
  }
  bool is_special(int32_t id) const override { return sp_.IsControl(id) || sp_.IsUnknown(id); }
  size_t vocab_size() const override { return static_cast<size_t>(sp_.GetPieceSize()); }

 private:
  sentencepiece::SentencePieceProcessor sp_;
};

}  // namespace

std::unique_ptr<Backend> make_sentencepiece_backend(const std::string& model_path) {
  return std::make_unique<SpBackend>(model_path);
}

}  // namespace ogx::tok
