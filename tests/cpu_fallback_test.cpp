// Per-node CPU fallback of the Vulkan provider: the golden llama fp32 graph, edited in memory to hold chains of ops
// that leave every value unchanged (x -> Sign(x) * Abs(x); Clip without bounds; Split/Concat; Reshape to Shape(x)),
// placed on the CPU provider (the provider option cpu_ops forces them there whatever the device gains, so the tests
// keep testing fallback), must give the CPU provider's tokens on lavapipe (validation on), keep device sampling where
// the logits stay on the device, and a node the device lacks (Trilu) must fail at load with enable_cpu_fallback=0
// or OGX_STRICT_PROVIDER=1. Skipped without a Vulkan device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "genai/generator.h"
#include "onnx/loader.h"
#include "shared_dir.h"
#include "vulkan_test_config.h"
#ifdef OGX_HAVE_VULKAN
#include "providers/vulkan/instance.h"
#endif

namespace ogx::test {
namespace {

// Replaces every read of value `name` (and the graph output of that name) by the output of a chain of ops that
// computes the same value: "sign_abs" (Sign(x) * Abs(x), Mul on the device between two CPU nodes), "clip" (Clip
// with no bounds) or "reshape" (Reshape(x, Shape(x)): the device's Reshape refuses a shape it cannot read on the
// host, so it falls back too). The chain is inserted right after the producer, keeping the nodes in topological
// order.
void insert_identity(Model& m, const std::string& name, const std::string& kind) {
  Graph& g = m.graph;
  int x = g.find(name);
  ASSERT_GE(x, 0) << name;
  size_t producer = 0;
  for (size_t i = 0; i < g.nodes.size(); i++)
    for (int v : g.nodes[i].outputs)
      if (v == x) producer = i;
  std::string base = name + "/" + kind;
  int y = g.add_value(base + "/output");
  std::vector<Node> chain;
  auto node = [&](const std::string& op, std::vector<int> in, std::vector<int> out) {
    Node n;
    n.name = base + "/" + op + "_" + std::to_string(chain.size());
    n.op_type = op;
    n.inputs = std::move(in);
    n.outputs = std::move(out);
    if (op == "Split" || op == "Concat") n.attrs["axis"] = int64_t(-1);
    chain.push_back(std::move(n));
  };
  if (kind == "clip") {
    node("Clip", {x}, {y});
  } else if (kind == "trilu") {  // not an identity, and an op the Vulkan provider lacks: for load-time tests
    node("Trilu", {x}, {y});
  } else if (kind == "reshape") {  // Reshape(x, Shape(x)): a view whose target shape is computed from a device value
    int shape = g.add_value(base + "/shape");
    node("Shape", {x}, {shape});
    node("Reshape", {x, shape}, {y});
  } else if (kind == "split") {  // -Concat(-a, -b) with a, b = Split(x): two stages, the first with two outputs
    int a = g.add_value(base + "/a"), b = g.add_value(base + "/b"), na = g.add_value(base + "/na"),
        nb = g.add_value(base + "/nb"), c = g.add_value(base + "/c");
    node("Split", {x}, {a, b});
    node("Neg", {a}, {na});
    node("Neg", {b}, {nb});
    node("Concat", {na, nb}, {c});
    node("Neg", {c}, {y});
  } else {
    int s = g.add_value(base + "/sign"), a = g.add_value(base + "/abs");
    node("Sign", {x}, {s});
    node("Abs", {x}, {a});
    node("Mul", {s, a}, {y});
  }
  for (Node& n : g.nodes)
    for (int& v : n.inputs)
      if (v == x) v = y;
  bool is_output = false;
  for (int& v : g.output_ids)
    if (v == x) {
      // The graph output keeps its name: the producer now writes a renamed value and the chain writes the output.
      int renamed = g.add_value(name + "/before_" + kind);
      for (int& o : g.nodes[producer].outputs)
        if (o == x) o = renamed;
      for (Node& n : chain)
        for (int& in : n.inputs)
          if (in == x) in = renamed;
      for (Node& n : chain)
        for (int& out : n.outputs)
          if (out == y) out = x;
      for (Node& n : g.nodes)
        for (int& in : n.inputs)
          if (in == y) in = x;
      is_output = true;
    }
  (void)is_output;
  g.nodes.insert(g.nodes.begin() + (long)producer + 1, chain.begin(), chain.end());
}

std::vector<int32_t> greedy(const std::shared_ptr<genai::Model>& m, int n, bool* on_device = nullptr) {
  genai::GeneratorParams p(*m);
  p.search.max_length = 5 + n;
  p.search.min_length = 5 + n;  // no EOS
  genai::Generator g(m, p);
  if (on_device) *on_device = g.samples_on_device();
  g.append_tokens({1, 450, 496, 1735, 77});
  while (!g.is_done()) g.generate_next_token();
  return std::vector<int32_t>(g.sequence().begin() + 5, g.sequence().end());
}

double stat(const genai::Model& m, const std::string& key) {
  for (auto& [k, v] : m.session().stats())
    if (k == key) return v;
  return -1;
}

class CpuFallback : public ::testing::Test {
 protected:
  void SetUp() override {
    OGX_REQUIRE_SHARED();
    messages_ = validation_messages();
    dir_ = shared_dir() + "/golden/models/llama/fp32-cpu";
    graph_ = load_model(dir_ + "/model.onnx");
    cpu_ = genai::Model::load(config(false, "", ""));
  }
  genai::Config config(bool vulkan, const std::string& cpu_ops, const std::string& fallback) {
    genai::Config c = genai::Config::load(dir_);
    c.clear_providers();
    if (vulkan) select_vulkan(c, /*validation=*/true);
    if (!cpu_ops.empty()) c.set_provider_option("dml", "cpu_ops", cpu_ops);
    // Fallback asked for explicitly where ops are forced onto the CPU, so OGX_STRICT_PROVIDER=1 leaves it on.
    if (!fallback.empty()) c.set_provider_option("dml", "enable_cpu_fallback", fallback);
    else if (!cpu_ops.empty()) c.set_provider_option("dml", "enable_cpu_fallback", "1");
    return c;
  }
  // The edited graph on the Vulkan provider, `cpu_ops` forced onto the CPU; null (test skipped) without a device.
  std::shared_ptr<genai::Model> vulkan(std::shared_ptr<Model> edited, const std::string& cpu_ops,
                                       const std::string& fallback = "") {
    try {
      return genai::Model::load(config(true, cpu_ops, fallback), std::move(edited));
    } catch (const Error& e) {
      if (no_vulkan_device(e)) {
        skipped_ = true;
        return nullptr;
      }
      throw;
    }
  }
  std::shared_ptr<Model> edited_mid_graph() {
    auto m = std::make_shared<Model>(*graph_);
    insert_identity(*m, "/model/layers.0/attn/GroupQueryAttention/output_0", "sign_abs");
    insert_identity(*m, "/model/layers.1/post_attention_layernorm/output_0", "clip");
    return m;
  }
  void TearDown() override {
    EXPECT_EQ(validation_messages(), messages_) << "Vulkan validation messages (logged above)";
  }
  static int validation_messages() {
#ifdef OGX_HAVE_VULKAN
    return vk::Instance::validation_message_count();
#else
    return 0;
#endif
  }
  int messages_ = 0;
  std::string dir_;
  std::shared_ptr<Model> graph_;
  std::shared_ptr<genai::Model> cpu_;
  bool skipped_ = false;
};

TEST_F(CpuFallback, vulkan_nodes_in_the_middle_give_the_cpu_tokens_with_device_sampling) {
  auto vk = vulkan(edited_mid_graph(), "Sign,Abs,Clip");
  if (skipped_) GTEST_SKIP() << "no Vulkan device";
  bool on_device = false;
  std::vector<int32_t> tokens = greedy(vk, 20, &on_device);
  EXPECT_EQ(tokens, greedy(cpu_, 20));
  EXPECT_TRUE(on_device) << "the logits stay on the device: greedy picking should stay there too";
  EXPECT_EQ(stat(*vk, "fallback_nodes"), 3);
  EXPECT_EQ(stat(*vk, "fallback_stages"), 2);
  EXPECT_EQ(stat(*vk, "fallback_op Sign"), 1);
  EXPECT_EQ(stat(*vk, "fallback_op Clip"), 1);
  EXPECT_GT(stat(*vk, "fallback_bytes"), 0);
  EXPECT_EQ(stat(*vk, "queued_runs"), 0) << "a step split by fallback runs synchronously";

  // Logits of the prompt and of a decode step, teacher-forced: fp32 on both providers.
  genai::GeneratorParams pv(*vk), pc(*cpu_);
  genai::Generator gv(vk, pv), gc(cpu_, pc);
  for (auto* g : {&gv, &gc}) g->append_tokens({1, 450, 496, 1735, 77, 9, 1200});
  for (int step = 0; step < 2; step++) {
    const std::vector<float>& a = gv.logits();
    const std::vector<float>& b = gc.logits();
    ASSERT_EQ(a.size(), b.size());
    double worst = 0;
    for (size_t i = 0; i < a.size(); i++) worst = std::max(worst, (double)std::fabs(a[i] - b[i]));
    EXPECT_LE(worst, 1e-4) << "step " << step;
    for (auto* g : {&gv, &gc}) g->append_tokens({42});
  }
}

TEST_F(CpuFallback, vulkan_node_making_the_logits_gives_the_cpu_tokens_with_host_sampling) {
  auto m = std::make_shared<Model>(*graph_);
  insert_identity(*m, "logits", "clip");
  auto vk = vulkan(m, "Clip");
  if (skipped_) GTEST_SKIP() << "no Vulkan device";
  bool on_device = true;
  EXPECT_EQ(greedy(vk, 20, &on_device), greedy(cpu_, 20));
  EXPECT_FALSE(on_device) << "the logits are made on the host: no device sampling";
  EXPECT_EQ(stat(*vk, "fallback_stages"), 1);
}

TEST_F(CpuFallback, vulkan_node_the_device_op_refuses_falls_back) {
  auto m = std::make_shared<Model>(*graph_);
  insert_identity(*m, "/model/layers.0/attn/GroupQueryAttention/output_0", "reshape");
  auto vk = vulkan(m, "Shape");
  if (skipped_) GTEST_SKIP() << "no Vulkan device";
  EXPECT_EQ(greedy(vk, 12), greedy(cpu_, 12));
  EXPECT_EQ(stat(*vk, "fallback_op Shape"), 1);
  EXPECT_EQ(stat(*vk, "fallback_op Reshape"), 1) << "the device's Reshape needs its shape on the host";
}

TEST_F(CpuFallback, vulkan_split_and_concat_on_the_cpu_around_device_nodes_give_the_cpu_tokens) {
  auto m = std::make_shared<Model>(*graph_);
  insert_identity(*m, "/model/layers.1/attn/GroupQueryAttention/output_0", "split");
  auto vk = vulkan(m, "Split,Concat");
  if (skipped_) GTEST_SKIP() << "no Vulkan device";
  EXPECT_EQ(greedy(vk, 12), greedy(cpu_, 12));
  EXPECT_EQ(stat(*vk, "fallback_stages"), 2);
  EXPECT_EQ(stat(*vk, "fallback_op Split"), 1);
  EXPECT_EQ(stat(*vk, "fallback_op Concat"), 1);
}

TEST_F(CpuFallback, vulkan_fallback_off_is_a_load_error_naming_the_nodes) {
  auto m = std::make_shared<Model>(*graph_);
  insert_identity(*m, "/model/layers.0/attn/GroupQueryAttention/output_0", "trilu");
  try {
    auto vk = vulkan(m, "", "0");
    if (skipped_) GTEST_SKIP() << "no Vulkan device";
    FAIL() << "enable_cpu_fallback=0 should refuse the graph";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("does not support 1 node(s)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("Trilu node"), std::string::npos) << msg;
    EXPECT_NE(msg.find("enable_cpu_fallback=0"), std::string::npos) << msg;
  }
  setenv("OGX_STRICT_PROVIDER", "1", 1);
  EXPECT_THROW(vulkan(m, ""), Error);
  EXPECT_THROW(vulkan(edited_mid_graph(), "Sign,Abs,Clip", "0"), Error) << "cpu_ops needs fallback";
  EXPECT_NE(vulkan(m, "", "1"), nullptr) << "the provider option, given, wins over the environment";
  unsetenv("OGX_STRICT_PROVIDER");
  EXPECT_NE(vulkan(m, ""), nullptr) << "by default the node falls back";
  EXPECT_THROW(vulkan(m, "", "maybe"), Error) << "a bad value is an error";
}

}  // namespace
}  // namespace ogx::test
