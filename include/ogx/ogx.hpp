// ogx C++ API: a header-only wrapper over the C API (ogx.h) in the shape of ONNX Runtime GenAI's ort_genai.h.
//
// Every object owns its C handle (RAII, move-only) and every failing call throws ogx::Exception carrying the C
// error's code and message. Objects are created with a static Create(...) returning std::unique_ptr, as in
// ort_genai.h (OgaModel::Create -> ogx::Model::Create), or constructed directly.
// Ownership and thread-safety rules are those of ogx.h: an object keeps alive what it was created from, so e.g. a
// Generator may outlive the Model it was created with.
//
// The names live in the inline namespace ogx::v1 so that they never collide with the engine's internal ogx::
// symbols; write them as ogx::Model, ogx::Generator, ...
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ogx/ogx.h"

namespace ogx {
inline namespace v1 {

class Exception : public std::runtime_error {
 public:
  Exception(OgxErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  OgxErrorCode code() const noexcept { return code_; }

 private:
  OgxErrorCode code_;
};

namespace detail {

// Throws for an error result (freeing it), returns for NULL.
inline void check(OgxResult* r) {
  if (!r) return;
  OgxErrorCode code = OgxResultGetCode(r);
  std::string message = OgxResultGetError(r);
  OgxDestroyResult(r);
  throw Exception(code, message);
}

// Takes a caller-owned C string into a std::string.
inline std::string take(const char* s) {
  std::string out = s ? s : "";
  OgxDestroyString(s);
  return out;
}

// Owns one C handle; destroyed with D.
template <typename T, void (*D)(T*)>
class Handle {
 public:
  Handle() = default;
  explicit Handle(T* p) : p_(p) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) reset(std::exchange(o.p_, nullptr));
    return *this;
  }
  ~Handle() { reset(); }
  void reset(T* p = nullptr) {
    if (p_) D(p_);
    p_ = p;
  }
  T* get() const { return p_; }

 private:
  T* p_ = nullptr;
};

}  // namespace detail

inline std::string Version() { return OgxGetVersion(); }

// JSON {"devices": [...]} (see OgxGetAvailableDevices).
inline std::string GetAvailableDevices() {
  const char* s = nullptr;
  detail::check(OgxGetAvailableDevices(&s));
  return detail::take(s);
}

inline bool IsProviderAvailable(const char* provider) {
  bool out = false;
  detail::check(OgxIsProviderAvailable(provider, &out));
  return out;
}

// ort_genai.h's Oga::SetLogCallback: each message and its length (nullptr restores the default).
inline void SetLogCallback(void (*callback)(const char* string, size_t length)) {
  detail::check(OgxSetLogCallback(callback));
}
// ogx's form: the level and user_data are passed back.
inline void SetLogCallback(OgxLogCallback callback, void* user_data) {
  detail::check(OgxSetLogCallbackWithLevel(callback, user_data));
}
inline void SetLogLevel(OgxLogLevel level) { detail::check(OgxSetLogLevel(level)); }
inline void SetLogBool(const char* name, bool value) { detail::check(OgxSetLogBool(name, value)); }
inline void SetLogString(const char* name, const char* value) { detail::check(OgxSetLogString(name, value)); }
inline void SetCurrentGpuDeviceId(int device_id) { detail::check(OgxSetCurrentGpuDeviceId(device_id)); }
inline int GetCurrentGpuDeviceId() {
  int id = 0;
  detail::check(OgxGetCurrentGpuDeviceId(&id));
  return id;
}

class Config {
 public:
  explicit Config(const char* path) {
    OgxConfig* p = nullptr;
    detail::check(OgxCreateConfig(path, &p));
    h_.reset(p);
  }
  static std::unique_ptr<Config> Create(const char* path) { return std::make_unique<Config>(path); }

