// The Hugging Face tokenizer.json pipeline: added tokens -> normalizer -> pre-tokenizer -> model ->
// post-processor, and ids -> tokens -> decoder.
#include <unordered_map>

#include "common/error.h"
#include "genai/tokenizer/added_tokens.h"
#include "genai/tokenizer/backend.h"
#include "genai/tokenizer/components.h"
#include "genai/tokenizer/json_util.h"

namespace ogx::tok {

namespace {

class HfBackend : public Backend, public VocabLookup {
 public:
  explicit HfBackend(const json& j);
  std::vector<int32_t> encode(std::string_view text) const override;
  bool post_process(std::vector<int32_t>& ids) const override {
    if (!post_ || !post_->adds_tokens()) return false;
    post_->process(ids);
    return true;
  }
  std::string decode(std::span<const int32_t> ids, bool skip_special) const override;
  int32_t token_to_id(std::string_view token) const override { return lookup(token); }
  std::optional<std::string> id_to_token(int32_t id) const override {
    if (const std::string* t = token_ptr(id)) return *t;
    return std::nullopt;
  }
  bool is_special(int32_t id) const override {
    auto it = added_by_id_.find(id);
    return it != added_by_id_.end() && it->second.special;
  }
  size_t vocab_size() const override { return vocab_size_; }
  PieceRules piece_rules() const override { return piece_rules_; }
  int32_t lookup(std::string_view token) const override {
    auto it = added_by_content_.find(std::string(token));
    if (it != added_by_content_.end()) return it->second;
    return model_->token_to_id(token);
  }

 private:
  const std::string* token_ptr(int32_t id) const {
    auto it = added_by_id_.find(id);
    if (it != added_by_id_.end()) return &it->second.content;
    return model_->id_to_token(id);
  }
  void encode_normalized(std::string_view text, bool at_start, std::vector<int32_t>& ids) const;

