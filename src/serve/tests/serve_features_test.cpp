// `ogx serve` in process (serve::Server on a free loopback port, cpp-httplib's client) on the default model
// (models/ogx-debian-10m/int4, checked in; CPU provider): response_format (json_object, json_schema, streamed, chat)
// gives text that parses as JSON and validates against the schema (checked here, independently of the engine);
// bad response_formats are 400s naming the field; presence / frequency penalties change a repeating greedy
// completion.
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "genai/config.h"
#include "serve/server.h"

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;  // request bodies keep their keys' order (a schema's properties)

namespace ogx::serve {
namespace {

const std::string kModel = std::string(OGX_SOURCE_DIR) + "/models/ogx-debian-10m/int4";

// A copy of the default model folder (links to its files) with a small chat template, as tests/serve/lib.mjs makes.
std::string chat_folder() {
  static const std::string dir = [] {
    fs::path out = fs::temp_directory_path() / ("ogx_serve_features_" + std::to_string(::getpid()));
    fs::remove_all(out);
    fs::create_directories(out);
    for (const auto& f : fs::directory_iterator(kModel)) fs::create_symlink(f.path(), out / f.path().filename());
    std::ofstream(out / "chat_template.jinja")
        << "{% for m in messages %}{{ '<|' + m['role'] + '|>\\n' + m['content'] + '\\n' }}{% endfor %}"
           "{% if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% endif %}";
    return out.string();
  }();
  return dir;
}

class ServeFeatures : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    genai::Config c = genai::Config::load(chat_folder());
    c.clear_providers();  // the CPU provider
    ServerOptions o;
    o.port = 0;
    o.max_batch = 4;
    o.shutdown_grace_s = 1;
    server_ = new Server(c, o);
    port_ = server_->bind();
    thread_ = new std::thread([] { server_->run(); });
  }
  static void TearDownTestSuite() {
    server_->shutdown();
    thread_->join();
    delete thread_;
    delete server_;
    fs::remove_all(chat_folder());
  }

  // POSTs `body`; returns (status, body).
  static std::pair<int, std::string> post(const std::string& path, const json& body) {
    httplib::Client cli("127.0.0.1", port_);
    cli.set_read_timeout(120, 0);
    auto res = cli.Post(path, body.dump(), "application/json");
    if (!res) return {0, "no response: " + httplib::to_string(res.error())};
    return {res->status, res->body};
  }
  // A non-streamed completion's first choice: (text, finish_reason); fails the test on another status.
  static std::pair<std::string, std::string> complete(const std::string& path, const json& body) {
    auto [status, text] = post(path, body);
    EXPECT_EQ(status, 200) << text;
    if (status != 200) return {};
    json j = json::parse(text);
    const json& choice = j["choices"][0];
    std::string out = path == "/v1/chat/completions" ? choice["message"]["content"].get<std::string>()
                                                     : choice["text"].get<std::string>();
    return {out, choice["finish_reason"].get<std::string>()};
  }
  // A streamed completion: the concatenated deltas of choice 0 and its finish reason.
  static std::pair<std::string, std::string> stream(const std::string& path, json body) {
    body["stream"] = true;
    auto [status, text] = post(path, body);
    EXPECT_EQ(status, 200) << text;
    std::string out, finish;
    bool done = false;
    size_t at = 0;
    while ((at = text.find("data: ", at)) != std::string::npos) {
      size_t end = text.find("\n\n", at);
      std::string data = text.substr(at + 6, end - at - 6);
      at = end;
      if (data == "[DONE]") {
        done = true;
        break;
      }
      json chunk = json::parse(data);
      EXPECT_FALSE(chunk.contains("error")) << data;
      for (const json& c : chunk["choices"]) {
        if (c.contains("delta") && c["delta"].contains("content")) out += c["delta"]["content"].get<std::string>();
        if (c.contains("text")) out += c["text"].get<std::string>();
        if (c.contains("finish_reason") && c["finish_reason"].is_string()) finish = c["finish_reason"];
      }
    }
    EXPECT_TRUE(done) << "no data: [DONE]";
    return {out, finish};
  }

