// Template and apply_chat_template: glue between the public API and the interpreter.
#include "genai/chat_template/chat_template.h"

#include "common/error.h"
#include "genai/chat_template/interp.h"
#include "genai/chat_template/parser.h"

namespace ogx::jinja {

struct Template::Impl {
  Body body;
};

Template Template::parse(const std::string& source) {
  auto impl = std::make_shared<Impl>();
  impl->body = ogx::jinja::parse(tokenize(source));
  Template t;
  t.impl_ = std::move(impl);
  return t;
}

namespace {
Value strftime_fixed(int64_t now) {
  return Value::function("strftime_now", [now](CallArgs& a) {
    std::string fmt = a.args.empty() ? "" : to_str(a.args[0]);
    std::time_t t = (std::time_t)now;
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[256];
    size_t n = std::strftime(buf, sizeof buf, fmt.c_str(), &tm);
    return Value::string(std::string(buf, n));
  });
}

std::string render_value(const Body& body, const Value& ctx, const RenderOptions& opts) {
  if (!ctx.is_dict()) throw_error("chat template context must be a JSON object");
  Limits limits;
  limits.max_steps = opts.max_steps;
  limits.max_call_depth = opts.max_call_depth;
  limits.max_output = opts.max_output;
  limits.max_list_items = opts.max_list_items;
  limits.max_time_ms = opts.max_time_ms;
  Interp in(limits, opts.immutable);
  auto globals = std::make_shared<Scope>();
  add_globals(in, *globals);
  if (opts.now >= 0) globals->vars["strftime_now"] = strftime_fixed(opts.now);
  for (auto& kv : ctx.dict->items) globals->vars[kv.first] = kv.second;
  auto scope = std::make_shared<Scope>();
  scope->parent = globals;
  return in.render(body, scope);
}

template <class J>
std::string apply_impl(const std::string& source, const J& messages, bool add_generation_prompt, const J& tools,
                       const J& extra, const RenderOptions& opts) {
  J ctx = J::object();
  if (extra.is_object())
    for (auto it = extra.begin(); it != extra.end(); ++it) ctx[it.key()] = it.value();
  else if (!extra.is_null())
    throw_error("apply_chat_template: extra_context must be a JSON object");
  if (!ctx.contains("documents")) ctx["documents"] = nullptr;  // transformers always passes documents=None
  ctx["messages"] = messages;
  ctx["tools"] = tools;
  ctx["add_generation_prompt"] = add_generation_prompt;
  return Template::parse(source).render(ctx, opts);
}
}  // namespace

std::string Template::render(const nlohmann::json& context, const RenderOptions& opts) const {
  return render_value(impl_->body, from_json(context), opts);
}
std::string Template::render(const nlohmann::ordered_json& context, const RenderOptions& opts) const {
  return render_value(impl_->body, from_json(context), opts);
}

std::string apply_chat_template(const std::string& template_source, const nlohmann::json& messages,
                                bool add_generation_prompt, const nlohmann::json& tools,
                                const nlohmann::json& extra_context) {
  return apply_impl(template_source, messages, add_generation_prompt, tools, extra_context, RenderOptions{});
}

std::string apply_chat_template(const std::string& template_source, const nlohmann::ordered_json& messages,
                                bool add_generation_prompt, const nlohmann::ordered_json& tools,
                                const nlohmann::ordered_json& extra_context, const RenderOptions& opts) {
  return apply_impl(template_source, messages, add_generation_prompt, tools, extra_context, opts);
}

}  // namespace ogx::jinja
