// Resource budgets of a render (issue 17): list growth, steps, wall time and output size fail with a clear error in
// well under a second and a few hundred MB; deeply nested input fails before recursion. Bounded: each case checks
// its own time.
#include <gtest/gtest.h>

#include <chrono>

#include "common/error.h"
#include "genai/chat_template/chat_template.h"

using nlohmann::ordered_json;
using ogx::jinja::Template;

namespace {

// The error of parsing + rendering src (or "" when it renders), and that it came within `seconds`.
std::string timed_error(const std::string& src, double seconds, const ogx::jinja::RenderOptions& opts = {},
                        const ordered_json& ctx = ordered_json::object()) {
  auto t0 = std::chrono::steady_clock::now();
  std::string msg;
  try {
    Template::parse(src).render(ctx, opts);
  } catch (const ogx::Error& e) {
    msg = e.what();
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, seconds) << src.substr(0, 80) << ": " << msg;
  return msg;
}

TEST(ChatTemplateLimits, DoublingListFailsFast) {
  // Was: 31 s, 12.7 GB, std::bad_alloc.
  std::string msg = timed_error(
      "{% set ns = namespace(l=[1, 2]) %}{% for i in range(100) %}{% set ns.l = ns.l + ns.l %}{% endfor %}", 2.0);
  EXPECT_NE(msg.find("list of"), std::string::npos) << msg;
  EXPECT_NE(msg.find("exceeds the limit"), std::string::npos) << msg;
  msg = timed_error("{{ ([1, 2, 3] * 100000000) | length }}", 2.0);
  EXPECT_NE(msg.find("list of"), std::string::npos) << msg;
  msg = timed_error("{{ ([1] * 9223372036854775807) | length }}", 2.0);
  EXPECT_NE(msg.find("list of"), std::string::npos) << msg;
}

TEST(ChatTemplateLimits, MutableListGrowthIsBounded) {
  ogx::jinja::RenderOptions opts;
  opts.immutable = false;
  std::string msg = timed_error(
      "{% set l = [0] %}{% for i in range(30) %}{% set _ = l.extend(l) %}{% endfor %}{{ l | length }}", 2.0, opts);
  EXPECT_NE(msg.find("list of"), std::string::npos) << msg;
}

TEST(ChatTemplateLimits, NestedLoopsMeetTheTimeLimit) {
  // Was: 31 s before the step limit.
  ogx::jinja::RenderOptions opts;
  opts.max_time_ms = 300;
  std::string msg = timed_error(
      "{% for i in range(3000) %}{% for j in range(3000) %}{{ '' }}{% endfor %}{% endfor %}", 2.0, opts);
  EXPECT_NE(msg.find("limit"), std::string::npos) << msg;
  // The default budget also ends it within a few seconds.
  msg = timed_error(
      "{% for i in range(10000) %}{% for j in range(10000) %}{{ '' }}{% endfor %}{% endfor %}", 6.0);
  EXPECT_NE(msg.find("limit"), std::string::npos) << msg;
}

TEST(ChatTemplateLimits, HugeRangeBoundsDoNotOverflow) {
  std::string msg = timed_error("{{ range(-9223372036854775807, 9223372036854775807) | length }}", 1.0);
  EXPECT_NE(msg.find("range too large"), std::string::npos) << msg;
  msg = timed_error("{{ range(9223372036854775807, -9223372036854775807, -3) | length }}", 1.0);
  EXPECT_NE(msg.find("range too large"), std::string::npos) << msg;
}

TEST(ChatTemplateLimits, NestedBracketMessageRendersOrFailsCleanly) {
  // A 600 KB chat message of nested brackets: data, not template code; it renders (or is refused) without
  // recursion as deep as its nesting.
  std::string content = std::string(300000, '[') + std::string(300000, ']');
  ordered_json messages = ordered_json::array({{{"role", "user"}, {"content", content}}});
  const std::string tmpl =
      "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{{ m | tojson }}{% endfor %}"
      "{% if add_generation_prompt %}assistant:{% endif %}";
  auto t0 = std::chrono::steady_clock::now();
  std::string out = ogx::jinja::apply_chat_template(tmpl, messages, true, ordered_json(), ordered_json::object());
  EXPECT_GT(out.size(), content.size());
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0);
  // The same brackets as template source are refused by the parser's depth check.
  std::string msg = timed_error("{{ " + content + " }}", 2.0);
  EXPECT_NE(msg.find("nested too deeply"), std::string::npos) << msg;
}

}  // namespace
