// The objects behind the C API's opaque handles, the registry of live handles, and the call guard that turns
// every C++ exception into an OgxResult.
#pragma once
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <map>
#include <string>
#include <typeinfo>
#include <vector>

#include "genai/adapters.h"
#include "genai/generator.h"
#include "genai/model.h"
#include "genai/tokenizer/tokenizer.h"
#include "ogx/ogx.h"

struct OgxResult {
  OgxErrorCode code = OgxErrorCode_Internal;
  std::string message;
};

struct OgxConfig {
  ogx::genai::Config config;
};

// The model and the lock that serializes forward passes of the generators sharing it.
struct SharedModel {
  std::shared_ptr<ogx::genai::Model> model;
  std::mutex run_mu;
};

struct OgxModel {
  std::shared_ptr<SharedModel> shared;
};

struct OgxTokenizer {
  std::shared_ptr<ogx::tok::Tokenizer> tokenizer;
  // Special ids as ONNX Runtime GenAI reports them: genai_config.json's model.bos/pad/eos_token_id where set,
  // else the tokenizer's own.
  int32_t bos_id = -1, pad_id = -1;
  std::vector<int32_t> eos_ids;
  int32_t bot_id = -1, eot_id = -1, bor_id = -1, eor_id = -1;  // tool-call and reasoning markers; -1: none
  // OgxUpdateTokenizerOptions (not synchronized with encode/decode calls on other threads).
  bool add_special_tokens = true, skip_special_tokens = true;
};

struct OgxTokenizerStream {
  std::unique_ptr<ogx::tok::TokenizerStream> stream;
  std::string last;  // the chunk returned by the latest call (borrowed by the caller)
};

struct OgxSequences {
  std::vector<std::vector<int32_t>> seqs;
};

struct OgxGeneratorParams {
  ogx::genai::GeneratorParams params;
  int context_length = 0;  // the model's, for max_length 0 (GetSearchNumber)
};

struct OgxGenerator {
  mutable std::mutex mu;  // one call at a time
  std::atomic<bool> terminated{false};  // runtime option terminate_session
  std::shared_ptr<SharedModel> shared;
  std::unique_ptr<ogx::genai::Generator> gen;
  mutable std::vector<int32_t> next_tokens;  // storage behind GetNextTokens
};

struct OgxTensor {
  OgxElementType type = OgxElementType_undefined;
  std::vector<int64_t> shape;
  void* data = nullptr;            // borrowed, or owned.data()
  std::vector<unsigned char> owned;
  size_t element_count() const;
  size_t byte_size() const;

  OgxTensor() = default;
  // A copy of an owning tensor owns a copy of the data; a copy of a borrowing one borrows the same buffer.
  OgxTensor(const OgxTensor& o) : type(o.type), shape(o.shape), data(o.data), owned(o.owned) {
    if (o.data == o.owned.data()) data = owned.data();
  }
  OgxTensor& operator=(const OgxTensor& o) {
    if (this != &o) *this = OgxTensor(o);
    return *this;
  }
  OgxTensor(OgxTensor&&) noexcept = default;  // the vector's buffer moves with it: data stays valid
  OgxTensor& operator=(OgxTensor&&) noexcept = default;
};

struct OgxStringArray {
  std::vector<std::string> items;
};

struct OgxSpeculativeStats {
  std::vector<std::pair<std::string, double>> items;  // SpeculativeStats::items(), a snapshot
};

struct OgxAdapters {
  std::shared_ptr<SharedModel> shared;
  std::shared_ptr<ogx::genai::Adapters> adapters;
};

struct OgxNamedTensors {
  std::vector<std::pair<std::string, OgxTensor>> items;  // insertion order; owned tensors hold their own copy
};

struct OgxRuntimeSettings {
  std::map<std::string, void*> handles;  // OgxRuntimeSettingsSetHandle: name -> the caller's pointer (not owned)
};

