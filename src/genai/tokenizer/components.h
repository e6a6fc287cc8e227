// Internal interfaces of the Hugging Face tokenizer pipeline:
// added-token split -> normalizer -> pre-tokenizer -> model -> post-processor; decoder for the way back.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

namespace ogx::tok {

using json = nlohmann::json;

struct Normalizer {
  virtual ~Normalizer() = default;
  virtual void normalize(std::string& s) const = 0;
};

// Non-owning callable reference (cheap to pass down the pre-tokenizer chain).
template <typename F>
class FnRef;
template <typename R, typename... A>
class FnRef<R(A...)> {
 public:
  template <typename F>
    requires(!std::is_same_v<std::decay_t<F>, FnRef>)
  FnRef(F&& f) : obj_(const_cast<void*>(static_cast<const void*>(&f))),  // NOLINT: implicit by design
                 call_([](void* o, A... a) -> R { return (*static_cast<std::remove_reference_t<F>*>(o))(a...); }) {}
  R operator()(A... a) const { return call_(obj_, a...); }

 private:
  void* obj_;
  R (*call_)(void*, A...);
};

// Receives one piece; `at_start`: the piece begins the original input (Metaspace prepend_scheme "first").
// The view is valid only during the call.
using PieceSink = FnRef<void(std::string_view, bool)>;

// Pre-tokenizers split each piece independently, so the chain runs depth-first: no list of all pieces of a
// long text is ever materialised.
struct PreTokenizer {
  virtual ~PreTokenizer() = default;
  virtual void split(std::string_view text, bool at_start, PieceSink emit) const = 0;
};

struct Model {
  virtual ~Model() = default;
  // Appends the ids of one pre-tokenized word.
  virtual void tokenize(std::string_view word, std::vector<int32_t>& out) const = 0;
  virtual int32_t token_to_id(std::string_view token) const = 0;  // -1 if absent
  virtual const std::string* id_to_token(int32_t id) const = 0;   // nullptr if absent
  virtual size_t vocab_size() const = 0;
};

struct Decoder {
  virtual ~Decoder() = default;
  virtual void decode_chain(std::vector<std::string>& tokens) const = 0;
};

struct PostProcessor {
  virtual ~PostProcessor() = default;
  // Adds the special tokens around one sequence (called only when add_special_tokens is true).
  virtual void process(std::vector<int32_t>& ids) const = 0;
  virtual bool adds_tokens() const { return true; }
};

// Resolves a token string to an id (added tokens and model vocabulary); -1 if absent.
struct VocabLookup {
  virtual ~VocabLookup() = default;
  virtual int32_t lookup(std::string_view token) const = 0;
};

// Factories. `path` is the JSON path of `j` ("normalizer", "pre_tokenizer.pretokenizers[0]", ...) used in errors.
std::unique_ptr<Normalizer> make_normalizer(const json& j, const std::string& path);
std::unique_ptr<PreTokenizer> make_pre_tokenizer(const json& j, const std::string& path);
std::unique_ptr<Model> make_model(const json& j, const std::string& path);
std::unique_ptr<Decoder> make_decoder(const json& j, const std::string& path);
std::unique_ptr<PostProcessor> make_post_processor(const json& j, const std::string& path, const VocabLookup& vocab);

// Model constructors (also used by tests).
std::unique_ptr<Model> make_bpe(const json& j, const std::string& path);
std::unique_ptr<Model> make_unigram(const json& j, const std::string& path);
std::unique_ptr<Model> make_wordpiece(const json& j, const std::string& path);

}  // namespace ogx::tok
