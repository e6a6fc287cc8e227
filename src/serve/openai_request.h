// The body of POST /v1/completions and /v1/chat/completions, read and checked (OpenAI's fields; anything unknown,
// mistyped or out of range is an ApiError 400 naming the field). Sampling follows OpenAI's defaults, not the
// folder's genai_config.json search section: temperature 1, top_p 1, no top-k, no penalty; temperature 0 is greedy.
// presence_penalty / frequency_penalty are accepted at 0 only (ogx's search has no such penalties; the error says
// so); repetition_penalty (as vLLM and llama.cpp's server take it) maps to the search option of that name.
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
  std::optional<int64_t> seed;
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
