// Tokenizer::apply_chat_template: JSON parsing and the hand-off to the Jinja engine (ogx_chat_template).
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/json_limits.h"
#include "genai/tokenizer/tokenizer.h"

#ifdef OGX_HAVE_CHAT_TEMPLATE
#include "genai/chat_template/chat_template.h"
#endif

namespace ogx::tok {

std::string Tokenizer::apply_chat_template(const std::string& messages_json, bool add_generation_prompt,
                                           const std::string& tools_json, const std::string& template_override,
                                           const std::string& template_kwargs_json) const {
  const std::string& source = template_override.empty() ? chat_template() : template_override;
  if (source.empty()) throw_error("apply_chat_template: the tokenizer has no chat template (tokenizer_config.json chat_template)");
  nlohmann::json messages, tools;
  check_json_depth(messages_json, "apply_chat_template: messages");
  try {
    messages = nlohmann::json::parse(messages_json);
  } catch (const nlohmann::json::exception& e) {
    throw_error("apply_chat_template: messages: invalid JSON: ", json_error_text(e));
  }
  if (!messages.is_array()) throw_error("apply_chat_template: messages: expected a JSON array of {role, content}");
  if (!tools_json.empty()) {
    check_json_depth(tools_json, "apply_chat_template: tools");
    try {
      tools = nlohmann::json::parse(tools_json);
    } catch (const nlohmann::json::exception& e) {
      throw_error("apply_chat_template: tools: invalid JSON: ", json_error_text(e));
    }
  }
  nlohmann::json extra = {{"bos_token", bos_}, {"eos_token", eos_}, {"pad_token", pad_}, {"unk_token", unk_}};
  if (!template_kwargs_json.empty()) {
    nlohmann::json kwargs;
    try {
      kwargs = nlohmann::json::parse(template_kwargs_json);
    } catch (const nlohmann::json::exception& e) {
      throw_error("apply_chat_template: template_kwargs: invalid JSON: ", e.what());
    }
    if (!kwargs.is_object()) throw_error("apply_chat_template: template_kwargs: expected a JSON object");
    for (auto it = kwargs.begin(); it != kwargs.end(); ++it) extra[it.key()] = it.value();
  }
#ifdef OGX_HAVE_CHAT_TEMPLATE
  return ogx::jinja::apply_chat_template(source, messages, add_generation_prompt, tools, extra);
#else
  (void)add_generation_prompt;
  throw_error("apply_chat_template: ogx was built without the Jinja engine (ogx_chat_template)");
#endif
}

}  // namespace ogx::tok
