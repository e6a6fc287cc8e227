// The registry of live handles, error results and caller-owned strings.
#include "api/handles.h"

#include <cstring>
#include <unordered_map>

#include "common/log.h"

namespace ogx::api {
namespace {

std::mutex& registry_mu() {
  static std::mutex mu;
  return mu;
}
// Leaked on purpose: handles may be destroyed from static destructors of the caller after ours ran.
std::unordered_map<const void*, Kind>& registry() {
  static auto* r = new std::unordered_map<const void*, Kind>();
  return *r;
}

// Returned when even an error result cannot be allocated; OgxDestroyResult ignores it.
OgxResult g_out_of_memory{OgxErrorCode_OutOfMemory, ""};

std::string article_name(Kind k) {
  std::string n = kind_name(k);
  return (n[0] == 'O' ? "an " : "a ") + n;
}

}  // namespace

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::result: return "OgxResult";
    case Kind::string: return "string";
    case Kind::config: return "OgxConfig";
    case Kind::model: return "OgxModel";
    case Kind::tokenizer: return "OgxTokenizer";
    case Kind::stream: return "OgxTokenizerStream";
    case Kind::sequences: return "OgxSequences";
    case Kind::params: return "OgxGeneratorParams";
    case Kind::generator: return "OgxGenerator";
    case Kind::tensor: return "OgxTensor";
    case Kind::strings: return "OgxStringArray";
    case Kind::named_tensors: return "OgxNamedTensors";
    case Kind::speculative_stats: return "OgxSpeculativeStats";
    case Kind::adapters: return "OgxAdapters";
    case Kind::engine: return "OgxEngine";
    case Kind::request: return "OgxRequest";
    case Kind::runtime_settings: return "OgxRuntimeSettings";
  }
  return "object";
}

void register_handle(const void* p, Kind k) {
  std::lock_guard<std::mutex> lk(registry_mu());
  registry()[p] = k;
}

bool unregister_handle(const void* p, Kind k, const char* fn) {
  std::string problem;
  {
    std::lock_guard<std::mutex> lk(registry_mu());
    auto it = registry().find(p);
    if (it != registry().end() && it->second == k) {
      registry().erase(it);
      return true;
    }
    problem = it == registry().end() ? "was already destroyed or never created"
                                     : std::string("is ") + article_name(it->second) + ", not " + article_name(k);
  }
  log(LogLevel::error, std::string(fn) + ": ignored: the handle " + problem);
  return false;
}

void fail(OgxErrorCode code, const std::string& message) { throw ApiError{code, message}; }

void check_handle(const void* p, Kind k, const char* fn, const char* what) {
  if (!p) fail(OgxErrorCode_InvalidArgument, std::string(fn) + ": " + what + " is NULL");
  std::lock_guard<std::mutex> lk(registry_mu());
  auto it = registry().find(p);
  if (it == registry().end())
    fail(OgxErrorCode_InvalidHandle, std::string(fn) + ": " + what + " is not a live " + kind_name(k) +
                                         " (destroyed, or never created by ogx)");
  if (it->second != k)
    fail(OgxErrorCode_InvalidHandle, std::string(fn) + ": " + what + " is " + article_name(it->second) +
                                         ", expected " + article_name(k));
}

bool is_live(const void* p, Kind k, const char* fn) noexcept {
  try {
    check_handle(p, k, fn, "the handle");
    return true;
  } catch (const ApiError& e) {
    try {
      log(LogLevel::error, e.message);
    } catch (...) {
    }
  } catch (...) {
  }
  return false;
}

void need(const void* p, const char* fn, const char* what) {
  if (!p) fail(OgxErrorCode_InvalidArgument, std::string(fn) + ": " + what + " is NULL");
}

const char* owned_string(const std::string& s) {
  char* p = new char[s.size() + 1];
  std::memcpy(p, s.c_str(), s.size() + 1);
  register_handle(p, Kind::string);
  return p;
}

OgxResult* error_result(OgxErrorCode code, const std::string& message) {
  try {
    auto* r = new OgxResult{code, message};
    register_handle(r, Kind::result);
    return r;
  } catch (...) {
    return &g_out_of_memory;
  }
}

}  // namespace ogx::api

using namespace ogx::api;

extern "C" {

const char* OgxResultGetError(const OgxResult* result) {
  if (result == &g_out_of_memory) return "out of memory";
  if (!result || !is_live(result, Kind::result, "OgxResultGetError")) return "";
  return result->message.c_str();
}

OgxErrorCode OgxResultGetCode(const OgxResult* result) {
  if (result == &g_out_of_memory) return OgxErrorCode_OutOfMemory;
  if (!result) return OgxErrorCode_Ok;
  if (!is_live(result, Kind::result, "OgxResultGetCode")) return OgxErrorCode_InvalidHandle;
  return result->code;
}

void OgxDestroyResult(OgxResult* result) {
  if (result == &g_out_of_memory) return;
  destroy_handle(result, "OgxDestroyResult");
}

void OgxDestroyString(const char* str) {
  if (str && unregister_handle(str, Kind::string, "OgxDestroyString")) delete[] str;
}

}  // extern "C"
