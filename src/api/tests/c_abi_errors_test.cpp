// The C ABI's error contract: NULL arguments, destroyed handles and handles of the wrong type give error results
// (never a crash), out parameters are cleared, double destroys are ignored and logged, unknown provider names list
// the known ones, and logging reaches the callback.
#include <string>
#include <vector>

#include "api_test_util.h"

using namespace ogx_api_test;

namespace {

struct Log {
  std::vector<std::pair<OgxLogLevel, std::string>> messages;
  static void callback(void* user_data, OgxLogLevel level, const char* message) {
    static_cast<Log*>(user_data)->messages.emplace_back(level, message);
  }
  bool contains(const std::string& text) const {
    for (auto& m : messages)
      if (m.second.find(text) != std::string::npos) return true;
    return false;
  }
};

// Installs a log callback for the test's duration.
struct ScopedLog : Log {
  ScopedLog() { EXPECT_OK(OgxSetLogCallbackWithLevel(&Log::callback, static_cast<Log*>(this))); }
  ~ScopedLog() { OgxDestroyResult(OgxSetLogCallbackWithLevel(nullptr, nullptr)); }
};

}  // namespace

TEST(CAbiErrors, NullArgumentsNameTheArgument) {
  EXPECT_EQ(error_of(OgxCreateConfig("x", nullptr)), "OgxCreateConfig: out is NULL");
  OgxConfig* config = nullptr;
  EXPECT_EQ(error_of(OgxCreateConfig(nullptr, &config)), "OgxCreateConfig: config_path is NULL");
  EXPECT_EQ(error_of(OgxConfigClearProviders(nullptr)), "OgxConfigClearProviders: config is NULL");
  EXPECT_EQ(code_of(OgxConfigClearProviders(nullptr)), OgxErrorCode_InvalidArgument);
  OgxModel* model = nullptr;
  EXPECT_EQ(error_of(OgxCreateModelFromConfig(nullptr, &model)), "OgxCreateModelFromConfig: config is NULL");
  OgxTokenizer* tok = nullptr;
  EXPECT_EQ(error_of(OgxCreateTokenizer(nullptr, &tok)), "OgxCreateTokenizer: model is NULL");
  OgxGeneratorParams* params = nullptr;
  EXPECT_EQ(error_of(OgxCreateGeneratorParams(nullptr, &params)), "OgxCreateGeneratorParams: model is NULL");
  OgxGenerator* gen = nullptr;
  EXPECT_EQ(error_of(OgxCreateGenerator(nullptr, nullptr, &gen)), "OgxCreateGenerator: model is NULL");
  EXPECT_EQ(error_of(OgxGenerator_AppendTokens(nullptr, nullptr, 0)), "OgxGenerator_AppendTokens: generator is NULL");
  EXPECT_EQ(error_of(OgxGenerator_GenerateNextToken(nullptr)), "OgxGenerator_GenerateNextToken: generator is NULL");
  EXPECT_EQ(error_of(OgxGenerator_RewindTo(nullptr, 0)), "OgxGenerator_RewindTo: generator is NULL");
  OgxTensor* t = nullptr;
  EXPECT_EQ(error_of(OgxGenerator_GetLogits(nullptr, &t)), "OgxGenerator_GetLogits: generator is NULL");
  EXPECT_EQ(error_of(OgxGenerator_SetLogits(nullptr, nullptr)), "OgxGenerator_SetLogits: generator is NULL");
  EXPECT_EQ(OgxGenerator_TokenCount(nullptr), 0u);  // returns its value directly, as ort_genai_c.h
  size_t n = 0;
  const char* s = nullptr;
  EXPECT_EQ(error_of(OgxTokenizerDecode(nullptr, nullptr, 0, &s)), "OgxTokenizerDecode: tokenizer is NULL");
  EXPECT_EQ(error_of(OgxTokenizerStreamDecode(nullptr, 1, &s)), "OgxTokenizerStreamDecode: stream is NULL");
  EXPECT_EQ(error_of(OgxModelGetType(nullptr, &s)), "OgxModelGetType: model is NULL");
  EXPECT_EQ(error_of(OgxStringArrayGetCount(nullptr, &n)), "OgxStringArrayGetCount: array is NULL");
  EXPECT_EQ(error_of(OgxTensorGetData(nullptr, nullptr)), "OgxTensorGetData: tensor is NULL");
  EXPECT_EQ(error_of(OgxGetAvailableDevices(nullptr)), "OgxGetAvailableDevices: out is NULL");
  EXPECT_EQ(error_of(OgxIsProviderAvailable(nullptr, nullptr)), "OgxIsProviderAvailable: provider is NULL");

  // Calls returning a value directly give their neutral value.
  EXPECT_TRUE(OgxGenerator_IsDone(nullptr));
  EXPECT_EQ(OgxGenerator_GetSequenceCount(nullptr, 0), 0u);
  EXPECT_EQ(OgxGenerator_GetSequenceData(nullptr, 0), nullptr);
  EXPECT_EQ(OgxSequencesCount(nullptr), 0u);
  EXPECT_EQ(OgxSequencesGetSequenceData(nullptr, 0), nullptr);
  // Destroying NULL is a no-op.
  OgxDestroyConfig(nullptr);
  OgxDestroyModel(nullptr);
  OgxDestroyGenerator(nullptr);
  OgxDestroyResult(nullptr);
  OgxDestroyString(nullptr);
}