  void ClearProviders() { detail::check(OgxConfigClearProviders(get())); }
  void AppendProvider(const char* provider) { detail::check(OgxConfigAppendProvider(get(), provider)); }
  // Device filtering keys (hardware_device_type, hardware_device_id, hardware_vendor_id) are accepted too.
  void SetProviderOption(const char* provider, const char* key, const char* value) {
    detail::check(OgxConfigSetProviderOption(get(), provider, key, value));
  }
  void Overlay(const char* json) { detail::check(OgxConfigOverlay(get(), json)); }
  // The bytes are copied.
  void AddModelData(const char* model_filename, const void* data, size_t length) {
    detail::check(OgxConfigAddModelData(get(), model_filename, data, length));
  }
  void RemoveModelData(const char* model_filename) { detail::check(OgxConfigRemoveModelData(get(), model_filename)); }
  void SetDecoderProviderOptionsHardwareDeviceType(const char* provider, const char* type) {
    detail::check(OgxConfigSetDecoderProviderOptionsHardwareDeviceType(get(), provider, type));
  }
  void SetDecoderProviderOptionsHardwareDeviceId(const char* provider, uint32_t id) {
    detail::check(OgxConfigSetDecoderProviderOptionsHardwareDeviceId(get(), provider, id));
  }
  void SetDecoderProviderOptionsHardwareVendorId(const char* provider, uint32_t id) {
    detail::check(OgxConfigSetDecoderProviderOptionsHardwareVendorId(get(), provider, id));
  }
  void ClearDecoderProviderOptionsHardwareDeviceType(const char* provider) {
    detail::check(OgxConfigClearDecoderProviderOptionsHardwareDeviceType(get(), provider));
  }
  void ClearDecoderProviderOptionsHardwareDeviceId(const char* provider) {
    detail::check(OgxConfigClearDecoderProviderOptionsHardwareDeviceId(get(), provider));
  }
  void ClearDecoderProviderOptionsHardwareVendorId(const char* provider) {
    detail::check(OgxConfigClearDecoderProviderOptionsHardwareVendorId(get(), provider));
  }
  OgxConfig* get() const { return h_.get(); }

 private:
  detail::Handle<OgxConfig, OgxDestroyConfig> h_;
};

// ONNX Runtime GenAI's OgaRuntimeSettings: named provider handles passed at model creation (see ogx.h).
class RuntimeSettings {
 public:
  RuntimeSettings() {
    OgxRuntimeSettings* p = nullptr;
    detail::check(OgxCreateRuntimeSettings(&p));
    h_.reset(p);
  }
  static std::unique_ptr<RuntimeSettings> Create() { return std::make_unique<RuntimeSettings>(); }
  void SetHandle(const char* name, void* handle) { detail::check(OgxRuntimeSettingsSetHandle(get(), name, handle)); }
  OgxRuntimeSettings* get() const { return h_.get(); }

 private:
  detail::Handle<OgxRuntimeSettings, OgxDestroyRuntimeSettings> h_;
};

class Model {
 public:
  Model(const char* path, const RuntimeSettings& settings) {
    OgxModel* p = nullptr;
    detail::check(OgxCreateModelWithRuntimeSettings(path, settings.get(), &p));
    h_.reset(p);
  }
  static std::unique_ptr<Model> Create(const char* path, const RuntimeSettings& settings) {
    return std::make_unique<Model>(path, settings);
  }
  explicit Model(const Config& config) {
    OgxModel* p = nullptr;
    detail::check(OgxCreateModelFromConfig(config.get(), &p));
    h_.reset(p);
  }
  explicit Model(const char* path) {
    OgxModel* p = nullptr;
    detail::check(OgxCreateModel(path, &p));
    h_.reset(p);
  }
  static std::unique_ptr<Model> Create(const Config& config) { return std::make_unique<Model>(config); }
  static std::unique_ptr<Model> Create(const char* path) { return std::make_unique<Model>(path); }

  std::string GetType() const {
    const char* s = nullptr;
    detail::check(OgxModelGetType(get(), &s));
    return detail::take(s);
  }
  std::string GetDeviceType() const {
    const char* s = nullptr;
    detail::check(OgxModelGetDeviceType(get(), &s));
    return detail::take(s);
  }
  OgxModel* get() const { return h_.get(); }

 private:
  detail::Handle<OgxModel, OgxDestroyModel> h_;
};

class Sequences {
 public:
  Sequences() {
    OgxSequences* p = nullptr;
    detail::check(OgxCreateSequences(&p));
    h_.reset(p);
  }
  static std::unique_ptr<Sequences> Create() { return std::make_unique<Sequences>(); }

