// OpenAI response bodies for a Completion: the whole answer (stream: false) and the server-sent event chunks of a
// stream (text_completion / chat.completion.chunk objects, ending in `data: [DONE]`).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve/completion.h"

namespace ogx::serve {

nlohmann::json usage_json(const Completion& c);
// stream: false. texts[i]: choice i's whole text.
nlohmann::json full_response(const Completion& c, const std::string& model, const std::vector<std::string>& texts);
// One stream chunk for choice i: its new text (chat: first_chunk adds the assistant role), and its finish reason
// when it ended ("" while running).
nlohmann::json stream_chunk(const Completion& c, const std::string& model, size_t i, const std::string& text,
                            const std::string& finish_reason, bool first_chunk);
// The last chunk of a stream with stream_options.include_usage: no choices, the usage counts.
nlohmann::json usage_chunk(const Completion& c, const std::string& model);
// `data: <json>\n\n`
std::string sse(const nlohmann::json& j);

}  // namespace ogx::serve
