// Batches and beam search through the C ABI and the C++ wrapper, against ONNX Runtime GenAI's sequences
// (../shared/golden/search_ort.json, llama fp32-cpu): OgxGenerator_AppendTokenSequences with prompts of different
// lengths, AppendTokens with a flat batch, GetSequenceCount/Data per row and per hypothesis, GetNextTokens and
// GetLogits with one row per beam, and the errors of bad batch/beam options and calls.
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "api_test_util.h"
#include "ogx/ogx.hpp"

using namespace ogx_api_test;
using json = nlohmann::json;

namespace {

const json& golden_case(const std::string& name) {
  static json all = [] {
    std::ifstream f(std::string(OGX_SHARED_DIR) + "/golden/search_ort.json");
    return json::parse(f);
  }();
  for (const json& c : all["models"]["llama"]["fp32-cpu"])
    if (c["name"] == name) return c;
  throw std::runtime_error("no case " + name);
}

struct Handles {
  OgxModel* model = nullptr;
  OgxGeneratorParams* params = nullptr;
  OgxGenerator* gen = nullptr;
  OgxSequences* seqs = nullptr;
  ~Handles() {
    OgxDestroySequences(seqs);
    OgxDestroyGenerator(gen);
    OgxDestroyGeneratorParams(params);
    OgxDestroyModel(model);
  }
};

// Params of a golden case as oga_run set them: max/min length from the padded prompt length.
void set_case_options(OgxGeneratorParams* p, const json& c, size_t padded) {
  const json& o = c["options"];
  ASSERT_OK(OgxGeneratorParamsSetSearchNumber(p, "batch_size", (double)c["prompts"].size()));
  ASSERT_OK(OgxGeneratorParamsSetSearchNumber(p, "max_length", double(padded + o["max_new_tokens"].get<int>())));
  if (o.contains("min_new_tokens")) {
    ASSERT_OK(OgxGeneratorParamsSetSearchNumber(p, "min_length", double(padded + o["min_new_tokens"].get<int>())));
  }
  ASSERT_OK(OgxGeneratorParamsSetSearchNumber(p, "num_beams", o.value("num_beams", 1)));
  ASSERT_OK(OgxGeneratorParamsSetSearchNumber(p, "num_return_sequences", o.value("num_return_sequences", 1)));
  ASSERT_OK(OgxGeneratorParamsSetSearchNumber(p, "length_penalty", o.value("length_penalty", 1.0)));
  ASSERT_OK(OgxGeneratorParamsSetSearchBool(p, "early_stopping", o.value("early_stopping", true)));
  ASSERT_OK(OgxGeneratorParamsSetSearchBool(p, "do_sample", false));
}

size_t padded_length(const json& c) {
  size_t n = 0;
  for (auto& p : c["prompts"]) n = std::max(n, p.size());
  return n;
}

// Runs a golden case through the C ABI (prompts as OgxSequences) and checks every returned sequence.
void check_case_c(const std::string& dir, const std::string& name) {
  const json& c = golden_case(name);
  const size_t P = padded_length(c);
  Handles h;
  ASSERT_OK(OgxCreateModel(dir.c_str(), &h.model));
  ASSERT_OK(OgxCreateGeneratorParams(h.model, &h.params));
  set_case_options(h.params, c, P);
  ASSERT_OK(OgxCreateGenerator(h.model, h.params, &h.gen));
  ASSERT_OK(OgxCreateSequences(&h.seqs));
  for (auto& p : c["prompts"]) {
    std::vector<int32_t> ids = p.get<std::vector<int32_t>>();
    ASSERT_OK(OgxAppendTokenSequence(ids.data(), ids.size(), h.seqs));
  }
  ASSERT_OK(OgxGenerator_AppendTokenSequences(h.gen, h.seqs));
  while (!OgxGenerator_IsDone(h.gen)) ASSERT_OK(OgxGenerator_GenerateNextToken(h.gen));
  std::vector<std::vector<int32_t>> want = c["sequences"].get<std::vector<std::vector<int32_t>>>();
  for (size_t i = 0; i < want.size(); i++) {
    size_t n = OgxGenerator_GetSequenceCount(h.gen, i);
    const int32_t* d = OgxGenerator_GetSequenceData(h.gen, i);
    ASSERT_TRUE(d != nullptr && n >= P) << name << " sequence " << i;
    EXPECT_EQ(std::vector<int32_t>(d + P, d + n), want[i]) << name << " sequence " << i;
  }
  EXPECT_EQ(OgxGenerator_GetSequenceData(h.gen, want.size()), nullptr) << "one past the last sequence";
  EXPECT_EQ(OgxGenerator_GetSequenceCount(h.gen, want.size()), 0u);
}

TEST(CAbiBatch, append_token_sequences_of_different_lengths_gives_onnxruntime_genai_rows) {
  OGX_REQUIRE_MODEL(dir, "fp32-cpu");
  check_case_c(dir, "batch_greedy");
}

TEST(CAbiBatch, beam_search_returns_the_hypotheses_best_first) {
  OGX_REQUIRE_MODEL(dir, "fp32-cpu");
  check_case_c(dir, "batch_beam4");
  check_case_c(dir, "beam3_lp0.5_allow_eos");
}

TEST(CAbiBatch, next_tokens_and_logits_have_one_row_per_beam) {
  OGX_REQUIRE_MODEL(dir, "fp32-cpu");
  Handles h;
  ASSERT_OK(OgxCreateModel(dir.c_str(), &h.model));
  ASSERT_OK(OgxCreateGeneratorParams(h.model, &h.params));
  ASSERT_OK(OgxGeneratorParamsSetSearchNumber(h.params, "batch_size", 2));
  ASSERT_OK(OgxGeneratorParamsSetSearchNumber(h.params, "num_beams", 3));
  ASSERT_OK(OgxGeneratorParamsSetSearchNumber(h.params, "max_length", 12));
  ASSERT_OK(OgxCreateGenerator(h.model, h.params, &h.gen));
  // A flat batch: 2 rows of 4 ids.
  std::vector<int32_t> ids{1, 450, 996, 1735, 1, 903, 501, 263};
  ASSERT_OK(OgxGenerator_AppendTokens(h.gen, ids.data(), ids.size()));
  ASSERT_OK(OgxGenerator_GenerateNextToken(h.gen));
  const int32_t* next = nullptr;
  size_t count = 0;
  ASSERT_OK(OgxGenerator_GetNextTokens(h.gen, &next, &count));
  EXPECT_EQ(count, 6u) << "batch 2 x 3 beams";
  OgxTensor* t = nullptr;
  ASSERT_OK(OgxGenerator_GetLogits(h.gen, &t));
  int64_t dims[3] = {0, 0, 0};
  size_t rank = 0;
  ASSERT_OK(OgxTensorGetShapeRank(t, &rank));
  ASSERT_EQ(rank, 3u);
  ASSERT_OK(OgxTensorGetShape(t, dims, 3));
  EXPECT_EQ(dims[0], 6);
  EXPECT_EQ(dims[1], 1);
  EXPECT_EQ(dims[2], 2048);
  ASSERT_OK(OgxGenerator_SetLogits(h.gen, t));  // the same [6, 1, 2048] back
  OgxDestroyTensor(t);
  ASSERT_OK(OgxGenerator_GenerateNextToken(h.gen));
  EXPECT_EQ(OgxGenerator_GetSequenceCount(h.gen, 0), 6u) << "4 prompt tokens + 2 generated";
  EXPECT_EQ(OgxGenerator_GetSequenceCount(h.gen, 1), 6u) << "the second prompt's best hypothesis";
  EXPECT_EQ(OgxGenerator_GetSequenceCount(h.gen, 2), 0u) << "num_return_sequences 1: one hypothesis per prompt";
  EXPECT_NE(error_of(OgxGenerator_RewindTo(h.gen, 2)).find("beam search"), std::string::npos);
}

TEST(CAbiBatch, bad_batch_and_beam_options_and_calls_are_errors) {
  OGX_REQUIRE_MODEL(dir, "fp32-cpu");
  Handles h;
  ASSERT_OK(OgxCreateModel(dir.c_str(), &h.model));
  auto create_error = [&](const char* name, double v, const char* name2 = nullptr, double v2 = 0) {
    OgxGeneratorParams* p = nullptr;
    EXPECT_OK(OgxCreateGeneratorParams(h.model, &p));
    std::string err = error_of(OgxGeneratorParamsSetSearchNumber(p, name, v));
    if (err.empty() && name2) err = error_of(OgxGeneratorParamsSetSearchNumber(p, name2, v2));
    OgxGenerator* g = nullptr;
    if (err.empty()) err = error_of(OgxCreateGenerator(h.model, p, &g));
    EXPECT_EQ(g, nullptr);
    OgxDestroyGenerator(g);
    OgxDestroyGeneratorParams(p);
    return err;
  };
  EXPECT_NE(create_error("num_beams", 0).find("num_beams"), std::string::npos);
  EXPECT_NE(create_error("num_beams", 33).find("num_beams"), std::string::npos);
  EXPECT_NE(create_error("batch_size", 33).find("batch_size"), std::string::npos);
  EXPECT_NE(create_error("num_beams", 2, "num_return_sequences", 3).find("num_return_sequences"), std::string::npos);
  // A batch of 2: one sequence is an error naming the count; appending twice too.
  ASSERT_OK(OgxCreateGeneratorParams(h.model, &h.params));
  ASSERT_OK(OgxGeneratorParamsSetSearchNumber(h.params, "batch_size", 2));
  ASSERT_OK(OgxGeneratorParamsSetSearchNumber(h.params, "max_length", 16));
  ASSERT_OK(OgxCreateGenerator(h.model, h.params, &h.gen));
  ASSERT_OK(OgxCreateSequences(&h.seqs));
  std::vector<int32_t> a{1, 450, 996}, b{1, 903};
  ASSERT_OK(OgxAppendTokenSequence(a.data(), a.size(), h.seqs));
  EXPECT_NE(error_of(OgxGenerator_AppendTokenSequences(h.gen, h.seqs)).find("expected 2 sequences"), std::string::npos);
  std::vector<int32_t> odd{1, 2, 3};
  EXPECT_NE(error_of(OgxGenerator_AppendTokens(h.gen, odd.data(), odd.size())).find("batch_size"), std::string::npos);
  ASSERT_OK(OgxAppendTokenSequence(b.data(), b.size(), h.seqs));
  ASSERT_OK(OgxGenerator_AppendTokenSequences(h.gen, h.seqs));
  EXPECT_NE(error_of(OgxGenerator_AppendTokenSequences(h.gen, h.seqs)).find("once"), std::string::npos);
  EXPECT_NE(error_of(OgxGenerator_RewindTo(h.gen, 1)).find("rewind_to(0)"), std::string::npos);
  // The generator is still usable: rewind to 0 and start over.
  ASSERT_OK(OgxGenerator_RewindTo(h.gen, 0));
  ASSERT_OK(OgxGenerator_AppendTokenSequences(h.gen, h.seqs));
  ASSERT_OK(OgxGenerator_GenerateNextToken(h.gen));
  EXPECT_EQ(OgxGenerator_GetSequenceCount(h.gen, 1), 4u) << "padded to 3, one generated";
}

TEST(CppWrapperBatch, append_token_sequences_and_get_sequence) {
  OGX_REQUIRE_MODEL(dir, "fp32-cpu");
  const json& c = golden_case("batch_beam3_lp0.5");
  const size_t P = padded_length(c);
  auto model = ogx::Model::Create(dir.c_str());
  auto params = ogx::GeneratorParams::Create(*model);
  set_case_options(params->get(), c, P);
  auto gen = ogx::Generator::Create(*model, *params);
  auto seqs = ogx::Sequences::Create();
  for (auto& p : c["prompts"]) seqs->Append(p.get<std::vector<int32_t>>());
  gen->AppendTokenSequences(*seqs);
  while (!gen->IsDone()) gen->GenerateNextToken();
  std::vector<std::vector<int32_t>> want = c["sequences"].get<std::vector<std::vector<int32_t>>>();
  for (size_t i = 0; i < want.size(); i++) {
    std::vector<int32_t> s = gen->GetSequence(i);
    EXPECT_EQ(std::vector<int32_t>(s.begin() + P, s.end()), want[i]) << "sequence " << i;
  }
}

}  // namespace