  size_t Count() const { return OgxSequencesCount(get()); }
  size_t SequenceCount(size_t index) const { return OgxSequencesGetSequenceCount(get(), index); }
  const int32_t* SequenceData(size_t index) const { return OgxSequencesGetSequenceData(get(), index); }
  std::span<const int32_t> Get(size_t index) const {
    if (index >= Count()) throw Exception(OgxErrorCode_InvalidArgument, "Sequences::Get: index out of range");
    return {SequenceData(index), SequenceCount(index)};
  }
  void Append(std::span<const int32_t> tokens) {
    detail::check(OgxAppendTokenSequence(tokens.data(), tokens.size(), get()));
  }
  void Append(int32_t token, size_t sequence_index) {
    detail::check(OgxAppendTokenToSequence(token, get(), sequence_index));
  }
  OgxSequences* get() const { return h_.get(); }

 private:
  detail::Handle<OgxSequences, OgxDestroySequences> h_;
};

class Tensor {
 public:
  // data != nullptr: the tensor borrows it (it must outlive the tensor); nullptr: the tensor owns zeroed memory.
  Tensor(void* data, const std::vector<int64_t>& shape, OgxElementType type) {
    OgxTensor* p = nullptr;
    detail::check(OgxCreateTensorFromBuffer(data, shape.data(), shape.size(), type, &p));
    h_.reset(p);
  }
  static std::unique_ptr<Tensor> Create(void* data, const std::vector<int64_t>& shape, OgxElementType type) {
    return std::make_unique<Tensor>(data, shape, type);
  }
  // Takes ownership of a tensor returned by the C API.
  static std::unique_ptr<Tensor> Adopt(OgxTensor* p) { return std::unique_ptr<Tensor>(new Tensor(p)); }

  OgxElementType Type() const {
    OgxElementType t = OgxElementType_undefined;
    detail::check(OgxTensorGetType(get(), &t));
    return t;
  }
  std::vector<int64_t> Shape() const {
    size_t rank = 0;
    detail::check(OgxTensorGetShapeRank(get(), &rank));
    std::vector<int64_t> shape(rank);
    detail::check(OgxTensorGetShape(get(), shape.data(), rank));
    return shape;
  }
  void* Data() const {
    void* d = nullptr;
    detail::check(OgxTensorGetData(get(), &d));
    return d;
  }
  size_t ElementCount() const {
    size_t n = 1;
    for (int64_t d : Shape()) n *= static_cast<size_t>(d);
    return n;
  }
  OgxTensor* get() const { return h_.get(); }

 private:
  explicit Tensor(OgxTensor* p) : h_(p) {}
  detail::Handle<OgxTensor, OgxDestroyTensor> h_;
};

// Tensors by name (extra model inputs for Generator::SetInputs).
class NamedTensors {
 public:
  NamedTensors() {
    OgxNamedTensors* p = nullptr;
    detail::check(OgxCreateNamedTensors(&p));
    h_.reset(p);
  }
  static std::unique_ptr<NamedTensors> Create() { return std::make_unique<NamedTensors>(); }
  std::unique_ptr<Tensor> Get(const char* name) const {
    OgxTensor* p = nullptr;
    detail::check(OgxNamedTensorsGet(get(), name, &p));
    return Tensor::Adopt(p);
  }
  void Set(const char* name, const Tensor& tensor) { detail::check(OgxNamedTensorsSet(get(), name, tensor.get())); }
  void Delete(const char* name) { detail::check(OgxNamedTensorsDelete(get(), name)); }
  size_t Count() const {
    size_t n = 0;
    detail::check(OgxNamedTensorsCount(get(), &n));
    return n;
  }
  std::vector<std::string> GetNames() const {
    OgxStringArray* a = nullptr;
    detail::check(OgxNamedTensorsGetNames(get(), &a));
    detail::Handle<OgxStringArray, OgxDestroyStringArray> owner(a);
    size_t n = 0;
    detail::check(OgxStringArrayGetCount(a, &n));
    std::vector<std::string> out;
    for (size_t i = 0; i < n; i++) {
      const char* s = nullptr;
      detail::check(OgxStringArrayGetString(a, i, &s));
      out.emplace_back(s);
    }
    return out;
  }
  OgxNamedTensors* get() const { return h_.get(); }

 private:
  detail::Handle<OgxNamedTensors, OgxDestroyNamedTensors> h_;
};

class Tokenizer {
 public:
  explicit Tokenizer(const Model& model) {
    OgxTokenizer* p = nullptr;
    detail::check(OgxCreateTokenizer(model.get(), &p));
    h_.reset(p);
  }
  static std::unique_ptr<Tokenizer> Create(const Model& model) { return std::make_unique<Tokenizer>(model); }