TEST(CAbiErrors, ForeignPointerIsNotAHandle) {
  int not_a_handle = 0;
  auto* fake = reinterpret_cast<OgxGenerator*>(&not_a_handle);
  OgxResult* r = OgxGenerator_GenerateNextToken(fake);
  EXPECT_EQ(OgxResultGetCode(r), OgxErrorCode_InvalidHandle);
  EXPECT_NE(std::string(OgxResultGetError(r)).find("not a live OgxGenerator"), std::string::npos);
  OgxDestroyResult(r);
  EXPECT_TRUE(OgxGenerator_IsDone(fake));
  EXPECT_EQ(not_a_handle, 0);  // never written
}

TEST(CAbiErrors, UseAfterDestroyAndDoubleDestroy) {
  ScopedLog log;
  OgxSequences* seqs = nullptr;
  ASSERT_OK(OgxCreateSequences(&seqs));
  OgxDestroySequences(seqs);
  int32_t id = 1;
  OgxResult* r = OgxAppendTokenSequence(&id, 1, seqs);
  EXPECT_EQ(OgxResultGetCode(r), OgxErrorCode_InvalidHandle);
  EXPECT_NE(std::string(OgxResultGetError(r)).find("destroyed"), std::string::npos);
  OgxDestroyResult(r);
  OgxDestroySequences(seqs);  // ignored
  EXPECT_TRUE(log.contains("OgxDestroySequences: ignored: the handle was already destroyed"));

  // Results and strings are registered too.
  OgxResult* err = OgxConfigClearProviders(nullptr);
  OgxDestroyResult(err);
  OgxDestroyResult(err);  // ignored
  EXPECT_TRUE(log.contains("OgxDestroyResult: ignored"));
  const char* json = nullptr;
  ASSERT_OK(OgxGetAvailableDevices(&json));
  OgxDestroyString(json);
  OgxDestroyString(json);  // ignored
  EXPECT_TRUE(log.contains("OgxDestroyString: ignored"));
}

TEST(CAbiErrors, WrongHandleTypeIsDetected) {
  ScopedLog log;
  OgxSequences* seqs = nullptr;
  ASSERT_OK(OgxCreateSequences(&seqs));
  EXPECT_EQ(error_of(OgxConfigAppendProvider(reinterpret_cast<OgxConfig*>(seqs), "cpu")),
            "OgxConfigAppendProvider: config is an OgxSequences, expected an OgxConfig");
  EXPECT_EQ(code_of(OgxGenerator_GenerateNextToken(reinterpret_cast<OgxGenerator*>(seqs))),
            OgxErrorCode_InvalidHandle);
  // Destroying through the wrong destroy function leaves the object alive.
  OgxDestroyConfig(reinterpret_cast<OgxConfig*>(seqs));
  EXPECT_TRUE(log.contains("is an OgxSequences, not an OgxConfig"));
  EXPECT_EQ(OgxSequencesCount(seqs), 0u);
  EXPECT_OK(OgxAppendTokenToSequence(5, seqs, 0));
  EXPECT_EQ(OgxSequencesCount(seqs), 1u);
  OgxDestroySequences(seqs);
}

