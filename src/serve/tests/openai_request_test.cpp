// parse_completion_request: OpenAI's fields read with their defaults; bad JSON, wrong types, out-of-range values
// and unknown fields are 400 errors naming the field.
#include <gtest/gtest.h>

#include "serve/api_error.h"
#include "serve/openai_request.h"

namespace ogx::serve {
namespace {

std::string param_of(const std::string& body, bool chat = false) {
  try {
    parse_completion_request(body, chat);
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400) << body;
    return e.param.empty() ? "<none>" : e.param;
  }
  return "<accepted>";
}

TEST(OpenAIRequest, ReadsFieldsAndDefaults) {
  auto r = parse_completion_request(
      R"({"model": "m", "prompt": "hi", "max_tokens": 5, "temperature": 0, "top_p": 0.9, "top_k": 4,
          "seed": 7, "stop": ["a", "b"], "n": 2, "stream": true, "stream_options": {"include_usage": true},
          "presence_penalty": 0, "frequency_penalty": 0, "user": "u", "logprobs": null, "echo": false})",
      false);
  EXPECT_EQ(r.prompt, "hi");
  EXPECT_EQ(*r.max_tokens, 5);
  EXPECT_EQ(r.temperature, 0);
  EXPECT_EQ(r.top_k, 4);
  EXPECT_EQ(*r.seed, 7);
  EXPECT_EQ(r.stop, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r.n, 2);
  EXPECT_TRUE(r.stream && r.include_usage);
  EXPECT_EQ(r.presence_penalty, 0);
  auto p = parse_completion_request(R"({"prompt": "x", "presence_penalty": -1.5, "frequency_penalty": 2})", false);
  EXPECT_EQ(p.presence_penalty, -1.5);
  EXPECT_EQ(p.frequency_penalty, 2);
  auto d = parse_completion_request(R"({"prompt": [1, 2, 3]})", false);
  EXPECT_EQ(d.prompt_ids, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(d.temperature, 1.0);
  EXPECT_FALSE(d.max_tokens);
  auto c = parse_completion_request(
      R"({"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": [{"type": "text", "text": "x"}]}]})",
      true);
  EXPECT_EQ(c.messages[1]["content"], "x");
}

TEST(OpenAIRequest, BadInputNamesTheField) {
  EXPECT_EQ(param_of("{"), "<none>");
  EXPECT_EQ(param_of("[1]"), "<none>");
  EXPECT_EQ(param_of(R"({"max_tokens": 3})"), "prompt");
  EXPECT_EQ(param_of(R"({"prompt": 5})"), "prompt");
  EXPECT_EQ(param_of(R"({"prompt": ""})"), "prompt");
  EXPECT_EQ(param_of(R"({"prompt": ["a", "b"]})"), "prompt");
  EXPECT_EQ(param_of(R"({"prompt": "x", "max_tokens": -1})"), "max_tokens");
  EXPECT_EQ(param_of(R"({"prompt": "x", "max_tokens": 0})"), "max_tokens");
  EXPECT_EQ(param_of(R"({"prompt": "x", "max_tokens": 1e20})"), "max_tokens");
  EXPECT_EQ(param_of(R"({"prompt": "x", "max_tokens": "5"})"), "max_tokens");
  EXPECT_EQ(param_of(R"({"prompt": "x", "temperature": 3})"), "temperature");
  EXPECT_EQ(param_of(R"({"prompt": "x", "top_p": 0})"), "top_p");
  EXPECT_EQ(param_of(R"({"prompt": "x", "n": 100})"), "n");
  EXPECT_EQ(param_of(R"({"prompt": "x", "stop": 3})"), "stop");
  EXPECT_EQ(param_of(R"({"prompt": "x", "stop": [""]})"), "stop");
  EXPECT_EQ(param_of(R"({"prompt": "x", "stream": "yes"})"), "stream");
  EXPECT_EQ(param_of(R"({"prompt": "x", "presence_penalty": 2.5})"), "presence_penalty");
  EXPECT_EQ(param_of(R"({"prompt": "x", "frequency_penalty": -3})"), "frequency_penalty");
  EXPECT_EQ(param_of(R"({"prompt": "x", "frequency_penalty": "1"})"), "frequency_penalty");
  EXPECT_EQ(param_of(R"({"prompt": "x", "logprobs": 3})"), "logprobs");
  EXPECT_EQ(param_of(R"({"prompt": "x", "bogus": 1})"), "bogus");
  EXPECT_EQ(param_of(R"({"prompt": "x", "stream_options": {"include_usage": true}})"), "stream_options");
  EXPECT_EQ(param_of(R"({"prompt": "x", "messages": []})"), "messages");  // a chat field on completions
  EXPECT_EQ(param_of(R"({"messages": "hi"})", true), "messages");
  EXPECT_EQ(param_of(R"({"messages": [{"role": "king", "content": "x"}]})", true), "messages[0].role");
  EXPECT_EQ(param_of(R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})", true),
            "messages[0].content[0]");
  EXPECT_EQ(param_of(std::string(100, '[') + std::string(100, ']')), "<none>");  // nested too deep
}

}  // namespace
}  // namespace ogx::serve
