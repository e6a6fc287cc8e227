#include "serve/openai_request.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "common/json_limits.h"
#include "serve/api_error.h"

namespace ogx::serve {

namespace {

using json = nlohmann::json;

// JSON nesting a request may have (messages with content parts are 4 deep).
constexpr int kMaxRequestDepth = 32;

[[noreturn]] void bad(const std::string& param, const std::string& message) { throw ApiError(400, message, "invalid_request_error", param); }

std::string type_name(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

double number(const json& v, const std::string& name, double lo, double hi) {
  if (!v.is_number()) bad(name, "'" + name + "' must be a number, got " + type_name(v));
  double x = v.get<double>();
  if (!std::isfinite(x) || x < lo || x > hi)
    bad(name, "'" + name + "' must be in [" + json(lo).dump() + ", " + json(hi).dump() + "], got " + v.dump());
  return x;
}

int64_t integer(const json& v, const std::string& name, int64_t lo, int64_t hi) {
  if (!v.is_number_integer() && !(v.is_number_float() && std::nearbyint(v.get<double>()) == v.get<double>()))
    bad(name, "'" + name + "' must be an integer, got " + (v.is_number() ? v.dump() : type_name(v)));
  double d = v.get<double>();
  if (d < (double)lo || d > (double)hi)
    bad(name, "'" + name + "' must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + v.dump());
  return v.is_number_integer() ? v.get<int64_t>() : (int64_t)d;
}

bool boolean(const json& v, const std::string& name) {
  if (!v.is_boolean()) bad(name, "'" + name + "' must be a boolean, got " + type_name(v));
  return v.get<bool>();
}

std::string string(const json& v, const std::string& name) {
  if (!v.is_string()) bad(name, "'" + name + "' must be a string, got " + type_name(v));
  return v.get<std::string>();
}

// OpenAI's content: a string, or an array of {"type": "text", "text": ...} parts (joined).
std::string message_content(const json& c, const std::string& where) {
  if (c.is_string()) return c.get<std::string>();
  if (c.is_null()) return "";
  if (!c.is_array()) bad(where, "'" + where + "' must be a string or an array of text parts, got " + type_name(c));
  std::string out;
  for (size_t i = 0; i < c.size(); i++) {
    const json& part = c[i];
    std::string at = where + "[" + std::to_string(i) + "]";
    if (!part.is_object() || part.value("type", json()) != "text" || !part.contains("text") || !part["text"].is_string())
      bad(at, "'" + at + "' must be {\"type\": \"text\", \"text\": ...} (ogx serves text models)");
    out += part["text"].get<std::string>();
  }
  return out;
}

json messages(const json& v) {
  if (!v.is_array()) bad("messages", "'messages' must be an array of {role, content}, got " + type_name(v));
  if (v.empty()) bad("messages", "'messages' must not be empty");
  static const std::set<std::string> roles = {"system", "developer", "user", "assistant", "tool"};
  json out = json::array();
  for (size_t i = 0; i < v.size(); i++) {
    std::string at = "messages[" + std::to_string(i) + "]";
    const json& m = v[i];
    if (!m.is_object()) bad(at, "'" + at + "' must be an object {role, content}, got " + type_name(m));
    if (!m.contains("role") || !m["role"].is_string()) bad(at + ".role", "'" + at + ".role' must be a string");
    std::string role = m["role"].get<std::string>();
    if (!roles.count(role))
      bad(at + ".role", "'" + at + ".role' must be system, developer, user, assistant or tool, got '" + role + "'");
    for (auto& [k, _] : m.items())
      if (k != "role" && k != "content" && k != "name")
        bad(at + "." + k, "'" + at + "." + k + "' is not supported (ogx serves text: role, content, name)");
    json msg = {{"role", role}, {"content", message_content(m.value("content", json()), at + ".content")}};
    if (m.contains("name")) msg["name"] = string(m["name"], at + ".name");
    out.push_back(std::move(msg));
  }
  return out;
}

std::vector<std::string> stops(const json& v) {
  std::vector<std::string> out;
  if (v.is_null()) return out;
  if (v.is_string()) {
    out.push_back(v.get<std::string>());
  } else if (v.is_array()) {
    if (v.size() > (size_t)kMaxStopStrings)
      bad("stop", "'stop' may hold at most " + std::to_string(kMaxStopStrings) + " strings");
    for (const json& s : v) out.push_back(string(s, "stop"));
  } else {
    bad("stop", "'stop' must be a string or an array of strings, got " + type_name(v));
  }
  for (const std::string& s : out) {
    if (s.empty()) bad("stop", "'stop' strings must not be empty");
    if (s.size() > kMaxStopLength) bad("stop", "'stop' strings must be at most " + std::to_string(kMaxStopLength) + " bytes");
  }
  return out;
}

void prompt(const json& v, CompletionRequest& r) {
  if (v.is_string()) {
    r.prompt = v.get<std::string>();
  } else if (v.is_array() && v.size() == 1 && v[0].is_string()) {
    r.prompt = v[0].get<std::string>();
  } else if (v.is_array() && !v.empty() && v[0].is_number()) {
    for (const json& id : v) r.prompt_ids.push_back((int32_t)integer(id, "prompt", 0, INT32_MAX));
  } else if (v.is_array() && v.size() == 1 && v[0].is_array()) {
    prompt(v[0], r);
  } else if (v.is_array() && v.size() > 1 && (v[0].is_string() || v[0].is_array())) {
    bad("prompt", "'prompt' holds " + std::to_string(v.size()) + " prompts: ogx takes one prompt per request");
  } else {
    bad("prompt", "'prompt' must be a string or an array of token ids, got " + type_name(v));
  }
  if (r.prompt.empty() && r.prompt_ids.empty()) bad("prompt", "'prompt' must not be empty");
}

// The whitespace a constrained JSON answer may have between tokens, unless its schema's "x-guidance" says
// otherwise (whitespace_flexible / whitespace_pattern): one space, or one or two newlines and up to 20 spaces or tabs
// of indent, as llama.cpp's server (json-schema-to-grammar's space rule). The guidance engine's own default (up to
// 64 characters per gap) lets a weak model spend max_tokens on whitespace and leave the JSON unfinished.
constexpr const char* kJsonWhitespace = "[ ]|\\n{1,2}[ \\t]{0,20}";

std::string with_serve_whitespace(nlohmann::ordered_json schema) {
  nlohmann::ordered_json& x = schema["x-guidance"];
  if (x.is_null()) x = nlohmann::ordered_json::object();
  if (x.is_object() && !x.contains("whitespace_flexible") && !x.contains("whitespace_pattern"))
    x["whitespace_pattern"] = kJsonWhitespace;  // (a non-object x-guidance is the compiler's error to report)
  return schema.dump();
}

// OpenAI's response_format onto guidance (see openai_request.h). `ordered` is the same value with its objects' keys
// in the order sent: a schema's properties are generated in schema order (as OpenAI and llguidance do), which
// nlohmann::json's sorted objects would lose.
void response_format(const json& v, const nlohmann::ordered_json& ordered, CompletionRequest& r) {
  const std::string k = "response_format";
  if (v.is_null()) return;
  if (!v.is_object()) bad(k, "'response_format' must be an object {\"type\": ...}, got " + type_name(v));
  if (!v.contains("type")) bad(k + ".type", "'response_format.type' is required (text, json_object or json_schema)");
  const std::string type = string(v["type"], k + ".type");
  auto only = [](const json& obj, const std::string& at, std::initializer_list<const char*> keys) {
    for (auto& [key, _] : obj.items())
      if (std::none_of(keys.begin(), keys.end(), [&](const char* x) { return key == x; }))
        bad(at + "." + key, "unknown field '" + at + "." + key + "'");
  };
  auto schema_of = [&](const json& s, const nlohmann::ordered_json& s_ordered, const std::string& at) {
    if (!s.is_object()) bad(at, "'" + at + "' must be a JSON schema (an object), got " + type_name(s));
    r.guidance_type = "json_schema";
    r.guidance_data = with_serve_whitespace(s_ordered);
  };
  if (type == "text") {
    only(v, k, {"type"});
  } else if (type == "json_object") {
    only(v, k, {"type", "schema"});
    // Any JSON object: the schema {"type": "object"} (what guidance's json_object compiles), with serve's whitespace.
    if (v.contains("schema") && !v["schema"].is_null()) schema_of(v["schema"], ordered["schema"], k + ".schema");
    else schema_of(json{{"type", "object"}}, nlohmann::ordered_json{{"type", "object"}}, k + ".schema");
  } else if (type == "json_schema") {
    only(v, k, {"type", "json_schema"});
    const std::string at = k + ".json_schema";
    if (!v.contains("json_schema") || !v["json_schema"].is_object())
      bad(at, "'" + at + "' must be an object {\"name\", \"schema\", \"strict\"}");
    const json& js = v["json_schema"];
    only(js, at, {"name", "description", "schema", "strict"});
    if (!js.contains("name")) bad(at + ".name", "'" + at + ".name' is required");
    const std::string name = string(js["name"], at + ".name");
    if (name.empty() || name.size() > 64 || !std::all_of(name.begin(), name.end(), [](char c) {
          return std::isalnum((unsigned char)c) || c == '_' || c == '-';
        }))
      bad(at + ".name", "'" + at + ".name' must be 1 to 64 characters of a-z, A-Z, 0-9, _ and -");
    if (js.contains("description")) string(js["description"], at + ".description");
    if (js.contains("strict") && !js["strict"].is_null()) boolean(js["strict"], at + ".strict");
    if (!js.contains("schema") || js["schema"].is_null()) bad(at + ".schema", "'" + at + ".schema' is required");
    schema_of(js["schema"], ordered["json_schema"]["schema"], at + ".schema");
  } else {
    bad(k + ".type", "'response_format.type' must be text, json_object or json_schema, got '" + type + "'");
  }
}

// Fields accepted only at their neutral value: name -> what it must be.
bool neutral(const std::string& k, const json& v) {
  if (v.is_null()) return true;
  if (k == "logprobs" || k == "echo" || k == "parallel_tool_calls") return v.is_boolean() && !v.get<bool>();
  if (k == "logit_bias") return v.is_object() && v.empty();
  if (k == "tools" || k == "functions") return v.is_array() && v.empty();
  if (k == "tool_choice" || k == "function_call") return v == "none";
  if (k == "best_of") return v.is_number_integer() && v.get<int64_t>() == 1;
  if (k == "suffix") return v.is_string() && v.get<std::string>().empty();
  return false;
}

}  // namespace

CompletionRequest parse_completion_request(const std::string& body, bool chat) {
  json j;
  try {
    check_json_depth(body, "request body", kMaxRequestDepth);
    j = json::parse(body);
  } catch (const std::exception& e) {
    throw ApiError(400, std::string("invalid JSON in the request body: ") + json_error_text(e));
  }
  if (!j.is_object()) throw ApiError(400, "the request body must be a JSON object, got " + type_name(j));
  CompletionRequest r;
  r.chat = chat;
  static const std::set<std::string> neutral_only = {"logprobs", "echo", "logit_bias", "tools",
                                                     "functions", "tool_choice", "function_call", "best_of",
                                                     "suffix", "parallel_tool_calls", "top_logprobs"};
  bool has_input = false;
  for (auto& [k, v] : j.items()) {
    if (k == "model") r.model = string(v, k);
    else if (k == "prompt" && !chat) prompt(v, r), has_input = true;
    else if (k == "messages" && chat) r.messages = messages(v), has_input = true;
    else if (k == "max_tokens" || (k == "max_completion_tokens" && chat)) {
      if (!v.is_null()) r.max_tokens = (int)integer(v, k, 1, 1 << 30);
    } else if (k == "temperature") r.temperature = v.is_null() ? 1.0 : number(v, k, 0, 2);
    else if (k == "top_p") r.top_p = v.is_null() ? 1.0 : number(v, k, 0, 1);
    else if (k == "top_k") r.top_k = v.is_null() ? 0 : (int)integer(v, k, -1, 1 << 20);
    else if (k == "repetition_penalty") r.repetition_penalty = v.is_null() ? 1.0 : number(v, k, 0.01, 10);
    else if (k == "presence_penalty") r.presence_penalty = v.is_null() ? 0.0 : number(v, k, -2, 2);
    else if (k == "frequency_penalty") r.frequency_penalty = v.is_null() ? 0.0 : number(v, k, -2, 2);
    else if (k == "seed") {
      if (!v.is_null()) r.seed = integer(v, k, 0, INT64_MAX / 2);
    } else if (k == "stop") r.stop = stops(v);
    else if (k == "response_format") response_format(v, nlohmann::ordered_json::parse(body)[k], r);
    else if (k == "n") r.n = v.is_null() ? 1 : (int)integer(v, k, 1, kMaxChoices);
    else if (k == "stream") r.stream = v.is_null() ? false : boolean(v, k);
    else if (k == "stream_options") {
      if (v.is_null()) continue;
      if (!v.is_object()) bad(k, "'stream_options' must be an object, got " + type_name(v));
      for (auto& [sk, sv] : v.items()) {
        if (sk != "include_usage") bad("stream_options." + sk, "'stream_options." + sk + "' is not supported");
        r.include_usage = boolean(sv, "stream_options.include_usage");
      }
    } else if (k == "user") string(v, k);  // an end-user id for abuse monitoring: accepted, unused
    else if (neutral_only.count(k)) {
      if (!neutral(k, v)) bad(k, "'" + k + "' is not supported by ogx (leave it out)");
    } else {
      bad(k, "unknown field '" + k + "' for " + (chat ? "/v1/chat/completions" : "/v1/completions"));
    }
  }
  if (!has_input) bad(chat ? "messages" : "prompt", std::string("'") + (chat ? "messages" : "prompt") + "' is required");
  if (r.top_p <= 0) bad("top_p", "'top_p' must be > 0");
  if (r.top_k < 0) r.top_k = 0;  // -1: off, as vLLM
  if (r.include_usage && !r.stream) bad("stream_options", "'stream_options' is only allowed with stream: true");
  return r;
}

}  // namespace ogx::serve