  // Appends the encoding of `text` to `sequences` as a new sequence.
  void Encode(const char* text, Sequences& sequences) const {
    detail::check(OgxTokenizerEncode(get(), text, sequences.get()));
  }
  std::vector<int32_t> Encode(const char* text) const {
    Sequences s;
    Encode(text, s);
    auto v = s.Get(0);
    return {v.begin(), v.end()};
  }
  // int32 [count, longest], right-padded with the pad token id.
  std::unique_ptr<Tensor> EncodeBatch(const std::vector<std::string>& texts) const {
    std::vector<const char*> ptrs;
    for (auto& t : texts) ptrs.push_back(t.c_str());
    OgxTensor* p = nullptr;
    detail::check(OgxTokenizerEncodeBatch(get(), ptrs.data(), ptrs.size(), &p));
    return Tensor::Adopt(p);
  }
  std::string Decode(std::span<const int32_t> tokens) const {
    const char* s = nullptr;
    detail::check(OgxTokenizerDecode(get(), tokens.data(), tokens.size(), &s));
    return detail::take(s);
  }
  std::vector<std::string> DecodeBatch(const Tensor& tokens) const {
    OgxStringArray* a = nullptr;
    detail::check(OgxTokenizerDecodeBatch(get(), tokens.get(), &a));
    detail::Handle<OgxStringArray, OgxDestroyStringArray> owner(a);
    size_t n = 0;
    detail::check(OgxStringArrayGetCount(a, &n));
    std::vector<std::string> out;
    for (size_t i = 0; i < n; i++) {
      const char* s = nullptr;
      detail::check(OgxStringArrayGetString(a, i, &s));
      out.emplace_back(s);
    }
    return out;
  }
  int32_t ToTokenId(const char* text) const {
    int32_t id = -1;
    detail::check(OgxTokenizerToTokenId(get(), text, &id));
    return id;
  }
  // template_str / tools: nullptr for the tokenizer's template / no tools.
  std::string ApplyChatTemplate(const char* template_str, const char* messages, const char* tools,
                                bool add_generation_prompt) const {
    const char* s = nullptr;
    detail::check(OgxTokenizerApplyChatTemplate(get(), template_str, messages, tools, add_generation_prompt, &s));
    return detail::take(s);
  }
  // template_kwargs: a JSON object of extra template variables, or nullptr.
  std::string ApplyChatTemplate(const char* template_str, const char* messages, const char* tools,
                                const char* template_kwargs, bool add_generation_prompt) const {
    const char* s = nullptr;
    detail::check(OgxTokenizerApplyChatTemplateWithOptions(get(), template_str, messages, tools, template_kwargs,
                                                           add_generation_prompt, &s));
    return detail::take(s);
  }
  int32_t GetBosTokenId() const {
    int32_t id = -1;
    detail::check(OgxTokenizerGetBosTokenId(get(), &id));
    return id;
  }
  int32_t GetPadTokenId() const {
    int32_t id = -1;
    detail::check(OgxTokenizerGetPadTokenId(get(), &id));
    return id;
  }
  std::vector<int32_t> GetEosTokenIds() const {
    const int32_t* ids = nullptr;
    size_t n = 0;
    detail::check(OgxTokenizerGetEosTokenIds(get(), &ids, &n));
    return {ids, ids + n};
  }
  // Tool-call and reasoning markers; throw when the model has none.
  int32_t GetBotTokenId() const { return id_of(OgxTokenizerGetBotTokenId); }
  int32_t GetEotTokenId() const { return id_of(OgxTokenizerGetEotTokenId); }
  int32_t GetBorTokenId() const { return id_of(OgxTokenizerGetBorTokenId); }
  int32_t GetEorTokenId() const { return id_of(OgxTokenizerGetEorTokenId); }
  void UpdateOptions(const char* const* keys, const char* const* values, size_t num_options) {
    detail::check(OgxUpdateTokenizerOptions(get(), keys, values, num_options));
  }
  OgxTokenizer* get() const { return h_.get(); }

