// The settings speculative decoding refuses, with ONNX Runtime GenAI's reasons (its tests match these phrases):
// models whose cache a round cannot rewind (refused before their weights are read), last-token-only logits, n-gram
// drafting together with a draft model, chained lookup without n-gram drafting, several sequences, and a draft
// whose logits differ from the target's or are missing. Tiny table models (tiny_table_model.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

#include "genai/generator.h"
#include "expect_error.h"
#include "tiny_table_model.h"

namespace ogx::test {
namespace {

const std::vector<float> kTable = transition_table({{1, 2}, {2, 1}});

void start(const std::string& dir, int ngram, bool chained = false, int batch = 1, int returned = 1) {
  auto m = genai::Model::load(dir);
  genai::GeneratorParams p(*m);
  p.search.max_length = 12;
  p.search.batch_size = batch;
  p.search.num_return_sequences = returned;
  p.speculative.ngram_size = ngram;
  p.speculative.ngram_chained_lookup = chained;
  genai::Generator g(m, p);
}

TEST(SpeculativeGuards, UnrewindableModelsWithADraftAreRefusedBeforeLoading) {
  const nlohmann::json sliding = {{"sliding_window", {{"window_size", 16}, {"slide_key_value_cache", true}}}};
  std::string dir = write_table_model("guard_sliding", kTable, 10, false, sliding, table_decoder_config());
  std::filesystem::remove(dir + "/model.onnx");  // refused on the config alone
  expect_error([&] { genai::Model::load(dir); }, "does not support physically sliding KV caches");
  const nlohmann::json hybrid = {{"layer_types", {"full_attention", "conv"}}};
  dir = write_table_model("guard_lfm2", kTable, 10, false, hybrid, table_decoder_config());
  std::filesystem::remove(dir + "/model.onnx");
  expect_error([&] { genai::Model::load(dir); }, "LFM2");
}

TEST(SpeculativeGuards, NgramDecodingNeedsARewindableCacheAndEveryPositionsLogits) {
  const nlohmann::json sliding = {{"sliding_window", {{"window_size", 8}, {"slide_key_value_cache", true}}}};
  expect_error([&] { start(write_table_model("guard_ngram_sliding", kTable, 10, false, sliding), 3); },
               "rewindable KV cache");
  expect_error([&] { start(write_table_model("guard_pruned", kTable, 10, /*prune=*/true), 3); },
               "pruned last-token-only logits");
  start(write_table_model("guard_pruned", kTable, 10, /*prune=*/true), 0);  // plain decoding is fine
}

TEST(SpeculativeGuards, OptionsThatDoNotCombine) {
  const std::string plain = write_table_model("guard_plain", kTable);
  expect_error([&] { start(plain, 0, /*chained=*/true); }, "ngram_chained_lookup requires ngram_size");
  expect_error([&] { start(plain, 3, false, /*batch=*/2); }, "batch_size 1");
  expect_error([&] { start(plain, 3, false, 1, /*returned=*/2); }, "num_return_sequences");  // any generator
  const std::string draft = write_table_model("guard_draft", kTable, 10, false, nullptr, table_decoder_config());
  expect_error([&] { start(draft, 3); }, "cannot be combined with draft-model");
  expect_error([&] { start(draft, 0, /*chained=*/true); }, "ngram_chained_lookup requires ngram_size");
  start(draft, 0);
}

TEST(SpeculativeGuards, DraftLogitsMustMatchTheTargets) {
  std::string dir = write_table_model("guard_vocab", kTable, 10, false, nullptr, table_decoder_config("draft.onnx"));
  write_table_onnx(dir + "/draft.onnx", std::vector<float>(121, 0.0f), 11);
  expect_error([&] { genai::Model::load(dir); }, "Target vocab: 10, Draft vocab: 11");
  nlohmann::json missing = table_decoder_config();
  missing["outputs"]["logits"] = "missing_logits";
  dir = write_table_model("guard_missing", kTable, 10, false, nullptr, missing);
  expect_error([&] { genai::Model::load(dir); }, "Draft logits output 'missing_logits' was not found");
}

}  // namespace
}  // namespace ogx::test