  static Server* server_;
  static std::thread* thread_;
  static int port_;
};

Server* ServeFeatures::server_ = nullptr;
std::thread* ServeFeatures::thread_ = nullptr;
int ServeFeatures::port_ = 0;

// The test's own validator for the schema below (not the engine's): the problems found, "" when valid.
const json kSchema = json::parse(R"({
  "type": "object",
  "properties": {
    "name": {"type": "string", "maxLength": 12},
    "age": {"type": "integer", "minimum": 0, "maximum": 120},
    "tags": {"type": "array", "items": {"enum": ["red", "green", "blue"]}, "maxItems": 3},
    "ok": {"type": "boolean"}
  },
  "required": ["name", "age", "tags", "ok"],
  "additionalProperties": false
})");

std::string schema_problems(const std::string& text) {
  json v;
  try {
    v = json::parse(text);
  } catch (const std::exception& e) {
    return std::string("not JSON: ") + e.what();
  }
  if (!v.is_object()) return "not an object";
  if (v.size() != 4) return "expected exactly 4 properties";
  if (!v.contains("name") || !v["name"].is_string()) return "name: not a string";
  // maxLength counts code points
  const std::string name = v["name"];
  size_t cps = 0;
  for (unsigned char ch : name) cps += (ch & 0xC0) != 0x80;
  if (cps > 12) return "name: longer than 12";
  if (!v.contains("age") || !v["age"].is_number_integer()) return "age: not an integer";
  if (v["age"].get<int64_t>() < 0 || v["age"].get<int64_t>() > 120) return "age: out of [0, 120]";
  if (!v.contains("tags") || !v["tags"].is_array() || v["tags"].size() > 3) return "tags: not an array of <= 3";
  for (const json& t : v["tags"])
    if (t != "red" && t != "green" && t != "blue") return "tags: " + t.dump() + " is not in the enum";
  if (!v.contains("ok") || !v["ok"].is_boolean()) return "ok: not a boolean";
  return "";
}

json schema_format() {
  return {{"type", "json_schema"}, {"json_schema", {{"name", "person"}, {"schema", kSchema}, {"strict", true}}}};
}

TEST_F(ServeFeatures, JsonSchemaCompletionValidates) {
  auto [text, finish] = complete("/v1/completions", {{"prompt", "And the LORD said unto Moses"},
                                                     {"temperature", 0},
                                                     {"max_tokens", 300},
                                                     {"response_format", schema_format()}});
  EXPECT_EQ(finish, "stop") << text;
  EXPECT_EQ(schema_problems(text), "") << text;
  // Properties come in schema order (name, age, tags, ok), as OpenAI's structured outputs.
  const size_t name = text.find("\"name\""), age = text.find("\"age\""), tags = text.find("\"tags\""),
               ok = text.find("\"ok\"");
  EXPECT_TRUE(name < age && age < tags && tags < ok) << text;
}

TEST_F(ServeFeatures, JsonSchemaStreamedChatWithSamplingValidates) {
  for (int seed : {1, 2}) {
    json body = {{"messages", {{{"role", "user"}, {"content", "Describe a person."}}}},
                 {"temperature", 0.8},
                 {"seed", seed},
                 {"max_tokens", 300},
                 {"response_format", schema_format()}};
    auto [text, finish] = stream("/v1/chat/completions", body);
    EXPECT_EQ(finish, "stop") << text;
    EXPECT_EQ(schema_problems(text), "") << "seed " << seed << ": " << text;
  }
}

