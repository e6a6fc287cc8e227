// The ort_genai_c.h functions beyond the basic flow: log options and the upstream-shaped log callback, telemetry
// and provider-library switches, current GPU id, in-memory model data, device filtering setters, search options
// read back, named tensors, generator model I/O and runtime options, tokenizer options and markers, and the
// multimodal names (present, failing with one message).
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "api_test_util.h"

using namespace ogx_api_test;

namespace {

std::vector<std::string> g_lines;
void collect(const char* s, size_t n) { g_lines.emplace_back(s, n); }

OgxTensor* int32_tensor(std::vector<int32_t>& data, std::vector<int64_t> shape) {
  OgxTensor* t = nullptr;
  EXPECT_OK(OgxCreateTensorFromBuffer(data.data(), shape.data(), shape.size(), OgxElementType_int32, &t));
  return t;
}

std::vector<int64_t> shape_of(OgxTensor* t) {
  size_t rank = 0;
  EXPECT_OK(OgxTensorGetShapeRank(t, &rank));
  std::vector<int64_t> s(rank);
  EXPECT_OK(OgxTensorGetShape(t, s.data(), rank));
  return s;
}

}  // namespace

TEST(CAbiSurface, LogOptionsAndCallback) {
  OGX_REQUIRE_MODEL(dir, "fp32-cpu");
  EXPECT_NE(error_of(OgxSetLogBool("colour", true)).find("unknown log option 'colour'"), std::string::npos);
  EXPECT_NE(error_of(OgxSetLogString("path", "x")).find("unknown log option 'path'"), std::string::npos);
  ASSERT_OK(OgxSetLogBool("enabled", true));
  ASSERT_OK(OgxSetLogBool("generate_next_token", true));
  ASSERT_OK(OgxSetLogCallback(collect));
  OgxModel* model = nullptr;
  ASSERT_OK(OgxCreateModel(dir.c_str(), &model));
  OgxGeneratorParams* params = nullptr;
  ASSERT_OK(OgxCreateGeneratorParams(model, &params));
  ASSERT_OK(OgxGeneratorParamsSetSearchNumber(params, "max_length", 8));
  OgxGenerator* gen = nullptr;
  ASSERT_OK(OgxCreateGenerator(model, params, &gen));
  int32_t prompt[] = {1, 5, 9};
  ASSERT_OK(OgxGenerator_AppendTokens(gen, prompt, 3));
  ASSERT_OK(OgxGenerator_GenerateNextToken(gen));
  bool seen = false;
  for (auto& l : g_lines) seen = seen || l.find("generate_next_token: [") != std::string::npos;
  EXPECT_TRUE(seen);
  // A file takes the messages instead of the callback.
  std::string path = ::testing::TempDir() + "ogx_log_options.txt";
  std::remove(path.c_str());
  g_lines.clear();
  ASSERT_OK(OgxSetLogString("filename", path.c_str()));
  ASSERT_OK(OgxGenerator_GenerateNextToken(gen));
  ASSERT_OK(OgxSetLogString("filename", ""));
  EXPECT_TRUE(g_lines.empty());
  std::string text;
  {
    std::ifstream f(path);
    text.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  std::remove(path.c_str());
  EXPECT_NE(text.find("generate_next_token"), std::string::npos);
  EXPECT_NE(error_of(OgxSetLogString("filename", "/nonexistent-dir/x.log")).find("cannot open log file"),
            std::string::npos);
  ASSERT_OK(OgxSetLogBool("generate_next_token", false));
  ASSERT_OK(OgxSetLogCallback(nullptr));
  ASSERT_OK(OgxSetLogLevel(OgxLogLevel_Warning));
  EXPECT_EQ(OgxGenerator_TokenCount(gen), 5u);
  OgxDestroyGenerator(gen);
  OgxDestroyGeneratorParams(params);
  OgxDestroyModel(model);
}

TEST(CAbiSurface, ProcessWideSwitches) {
  OgxSetTelemetryEnabled(false);
  OgxSetTelemetryEnabled(true);
  OgxRegisterExecutionProviderLibrary("WebGpuExecutionProvider", "/x/libwebgpu.so");  // logs an error, no crash
  OgxUnregisterExecutionProviderLibrary(nullptr);
  int id = -1;
  ASSERT_OK(OgxGetCurrentGpuDeviceId(&id));
  EXPECT_EQ(id, 0);
  ASSERT_OK(OgxSetCurrentGpuDeviceId(2));
  ASSERT_OK(OgxGetCurrentGpuDeviceId(&id));
  EXPECT_EQ(id, 2);
  ASSERT_OK(OgxSetCurrentGpuDeviceId(0));
  EXPECT_NE(error_of(OgxSetCurrentGpuDeviceId(-3)).find("negative"), std::string::npos);
  OgxImages* images = reinterpret_cast<OgxImages*>(1);
  EXPECT_NE(error_of(OgxLoadImage("a.png", &images)).find("multimodal models are not supported"), std::string::npos);
  EXPECT_EQ(images, nullptr);
  OgxDestroyImages(nullptr);
  OgxShutdown();
}

TEST(CAbiSurface, ModelDataAndDeviceFiltering) {
  OGX_REQUIRE_MODEL(dir, "fp32-cpu");
  OgxConfig* config = nullptr;
  ASSERT_OK(OgxCreateConfig(dir.c_str(), &config));
  std::ifstream f(dir + "/model.onnx", std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(bytes.empty());
  ASSERT_OK(OgxConfigAddModelData(config, "model.onnx", bytes.data(), bytes.size()));
  std::fill(bytes.begin(), bytes.end(), 0);  // the config holds its own copy
  OgxModel* model = nullptr;
  ASSERT_OK(OgxCreateModelFromConfig(config, &model));
  const char* device = nullptr;
  ASSERT_OK(OgxModelGetDeviceType(model, &device));
  EXPECT_STREQ(device, "CPU");
  OgxDestroyString(device);
  OgxDestroyModel(model);
  ASSERT_OK(OgxConfigRemoveModelData(config, "model.onnx"));
  EXPECT_NE(error_of(OgxConfigRemoveModelData(config, "model.onnx")).find("no model data named"), std::string::npos);
  EXPECT_NE(error_of(OgxConfigAddModelData(config, "model.onnx", nullptr, 0)).find("no bytes"), std::string::npos);
  ASSERT_OK(OgxConfigAddModelData(config, "model.onnx", "junk", 4));
  EXPECT_NE(error_of(OgxCreateModelFromConfig(config, &model)).find("not a valid ONNX model"), std::string::npos);
  ASSERT_OK(OgxConfigRemoveModelData(config, "model.onnx"));

  ASSERT_OK(OgxConfigSetDecoderProviderOptionsHardwareDeviceType(config, "dml", "GPU"));
  ASSERT_OK(OgxConfigSetDecoderProviderOptionsHardwareVendorId(config, "dml", 4318));
  ASSERT_OK(OgxConfigSetDecoderProviderOptionsHardwareDeviceId(config, "dml", 7));
  ASSERT_OK(OgxConfigClearDecoderProviderOptionsHardwareDeviceType(config, "dml"));
  ASSERT_OK(OgxConfigClearDecoderProviderOptionsHardwareDeviceId(config, "dml"));
  ASSERT_OK(OgxConfigClearDecoderProviderOptionsHardwareVendorId(config, "dml"));
  EXPECT_NE(error_of(OgxConfigSetDecoderProviderOptionsHardwareDeviceType(config, "dml", "tpu")).find("CPU, GPU, NPU"),
            std::string::npos);
  OgxDestroyConfig(config);
}

TEST(CAbiSurface, NamedTensorsAndStringArrays) {
  OgxNamedTensors* named = nullptr;
  ASSERT_OK(OgxCreateNamedTensors(&named));
  std::vector<int32_t> data{1, 2, 3, 4};
  OgxTensor* t = int32_tensor(data, {2, 2});
  ASSERT_OK(OgxNamedTensorsSet(named, "a", t));
  ASSERT_OK(OgxNamedTensorsSet(named, "b", t));
  ASSERT_OK(OgxNamedTensorsSet(named, "a", t));  // replaces
  size_t n = 0;
  ASSERT_OK(OgxNamedTensorsCount(named, &n));
  EXPECT_EQ(n, 2u);
  OgxStringArray* names = nullptr;
  ASSERT_OK(OgxNamedTensorsGetNames(named, &names));
  ASSERT_OK(OgxStringArrayGetCount(names, &n));
  ASSERT_EQ(n, 2u);
  const char* s = nullptr;
  ASSERT_OK(OgxStringArrayGetString(names, 1, &s));
  EXPECT_STREQ(s, "b");
  OgxDestroyStringArray(names);
  OgxTensor* got = nullptr;
  ASSERT_OK(OgxNamedTensorsGet(named, "b", &got));
  EXPECT_EQ(shape_of(got), (std::vector<int64_t>{2, 2}));
  OgxDestroyTensor(got);
  ASSERT_OK(OgxNamedTensorsDelete(named, "a"));
  EXPECT_NE(error_of(OgxNamedTensorsDelete(named, "a")).find("no tensor named 'a'"), std::string::npos);
  EXPECT_NE(error_of(OgxNamedTensorsGet(named, "zz", &got)).find("no tensor named 'zz'"), std::string::npos);
  OgxDestroyTensor(t);
  OgxDestroyNamedTensors(named);

  const char* strs[] = {"x", "y"};
  OgxStringArray* a = nullptr;
  ASSERT_OK(OgxCreateStringArrayFromStrings(strs, 2, &a));
  ASSERT_OK(OgxStringArrayAddString(a, "z"));
  ASSERT_OK(OgxStringArrayGetCount(a, &n));
  EXPECT_EQ(n, 3u);
  OgxDestroyStringArray(a);
}

TEST(CAbiSurface, GeneratorModelIO) {
  OGX_REQUIRE_MODEL(dir, "fp32-cpu");
  OgxModel* model = nullptr;
  ASSERT_OK(OgxCreateModel(dir.c_str(), &model));
  OgxGeneratorParams* params = nullptr;
  ASSERT_OK(OgxCreateGeneratorParams(model, &params));
  ASSERT_OK(OgxGeneratorParamsSetSearchNumber(params, "max_length", 12));
  double v = 0;
  ASSERT_OK(OgxGeneratorParamsGetSearchNumber(params, "max_length", &v));
  EXPECT_EQ(v, 12);
  bool b = false;
  ASSERT_OK(OgxGeneratorParamsGetSearchBool(params, "early_stopping", &b));
  EXPECT_TRUE(b);
  EXPECT_NE(error_of(OgxGeneratorParamsGetSearchNumber(params, "beams", &v)).find("unknown numeric search option"),
            std::string::npos);
  // OpenAI's penalties by name: 0 by default, [-2, 2], a refused value leaves the option as it was.
  ASSERT_OK(OgxGeneratorParamsGetSearchNumber(params, "presence_penalty", &v));
  EXPECT_EQ(v, 0);
  ASSERT_OK(OgxGeneratorParamsSetSearchNumber(params, "presence_penalty", -1.5));
  ASSERT_OK(OgxGeneratorParamsSetSearchNumber(params, "frequency_penalty", 0.75));
  EXPECT_NE(error_of(OgxGeneratorParamsSetSearchNumber(params, "frequency_penalty", 2.5)).find("frequency_penalty"),
            std::string::npos);
  ASSERT_OK(OgxGeneratorParamsGetSearchNumber(params, "presence_penalty", &v));
  EXPECT_EQ(v, -1.5);
  ASSERT_OK(OgxGeneratorParamsGetSearchNumber(params, "frequency_penalty", &v));
  EXPECT_EQ(v, 0.75);
  ASSERT_OK(OgxGeneratorParamsSetSearchNumber(params, "presence_penalty", 0));
  ASSERT_OK(OgxGeneratorParamsSetSearchNumber(params, "frequency_penalty", 0));
  OgxGenerator* gen = nullptr;
  ASSERT_OK(OgxCreateGenerator(model, params, &gen));
  std::vector<int32_t> prompt{1, 5, 9, 13};
  OgxTensor* ids = int32_tensor(prompt, {1, 4});
  ASSERT_OK(OgxGenerator_AppendTokensFromTensor(gen, ids));
  OgxTensor* logits = nullptr;
  ASSERT_OK(OgxGenerator_GetOutput(gen, "logits", &logits));
  std::vector<int64_t> shape = shape_of(logits);
  ASSERT_EQ(shape.size(), 3u);
  EXPECT_EQ(shape[0], 1);
  EXPECT_EQ(shape[1], 4);
  OgxTensor* last = nullptr;
  ASSERT_OK(OgxGenerator_GetLogits(gen, &last));
  void *all_p = nullptr, *last_p = nullptr;
  ASSERT_OK(OgxTensorGetData(logits, &all_p));
  ASSERT_OK(OgxTensorGetData(last, &last_p));
  const int64_t V = shape[2];
  EXPECT_EQ(std::memcmp(static_cast<float*>(all_p) + 3 * V, last_p, V * sizeof(float)), 0);
  OgxDestroyTensor(logits);
  OgxDestroyTensor(last);
  OgxTensor* in = nullptr;
  ASSERT_OK(OgxGenerator_GetInput(gen, "input_ids", &in));
  EXPECT_EQ(shape_of(in), (std::vector<int64_t>{1, 4}));
  OgxDestroyTensor(in);
  EXPECT_NE(error_of(OgxGenerator_GetOutput(gen, "present.0.key", &in)).find("no output"), std::string::npos);
  EXPECT_NE(error_of(OgxGenerator_SetModelInput(gen, "attention_mask", ids)).find("set by the generator itself"),
            std::string::npos);
  // No recurrent state and no hidden_states input here: both change nothing, as upstream's (hidden_states_test.cpp
  // runs a model with that input).
  ASSERT_OK(OgxGenerator_SnapshotState(gen));
  ASSERT_OK(OgxGenerator_SetHiddenStates(gen, ids));
  EXPECT_NE(error_of(OgxGenerator_SetHiddenStates(gen, nullptr)).find("hidden_states"), std::string::npos);
  ASSERT_OK(OgxGenerator_SetRuntimeOption(gen, "terminate_session", "1"));
  EXPECT_NE(error_of(OgxGenerator_SnapshotState(gen)).find("session terminated"), std::string::npos);
  EXPECT_TRUE(OgxGenerator_IsSessionTerminated(gen));
  EXPECT_TRUE(OgxGenerator_IsDone(gen));
  EXPECT_NE(error_of(OgxGenerator_GenerateNextToken(gen)).find("session terminated"), std::string::npos);
  ASSERT_OK(OgxGenerator_SetRuntimeOption(gen, "terminate_session", "0"));
  ASSERT_OK(OgxGenerator_GenerateNextToken(gen));
  EXPECT_NE(error_of(OgxGenerator_SetRuntimeOption(gen, "x", "1")).find("unknown runtime option"), std::string::npos);
  OgxDestroyTensor(ids);
  OgxDestroyGenerator(gen);
  OgxDestroyGeneratorParams(params);
  OgxDestroyModel(model);
}

// Model packages (manifest.json, a variant folder per execution provider) are refused with what to do instead; a
// flat folder with upstream's message.
TEST(CAbiSurface, ModelPackagesAreRefusedClearly) {
  namespace fs = std::filesystem;
  const fs::path pkg = fs::temp_directory_path() / ("ogx_package_" + std::to_string(::getpid()));
  fs::create_directories(pkg / "cpu");
  std::ofstream(pkg / "manifest.json") << "{}";
  OgxConfig* config = nullptr;
  EXPECT_NE(error_of(OgxCreateConfigFromPackageEp(pkg.c_str(), "cpu", &config)).find("does not read model packages"),
            std::string::npos);
  EXPECT_EQ(config, nullptr);
  std::ofstream(pkg / "genai_config.json") << "{}";
  EXPECT_NE(error_of(OgxCreateConfigFromPackageEp(pkg.c_str(), nullptr, &config)).find("is not a model package"),
            std::string::npos);
  EXPECT_NE(error_of(OgxCreateConfigFromPackageEp(nullptr, nullptr, &config)).find("config_path"), std::string::npos);
  fs::remove_all(pkg);
}

TEST(CAbiSurface, TokenizerOptionsAndMarkers) {
  OGX_REQUIRE_MODEL(dir, "fp32-cpu");
  OgxModel* model = nullptr;
  ASSERT_OK(OgxCreateModel(dir.c_str(), &model));
  OgxTokenizer* tok = nullptr;
  ASSERT_OK(OgxCreateTokenizer(model, &tok));
  int32_t id = 0;
  EXPECT_EQ(error_of(OgxTokenizerGetBotTokenId(tok, &id)), "bot_token_id is not defined for this model");
  EXPECT_EQ(error_of(OgxTokenizerGetEorTokenId(tok, &id)), "eor_token_id is not defined for this model");
  const char* keys[] = {"add_special_tokens"};
  const char* values[] = {"false"};
  ASSERT_OK(OgxUpdateTokenizerOptions(tok, keys, values, 1));
  OgxSequences* seqs = nullptr;
  ASSERT_OK(OgxCreateSequences(&seqs));
  ASSERT_OK(OgxTokenizerEncode(tok, "hello", seqs));
  int32_t bos = -1;
  ASSERT_OK(OgxTokenizerGetBosTokenId(tok, &bos));
  ASSERT_GT(OgxSequencesGetSequenceCount(seqs, 0), 0u);
  EXPECT_NE(OgxSequencesGetSequenceData(seqs, 0)[0], bos);
  const char* bad_keys[] = {"lowercase"};
  EXPECT_NE(error_of(OgxUpdateTokenizerOptions(tok, bad_keys, values, 1)).find("unknown option 'lowercase'"),
            std::string::npos);
  OgxDestroySequences(seqs);
  OgxDestroyTokenizer(tok);
  OgxDestroyModel(model);
}

// Runtime settings: handles are stored and removed; a model loads with settings (other names are ignored, as
// upstream ignores them); WebGPU's dawnProcTable is refused naming what ogx has; bad handles are errors.
TEST(CAbiSurface, RuntimeSettings) {
  OGX_REQUIRE_MODEL(dir, "fp32-cpu");
  OgxRuntimeSettings* settings = nullptr;
  ASSERT_OK(OgxCreateRuntimeSettings(&settings));
  int dummy = 0;
  ASSERT_OK(OgxRuntimeSettingsSetHandle(settings, "some_handle", &dummy));
  OgxModel* model = nullptr;
  ASSERT_OK(OgxCreateModelWithRuntimeSettings(dir.c_str(), settings, &model));
  OgxDestroyModel(model);
  ASSERT_OK(OgxCreateModelWithRuntimeSettings(dir.c_str(), nullptr, &model));  // no settings: OgxCreateModel
  OgxDestroyModel(model);
  ASSERT_OK(OgxRuntimeSettingsSetHandle(settings, "dawnProcTable", &dummy));
  model = nullptr;
  std::string err = error_of(OgxCreateModelWithRuntimeSettings(dir.c_str(), settings, &model));
  EXPECT_NE(err.find("WebGPU"), std::string::npos) << err;
  EXPECT_NE(err.find("cpu"), std::string::npos) << err;
  EXPECT_EQ(model, nullptr);
  ASSERT_OK(OgxRuntimeSettingsSetHandle(settings, "dawnProcTable", nullptr));  // removed
  ASSERT_OK(OgxCreateModelWithRuntimeSettings(dir.c_str(), settings, &model));
  OgxDestroyModel(model);
  EXPECT_NE(error_of(OgxRuntimeSettingsSetHandle(settings, nullptr, &dummy)).find("handle_name"), std::string::npos);
  OgxDestroyRuntimeSettings(settings);
  EXPECT_NE(error_of(OgxRuntimeSettingsSetHandle(settings, "x", &dummy)).find("OgxRuntimeSettings"),
            std::string::npos);  // destroyed
}

TEST(CAbiSurface, SpeculativeOptionsAndStats) {
  OGX_REQUIRE_MODEL(dir, "fp32-cpu");
  OgxModel* model = nullptr;
  ASSERT_OK(OgxCreateModel(dir.c_str(), &model));
  OgxGeneratorParams* params = nullptr;
  ASSERT_OK(OgxCreateGeneratorParams(model, &params));
  ASSERT_OK(OgxGeneratorParamsSetSearchNumber(params, "max_length", 24));
  double v = -1;
  ASSERT_OK(OgxGeneratorParamsGetSpeculativeNumber(params, "ngram_size", &v));
  EXPECT_EQ(v, 0);
  EXPECT_NE(error_of(OgxGeneratorParamsSetSpeculativeNumber(params, "max_draft_tokens", 0)).find("[1, 16]"),
            std::string::npos);
  EXPECT_NE(error_of(OgxGeneratorParamsSetSpeculativeNumber(params, "ngram_size", 1)).find("2..16"), std::string::npos);
  ASSERT_OK(OgxGeneratorParamsSetSpeculativeBool(params, "cooldown", true));  // upstream's policies (speculative_policy.h)
  ASSERT_OK(OgxGeneratorParamsSetSpeculativeBool(params, "ngram_chained_lookup", true));
  ASSERT_OK(OgxGeneratorParamsSetSpeculativeNumber(params, "min_adaptive_k", 2));
  EXPECT_NE(error_of(OgxGeneratorParamsSetSpeculativeNumber(params, "draft", 1)).find("unknown speculative option"),
            std::string::npos);
  // Chained lookup without n-gram drafting is refused when the generator starts (as upstream).
  OgxGenerator* refused = nullptr;
  EXPECT_NE(error_of(OgxCreateGenerator(model, params, &refused)).find("ngram_chained_lookup requires ngram_size"),
            std::string::npos);
  // Plain and speculative greedy generation give the same tokens.
  std::vector<std::vector<int32_t>> out;
  for (int ngram : {0, 2}) {
    ASSERT_OK(OgxGeneratorParamsSetSpeculativeNumber(params, "ngram_size", ngram));
    ASSERT_OK(OgxGeneratorParamsSetSpeculativeBool(params, "ngram_chained_lookup", ngram > 0));
    OgxGenerator* gen = nullptr;
    ASSERT_OK(OgxCreateGenerator(model, params, &gen));
    int32_t prompt[] = {1, 7, 7, 7, 7, 7, 7, 7};
    ASSERT_OK(OgxGenerator_AppendTokens(gen, prompt, 8));
    while (!OgxGenerator_IsDone(gen)) ASSERT_OK(OgxGenerator_GenerateNextToken(gen));
    const int32_t* seq = OgxGenerator_GetSequenceData(gen, 0);
    out.emplace_back(seq, seq + OgxGenerator_GetSequenceCount(gen, 0));
    OgxSpeculativeStats* stats = nullptr;
    ASSERT_OK(OgxGenerator_GetSpeculativeStats(gen, &stats));
    bool enabled = !ngram;
    ASSERT_OK(OgxSpeculativeStatsGetBool(stats, "enabled", &enabled));
    EXPECT_EQ(enabled, ngram > 0);
    // Each call hands out a round's token (tokens_emitted) or makes a standard step (an n-gram miss), as upstream.
    uint64_t emitted = 0, standard = 0;
    ASSERT_OK(OgxSpeculativeStatsGetCount(stats, "tokens_emitted", &emitted));
    ASSERT_OK(OgxSpeculativeStatsGetCount(stats, "standard_fallback_steps", &standard));
    EXPECT_EQ(emitted + standard, ngram ? 16u : 0u);
    EXPECT_NE(error_of(OgxSpeculativeStatsGetNumber(stats, "speed", &v)).find("unknown statistic 'speed'"),
              std::string::npos);
    OgxDestroySpeculativeStats(stats);
    OgxDestroyGenerator(gen);
  }
  EXPECT_EQ(out[0], out[1]);
  OgxDestroyGeneratorParams(params);
  OgxDestroyModel(model);
}
