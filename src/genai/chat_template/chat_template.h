// Jinja2 interpreter for Hugging Face chat templates: lexer → parser → AST → evaluator, configured like
// transformers' chat template environment (ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks,
// loopcontrols, tojson/raise_exception/strftime_now).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace ogx::jinja {

struct RenderOptions {
  int64_t now = -1;                     // strftime_now time (UTC seconds since epoch); -1: current local time
  bool immutable = true;                // like ImmutableSandboxedEnvironment: list.append etc. raise
  int64_t max_steps = 20'000'000;       // evaluation steps before giving up (huge or endless loops)
  int max_call_depth = 100;             // nested macro calls
  size_t max_output = size_t(256) << 20;  // bytes of output or of any one string
  size_t max_list_items = 1'000'000;     // items of any one list
  int64_t max_time_ms = 3000;            // wall time of one render
};

struct Node;

class Template {
 public:
  // Throws ogx::Error "chat template line N: ..." on syntax errors.
  static Template parse(const std::string& source);
  // context: object of global variables. Throws ogx::Error naming the template line on render errors.
  std::string render(const nlohmann::json& context, const RenderOptions& opts = {}) const;
  std::string render(const nlohmann::ordered_json& context, const RenderOptions& opts = {}) const;

 private:
  struct Impl;
  std::shared_ptr<const Impl> impl_;
};

// Renders a Hugging Face chat template. messages: JSON array of {role, content, ...}; tools: JSON array or null;
// extra_context: object merged into the globals (bos_token, eos_token, ...). Throws ogx::Error naming the template line.
std::string apply_chat_template(const std::string& template_source, const nlohmann::json& messages,
                                bool add_generation_prompt, const nlohmann::json& tools,
                                const nlohmann::json& extra_context);
// Same with insertion-ordered JSON (keeps the key order of tool schemas as given).
std::string apply_chat_template(const std::string& template_source, const nlohmann::ordered_json& messages,
                                bool add_generation_prompt, const nlohmann::ordered_json& tools,
                                const nlohmann::ordered_json& extra_context, const RenderOptions& opts = {});

}  // namespace ogx::jinja
