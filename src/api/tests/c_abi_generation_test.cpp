// Generation through the C ABI: ONNX Runtime GenAI's tokens on the golden model, logits get/set/rewind semantics,
// generators sharing a model across threads, and the dml provider selected with provider options.
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "api_test_util.h"

using namespace ogx_api_test;

namespace {

struct GenRun {
  OgxModel* model = nullptr;
  OgxGenerator* gen = nullptr;
  OgxGeneratorParams* params = nullptr;
  ~GenRun() {
    OgxDestroyGenerator(gen);
    OgxDestroyGeneratorParams(params);
  }
};

// A greedy generator with max_length = prompt + new_tokens and EOS suppressed (min_length) for new_tokens.
void make_generator(OgxModel* model, size_t prompt, size_t new_tokens, GenRun& run) {
  run.model = model;
  ASSERT_OK(OgxCreateGeneratorParams(model, &run.params));
  ASSERT_OK(OgxGeneratorParamsSetSearchNumber(run.params, "max_length", double(prompt + new_tokens)));
  ASSERT_OK(OgxGeneratorParamsSetSearchNumber(run.params, "min_length", double(prompt + new_tokens)));
  ASSERT_OK(OgxGeneratorParamsSetSearchBool(run.params, "do_sample", false));
  ASSERT_OK(OgxCreateGenerator(model, run.params, &run.gen));
}

std::vector<int32_t> greedy(OgxModel* model, const std::vector<int32_t>& prompt, size_t new_tokens) {
  GenRun run;
  make_generator(model, prompt.size(), new_tokens, run);
  EXPECT_OK(OgxGenerator_AppendTokens(run.gen, prompt.data(), prompt.size()));
  while (!OgxGenerator_IsDone(run.gen)) {
    OgxResult* r = OgxGenerator_GenerateNextToken(run.gen);
    if (r) {
      ADD_FAILURE() << error_of(r);
      break;
    }
  }
  const int32_t* seq = OgxGenerator_GetSequenceData(run.gen, 0);
  size_t n = OgxGenerator_GetSequenceCount(run.gen, 0);
  return std::vector<int32_t>(seq + prompt.size(), seq + n);
}

std::vector<float> logits_of(OgxGenerator* gen) {
  OgxTensor* t = nullptr;
  EXPECT_OK(OgxGenerator_GetLogits(gen, &t));
  if (!t) return {};
  void* data = nullptr;
  EXPECT_OK(OgxTensorGetData(t, &data));
  std::vector<float> out(static_cast<float*>(data), static_cast<float*>(data) + 2048);
  OgxDestroyTensor(t);
  return out;
}

struct Model {
  OgxModel* m = nullptr;
  explicit Model(const std::string& dir) { EXPECT_OK(OgxCreateModel(dir.c_str(), &m)); }
  ~Model() { OgxDestroyModel(m); }
};

// Greedy continuations of each prompt generated on its own thread (generators sharing `model`), against the
// same generated one after another: both lists, in prompt order.
void expect_threads_match_sequential(OgxModel* model, const std::vector<std::vector<int32_t>>& prompts,
                                     size_t new_tokens) {
  std::vector<std::vector<int32_t>> sequential;
  for (auto& p : prompts) sequential.push_back(greedy(model, p, new_tokens));
  std::vector<std::vector<int32_t>> parallel(prompts.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < prompts.size(); i++)
    threads.emplace_back([&, i] { parallel[i] = greedy(model, prompts[i], new_tokens); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(parallel, sequential);
}

}  // namespace

TEST(CAbiGeneration, MatchesOnnxRuntimeGenAITokens) {
  OGX_REQUIRE_MODEL(dir, "fp32-cpu");
  std::ifstream rf(std::string(OGX_SHARED_DIR) + "/golden/models/llama/reference.json");
  std::ifstream of(std::string(OGX_SHARED_DIR) + "/golden/models/llama/ort_reference.json");
  ASSERT_TRUE(rf && of);
  auto ref = nlohmann::json::parse(rf);
  auto ort = nlohmann::json::parse(of);
  Model model(dir);
  ASSERT_NE(model.m, nullptr);
  const auto& cases = ref["cases"];
  for (size_t i = 0; i < cases.size(); i++) {
    auto prompt = cases[i]["prompt"].get<std::vector<int32_t>>();
    auto expected = ort["tokens"]["fp32-cpu"][i].get<std::vector<int32_t>>();
    EXPECT_EQ(greedy(model.m, prompt, expected.size()), expected) << "prompt " << i;
  }
}

TEST(CAbiGeneration, GetLogitsAfterGenerateIsTheNextPositionsLogits) {
  OGX_REQUIRE_MODEL(dir, "fp32-cpu");
  Model model(dir);
  std::vector<int32_t> prompt = {1, 15, 300, 7};
  // Incremental: prompt, then three generated tokens; the logits then belong to the position after them.
  GenRun a;
  make_generator(model.m, prompt.size(), 8, a);
  ASSERT_OK(OgxGenerator_AppendTokens(a.gen, prompt.data(), prompt.size()));
  for (int i = 0; i < 3; i++) ASSERT_OK(OgxGenerator_GenerateNextToken(a.gen));
  std::vector<float> incremental = logits_of(a.gen);
  const int32_t* seq = OgxGenerator_GetSequenceData(a.gen, 0);
  std::vector<int32_t> all(seq, seq + OgxGenerator_GetSequenceCount(a.gen, 0));
  // Fresh: the same seven tokens at once.
  GenRun b;
  make_generator(model.m, all.size(), 1, b);
  ASSERT_OK(OgxGenerator_AppendTokens(b.gen, all.data(), all.size()));
  std::vector<float> fresh = logits_of(b.gen);
  ASSERT_EQ(incremental.size(), fresh.size());
  for (size_t i = 0; i < fresh.size(); i++) ASSERT_NEAR(incremental[i], fresh[i], 1e-3) << i;
  // The next token is the argmax of those logits, and reading them cost no extra state change.
  size_t best = 0;
  for (size_t i = 1; i < fresh.size(); i++)
    if (fresh[i] > fresh[best]) best = i;
  ASSERT_OK(OgxGenerator_GenerateNextToken(a.gen));
  EXPECT_EQ(OgxGenerator_GetSequenceData(a.gen, 0)[all.size()], (int32_t)best);
}

TEST(CAbiGeneration, SetLogitsSteersAndRewindRestarts) {
  OGX_REQUIRE_MODEL(dir, "fp32-cpu");
  Model model(dir);
  std::vector<int32_t> prompt = {1, 42, 43};
  std::vector<int32_t> expected = greedy(model.m, prompt, 6);
  GenRun run;
  make_generator(model.m, prompt.size(), 6, run);
  ASSERT_OK(OgxGenerator_AppendTokens(run.gen, prompt.data(), prompt.size()));
  // Ban every token but 77 at each step.
  for (int step = 0; step < 3; step++) {
    std::vector<float> l = logits_of(run.gen);
    for (size_t i = 0; i < l.size(); i++)
      if (i != 77) l[i] = -INFINITY;
    int64_t shape[1] = {(int64_t)l.size()};
    OgxTensor* t = nullptr;
    ASSERT_OK(OgxCreateTensorFromBuffer(l.data(), shape, 1, OgxElementType_float32, &t));
    ASSERT_OK(OgxGenerator_SetLogits(run.gen, t));
    OgxDestroyTensor(t);
    ASSERT_OK(OgxGenerator_GenerateNextToken(run.gen));
    EXPECT_EQ(OgxGenerator_GetSequenceData(run.gen, 0)[prompt.size() + step], 77);
  }
  // Back to the prompt: greedy continues exactly as a fresh generator.
  ASSERT_OK(OgxGenerator_RewindTo(run.gen, prompt.size()));
  while (!OgxGenerator_IsDone(run.gen)) ASSERT_OK(OgxGenerator_GenerateNextToken(run.gen));
  const int32_t* seq = OgxGenerator_GetSequenceData(run.gen, 0);
  EXPECT_EQ(std::vector<int32_t>(seq + prompt.size(), seq + prompt.size() + 6), expected);
  // A later user turn appended after generated tokens (multi-turn chat).
  ASSERT_OK(OgxGenerator_RewindTo(run.gen, prompt.size() + 2));
  int32_t turn[2] = {5, 6};
  ASSERT_OK(OgxGenerator_AppendTokens(run.gen, turn, 2));
  EXPECT_EQ(OgxGenerator_TokenCount(run.gen), prompt.size() + 4);
  const int32_t* next = nullptr;
  size_t count = 0;
  ASSERT_OK(OgxGenerator_GetNextTokens(run.gen, &next, &count));
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(next[0], 6);
}

TEST(CAbiGeneration, GeneratorsShareAModelAcrossThreads) {
  OGX_REQUIRE_MODEL(dir, "fp32-cpu");
  Model model(dir);
  expect_threads_match_sequential(model.m, {{1, 2, 3}, {1, 900, 901, 902}, {1, 77}, {1, 5, 6, 7, 8}}, 10);
}

TEST(CAbiGeneration, ConcurrentCallsOnOneGeneratorAreSerialized) {
  OGX_REQUIRE_MODEL(dir, "fp32-cpu");
  Model model(dir);
  GenRun run;
  make_generator(model.m, 2, 40, run);
  int32_t prompt[2] = {1, 9};
  ASSERT_OK(OgxGenerator_AppendTokens(run.gen, prompt, 2));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++)
    threads.emplace_back([&] {
      for (int i = 0; i < 10; i++) {
        OgxDestroyResult(OgxGenerator_GenerateNextToken(run.gen));
        (void)OgxGenerator_TokenCount(run.gen);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(OgxGenerator_GetSequenceCount(run.gen, 0), 42u);
  EXPECT_TRUE(OgxGenerator_IsDone(run.gen));
}

namespace {
// The errors a dml model may give where it cannot run: no Vulkan in this build or on this machine, or graph
// execution not wired yet.
bool dml_unavailable(std::string msg) {
  for (char& c : msg) c = (char)std::tolower((unsigned char)c);
  return msg.find("cannot run model graphs in this build yet") != std::string::npos ||
         msg.find("no vulkan") != std::string::npos;  // "no Vulkan device ...", "... has no vulkan (dml) provider"
}

// The fp16-dml golden folder through the dml provider on the CPU Vulkan driver (lavapipe), device 0 of that list:
// null and the error of the model's creation when it cannot run here.
OgxResult* create_dml_on_lavapipe(const std::string& dir, OgxModel** model) {
  OgxConfig* config = nullptr;
  OgxResult* r = OgxCreateConfig(dir.c_str(), &config);
  if (!r) r = OgxConfigClearProviders(config);
  if (!r) r = OgxConfigAppendProvider(config, "dml");
  if (!r) r = OgxConfigSetProviderOption(config, "dml", "device_id", "0");
  if (!r) r = OgxConfigSetProviderOption(config, "dml", "hardware_device_type", "cpu");
  if (!r) r = OgxCreateModelFromConfig(config, model);
  OgxDestroyConfig(config);
  return r;
}

struct ScopedEnv {
  explicit ScopedEnv(const char* value) { setenv("OGX_PROVIDER_OPTIONS", value, 1); }
  ~ScopedEnv() { unsetenv("OGX_PROVIDER_OPTIONS"); }
};
}  // namespace

TEST(CAbiGeneration, ProviderOptionsFromTheEnvironment) {
  OGX_REQUIRE_MODEL(dir, "fp16-dml");
  OgxConfig* config = nullptr;
  ASSERT_OK(OgxCreateConfig(dir.c_str(), &config));
  ASSERT_OK(OgxConfigClearProviders(config));
  ASSERT_OK(OgxConfigAppendProvider(config, "dml"));  // no options: as DirectML code written for Windows
  OgxModel* model = nullptr;
  {
    ScopedEnv env("{not json");
    EXPECT_NE(error_of(OgxCreateModelFromConfig(config, &model)).find("OGX_PROVIDER_OPTIONS is not valid JSON"),
              std::string::npos);
  }
  {
    ScopedEnv env(R"({"cuda": {"device_id": 0}})");
    EXPECT_EQ(error_of(OgxCreateModelFromConfig(config, &model)),
              "OGX_PROVIDER_OPTIONS: unknown execution provider 'cuda' (known: cpu, vulkan, dml)");
  }
  {
    // Options the config sets win over the environment's: device_id 9 stays and is out of range.
    ScopedEnv env(R"({"vulkan": {"hardware_device_type": "cpu", "device_id": 0}})");
    ASSERT_OK(OgxConfigSetProviderOption(config, "dml", "device_id", "9"));
    std::string err = error_of(OgxCreateModelFromConfig(config, &model));
    EXPECT_TRUE(err.find("device_id=9") != std::string::npos || dml_unavailable(err)) << err;
    ASSERT_OK(OgxConfigSetProviderOption(config, "dml", "device_id", "0"));
  }
  ScopedEnv env(R"({"dml": {"hardware_device_type": "cpu"}})");
  OgxResult* r = OgxCreateModelFromConfig(config, &model);
  OgxDestroyConfig(config);
  if (r) {
    std::string msg = error_of(r);
    EXPECT_TRUE(dml_unavailable(msg)) << msg;
    GTEST_SKIP() << "dml provider unavailable here: " << msg;
  }
  EXPECT_EQ(greedy(model, {1, 2, 3}, 4).size(), 4u);
  OgxDestroyModel(model);
}

TEST(CAbiGeneration, DmlOnTheCpuVulkanDriverRunsOrSaysWhyNot) {
  OGX_REQUIRE_MODEL(dir, "fp16-dml");
  OgxModel* model = nullptr;
  OgxResult* r = create_dml_on_lavapipe(dir, &model);
  if (r) {
    std::string msg = OgxResultGetError(r);
    EXPECT_EQ(OgxResultGetCode(r), OgxErrorCode_Runtime);
    OgxDestroyResult(r);
    EXPECT_TRUE(dml_unavailable(msg)) << msg;
    GTEST_SKIP() << "dml provider unavailable here: " << msg;
  }
  const char* device = nullptr;
  ASSERT_OK(OgxModelGetDeviceType(model, &device));
  EXPECT_STREQ(device, "DirectML");
  OgxDestroyString(device);
  std::vector<int32_t> tokens = greedy(model, {1, 2, 3}, 8);
  EXPECT_EQ(tokens.size(), 8u);
  for (int32_t t : tokens) EXPECT_TRUE(t >= 0 && t < 2048);
  OgxDestroyModel(model);
}

// The dml (Vulkan) session keeps one sequence's KV cache: generators sharing the model from several threads must
// still each get the tokens they get alone (a generator re-runs its positions when another used the cache).
TEST(CAbiGeneration, DmlGeneratorsShareAModelAcrossThreads) {
  OGX_REQUIRE_MODEL(dir, "fp16-dml");
  OgxModel* model = nullptr;
  if (OgxResult* r = create_dml_on_lavapipe(dir, &model)) {
    std::string msg = error_of(r);
    EXPECT_TRUE(dml_unavailable(msg)) << msg;
    GTEST_SKIP() << "dml provider unavailable here: " << msg;
  }
  expect_threads_match_sequential(model, {{1, 2, 3}, {1, 900, 901, 902}, {1, 77}}, 8);
  OgxDestroyModel(model);
}
