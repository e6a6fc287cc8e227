// The Jinja engine: a template, then (after a NUL) the messages as JSON. The render runs with small budgets so that
// a slow template is a clean error well inside libFuzzer's timeout; the budgets themselves are what is tested.
#include <nlohmann/json.hpp>

#include "common/json_limits.h"
#include "fuzz_util.h"
#include "genai/chat_template/chat_template.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto parts = ogx::fuzz::split(data, size, std::string_view("\0", 1), 2);
  ogx::jinja::RenderOptions opts;
  opts.now = 0;
  opts.max_steps = 200000;
  opts.max_time_ms = 1000;
  opts.max_output = 1 << 20;
  opts.max_list_items = 100000;
  ogx::fuzz::expect_clean([&] {
    nlohmann::ordered_json messages = nlohmann::ordered_json::array(
        {{{"role", "system"}, {"content", "Be brief."}}, {{"role", "user"}, {"content", "Hi [0] {x}"}}});
    if (parts.size() > 1) {
      ogx::check_json_depth(parts[1], "messages");
      messages = nlohmann::ordered_json::parse(parts[1], nullptr, false);
      if (messages.is_discarded()) return;
    }
    nlohmann::ordered_json extra = {{"bos_token", "<s>"}, {"eos_token", "</s>"}};
    ogx::jinja::apply_chat_template(parts[0], messages, true, nlohmann::ordered_json(), extra, opts);
  });
  return 0;
}