TEST_F(ServeFeatures, JsonObjectModeGivesAnObject) {
  json fmt = {{"type", "json_object"}};
  auto check = [](const std::string& text, const std::string& finish) {
    EXPECT_EQ(finish, "stop") << text;
    json v;
    EXPECT_NO_THROW(v = json::parse(text)) << text;
    EXPECT_TRUE(v.is_object()) << text;
  };
  auto [a, fa] = complete("/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "Give JSON."}}}},
                                                   {"temperature", 0},
                                                   {"max_tokens", 300},
                                                   {"response_format", fmt}});
  check(a, fa);
  auto [b, fb] = stream("/v1/completions", {{"prompt", "The Jargon File"},
                                            {"temperature", 0},
                                            {"max_tokens", 300},
                                            {"response_format", fmt}});
  check(b, fb);
  // llama.cpp's server shape: json_object with a schema is that schema.
  auto [c, fc] = complete("/v1/completions", {{"prompt", "The Jargon File"},
                                              {"temperature", 0},
                                              {"max_tokens", 300},
                                              {"response_format", {{"type", "json_object"}, {"schema", kSchema}}}});
  EXPECT_EQ(fc, "stop") << c;
  EXPECT_EQ(schema_problems(c), "") << c;
}

// {"type": "text"} is no constraint: the same text as without response_format.
TEST_F(ServeFeatures, TextFormatIsUnconstrained) {
  json body = {{"prompt", "And the LORD said unto Moses"}, {"temperature", 0}, {"max_tokens", 12}};
  auto plain = complete("/v1/completions", body);
  body["response_format"] = {{"type", "text"}};
  EXPECT_EQ(complete("/v1/completions", body), plain);
}

TEST_F(ServeFeatures, BadResponseFormatIs400NamingTheField) {
  auto param_of = [](const json& fmt, const std::string& path = "/v1/completions") -> std::string {
    json body = {{"response_format", fmt}, {"max_tokens", 4}};
    if (path == "/v1/completions") body["prompt"] = "x";
    else body["messages"] = {{{"role", "user"}, {"content", "x"}}};
    auto [status, text] = post(path, body);
    EXPECT_EQ(status, 400) << fmt.dump() << " -> " << text;
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.contains("error")) return "<no error body>";
    return j["error"]["param"].is_string() ? j["error"]["param"].get<std::string>() : "<none>";
  };
  EXPECT_EQ(param_of("json"), "response_format");
  EXPECT_EQ(param_of({{"type", "xml"}}), "response_format.type");
  EXPECT_EQ(param_of(json::object()), "response_format.type");
  EXPECT_EQ(param_of({{"type", "json_schema"}}), "response_format.json_schema");
  EXPECT_EQ(param_of({{"type", "json_schema"}, {"json_schema", {{"schema", kSchema}}}}),
            "response_format.json_schema.name");
  EXPECT_EQ(param_of({{"type", "json_schema"}, {"json_schema", {{"name", "a b"}, {"schema", kSchema}}}}),
            "response_format.json_schema.name");
  EXPECT_EQ(param_of({{"type", "json_schema"}, {"json_schema", {{"name", "p"}}}}),
            "response_format.json_schema.schema");
  EXPECT_EQ(param_of({{"type", "json_schema"}, {"json_schema", {{"name", "p"}, {"schema", 5}}}}),
            "response_format.json_schema.schema");
  EXPECT_EQ(param_of({{"type", "json_schema"}, {"json_schema", {{"name", "p"}, {"schema", kSchema}, {"x", 1}}}}),
            "response_format.json_schema.x");
  // A schema the structured-output engine refuses: 400 with its message.
  json bad_schema = {{"type", "json_schema"},
                     {"json_schema", {{"name", "p"}, {"schema", {{"type", "object"}, {"not", json::object()}}}}}};
  EXPECT_EQ(param_of(bad_schema, "/v1/chat/completions"), "response_format");
  auto [status, text] = post("/v1/completions", {{"prompt", "x"}, {"response_format", bad_schema}});
  EXPECT_NE(text.find("not"), std::string::npos) << text;
  json wrong_type = {{"type", "json_schema"}, {"json_schema", {{"name", "p"}, {"schema", {{"type", "objekt"}}}}}};
  EXPECT_EQ(param_of(wrong_type), "response_format");
  // The server still answers.
  EXPECT_EQ(complete("/v1/completions", {{"prompt", "x"}, {"max_tokens", 2}, {"temperature", 0}}).second, "length");
}

