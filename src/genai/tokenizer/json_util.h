// Typed access to tokenizer.json fields with errors that name the JSON path.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "common/error.h"

namespace ogx::tok {

inline std::string jpath(const std::string& base, const std::string& key) { return base.empty() ? key : base + "." + key; }
inline std::string jpath(const std::string& base, size_t i) { return base + "[" + std::to_string(i) + "]"; }

inline const nlohmann::json& jreq(const nlohmann::json& j, const char* key, const std::string& path) {
  if (!j.is_object()) throw_error("tokenizer.json: ", path, ": expected an object");
  auto it = j.find(key);
  if (it == j.end()) throw_error("tokenizer.json: ", jpath(path, key), ": missing");
  return *it;
}

inline std::string jstr(const nlohmann::json& j, const char* key, const std::string& path) {
  const auto& v = jreq(j, key, path);
  if (!v.is_string()) throw_error("tokenizer.json: ", jpath(path, key), ": expected a string, got ", v.type_name());
  return v.get<std::string>();
}

inline std::string jstr_or(const nlohmann::json& j, const char* key, const std::string& path, const std::string& def) {
  if (!j.is_object()) return def;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return def;
  if (!it->is_string()) throw_error("tokenizer.json: ", jpath(path, key), ": expected a string, got ", it->type_name());
  return it->get<std::string>();
}

inline bool jbool_or(const nlohmann::json& j, const char* key, const std::string& path, bool def) {
  if (!j.is_object()) return def;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return def;
  if (!it->is_boolean()) throw_error("tokenizer.json: ", jpath(path, key), ": expected a boolean, got ", it->type_name());
  return it->get<bool>();
}

inline int64_t jint_or(const nlohmann::json& j, const char* key, const std::string& path, int64_t def) {
  if (!j.is_object()) return def;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return def;
  if (!it->is_number_integer()) throw_error("tokenizer.json: ", jpath(path, key), ": expected an integer, got ", it->type_name());
  return it->get<int64_t>();
}

// Token ids: ints in [0, kMaxTokenId). A larger id would be truncated to int32 or size a per-id table of
// gigabytes; the largest published vocabularies have about 2^18 entries.
inline constexpr int64_t kMaxTokenId = int64_t(1) << 24;
inline int32_t jtoken_id(const nlohmann::json& v, const std::string& path) {
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() >= uint64_t(kMaxTokenId)) ||
      v.get<int64_t>() < 0 || v.get<int64_t>() >= kMaxTokenId)
    throw_error("tokenizer.json: ", path, ": expected a token id in [0, ", kMaxTokenId, "), got ", v.dump());
  return static_cast<int32_t>(v.get<int64_t>());
}

inline const nlohmann::json& jarr(const nlohmann::json& j, const char* key, const std::string& path) {
  const auto& v = jreq(j, key, path);
  if (!v.is_array()) throw_error("tokenizer.json: ", jpath(path, key), ": expected an array, got ", v.type_name());
  return v;
}

// {"String": "x"} or {"Regex": "x"} patterns.
struct Pattern {
  bool is_regex = false;
  std::string text;
};
inline Pattern jpattern(const nlohmann::json& j, const char* key, const std::string& path) {
  const auto& p = jreq(j, key, path);
  std::string pp = jpath(path, key);
  if (p.is_string()) return {false, p.get<std::string>()};
  if (p.is_object() && p.contains("String") && p["String"].is_string()) return {false, p["String"].get<std::string>()};
  if (p.is_object() && p.contains("Regex") && p["Regex"].is_string()) return {true, p["Regex"].get<std::string>()};
  throw_error("tokenizer.json: ", pp, ": expected {\"String\": ...} or {\"Regex\": ...}");
}

}  // namespace ogx::tok