  std::unique_ptr<Normalizer> normalizer_;
  std::unique_ptr<PreTokenizer> pre_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<PostProcessor> post_;
  std::unique_ptr<Decoder> decoder_;
  AddedTokenMatcher raw_matcher_, norm_matcher_;
  std::unordered_map<int32_t, AddedToken> added_by_id_;
  std::unordered_map<std::string, int32_t> added_by_content_;
  size_t vocab_size_ = 0;
  PieceRules piece_rules_;
};

// As ONNX Runtime Extensions tells them apart (JsonFastTokenizer::LoadSpmModelParams): a Unigram model; else a decoder
// that replaces U+2581 by spaces (Replace or Metaspace; ogx also takes a Metaspace decoder outside a Sequence, which
// Extensions does not recognise) is SentencePiece-style, with a dummy prefix when a Metaspace adds a prefix space or a
// Strip removes one leading space.
PieceRules piece_rules_of(const json& j) {
  PieceRules r;
  const json& model = j.value("model", json());
  if (model.is_object() && model.value("type", "") == "Unigram") {
    r.kind = PieceRules::Kind::unigram;
    return r;
  }
  const std::string meta = "\xE2\x96\x81";
  const json& dec = j.value("decoder", json());
  json steps = json::array();
  if (dec.is_object() && dec.contains("decoders") && dec["decoders"].is_array()) steps = dec["decoders"];
  else if (dec.is_object()) steps.push_back(dec);
  for (const auto& step : steps) {
    if (!step.is_object()) continue;
    const std::string type = step.value("type", "");
    if (type == "Replace" && step.contains("pattern") && step["pattern"].is_object() &&
        step["pattern"].value("String", "") == meta) {
      r.kind = PieceRules::Kind::sentencepiece;
    } else if (type == "Metaspace" && step.value("replacement", "") == meta) {
      r.kind = PieceRules::Kind::sentencepiece;
      if (step.value("add_prefix_space", false) || step.value("prepend_scheme", "never") != "never")
        r.add_dummy_prefix = true;
    } else if (type == "Strip" && step.value("content", "") == " ") {
      r.add_dummy_prefix = true;
    }
  }
  return r;
}

HfBackend::HfBackend(const json& j) {
  if (!j.is_object()) throw_error("tokenizer.json: top level: expected an object");
  model_ = make_model(jreq(j, "model", ""), "model");
  normalizer_ = make_normalizer(j.value("normalizer", json()), "normalizer");
  pre_ = make_pre_tokenizer(j.value("pre_tokenizer", json()), "pre_tokenizer");
  decoder_ = make_decoder(j.value("decoder", json()), "decoder");
  if (j.contains("added_tokens") && !j["added_tokens"].is_null()) {
    const auto& arr = jarr(j, "added_tokens", "");
    for (size_t i = 0; i < arr.size(); ++i) {
      std::string p = jpath("added_tokens", i);
      AddedToken t;
      t.content = jstr(arr[i], "content", p);
      t.id = jtoken_id(jreq(arr[i], "id", p), jpath(p, "id"));
      t.special = jbool_or(arr[i], "special", p, false);
      t.lstrip = jbool_or(arr[i], "lstrip", p, false);
      t.rstrip = jbool_or(arr[i], "rstrip", p, false);
      t.single_word = jbool_or(arr[i], "single_word", p, false);
      t.normalized = jbool_or(arr[i], "normalized", p, !t.special);
      added_by_id_[t.id] = t;
      added_by_content_[t.content] = t.id;
      if (t.normalized) {
        std::string n = t.content;
        if (normalizer_) normalizer_->normalize(n);
        norm_matcher_.add(t, n);
      } else {
        raw_matcher_.add(t, t.content);
      }
    }
  }
  post_ = make_post_processor(j.value("post_processor", json()), "post_processor", *this);
  piece_rules_ = piece_rules_of(j);
  vocab_size_ = model_->vocab_size();
  for (const auto& [id, t] : added_by_id_) vocab_size_ = std::max(vocab_size_, static_cast<size_t>(id) + 1);
}

void HfBackend::encode_normalized(std::string_view text, bool at_start, std::vector<int32_t>& ids) const {
  std::string s(text);
  if (normalizer_) normalizer_->normalize(s);
  std::vector<Segment> segs;
  if (norm_matcher_.empty()) segs.push_back({-1, 0, s.size()});
  else norm_matcher_.split(s, segs);
  std::string_view sv = s;
  for (const auto& seg : segs) {
    if (seg.id >= 0) { ids.push_back(seg.id); continue; }
    std::string_view text = sv.substr(seg.begin, seg.end - seg.begin);
    if (pre_) pre_->split(text, at_start && seg.begin == 0, [&](std::string_view piece, bool) { model_->tokenize(piece, ids); });
    else model_->tokenize(text, ids);
  }
}

std::vector<int32_t> HfBackend::encode(std::string_view text) const {
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 4);
  if (raw_matcher_.empty()) {
    if (!text.empty()) encode_normalized(text, true, ids);
    return ids;
  }
  std::vector<Segment> segs;
  raw_matcher_.split(text, segs);
  for (const auto& seg : segs) {
    if (seg.id >= 0) ids.push_back(seg.id);
    else encode_normalized(text.substr(seg.begin, seg.end - seg.begin), seg.begin == 0, ids);
  }
  return ids;
}

std::string HfBackend::decode(std::span<const int32_t> ids, bool skip_special) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    const std::string* t = token_ptr(id);
    if (!t) throw_error("decode: token id ", id, " is out of range (vocabulary size ", vocab_size_, ")");
    if (skip_special && is_special(id)) continue;
    tokens.push_back(*t);
  }
  if (decoder_) decoder_->decode_chain(tokens);
  std::string out;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (i && !decoder_) out += ' ';
    out += tokens[i];
  }
  return out;
}

}  // namespace

std::unique_ptr<Backend> make_hf_backend(const nlohmann::json& j) { return std::make_unique<HfBackend>(j); }

}  // namespace ogx::tok