TEST(CAbiErrors, UnknownProviderListsTheKnownOnes) {
  bool avail = false;
  OgxResult* r = OgxIsProviderAvailable("cuda", &avail);
  EXPECT_EQ(OgxResultGetCode(r), OgxErrorCode_InvalidArgument);
  EXPECT_EQ(std::string(OgxResultGetError(r)), "unknown execution provider 'cuda' (known: cpu, vulkan, dml)");
  OgxDestroyResult(r);
  EXPECT_OK(OgxIsProviderAvailable("cpu", &avail));
  EXPECT_TRUE(avail);
  bool vulkan = false, dml = false;
  EXPECT_OK(OgxIsProviderAvailable("vulkan", &vulkan));
  EXPECT_OK(OgxIsProviderAvailable("dml", &dml));
  EXPECT_EQ(vulkan, dml);  // one provider, two names

  OGX_REQUIRE_MODEL(dir, "fp32-cpu");
  OgxConfig* config = nullptr;
  ASSERT_OK(OgxCreateConfig(dir.c_str(), &config));
  // Any name is accepted by the config (as ONNX Runtime GenAI); creating the model reports an unknown one.
  EXPECT_OK(OgxConfigAppendProvider(config, "openvino"));
  EXPECT_OK(OgxConfigSetProviderOption(config, "tensorrt", "device_id", "0"));
  OgxModel* model = nullptr;
  EXPECT_EQ(error_of(OgxCreateModelFromConfig(config, &model)),
            "unknown execution provider 'openvino' (known: cpu, vulkan, dml)");
  EXPECT_EQ(model, nullptr);
  EXPECT_OK(OgxConfigClearProviders(config));
  EXPECT_EQ(error_of(OgxConfigSetProviderOption(config, "dml", "", "0")), "OgxConfigSetProviderOption: key is empty");
  OgxDestroyConfig(config);
}

TEST(CAbiErrors, OverlayIsAllOrNothing) {
  OGX_REQUIRE_MODEL(dir, "fp32-cpu");
  OgxConfig* config = nullptr;
  ASSERT_OK(OgxCreateConfig(dir.c_str(), &config));
  // The first key is valid, the second is not: neither applies.
  std::string err = error_of(OgxConfigOverlay(config, R"({"search": {"max_length": 7, "top_p": 5}})"));
  EXPECT_NE(err.find("top_p"), std::string::npos);
  OgxModel* model = nullptr;
  ASSERT_OK(OgxCreateModelFromConfig(config, &model));
  OgxGeneratorParams* params = nullptr;
  ASSERT_OK(OgxCreateGeneratorParams(model, &params));
  OgxGenerator* gen = nullptr;
  ASSERT_OK(OgxCreateGenerator(model, params, &gen));
  std::vector<int32_t> ids(10, 5);
  EXPECT_OK(OgxGenerator_AppendTokens(gen, ids.data(), ids.size()));  // max_length is not 7
  OgxDestroyGenerator(gen);
  OgxDestroyGeneratorParams(params);
  OgxDestroyModel(model);
  OgxDestroyConfig(config);
}

TEST(CAbiErrors, LogCallbackReceivesWarnings) {
  OGX_REQUIRE_MODEL(dir, "fp32-cpu");
  ScopedLog log;
  OgxConfig* config = nullptr;
  ASSERT_OK(OgxCreateConfig(dir.c_str(), &config));
  EXPECT_OK(OgxConfigOverlay(config, R"({"search": {"max_length": 16, "a_future_key": 1}})"));
  ASSERT_FALSE(log.messages.empty());
  EXPECT_EQ(log.messages.back().first, OgxLogLevel_Warning);
  EXPECT_TRUE(log.contains("a_future_key"));
  // Below the level: dropped.
  EXPECT_OK(OgxSetLogLevel(OgxLogLevel_Error));
  size_t before = log.messages.size();
  EXPECT_OK(OgxConfigOverlay(config, R"({"search": {"another_key": 1}})"));
  EXPECT_EQ(log.messages.size(), before);
  EXPECT_OK(OgxSetLogLevel(OgxLogLevel_Info));
  OgxDestroyConfig(config);
}

