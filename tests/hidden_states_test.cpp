// Generator::set_hidden_states / snapshot_state (ONNX Runtime GenAI's SetHiddenStates / SnapshotState): a model whose
// genai_config names model.decoder.inputs.hidden_states takes the caller's [rows, tokens, hidden_size] tensor on
// each run. The model here is the default model (fp16 folder, CPU and Vulkan) with such an input added to its token
// embeddings: zeros give the unchanged model's logits (exactly on the CPU), other values change them; a missing or mis-sized
// tensor is an error naming the input and the generator stays usable.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "builder/builder.h"
#include "genai/generator.h"
#include "genai/search.h"
#include "onnx/loader.h"
#include "temp_folder.h"
#include "vulkan_test_config.h"

namespace ogx::test {
namespace {

namespace fs = std::filesystem;
const std::string kFolder = std::string(OGX_SOURCE_DIR) + "/models/ogx-debian-10m/fp16";

// The folder's graph with input "hidden_states" [batch, seq, hidden] added to the embedding Gather's output.
std::shared_ptr<const ogx::Model> with_hidden_states_input(const genai::Config& c) {
  auto m = std::make_shared<ogx::Model>(*ogx::load_model(kFolder + "/" + c.model.decoder.filename));
  Graph& g = m->graph;
  size_t at = g.nodes.size();  // the embedding: the Gather of input_ids (its table may be a tied lm_head's)
  const int ids = g.find(c.model.decoder.input_ids);
  for (size_t i = 0; i < g.nodes.size() && at == g.nodes.size(); i++)
    if (g.nodes[i].op_type == "Gather" && g.nodes[i].inputs.size() == 2 && g.nodes[i].inputs[1] == ids) at = i;
  EXPECT_LT(at, g.nodes.size()) << "no embedding Gather";
  const int embed = g.nodes[at].outputs[0];
  const int h = g.add_value("hidden_states"), sum = g.add_value("embeddings_plus_hidden_states");
  ValueInfo info;
  info.name = "hidden_states";
  info.dtype = DType::f16;
  info.has_shape = true;
  info.shape = {Dim{-1, "batch_size"}, Dim{-1, "sequence_length"}, Dim{c.model.decoder.hidden_size, ""}};
  g.inputs.push_back(info);
  g.input_ids.push_back(h);
  for (Node& n : g.nodes)
    for (int& v : n.inputs)
      if (v == embed) v = sum;
  Node add;
  add.name = "/test/add_hidden_states";
  add.op_type = "Add";
  add.inputs = {embed, h};
  add.outputs = {sum};
  g.nodes.insert(g.nodes.begin() + (long)at + 1, add);
  return m;
}

Tensor hidden(int64_t rows, int64_t S, int64_t H, float value) {
  Tensor t(DType::f32, {rows, S, H});
  for (int64_t i = 0; i < t.numel(); i++) t.data<float>()[i] = value * (float)((i % 7) - 3);
  return t.cast_float(DType::f16);
}

// Zeros give the plain model's logits on the same provider: exactly on the CPU; on the Vulkan provider the added Add
// changes which ops fuse (the embedding no longer feeds the first norm directly), so within fp16 rounding (1e-2).
void expect_fed_and_checked(bool vulkan) {
  if (!fs::exists(kFolder + "/genai_config.json")) GTEST_SKIP() << "default model folder absent";
  auto plain = load_on(kFolder, vulkan ? "vulkan" : "cpu", /*validation=*/true);
  if (!plain) GTEST_SKIP() << "no Vulkan device";
  genai::Config cfg = plain->config();  // its providers as loaded
  cfg.model.decoder.hidden_states_input = "hidden_states";
  auto model = genai::Model::load(cfg, with_hidden_states_input(cfg));
  auto expect_same = [&](const std::vector<float>& got, const std::vector<float>& want, int step) {
    ASSERT_EQ(got.size(), want.size());
    if (!vulkan) {
      EXPECT_EQ(got, want) << "step " << step;
      return;
    }
    for (size_t i = 0; i < got.size(); i++) ASSERT_NEAR(got[i], want[i], 1e-2) << "step " << step << " logit " << i;
  };
  const int64_t H = cfg.model.decoder.hidden_size;
  const std::vector<int32_t> prompt = {5, 17, 42, 99, 7};

  genai::GeneratorParams pp(*plain);
  pp.search.max_length = 16;
  genai::Generator want(plain, pp);
  want.append_tokens(prompt);

  genai::GeneratorParams params(*model);
  params.search.max_length = 16;
  genai::Generator gen(model, params);
  try {  // not set: an error naming the input and the call to make
    gen.append_tokens(prompt);
    ADD_FAILURE() << "a run without set_hidden_states succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("set_hidden_states"), std::string::npos) << e.what();
  }
  gen.set_hidden_states(hidden(1, 3, H, 0.0f));  // the wrong number of positions
  try {
    gen.append_tokens(prompt);
    ADD_FAILURE() << "a mis-sized hidden_states tensor was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[1, 5, " + std::to_string(H) + "]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(gen.set_hidden_states(Tensor(DType::f32, {1, 5, H})), Error);  // the input is fp16
  EXPECT_THROW(gen.extra_io().set_input("hidden_states", hidden(1, 5, H, 0.0f)), Error);  // its own setter
  // Zeros: the unchanged model's logits, exactly, for the prompt and each step.
  gen.snapshot_state();  // no recurrent state: nothing changes
  gen.set_hidden_states(hidden(1, 5, H, 0.0f));
  gen.append_tokens(prompt);
  for (int step = 0; step < 4; step++) {
    expect_same(gen.logits(), want.logits(), step);
    const int32_t t = genai::argmax(want.logits());
    want.append_tokens({t});
    gen.set_hidden_states(hidden(1, 1, H, 0.0f));
    gen.append_tokens({t});
  }
  expect_same(gen.logits(), want.logits(), 4);
  ASSERT_NE(gen.extra_io().input("hidden_states"), nullptr);
  EXPECT_EQ(gen.extra_io().input("hidden_states")->shape(), (Shape{1, 1, H}));
  // Other values change them.
  gen.set_hidden_states(hidden(1, 1, H, 0.05f));
  want.append_tokens({3});
  gen.append_tokens({3});
  EXPECT_NE(gen.logits(), want.logits());

  // A model without the input: set_hidden_states changes nothing (upstream's no-op).
  genai::Generator other(plain, pp);
  other.set_hidden_states(hidden(1, 1, H, 1.0f));
  other.snapshot_state();
  other.append_tokens(prompt);
  genai::Generator fresh(plain, pp);
  fresh.append_tokens(prompt);
  EXPECT_EQ(other.logits(), fresh.logits());
}

TEST(HiddenStates, FedOnEachRunAndCheckedAgainstTheRun) { expect_fed_and_checked(false); }
TEST(HiddenStates, FedOnEachRunAndCheckedAgainstTheRun_vulkan) { expect_fed_and_checked(true); }

TEST(HiddenStates, ConfigNamingAnInputTheModelLacksIsRefused) {
  if (!fs::exists(kFolder + "/genai_config.json")) GTEST_SKIP() << "default model folder absent";
  genai::Config cfg = genai::Config::load(kFolder);
  cfg.clear_providers();
  cfg.model.decoder.hidden_states_input = "no_such_input";
  try {
    genai::Model::load(cfg);
    ADD_FAILURE() << "loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model.decoder.inputs.hidden_states"), std::string::npos) << e.what();
  }
}

// A random-weight Llama built with and without the reference builder's include_hidden_states (ogx build
// --include-hidden-states): the folder's "hidden_states" output is read after every run on both providers, as
// upstream's test_hidden_states reads it (a batch of two: [2, 4, H] after the prompt, [2, 1, H] after a step), and
// the logits are the same folder's without the output (exactly on the CPU; on the Vulkan provider the final norm no
// longer folds into the lm_head's matvec, so within fp16 rounding).
std::string built_folder(bool hidden_states, bool dml) {
  const std::string dir = temp_folder("ogx_hidden_states_" + std::to_string(hidden_states) + std::to_string(dml));
  if (fs::exists(dir + "/model.onnx")) return dir;
  nlohmann::json shape = {{"architectures", {"LlamaForCausalLM"}}, {"hidden_size", 64}, {"intermediate_size", 128},
                          {"num_hidden_layers", 2}, {"num_attention_heads", 4}, {"num_key_value_heads", 2},
                          {"vocab_size", 512}, {"max_position_embeddings", 256}, {"bos_token_id", 1},
                          {"eos_token_id", 2}, {"rms_norm_eps", 1e-5}};
  std::ofstream(dir + "/shape.json") << shape.dump();
  builder::BuildOptions o;
  o.config_path = dir + "/shape.json";
  o.random_weights = true;
  o.precision = dml ? builder::Precision::fp16 : builder::Precision::fp32;
  o.provider = dml ? builder::Provider::dml : builder::Provider::cpu;
  o.num_threads = 2;
  o.include_hidden_states = hidden_states;
  builder::write_model_folder(builder::build_model(o), dir);
  return dir;
}

void expect_output_after_every_run(bool vulkan) {
  const std::string provider = vulkan ? "vulkan" : "cpu";
  auto with = load_on(built_folder(true, vulkan), provider, /*validation=*/true);
  if (!with) GTEST_SKIP() << "no Vulkan device";
  auto without = load_on(built_folder(false, vulkan), provider, /*validation=*/true);
  const int64_t H = 64;
  auto run = [&](const std::shared_ptr<genai::Model>& m, std::vector<Shape>* shapes) {
    genai::GeneratorParams p(*m);
    p.search.max_length = 10;
    p.search.batch_size = 2;
    genai::Generator g(m, p);
    g.append_token_sequences({{5, 6, 7, 52}, {8, 9, 195, 219}});
    std::vector<float> logits;
    for (int step = 0; step < 3; step++) {
      g.generate_next_token();
      if (shapes) {
        const Tensor* h = g.extra_io().output("hidden_states");
        shapes->push_back(h ? h->shape() : Shape{});
      }
    }
    const std::vector<float>& l = g.logits();
    return std::vector<float>(l.begin(), l.end());
  };
  std::vector<Shape> shapes;
  std::vector<float> got = run(with, &shapes), want = run(without, nullptr);
  ASSERT_EQ(shapes.size(), 3u);
  EXPECT_EQ(shapes[0], (Shape{2, 4, H}));  // the prompt's run (the first pick runs nothing)
  EXPECT_EQ(shapes[1], (Shape{2, 1, H}));
  EXPECT_EQ(shapes[2], (Shape{2, 1, H}));
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++) ASSERT_NEAR(got[i], want[i], vulkan ? 2e-2 : 0.0) << "logit " << i;
}

TEST(HiddenStates, BuilderOutputIsReadAfterEveryRun) { expect_output_after_every_run(false); }
TEST(HiddenStates, BuilderOutputIsReadAfterEveryRun_vulkan) { expect_output_after_every_run(true); }

}  // namespace
}  // namespace ogx::test
