// ogx::tok — text <-> token ids for LLMs, compatible with Hugging Face `tokenizers` (tokenizer.json) and
// SentencePiece (tokenizer.model) folders as shipped with ONNX Runtime GenAI models.
//
// Invalid UTF-8 given to encode(): every invalid byte sequence is replaced by U+FFFD (one per maximal invalid
// subpart, like Rust's String::from_utf8_lossy) before tokenization; encode never fails on text.
// decode() returns valid UTF-8: incomplete or invalid byte sequences produced by byte tokens become U+FFFD.
// Ids outside the vocabulary make decode()/id_to_token() throw ogx::Error.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ogx::tok {

class Backend;  // internal: tokenizer.json pipeline or SentencePiece model

// How ONNX Runtime Extensions' streaming detokenizer (what onnxruntime_genai's TokenizerStream runs) renders one id:
// byte-level BPE (bytes of the token), SentencePiece-style BPE (a decoder that maps U+2581 to spaces: pieces with
// spaces, <0xXX> byte pieces, the leading space dropped right after a special token when the encoder adds a dummy
// prefix) or Unigram (a leading or trailing U+2581 becomes a space, never dropped).
struct PieceRules {
  enum class Kind { byte_level, sentencepiece, unigram };
  Kind kind = Kind::byte_level;
  bool add_dummy_prefix = false;
};

class Tokenizer {
 public:
  // Loads a model folder: tokenizer.json (or tokenizer.json.xz) + optional tokenizer_config.json and
  // generation_config.json; or, without tokenizer.json, a SentencePiece tokenizer.model.
  static std::shared_ptr<Tokenizer> load(const std::string& dir);
  // Builds from in-memory JSON texts (tokenizer.json content, optional tokenizer_config.json content).
  static std::shared_ptr<Tokenizer> from_json(const std::string& tokenizer_json, const std::string& config_json = "");
  ~Tokenizer();

  std::vector<int32_t> encode(std::string_view text, bool add_special_tokens = true) const;
  std::vector<std::vector<int32_t>> encode_batch(const std::vector<std::string>& texts, bool add_special_tokens = true) const;
  std::string decode(std::span<const int32_t> ids, bool skip_special_tokens = false) const;
  std::vector<std::string> decode_batch(const std::vector<std::vector<int32_t>>& ids, bool skip_special_tokens = false) const;
  // decode() before the final UTF-8 repair (may end in an incomplete UTF-8 sequence); used by TokenizerStream.
  std::string decode_bytes(std::span<const int32_t> ids, bool skip_special_tokens = false) const;

  int32_t token_to_id(std::string_view token) const;  // -1 if absent
  std::string id_to_token(int32_t id) const;           // throws ogx::Error if out of range
  bool is_special(int32_t id) const;

  int32_t bos_token_id() const { return bos_id_; }                   // -1 if none
  const std::vector<int32_t>& eos_token_ids() const { return eos_ids_; }
  int32_t pad_token_id() const { return pad_id_; }                   // -1 if none
  const std::string& bos_token() const { return bos_; }
  const std::string& eos_token() const { return eos_; }
  const std::string& pad_token() const { return pad_; }
  const std::string& unk_token() const { return unk_; }
  size_t vocab_size() const;  // highest id + 1, added tokens included
  // How onnxruntime_genai's TokenizerStream renders one id of this tokenizer (backend.h), and tokenizer_config.json's
  // clean_up_tokenization_spaces (which that stream reads to put spaces around special tokens).
  PieceRules piece_rules() const;
  bool clean_up_tokenization_spaces() const { return clean_up_spaces_; }

  // The default chat template (name "" or "default"), or a named one; empty string if absent.
  const std::string& chat_template(const std::string& name = "") const;
  const std::map<std::string, std::string>& chat_templates() const { return templates_; }
  // Renders messages (a JSON array of {role, content, ...}) through the Jinja engine (ogx_chat_template).
  // tools_json: JSON array or "" for none. template_override: template source used instead of the default.
  // template_kwargs_json: a JSON object of extra template variables (e.g. {"enable_thinking": false}) or "".
  std::string apply_chat_template(const std::string& messages_json, bool add_generation_prompt,
                                  const std::string& tools_json = "", const std::string& template_override = "",
                                  const std::string& template_kwargs_json = "") const;

 private:
  Tokenizer();
  void apply_config(const std::string& config_json, const std::string& gen_config_json);

  std::unique_ptr<Backend> backend_;
  bool add_bos_ = false, add_eos_ = false, clean_up_spaces_ = false;
  std::string bos_, eos_, pad_, unk_;
  int32_t bos_id_ = -1, pad_id_ = -1;
  std::vector<int32_t> eos_ids_;
  std::map<std::string, std::string> templates_;  // "default" = the default template
};

// Incremental detokenizer: decode(id) returns the text the new token adds. Two styles:
// - full_decode (ogx's own: serve, the CLI): the concatenated chunks equal Tokenizer::decode of all ids
//   (SentencePiece leading-space rules included). Text that ends in an incomplete UTF-8 sequence (U+FFFD at the end
//   of the decoded text) is held back until a later token completes it.
// - per_token (the C, C++ and Python APIs): onnxruntime_genai's TokenizerStream, i.e. ONNX Runtime Extensions'
//   streaming detokenizer (BpeStreamingDecoder::Id2Token, Extensions fe4e13f, which ONNX Runtime GenAI 0.15 builds
//   with): each id rendered on its own by piece_rules() (stream_per_token.cpp), a SentencePiece piece's leading
//   space dropped only right after a special token (so a fresh stream keeps the first word's space, and one stream
//   reused for several BOS-prefixed prompts gives each prompt's text), special tokens always empty for
//   SentencePiece / Unigram tokenizers, spaces around special tokens with clean_up_tokenization_spaces, incomplete
//   UTF-8 held back and invalid UTF-8 dropped.
class TokenizerStream {
 public:
  enum class Style { full_decode, per_token };
  explicit TokenizerStream(std::shared_ptr<const Tokenizer> tokenizer, bool skip_special_tokens = false,
                           Style style = Style::full_decode);
  std::string decode(int32_t id);
  // Resets the stream; full_decode: returns any held-back text (e.g. a trailing U+FFFD that no later token
  // completed); per_token: returns "" (an unfinished character's bytes are invalid on their own, dropped).
  std::string flush();
  void reset();

 private:
  std::string decode_per_token(int32_t id);
  std::string piece_text(int32_t id, bool& special) const;  // stream_per_token.cpp

  std::shared_ptr<const Tokenizer> tok_;
  bool skip_special_;
  Style style_;
  // full_decode: the ids since the last emitted prefix and the text they decode to.
  std::vector<int32_t> ids_;
  std::string prefix_;
  size_t prefix_index_ = 0;
  // per_token: the tokenizer's rules, read once (channel_model_: gpt-oss, whose special tokens are always output;
  // eos_id_: tokenizer_config.json's eos_token, -1 if none), and Extensions' decoder state (a fresh stream, the last
  // token special, bytes of an unfinished character).
  PieceRules rules_;
  bool channel_model_ = false;
  int32_t eos_id_ = -1;
  bool first_ = true, special_last_ = false;
  std::string pending_utf8_;
};

}  // namespace ogx::tok