TEST(CAbiErrors, GeneratorRejectsBadRequests) {
  OGX_REQUIRE_MODEL(dir, "fp32-cpu");
  OgxModel* model = nullptr;
  ASSERT_OK(OgxCreateModel(dir.c_str(), &model));
  OgxGeneratorParams* params = nullptr;
  ASSERT_OK(OgxCreateGeneratorParams(model, &params));
  EXPECT_NE(error_of(OgxGeneratorParamsSetSearchNumber(params, "top_p", 1.5)).find("top_p"), std::string::npos);
  EXPECT_NE(error_of(OgxGeneratorParamsSetSearchNumber(params, "temperature", 0.0 / 0.0)).find("finite"),
            std::string::npos);
  EXPECT_NE(error_of(OgxGeneratorParamsSetSearchNumber(params, "do_sample", 3)).find("boolean"), std::string::npos);
  ASSERT_OK(OgxGeneratorParamsSetSearchNumber(params, "max_length", 12));
  OgxGenerator* gen = nullptr;
  ASSERT_OK(OgxCreateGenerator(model, params, &gen));

  EXPECT_NE(error_of(OgxGenerator_GenerateNextToken(gen)).find("append a prompt first"), std::string::npos);
  OgxTensor* logits = nullptr;
  EXPECT_NE(error_of(OgxGenerator_GetLogits(gen, &logits)).find("append tokens first"), std::string::npos);
  EXPECT_EQ(logits, nullptr);
  EXPECT_EQ(error_of(OgxGenerator_AppendTokens(gen, nullptr, 3)), "OgxGenerator_AppendTokens: input_ids is NULL");
  EXPECT_NE(error_of(OgxGenerator_AppendTokens(gen, nullptr, 0)).find("no tokens"), std::string::npos);
  int32_t bad[2] = {1, 5000};
  EXPECT_NE(error_of(OgxGenerator_AppendTokens(gen, bad, 2)).find("out of range"), std::string::npos);
  std::vector<int32_t> too_long(13, 3);
  EXPECT_NE(error_of(OgxGenerator_AppendTokens(gen, too_long.data(), too_long.size())).find("max_length"),
            std::string::npos);
  OgxSequences* two = nullptr;
  ASSERT_OK(OgxCreateSequences(&two));
  ASSERT_OK(OgxAppendTokenSequence(bad, 1, two));
  ASSERT_OK(OgxAppendTokenSequence(bad, 1, two));
  EXPECT_NE(error_of(OgxGenerator_AppendTokenSequences(gen, two)).find("expected 1 sequence"), std::string::npos);
  OgxDestroySequences(two);

  int32_t ok[3] = {1, 2, 3};
  ASSERT_OK(OgxGenerator_AppendTokens(gen, ok, 3));
  // Logits of the wrong type or size.
  int64_t shape[1] = {10};
  OgxTensor* small = nullptr;
  ASSERT_OK(OgxCreateTensorFromBuffer(nullptr, shape, 1, OgxElementType_float32, &small));
  EXPECT_NE(error_of(OgxGenerator_SetLogits(gen, small)).find("expected 2048 values"), std::string::npos);
  OgxDestroyTensor(small);
  int64_t vocab[1] = {2048};
  OgxTensor* ints = nullptr;
  ASSERT_OK(OgxCreateTensorFromBuffer(nullptr, vocab, 1, OgxElementType_int32, &ints));
  EXPECT_NE(error_of(OgxGenerator_SetLogits(gen, ints)).find("float32"), std::string::npos);
  OgxDestroyTensor(ints);
  EXPECT_NE(error_of(OgxGenerator_RewindTo(gen, 4)).find("rewind_to(4)"), std::string::npos);
  // The generator still works after all these errors.
  EXPECT_OK(OgxGenerator_GenerateNextToken(gen));
  EXPECT_EQ(OgxGenerator_TokenCount(gen), 4u);

  OgxDestroyGenerator(gen);
  OgxDestroyGeneratorParams(params);
  OgxDestroyModel(model);
}

