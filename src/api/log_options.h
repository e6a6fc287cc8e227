// The log options of ort_genai_c.h (OgaSetLogBool / OgaSetLogString): which generation events the API layer
// logs, and where log messages go (callback, file, stderr).
#pragma once
#include <string>

namespace ogx::api {

// Events logged at info level when their option and "enabled" are on.
enum class LogTopic { generate_next_token, append_next_tokens, model_input_values, model_output_values, model_logits,
                      hit_eos };
bool log_topic_on(LogTopic topic);
// Logs `message` at info level when the topic is on.
void log_topic(LogTopic topic, const std::string& message);

}  // namespace ogx::api