 private:
  int32_t id_of(OgxResult* (*fn)(const OgxTokenizer*, int32_t*)) const {
    int32_t id = -1;
    detail::check(fn(get(), &id));
    return id;
  }
  detail::Handle<OgxTokenizer, OgxDestroyTokenizer> h_;
};

class TokenizerStream {
 public:
  explicit TokenizerStream(const Tokenizer& tokenizer) {
    OgxTokenizerStream* p = nullptr;
    detail::check(OgxCreateTokenizerStream(tokenizer.get(), &p));
    h_.reset(p);
  }
  static std::unique_ptr<TokenizerStream> Create(const Tokenizer& tokenizer) {
    return std::make_unique<TokenizerStream>(tokenizer);
  }
  // The text this token adds (borrowed: valid until the next call on this stream).
  const char* Decode(int32_t token) {
    const char* s = nullptr;
    detail::check(OgxTokenizerStreamDecode(get(), token, &s));
    return s;
  }
  // Resets the stream (ogx's addition); returns "" (an unfinished character's bytes are dropped, as invalid UTF-8).
  std::string Flush() {
    const char* s = nullptr;
    detail::check(OgxTokenizerStreamFlush(get(), &s));
    return s;
  }
  OgxTokenizerStream* get() const { return h_.get(); }

 private:
  detail::Handle<OgxTokenizerStream, OgxDestroyTokenizerStream> h_;
};

class GeneratorParams {
 public:
  explicit GeneratorParams(const Model& model) {
    OgxGeneratorParams* p = nullptr;
    detail::check(OgxCreateGeneratorParams(model.get(), &p));
    h_.reset(p);
  }
  static std::unique_ptr<GeneratorParams> Create(const Model& model) {
    return std::make_unique<GeneratorParams>(model);
  }
  void SetSearchOption(const char* name, double value) {
    detail::check(OgxGeneratorParamsSetSearchNumber(get(), name, value));
  }
  void SetSearchOptionBool(const char* name, bool value) {
    detail::check(OgxGeneratorParamsSetSearchBool(get(), name, value));
  }
  // Structured output: "json_schema", "regex", "lark_grammar" or "json_object" (OgxGeneratorParamsSetGuidance).
  void SetGuidance(const char* type, const char* data, bool enable_ff_tokens = false) {
    detail::check(OgxGeneratorParamsSetGuidance(get(), type, data, enable_ff_tokens));
  }
  double GetSearchNumber(const char* name) const {
    double v = 0;
    detail::check(OgxGeneratorParamsGetSearchNumber(get(), name, &v));
    return v;
  }
  bool GetSearchBool(const char* name) const {
    bool v = false;
    detail::check(OgxGeneratorParamsGetSearchBool(get(), name, &v));
    return v;
  }
  void SetSpeculativeNumber(const char* name, double value) {
    detail::check(OgxGeneratorParamsSetSpeculativeNumber(get(), name, value));
  }
  void SetSpeculativeBool(const char* name, bool value) {
    detail::check(OgxGeneratorParamsSetSpeculativeBool(get(), name, value));
  }
  double GetSpeculativeNumber(const char* name) const {
    double v = 0;
    detail::check(OgxGeneratorParamsGetSpeculativeNumber(get(), name, &v));
    return v;
  }
  bool GetSpeculativeBool(const char* name) const {
    bool v = false;
    detail::check(OgxGeneratorParamsGetSpeculativeBool(get(), name, &v));
    return v;
  }
  OgxGeneratorParams* get() const { return h_.get(); }

 private:
  detail::Handle<OgxGeneratorParams, OgxDestroyGeneratorParams> h_;
};

// A snapshot of a generator's speculative-decoding counters.
class SpeculativeStats {
 public:
  uint64_t GetCount(const char* name) const {
    uint64_t v = 0;
    detail::check(OgxSpeculativeStatsGetCount(h_.get(), name, &v));
    return v;
  }
  double GetNumber(const char* name) const {
    double v = 0;
    detail::check(OgxSpeculativeStatsGetNumber(h_.get(), name, &v));
    return v;
  }
  bool GetBool(const char* name) const {
    bool v = false;
    detail::check(OgxSpeculativeStatsGetBool(h_.get(), name, &v));
    return v;
  }