TEST(CAbiErrors, TokenizerRejectsBadInput) {
  OGX_REQUIRE_MODEL(dir, "fp32-cpu");
  OgxModel* model = nullptr;
  ASSERT_OK(OgxCreateModel(dir.c_str(), &model));
  OgxTokenizer* tok = nullptr;
  ASSERT_OK(OgxCreateTokenizer(model, &tok));
  const char* s = nullptr;
  int32_t out_of_vocab[1] = {99999};
  EXPECT_NE(error_of(OgxTokenizerDecode(tok, out_of_vocab, 1, &s)), "");
  EXPECT_EQ(s, nullptr);
  EXPECT_NE(error_of(OgxTokenizerApplyChatTemplate(tok, nullptr, "not json", nullptr, true, &s)).find("invalid JSON"),
            std::string::npos);
  EXPECT_NE(error_of(OgxTokenizerApplyChatTemplate(tok, "{% if %}", "[]", nullptr, true, &s)).find("line 1"),
            std::string::npos);
  const char* texts[2] = {"a", nullptr};
  OgxTensor* t = nullptr;
  EXPECT_EQ(error_of(OgxTokenizerEncodeBatch(tok, texts, 2, &t)), "OgxTokenizerEncodeBatch: strings[1] is NULL");
  int64_t shape[3] = {1, 1, 1};
  OgxTensor* rank3 = nullptr;
  ASSERT_OK(OgxCreateTensorFromBuffer(nullptr, shape, 3, OgxElementType_int32, &rank3));
  OgxStringArray* arr = nullptr;
  EXPECT_NE(error_of(OgxTokenizerDecodeBatch(tok, rank3, &arr)).find("rank 3"), std::string::npos);
  OgxDestroyTensor(rank3);
  OgxDestroyTokenizer(tok);
  OgxDestroyModel(model);
}

TEST(CAbiErrors, ModelFolderProblemsAreRuntimeErrors) {
  OgxModel* model = nullptr;
  OgxResult* r = OgxCreateModel("/nonexistent/model", &model);
  EXPECT_EQ(OgxResultGetCode(r), OgxErrorCode_Runtime);
  EXPECT_NE(std::string(OgxResultGetError(r)).find("/nonexistent/model"), std::string::npos);
  OgxDestroyResult(r);
  EXPECT_EQ(model, nullptr);
}

// Issue 17 / fuzz_c_api finding: a zero-filled tensor larger than the machine's memory is refused before it is
// allocated (it was a 65 TB std::vector, an OOM kill under overcommit), and overflowing shapes are errors.
TEST(CAbiErrors, HugeTensorsAreRefusedBeforeAllocating) {
  int64_t huge[2] = {int64_t(1) << 22, int64_t(1) << 22};  // 2^44 float32: 64 TiB
  OgxTensor* t = nullptr;
  std::string msg = error_of(OgxCreateTensorFromBuffer(nullptr, huge, 2, OgxElementType_float32, &t));
  EXPECT_NE(msg.find("OgxCreateTensorFromBuffer"), std::string::npos) << msg;
  EXPECT_EQ(t, nullptr);
  int64_t overflow[3] = {int64_t(1) << 40, int64_t(1) << 40, 4};
  EXPECT_NE(error_of(OgxCreateTensorFromBuffer(nullptr, overflow, 3, OgxElementType_float32, &t)).find("overflows"),
            std::string::npos);
  int64_t fine[2] = {3, 5};
  ASSERT_OK(OgxCreateTensorFromBuffer(nullptr, fine, 2, OgxElementType_float32, &t));
  OgxDestroyTensor(t);
}