// A greedy completion that repeats itself changes under a strong frequency penalty (the rule itself is checked
// against a reference in tests/engine_batching_test.cpp) and under a presence penalty; 0 is the default.
TEST_F(ServeFeatures, PenaltiesChangeARepeatingGreedyCompletion) {
  json body = {{"prompt", "1 2 3 4 5 6"}, {"temperature", 0}, {"max_tokens", 24}};
  auto plain = complete("/v1/completions", body);
  std::map<std::string, int> grams;  // 3-character strings of the text
  int most = 0;
  for (size_t i = 0; i + 3 <= plain.first.size(); i++) most = std::max(most, ++grams[plain.first.substr(i, 3)]);
  ASSERT_GE(most, 5) << "the unpenalized completion does not repeat: " << plain.first;
  body["frequency_penalty"] = 0;
  body["presence_penalty"] = 0;
  EXPECT_EQ(complete("/v1/completions", body), plain);
  body["frequency_penalty"] = 2;
  EXPECT_NE(complete("/v1/completions", body).first, plain.first);
  body["frequency_penalty"] = 0;
  body["presence_penalty"] = 2;
  EXPECT_NE(complete("/v1/completions", body).first, plain.first);
  // Both, streamed with n = 2 and a seed: each choice is the same text as its non-streamed twin.
  body = {{"prompt", "1 2 3 4 5 6"}, {"temperature", 0.7}, {"seed", 3}, {"max_tokens", 16},
          {"frequency_penalty", 1.0}, {"presence_penalty", 0.5}};
  auto once = complete("/v1/completions", body);
  EXPECT_EQ(stream("/v1/completions", body), once);
}

// GET /metrics has the engine steps' time by phase: after a completion, the steps took time, the decode runs and the
// prompt runs some of it, and the phases add up to no more than the steps.
TEST_F(ServeFeatures, MetricsSplitTheEngineStepTimeByPhase) {
  EXPECT_EQ(complete("/v1/completions", {{"prompt", "1 2 3"}, {"max_tokens", 8}, {"temperature", 0}}).second,
            "length");
  httplib::Client cli("127.0.0.1", port_);
  auto res = cli.Get("/metrics");
  ASSERT_TRUE(res);
  auto value = [&](const std::string& name) {
    size_t at = res->body.find("\n" + name + " ");
    EXPECT_NE(at, std::string::npos) << name << " missing in:\n" << res->body;
    return at == std::string::npos ? -1.0 : std::stod(res->body.substr(at + name.size() + 2));
  };
  const double step = value("ogx_engine_step_seconds_total"), decode = value("ogx_engine_decode_seconds_total"),
               prompt = value("ogx_engine_prompt_seconds_total"), wait = value("ogx_engine_lock_wait_seconds_total");
  EXPECT_GT(decode, 0);
  EXPECT_GT(prompt, 0);
  EXPECT_GE(wait, 0);
  EXPECT_LE(decode + prompt + wait, step * (1 + 1e-9));
  // Per served model: here only the base model, so its counters are the totals (the fixture's server has answered
  // the earlier tests' requests too).
  EXPECT_NE(res->body.find("ogx_model_requests_total{model=\""), std::string::npos) << res->body;
  size_t at = res->body.find("ogx_model_generation_tokens_total{model=\"");
  ASSERT_NE(at, std::string::npos) << res->body;
  const double base = std::stod(res->body.substr(res->body.find("} ", at) + 2));
  EXPECT_GE(base, 8.0);
  EXPECT_EQ(base, value("ogx_generation_tokens_total"));
}

}  // namespace
}  // namespace ogx::serve