 private:
  friend class Generator;
  explicit SpeculativeStats(OgxSpeculativeStats* p) : h_(p) {}
  detail::Handle<OgxSpeculativeStats, OgxDestroySpeculativeStats> h_;
};

// LoRA adapters loaded for a model (ort_genai.h's OgaAdapters).
class Adapters {
 public:
  explicit Adapters(const Model& model) {
    OgxAdapters* p = nullptr;
    detail::check(OgxCreateAdapters(model.get(), &p));
    h_.reset(p);
  }
  static std::unique_ptr<Adapters> Create(const Model& model) { return std::make_unique<Adapters>(model); }
  void LoadAdapter(const char* adapter_file_path, const char* adapter_name) {
    detail::check(OgxLoadAdapter(get(), adapter_file_path, adapter_name));
  }
  void UnloadAdapter(const char* adapter_name) { detail::check(OgxUnloadAdapter(get(), adapter_name)); }
  OgxAdapters* get() const { return h_.get(); }

 private:
  detail::Handle<OgxAdapters, OgxDestroyAdapters> h_;
};

class Generator {
 public:
  Generator(const Model& model, const GeneratorParams& params) {
    OgxGenerator* p = nullptr;
    detail::check(OgxCreateGenerator(model.get(), params.get(), &p));
    h_.reset(p);
  }
  static std::unique_ptr<Generator> Create(const Model& model, const GeneratorParams& params) {
    return std::make_unique<Generator>(model, params);
  }

  bool IsDone() const { return OgxGenerator_IsDone(get()); }
  void AppendTokens(const int32_t* ids, size_t count) { detail::check(OgxGenerator_AppendTokens(get(), ids, count)); }
  void AppendTokens(std::span<const int32_t> ids) { AppendTokens(ids.data(), ids.size()); }
  void AppendTokenSequences(const Sequences& sequences) {
    detail::check(OgxGenerator_AppendTokenSequences(get(), sequences.get()));
  }
  void GenerateNextToken() { detail::check(OgxGenerator_GenerateNextToken(get())); }
  // Borrowed: valid until the next call that changes the generator.
  std::span<const int32_t> GetNextTokens() const {
    const int32_t* p = nullptr;
    size_t n = 0;
    detail::check(OgxGenerator_GetNextTokens(get(), &p, &n));
    return {p, n};
  }
  size_t GetSequenceCount(size_t index) const { return OgxGenerator_GetSequenceCount(get(), index); }
  const int32_t* GetSequenceData(size_t index) const { return OgxGenerator_GetSequenceData(get(), index); }
  std::vector<int32_t> GetSequence(size_t index) const {
    const int32_t* p = GetSequenceData(index);
    if (!p) throw Exception(OgxErrorCode_InvalidArgument, "Generator::GetSequence: no sequence " + std::to_string(index));
    return {p, p + GetSequenceCount(index)};
  }
  size_t TokenCount() const { return OgxGenerator_TokenCount(get()); }
  void AppendTokens(const Tensor& tokens) { detail::check(OgxGenerator_AppendTokensFromTensor(get(), tokens.get())); }
  void SetModelInput(const char* name, const Tensor& tensor) {
    detail::check(OgxGenerator_SetModelInput(get(), name, tensor.get()));
  }
  void SetInputs(const NamedTensors& tensors) { detail::check(OgxGenerator_SetInputs(get(), tensors.get())); }
  void SnapshotState() { detail::check(OgxGenerator_SnapshotState(get())); }
  void SetHiddenStates(const Tensor& hidden_states) {
    detail::check(OgxGenerator_SetHiddenStates(get(), hidden_states.get()));
  }
  // Copies of the latest run's input / output of that name.
  std::unique_ptr<Tensor> GetInput(const char* name) const {
    OgxTensor* p = nullptr;
    detail::check(OgxGenerator_GetInput(get(), name, &p));
    return Tensor::Adopt(p);
  }
  std::unique_ptr<Tensor> GetOutput(const char* name) const {
    OgxTensor* p = nullptr;
    detail::check(OgxGenerator_GetOutput(get(), name, &p));
    return Tensor::Adopt(p);
  }
  void SetRuntimeOption(const char* key, const char* value) {
    detail::check(OgxGenerator_SetRuntimeOption(get(), key, value));
  }
  bool IsSessionTerminated() const { return OgxGenerator_IsSessionTerminated(get()); }
  std::unique_ptr<SpeculativeStats> GetSpeculativeStats() const {
    OgxSpeculativeStats* p = nullptr;
    detail::check(OgxGenerator_GetSpeculativeStats(get(), &p));
    return std::unique_ptr<SpeculativeStats>(new SpeculativeStats(p));
  }
  // float32 [1, 1, vocab], a copy.
  std::unique_ptr<Tensor> GetLogits() {
    OgxTensor* p = nullptr;
    detail::check(OgxGenerator_GetLogits(get(), &p));
    return Tensor::Adopt(p);
  }
  void SetLogits(const Tensor& logits) { detail::check(OgxGenerator_SetLogits(get(), logits.get())); }
  void RewindTo(size_t new_length) { detail::check(OgxGenerator_RewindTo(get(), new_length)); }
  void SetActiveAdapter(Adapters& adapters, const char* adapter_name) {
    detail::check(OgxSetActiveAdapter(get(), adapters.get(), adapter_name));
  }
  OgxGenerator* get() const { return h_.get(); }

