// Bad input never crashes: malformed model folders, configs and requests produce an ogx::Error that names the
// problem, and the process stays usable (a good model still runs afterwards).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "genai/generator.h"
#include "expect_error.h"
#include "model_copy.h"
#include "shared_dir.h"
#include "vulkan_test_config.h"

namespace ogx::test {
namespace {

namespace fs = std::filesystem;

std::string golden(const std::string& variant = "fp32-cpu") { return shared_dir() + "/golden/models/llama/" + variant; }

// The model generates a token after its prompt (the process is still usable after an error).
void expect_generates(const std::shared_ptr<genai::Model>& m) {
  genai::GeneratorParams p(*m);
  p.search.max_length = 8;
  genai::Generator g(m, p);
  g.append_tokens({1, 2, 3});
  g.generate_next_token();
  EXPECT_EQ(g.token_count(), 4u);
}

void expect_model_still_runs() { expect_generates(genai::Model::load(golden())); }

TEST(BadInput, TruncatedWeightFileNamesTheTensor) {
  OGX_REQUIRE_SHARED();
  ModelCopy c(golden());
  fs::resize_file(c.file("model.onnx.data"), fs::file_size(c.file("model.onnx.data")) / 2);
  expect_error([&] { genai::Model::load(c.dir()); }, "past the end");
  expect_model_still_runs();
}

TEST(BadInput, MissingWeightFile) {
  OGX_REQUIRE_SHARED();
  ModelCopy c(golden());
  fs::remove(c.file("model.onnx.data"));
  expect_error([&] { genai::Model::load(c.dir()); }, "model.onnx.data");
}

TEST(BadInput, GarbageModelFile) {
  OGX_REQUIRE_SHARED();
  ModelCopy c(golden());
  c.write("model.onnx", "this is not a protobuf at all \x01\x02\x03");
  expect_error([&] { genai::Model::load(c.dir()); }, "not a valid ONNX model");
  expect_model_still_runs();
}

TEST(BadInput, MissingFolderOrConfig) {
  expect_error([&] { genai::Model::load("/nonexistent/model"); }, "genai_config.json");
}

TEST(BadInput, ConfigWrongTypeNamesJsonPath) {
  OGX_REQUIRE_SHARED();
  ModelCopy c(golden());
  std::string cfg = c.read("genai_config.json");
  cfg.replace(cfg.find("\"num_hidden_layers\": 2"), 22, "\"num_hidden_layers\": \"two\"");
  c.write("genai_config.json", cfg);
  expect_error([&] { genai::Model::load(c.dir()); }, "model.decoder.num_hidden_layers");
}

TEST(BadInput, ConfigNotJson) {
  OGX_REQUIRE_SHARED();
  ModelCopy c(golden());
  c.write("genai_config.json", "{ \"model\": ");
  expect_error([&] { genai::Model::load(c.dir()); }, "not valid JSON");
}

TEST(BadInput, ConfigBadSearchValue) {
  OGX_REQUIRE_SHARED();
  ModelCopy c(golden());
  std::string cfg = c.read("genai_config.json");
  cfg.replace(cfg.find("\"top_p\": 1.0"), 12, "\"top_p\": 7.0");
  c.write("genai_config.json", cfg);
  expect_error([&] { genai::Model::load(c.dir()); }, "search.top_p");
}

TEST(BadInput, UnknownProviderListsKnownOnes) {
  OGX_REQUIRE_SHARED();
  auto c = genai::Config::load(golden());
  c.append_provider("tpu");  // accepted by the config, as ONNX Runtime GenAI; the model reports it
  expect_error([&] { genai::Model::load(c); }, "unknown execution provider 'tpu' (known: cpu, vulkan, dml)");
}

TEST(BadInput, RequestErrors) {
  OGX_REQUIRE_SHARED();
  auto m = genai::Model::load(golden());
  genai::GeneratorParams p(*m);
  p.search.max_length = 4;
  genai::Generator g(m, p);
  expect_error([&] { g.append_tokens({}); }, "empty prompt");
  expect_error([&] { g.append_tokens({1, 5000}); }, "out of range");
  expect_error([&] { g.append_tokens({1, -3}); }, "out of range");
  expect_error([&] { g.append_tokens({1, 2, 3, 4, 5}); }, "max_length 4 is smaller");
  // The same generator is still usable after the errors.
  g.append_tokens({1, 2});
  g.generate_next_token();
  EXPECT_EQ(g.token_count(), 3u);
  expect_error([&] { p.set_search_option("top_p", 0); }, "top_p");
  expect_error([&] { p.set_search_option("no_such_option", 1); }, "unknown search option");
}

TEST(BadInput, GenerationStopsAtMaxLength) {
  OGX_REQUIRE_SHARED();
  auto m = genai::Model::load(golden());
  genai::GeneratorParams p(*m);
  p.search.max_length = 5;
  p.search.min_length = 5;
  genai::Generator g(m, p);
  g.append_tokens({1, 2});
  while (!g.is_done()) g.generate_next_token();
  EXPECT_EQ(g.token_count(), 5u);
  expect_error([&] { g.generate_next_token(); }, "done");
}

}  // namespace
}  // namespace ogx::test

#include <onnx/onnx_pb.h>

namespace ogx::test {
namespace {

// A graph with an op the Vulkan provider does not run: the load fails naming the node (and suggesting the CPU),
// and the Vulkan provider still runs a good model afterwards. Skipped without a Vulkan device.
TEST(BadInput, vulkan_unsupported_op_names_the_node) {
  OGX_REQUIRE_SHARED();
  ModelCopy copy(golden("fp16-dml"));
  onnx::ModelProto m;
  {
    std::ifstream in(copy.file("model.onnx"), std::ios::binary);
    ASSERT_TRUE(m.ParseFromIstream(&in));
  }
  std::string renamed;
  for (auto& n : *m.mutable_graph()->mutable_node())
    if (n.op_type() == "Sigmoid") {
      n.set_op_type("Trilu");  // a CPU op the Vulkan provider lacks (Softsign joined it)
      renamed = n.name();
      break;
    }
  ASSERT_FALSE(renamed.empty());
  {
    std::ofstream out(copy.file("model.onnx"), std::ios::binary | std::ios::trunc);
    ASSERT_TRUE(m.SerializeToOstream(&out));
  }
  auto load_vulkan = [](const std::string& dir, const char* cpu_fallback = nullptr) {
    genai::Config c = genai::Config::load(dir);
    select_vulkan(c, /*validation=*/false);
    if (cpu_fallback) c.set_provider_option("dml", "enable_cpu_fallback", cpu_fallback);
    return genai::Model::load(c);
  };
  try {
    load_vulkan(golden("fp16-dml"));
  } catch (const Error& e) {
    if (no_vulkan_device(e)) GTEST_SKIP() << e.what();
    throw;
  }
  expect_error([&] { load_vulkan(copy.dir(), "0"); }, renamed);
  expect_generates(load_vulkan(golden("fp16-dml")));
  expect_generates(load_vulkan(copy.dir(), "1"));  // the node runs on the CPU provider (fallback, the default)
}

}  // namespace
}  // namespace ogx::test
