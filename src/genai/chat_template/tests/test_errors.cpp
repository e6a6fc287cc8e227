// Bad input: every failure is an ogx::Error naming the template line; nothing crashes or hangs.
#include <gtest/gtest.h>

#include "common/error.h"
#include "genai/chat_template/chat_template.h"

using nlohmann::ordered_json;
using ogx::jinja::Template;

namespace {
// Returns the error message of parsing + rendering `src`, or "" if it succeeded.
std::string error_of(const std::string& src, const ordered_json& ctx = ordered_json::object(),
                     const ogx::jinja::RenderOptions& opts = {}) {
  try {
    Template::parse(src).render(ctx, opts);
  } catch (const ogx::Error& e) {
    return e.what();
  }
  return "";
}

void expect_error_at(const std::string& src, int line, const std::string& fragment = "",
                     const ogx::jinja::RenderOptions& opts = {}) {
  std::string msg = error_of(src, ordered_json::object(), opts);
  ASSERT_FALSE(msg.empty()) << "no error for: " << src;
  EXPECT_NE(msg.find("chat template line " + std::to_string(line) + ":"), std::string::npos) << msg;
  if (!fragment.empty()) {
    EXPECT_NE(msg.find(fragment), std::string::npos) << msg;
  }
}
}  // namespace

TEST(ChatTemplateErrors, UnclosedBlocks) {
  expect_error_at("a\n{% if x %}\nb", 3, "endif");
  expect_error_at("{% for x in y %}", 1, "endfor");
  expect_error_at("line1\n{{ x ", 2, "unclosed");
  expect_error_at("{# never closed", 1, "comment");
  expect_error_at("{{ 'abc }}", 1, "string");
  expect_error_at("\n\n{% endif %}", 3);
  expect_error_at("{% frobnicate %}", 1, "unknown tag");
  expect_error_at("{{ (1 + }}", 1);
}

TEST(ChatTemplateErrors, UnknownFilterAndTest) {
  expect_error_at("ok\n{{ x | nosuchfilter }}", 2, "nosuchfilter");
  expect_error_at("{% if x is nosuchtest %}{% endif %}", 1, "nosuchtest");
}

TEST(ChatTemplateErrors, RaiseException) {
  expect_error_at("a\nb\n{{ raise_exception('Conversation roles must alternate') }}", 3, "Conversation roles must alternate");
}

TEST(ChatTemplateErrors, TypeErrors) {
  expect_error_at("\n{{ 'a' + 1 }}", 2);
  expect_error_at("{{ 1 // 0 }}", 1, "zero");
  expect_error_at("{{ 1 < 'a' }}", 1);
  expect_error_at("{{ none() }}", 1, "not callable");
}

TEST(ChatTemplateErrors, DeepNesting) {
  std::string deep_expr = "{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}";
  expect_error_at(deep_expr, 1, "nested too deeply");
  std::string deep_blocks;
  for (int k = 0; k < 3000; ++k) deep_blocks += "{% if true %}";
  expect_error_at(deep_blocks, 1, "nested too deeply");
  std::string deep_list = "{{ " + std::string(5000, '[') + std::string(5000, ']') + " }}";
  expect_error_at(deep_list, 1, "nested too deeply");
}

TEST(ChatTemplateErrors, DeepData) {
  ordered_json v = 1;
  for (int k = 0; k < 2000; ++k) v = ordered_json::array({v});
  std::string msg = error_of("{{ v }}", {{"v", v}});
  EXPECT_NE(msg.find("nested deeper"), std::string::npos) << msg;
}

TEST(ChatTemplateErrors, InfiniteRecursion) {
  expect_error_at("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}\n{{ f(0) }}", 1, "recursion");
}

TEST(ChatTemplateErrors, HugeLoops) {
  expect_error_at("{% for i in range(1000000000) %}{% endfor %}", 1, "range");
  ogx::jinja::RenderOptions opts;
  opts.max_steps = 100000;
  try {
    Template::parse("{% for i in range(1000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}").render(ordered_json::object(), opts);
    ADD_FAILURE() << "no step limit error";
  } catch (const ogx::Error& e) {
    EXPECT_NE(std::string(e.what()).find("step limit"), std::string::npos) << e.what();
  }
  ogx::jinja::RenderOptions small;
  small.max_output = 1 << 20;
  expect_error_at("{{ 'x' * 100000000000 }}", 1, "size limit");
  expect_error_at("{% set ns = namespace(s='xxxxxxxxxxxxxxxx') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}", 1, "size limit", small);
}