 private:
  detail::Handle<OgxGenerator, OgxDestroyGenerator> h_;
};

// Continuous batching (ort_genai.h's OgaRequest / OgaEngine). A Request object owns one reference of its handle;
// Engine::Step returns another Request object for the same handle (compare with get()).
class Request {
 public:
  explicit Request(const GeneratorParams& params) {
    OgxRequest* p = nullptr;
    detail::check(OgxCreateRequest(params.get(), &p));
    h_.reset(p);
  }
  static std::unique_ptr<Request> Create(const GeneratorParams& params) { return std::make_unique<Request>(params); }
  // Takes over one reference of a handle (from OgxEngineStep).
  static std::unique_ptr<Request> Adopt(OgxRequest* p) { return std::unique_ptr<Request>(new Request(p)); }

  void AddTokens(const Sequences& tokens) { detail::check(OgxRequestAddTokens(get(), tokens.get())); }
  void AddTokens(std::span<const int32_t> tokens) {
    Sequences s;
    s.Append(tokens);
    AddTokens(s);
  }
  // ogx: the request runs with loaded adapter `adapter_name` (before Engine::AddRequest).
  void SetActiveAdapter(Adapters& adapters, const char* adapter_name) {
    detail::check(OgxRequestSetActiveAdapter(get(), adapters.get(), adapter_name));
  }
  void Continue(const Sequences& tokens) { detail::check(OgxRequestContinue(get(), tokens.get())); }
  void Continue(std::span<const int32_t> tokens) {
    Sequences s;
    s.Append(tokens);
    Continue(s);
  }
  bool IsTurnComplete() const {
    bool out = false;
    detail::check(OgxRequestIsTurnComplete(get(), &out));
    return out;
  }
  bool HasUnseenTokens() const {
    bool out = false;
    detail::check(OgxRequestHasUnseenTokens(get(), &out));
    return out;
  }
  int32_t GetUnseenToken() {
    int32_t t = 0;
    detail::check(OgxRequestGetUnseenToken(get(), &t));
    return t;
  }
  std::string GetFinishReason() const {
    const char* s = nullptr;
    detail::check(OgxRequestGetFinishReason(get(), &s));
    return s;
  }
  void SetOpaqueData(void* data) { detail::check(OgxRequestSetOpaqueData(get(), data)); }
  void* GetOpaqueData() {
    void* data = nullptr;
    detail::check(OgxRequestGetOpaqueData(get(), &data));
    return data;
  }
  OgxRequest* get() const { return h_.get(); }

 private:
  explicit Request(OgxRequest* p) : h_(p) {}
  detail::Handle<OgxRequest, OgxDestroyRequest> h_;
};

class Engine {
 public:
  explicit Engine(const Model& model) {
    OgxEngine* p = nullptr;
    detail::check(OgxCreateEngine(model.get(), &p));
    h_.reset(p);
  }
  static std::unique_ptr<Engine> Create(const Model& model) { return std::make_unique<Engine>(model); }
  bool HasPendingRequests() {
    bool out = false;
    detail::check(OgxEngineHasPendingRequests(get(), &out));
    return out;
  }
  void Add(Request& request) { detail::check(OgxEngineAddRequest(get(), request.get())); }
  void Remove(Request& request) { detail::check(OgxEngineRemoveRequest(get(), request.get())); }
  // A request with new tokens or a completed turn; null when nothing is pending.
  std::unique_ptr<Request> Step() {
    OgxRequest* p = nullptr;
    detail::check(OgxEngineStep(get(), &p));
    return p ? Request::Adopt(p) : nullptr;
  }
  OgxEngine* get() const { return h_.get(); }

 private:
  detail::Handle<OgxEngine, OgxDestroyEngine> h_;
};

}  // namespace v1
}  // namespace ogx
