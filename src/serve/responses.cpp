#include "serve/responses.h"

namespace ogx::serve {

using json = nlohmann::json;

namespace {
json finish_json(const std::string& reason) { return reason.empty() ? json() : json(reason); }
}  // namespace

json usage_json(const Completion& c) {
  return {{"prompt_tokens", c.prompt_tokens() * c.choices()},
          {"completion_tokens", c.completion_tokens()},
          {"total_tokens", c.prompt_tokens() * c.choices() + c.completion_tokens()}};
}

json full_response(const Completion& c, const std::string& model, const std::vector<std::string>& texts) {
  const bool chat = c.request().chat;
  json choices = json::array();
  for (size_t i = 0; i < c.choices(); i++) {
    json ch = {{"index", i}, {"logprobs", nullptr}, {"finish_reason", finish_json(c.finish_reason(i))}};
    if (chat) ch["message"] = {{"role", "assistant"}, {"content", texts[i]}};
    else ch["text"] = texts[i];
    choices.push_back(std::move(ch));
  }
  return {{"id", c.id()},
          {"object", chat ? "chat.completion" : "text_completion"},
          {"created", c.created()},
          {"model", model},
          {"system_fingerprint", "ogx"},
          {"choices", std::move(choices)},
          {"usage", usage_json(c)}};
}

json stream_chunk(const Completion& c, const std::string& model, size_t i, const std::string& text,
                  const std::string& finish_reason, bool first_chunk) {
  const bool chat = c.request().chat;
  json ch = {{"index", i}, {"logprobs", nullptr}, {"finish_reason", finish_json(finish_reason)}};
  if (chat) {
    json delta = json::object();
    if (first_chunk) delta["role"] = "assistant";
    if (!text.empty() || first_chunk) delta["content"] = text;
    ch["delta"] = std::move(delta);
  } else {
    ch["text"] = text;
  }
  json out = {{"id", c.id()},
              {"object", chat ? "chat.completion.chunk" : "text_completion"},
              {"created", c.created()},
              {"model", model},
              {"system_fingerprint", "ogx"},
              {"choices", json::array({std::move(ch)})}};
  if (c.request().include_usage) out["usage"] = nullptr;
  return out;
}

json usage_chunk(const Completion& c, const std::string& model) {
  return {{"id", c.id()},
          {"object", c.request().chat ? "chat.completion.chunk" : "text_completion"},
          {"created", c.created()},
          {"model", model},
          {"system_fingerprint", "ogx"},
          {"choices", json::array()},
          {"usage", usage_json(c)}};
}

std::string sse(const json& j) {
  return "data: " + j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n";
}

}  // namespace ogx::serve
