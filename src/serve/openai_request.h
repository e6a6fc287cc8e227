// The body of POST /v1/completions and /v1/chat/completions, read and checked (OpenAI's fields; anything unknown,
// mistyped or out of range is an ApiError 400 naming the field). Sampling follows OpenAI's defaults, not the
// folder's genai_config.json search section: temperature 1, top_p 1, no top-k, no penalty; temperature 0 is greedy.
// presence_penalty / frequency_penalty ([-2, 2]) map to the search options of those names (OpenAI's rule, over the
// generated tokens); repetition_penalty (as vLLM and llama.cpp's server take it) to the search option of that name.
// response_format: {"type": "text"}, {"type": "json_object"} (llama.cpp's server: with a "schema" it is that schema)
// and {"type": "json_schema", "json_schema": {"name", "description", "schema", "strict"}} map onto guidance; the
// schema itself is checked when it is compiled (Completion), also a 400 naming response_format.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ogx::serve {

struct CompletionRequest {
  bool chat = false;
  std::string model;                  // as sent ("" when absent); not checked against the served name
  std::string prompt;                 // completions: the text (empty when prompt_ids is given)
  std::vector<int32_t> prompt_ids;    // completions: a prompt given as token ids
  nlohmann::json messages;            // chat: [{role, content}] with content as a string
  std::optional<int> max_tokens;      // absent: up to the context
  double temperature = 1.0;           // 0: greedy
  double top_p = 1.0;
  int top_k = 0;                      // 0: off
  double repetition_penalty = 1.0;
  double presence_penalty = 0.0;      // [-2, 2]
  double frequency_penalty = 0.0;     // [-2, 2]
  std::optional<int64_t> seed;
  // response_format mapped onto structured output (genai/guidance): "" (text) or "json_schema" with the schema's
  // JSON text in guidance_data (json_object: {"type": "object"}), with serve's JSON whitespace rule added
  // (openai_request.cpp) unless the schema's "x-guidance" sets one.
  std::string guidance_type, guidance_data;
  std::vector<std::string> stop;
  int n = 1;
  bool stream = false;
  bool include_usage = false;         // stream_options.include_usage
};

inline constexpr int kMaxChoices = 16;    // n
inline constexpr int kMaxStopStrings = 16;
inline constexpr size_t kMaxStopLength = 256;

CompletionRequest parse_completion_request(const std::string& body, bool chat);

}  // namespace ogx::serve