namespace ogx::api {

// Kinds of registered objects (the registry maps an address to its kind).
enum class Kind {
  result, string, config, model, tokenizer, stream, sequences, params, generator, tensor, strings, named_tensors,
  speculative_stats, adapters, engine, request, runtime_settings
};
const char* kind_name(Kind k);

template <typename T> constexpr Kind kind_of();
template <> constexpr Kind kind_of<OgxConfig>() { return Kind::config; }
template <> constexpr Kind kind_of<OgxModel>() { return Kind::model; }
template <> constexpr Kind kind_of<OgxTokenizer>() { return Kind::tokenizer; }
template <> constexpr Kind kind_of<OgxTokenizerStream>() { return Kind::stream; }
template <> constexpr Kind kind_of<OgxSequences>() { return Kind::sequences; }
template <> constexpr Kind kind_of<OgxGeneratorParams>() { return Kind::params; }
template <> constexpr Kind kind_of<OgxGenerator>() { return Kind::generator; }
template <> constexpr Kind kind_of<OgxTensor>() { return Kind::tensor; }
template <> constexpr Kind kind_of<OgxStringArray>() { return Kind::strings; }
template <> constexpr Kind kind_of<OgxNamedTensors>() { return Kind::named_tensors; }
template <> constexpr Kind kind_of<OgxSpeculativeStats>() { return Kind::speculative_stats; }
template <> constexpr Kind kind_of<OgxAdapters>() { return Kind::adapters; }
template <> constexpr Kind kind_of<OgxRuntimeSettings>() { return Kind::runtime_settings; }
template <> constexpr Kind kind_of<OgxResult>() { return Kind::result; }

void register_handle(const void* p, Kind k);
// Removes a live handle of kind k; false (and a log line) when p is not one.
bool unregister_handle(const void* p, Kind k, const char* fn);
// Throws ApiError unless p is a live handle of kind k. `what` names the argument in the message.
void check_handle(const void* p, Kind k, const char* fn, const char* what);
// Non-throwing check for the calls that return a value directly; logs the problem when false.
bool is_live(const void* p, Kind k, const char* fn) noexcept;

// An error in how the API was called (bad argument or handle), as opposed to an engine error.
struct ApiError {
  OgxErrorCode code;
  std::string message;
};
[[noreturn]] void fail(OgxErrorCode code, const std::string& message);

// Validates a handle and returns the object.
template <typename T>
T& live(T* p, const char* fn, const char* what) {
  check_handle(p, kind_of<T>(), fn, what);
  return *p;
}
template <typename T>
const T& live(const T* p, const char* fn, const char* what) {
  check_handle(p, kind_of<T>(), fn, what);
  return *p;
}

// Creates a registered object for an out parameter.
template <typename T>
T* make_handle(T&& value) {
  T* p = new T(std::move(value));
  register_handle(p, kind_of<T>());
  return p;
}

template <typename T>
void destroy_handle(T* p, const char* fn) {
  if (p && unregister_handle(p, kind_of<T>(), fn)) delete p;
}

// The integer value of an enum argument from C. A C caller may pass any int; loading it as the C++ enum type would
// be undefined when out of range, so the bits are copied.
template <typename E>
int enum_bits(const E& e) {
  static_assert(sizeof(E) == sizeof(int));
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

// Checks a pointer argument.
void need(const void* p, const char* fn, const char* what);
// A caller-owned copy of a string, registered for OgxDestroyString.
const char* owned_string(const std::string& s);

OgxResult* error_result(OgxErrorCode code, const std::string& message);

// OgxSetCurrentGpuDeviceId: the vulkan provider's device_id for configs that set none.
std::atomic<int>& current_gpu_device_id();
// The message of OgxRegister/UnregisterExecutionProviderLibrary (path NULL: unregister).
std::string execution_provider_library_error(const char* name, const char* path);

// Runs f, mapping every exception to an OgxResult (NULL on success).
template <typename F>
OgxResult* guard(F&& f) noexcept {
  try {
    f();
    return nullptr;
  } catch (const ApiError& e) {
    return error_result(e.code, e.message);
  } catch (const ogx::Error& e) {
    return error_result(OgxErrorCode_Runtime, e.what());
  } catch (const std::bad_alloc&) {
    return error_result(OgxErrorCode_OutOfMemory, "out of memory");
  } catch (const std::exception& e) {
    return error_result(OgxErrorCode_Internal, std::string("internal error: ") + e.what());
  } catch (...) {
    return error_result(OgxErrorCode_Internal, "internal error: unknown exception");
  }
}

}  // namespace ogx::api
