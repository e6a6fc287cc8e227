// SentencePiece tokenizer.model folders (no tokenizer.json), through Debian's libsentencepiece, reached via the
// ogx_sentencepiece module (sentencepiece_bridge.cpp explains why it is loaded with dlopen).
#include <dlfcn.h>

#include <mutex>

#include "common/error.h"
#include "genai/tokenizer/backend.h"

namespace ogx::tok {

namespace {

struct SpApi {
  void* (*load)(const char*);
  void (*free_handle)(void*);
  const char* (*error)();
  void (*free_buffer)(void*);
  int (*encode)(void*, const char*, size_t, int**);
  char* (*decode)(void*, const int*, int);
  int (*piece_size)(void*);
  int (*unk_id)(void*);
  int (*piece_to_id)(void*, const char*, size_t);
  char* (*id_to_piece)(void*, int);
  int (*is_control)(void*, int);
  int (*is_unknown)(void*, int);
};

template <typename F>
void bind(void* lib, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  if (!fn) throw_error("SentencePiece module lacks symbol ", name);
}

// Loads the module into a link namespace of its own (dlmopen), where it and libsentencepiece see only their own
// copies of their dependencies and libsentencepiece's protobuf-lite never meets ONNX's libprotobuf. Sanitizer
// runtimes accept this (they refuse RTLD_DEEPBIND); RTLD_DEEPBIND remains the fallback of an unsanitized build
// when no namespace is left.
void* open_module() {
  const char* paths[] = {OGX_SENTENCEPIECE_MODULE, OGX_SENTENCEPIECE_MODULE_INSTALLED, "libogx_sentencepiece.so"};
  for (const char* path : paths)
    if (void* lib = dlmopen(LM_ID_NEWLM, path, RTLD_NOW | RTLD_LOCAL)) return lib;
#if !defined(__SANITIZE_ADDRESS__)
  for (const char* path : paths)
    if (void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND)) return lib;
#endif
  return nullptr;
}

const SpApi& api() {
  static std::once_flag once;
  static SpApi a{};
  static std::string failure;
  std::call_once(once, [] {
    void* lib = open_module();
    if (!lib) {
      failure = std::string("cannot load the SentencePiece module (libogx_sentencepiece.so): ") + dlerror();
      return;
    }
    try {
      bind(lib, "ogx_spm_load", a.load);
      bind(lib, "ogx_spm_free", a.free_handle);
      bind(lib, "ogx_spm_error", a.error);
      bind(lib, "ogx_spm_free_buffer", a.free_buffer);
      bind(lib, "ogx_spm_encode", a.encode);
      bind(lib, "ogx_spm_decode", a.decode);
      bind(lib, "ogx_spm_piece_size", a.piece_size);
      bind(lib, "ogx_spm_unk_id", a.unk_id);
      bind(lib, "ogx_spm_piece_to_id", a.piece_to_id);
      bind(lib, "ogx_spm_id_to_piece", a.id_to_piece);
      bind(lib, "ogx_spm_is_control", a.is_control);
      bind(lib, "ogx_spm_is_unknown", a.is_unknown);
    } catch (const Error& e) {
      failure = e.what();
    }
  });
  if (!failure.empty()) throw Error(failure);
  return a;
}

std::string take_string(const SpApi& a, char* p) {
  std::string s = p ? p : "";
  a.free_buffer(p);
  return s;
}

class SpBackend : public Backend {
 public:
  explicit SpBackend(const std::string& path) : a_(api()) {
    h_ = a_.load(path.c_str());
    if (!h_) throw_error(path, ": cannot load SentencePiece model: ", a_.error());
    size_ = a_.piece_size(h_);
  }
  ~SpBackend() override { a_.free_handle(h_); }
  std::vector<int32_t> encode(std::string_view text) const override {
    int* ids = nullptr;
    int n = a_.encode(h_, text.data(), text.size(), &ids);
    if (n < 0) throw_error("SentencePiece encode failed: ", a_.error());
    std::vector<int32_t> out(ids, ids + n);
    a_.free_buffer(ids);
    return out;
  }
  bool post_process(std::vector<int32_t>&) const override { return false; }
  std::string decode(std::span<const int32_t> ids, bool skip_special) const override {
    std::vector<int> v;
    v.reserve(ids.size());
    for (int32_t id : ids) {
      if (id < 0 || id >= size_)
        throw_error("decode: token id ", id, " is out of range (vocabulary size ", size_, ")");
      if (skip_special && is_special(id)) continue;
      v.push_back(id);
    }
    char* p = a_.decode(h_, v.data(), (int)v.size());
    if (!p) throw_error("SentencePiece decode failed: ", a_.error());
    return take_string(a_, p);
  }
  int32_t token_to_id(std::string_view token) const override {
    int id = a_.piece_to_id(h_, token.data(), token.size());
    if (id == a_.unk_id(h_) && take_string(a_, a_.id_to_piece(h_, id)) != token) return -1;
    return id;
  }
  std::optional<std::string> id_to_token(int32_t id) const override {
    if (id < 0 || id >= size_) return std::nullopt;
    return take_string(a_, a_.id_to_piece(h_, id));
  }
  bool is_special(int32_t id) const override { return a_.is_control(h_, id) || a_.is_unknown(h_, id); }
  size_t vocab_size() const override { return static_cast<size_t>(size_); }
  // A tokenizer.model folder: SentencePiece pieces with the dummy prefix (SentencePiece's default).
  PieceRules piece_rules() const override { return {PieceRules::Kind::sentencepiece, true}; }

 private:
  const SpApi& a_;
  void* h_ = nullptr;
  int size_ = 0;
};

}  // namespace

std::unique_ptr<Backend> make_sentencepiece_backend(const std::string& model_path) {
  return std::make_unique<SpBackend>(model_path);
}

}  // namespace ogx::tok
