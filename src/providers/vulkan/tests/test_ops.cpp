// The one-node op test (llama.cpp's test-backend-ops is the model): for every op the Vulkan provider registers
// (graph/device_op.h's table), build small ONNX graphs in memory over random data — odd sizes, broadcasting, empty
// dims, each dtype the op allows — run them on the CPU provider and through the op's DeviceOp on the device, and
// compare. Fused ops (ogx.GateUpSiLU, ogx.NormProjection, packed QKV with the rotary folded into the attention) run
// the graph fusion.cpp makes on the device against the unfused graph on the CPU. An op without a case generator fails the test, so a new op is tested or noticed.
//
// Tolerances (|got - want| <= atol + rtol * |want|): both providers compute in fp32 and store in the tensor's type.
//   fp32: 1e-5 + 1e-4 relative — transcendental implementations (the device's erf is a 1.5e-7-accurate
//         approximation, driver exp/tanh a few ulps) and summation order in reductions (norms, softmax, matmul,
//         attention over <= a few hundred terms).
//   fp16: 2e-3 + 4e-3 relative — one fp16 rounding of each result (2^-11) can land on either side of a tie after the
//         fp32 differences above, i.e. one fp16 ulp (2^-10 relative), plus fp16-rounded intermediates in the
//         attention and matmul kernels.
//   int32 / int64 / bool: exact.
#include <functional>
#include <map>
#include <random>

#include "providers/vulkan/graph/device_op.h"
#include "providers/vulkan/graph/fusion.h"
#include "providers/vulkan/graph/host_eval.h"
#include "providers/vulkan/graph/vulkan_session.h"
#include "providers/vulkan/kernels/elementwise.h"
#include "providers/vulkan/tests/op_cases.h"
#include "providers/vulkan/tests/vk_test_util.h"

namespace ogx::vk::test {
namespace {

using graph::OpArgs;
using graph::OpBuildContext;

// ---- running ----
struct Tol {
  double atol, rtol;
};
Tol tol_for(DType dt) {
  if (dt == DType::f32) return {1e-5, 1e-4};
  if (dt == DType::f16) return {2e-3, 4e-3};
  return {0, 0};
}

class OpHarness : public VulkanTest {
 protected:
  // Runs every node of g on the device through its DeviceOp; returns the graph outputs.
  std::vector<Tensor> run_device(const Graph& g, const std::vector<NamedTensor>& inputs) {
    std::map<int, const Tensor*> host;
    for (size_t v = 0; v < g.values.size(); v++)
      if (g.values[v].is_constant) host[(int)v] = &g.values[v].constant;
    for (auto& [name, t] : inputs) host[g.find(name)] = &t;
    std::map<int, TensorView> dev;
    auto device_of = [&](int v, DType want) -> TensorView {
      auto it = dev.find(v);
      if (it != dev.end()) return it->second;
      const Tensor* t = host.at(v);
      Tensor conv = *t;
      if (want != t->dtype()) conv = Rng::convert(Rng::convert_to_f32(*t), want);
      return dev[v] = upload_tensor(conv);
    };
    std::vector<std::unique_ptr<graph::DeviceOp>> ops;
    CommandRecorder rec(ctx());
    rec.begin();
    for (const Node& n : g.nodes) {
      auto key = std::make_pair(n.domain, n.op_type);
      OGX_CHECK(graph::device_op_table().count(key), "no device op for ", n.describe());
      OpBuildContext b{ctx(), g, n,
                       [&](int k) -> const Tensor* {
                         int v = k < (int)n.inputs.size() ? n.inputs[k] : -1;
                         return v >= 0 && g.values[v].is_constant ? &g.values[v].constant : nullptr;
                       },
                       [&](int k) -> const TensorView& {
                         int v = n.inputs[k];
                         if (!dev.count(v)) dev[v] = device_of(v, host.at(v)->dtype());
                         return dev[v];
                       }};
      ops.push_back(graph::device_op_table().at(key)(b));
      graph::DeviceOp& op = *ops.back();
      OpArgs a;
      std::vector<TensorView> in_views(n.inputs.size()), out_views(n.outputs.size());
      a.in.assign(n.inputs.size(), nullptr);
      a.host.assign(n.inputs.size(), nullptr);
      a.out.assign(n.outputs.size(), nullptr);
      for (size_t k = 0; k < n.inputs.size(); k++) {
        int v = n.inputs[k];
        if (v < 0) continue;
        if (host.count(v)) a.host[k] = host[v];
        if (op.prepares_input((int)k)) continue;
        DType want = host.count(v) && !g.values[v].is_constant ? op.step_input_dtype((int)k, host[v]->dtype())
                                                               : DType::undefined;
        in_views[k] = dev.count(v) ? dev[v] : device_of(v, want == DType::undefined ? host[v]->dtype() : want);
        a.in[k] = &in_views[k];
      }
      for (size_t k = 0; k < n.outputs.size(); k++)
        if (n.outputs[k] >= 0) a.out[k] = &out_views[k];
      op.infer(a);
      bool gqa = n.op_type == "GroupQueryAttention";
      for (size_t k = 0; k < n.outputs.size(); k++) {
        if (n.outputs[k] < 0) continue;
        TensorView& o = out_views[k];
        if (gqa && (k == 1 || k == 2)) o.mem = in_views[k + 2].mem;  // present = the cache
        else if (op.is_alias() && k == 0) o.mem = in_views[0].mem;
        else o.mem = empty_bytes((VkDeviceSize)o.numel() * dtype_size(o.dtype));
      }
      graph::StepScratch& scratch = scratch_;
      op.record(rec, a, scratch);
      for (size_t k = 0; k < n.outputs.size(); k++)
        if (n.outputs[k] >= 0) dev[n.outputs[k]] = out_views[k];
    }
    rec.end();
    rec.run();
    std::vector<Tensor> outs;
    for (int v : g.output_ids) outs.push_back(download_tensor(dev.at(v)));
    return outs;
  }

  std::vector<Tensor> run_cpu(const Graph& g, const std::vector<NamedTensor>& inputs) {
    std::vector<int> nodes;
    for (size_t i = 0; i < g.nodes.size(); i++) nodes.push_back((int)i);
    graph::HostSubgraph h(g, nodes, g.output_ids);
    return h.run(inputs);
  }

  TensorView upload_tensor(const Tensor& t) {
    DeviceBuffer b = ctx().memory().allocate("op test input", std::max<size_t>(t.bytes(), 256));
    TensorView v = b.view(t.dtype(), t.shape());
    if (t.bytes()) ctx().transfers().upload_tensor(v, t);
    ctx().transfers().flush();
    buffers_.push_back(std::move(b));
    return v;
  }
  BufferSlice empty_bytes(VkDeviceSize bytes) {
    DeviceBuffer b = ctx().memory().allocate("op test output", std::max<VkDeviceSize>(bytes, 256));
    BufferSlice s = b.slice().sub(0, bytes);
    buffers_.push_back(std::move(b));
    return s;
  }
  Tensor download_tensor(const TensorView& v) {
    if (v.numel() == 0) return Tensor(v.dtype, v.shape);
    return ctx().transfers().download_tensor(v);
  }

  graph::StepScratch scratch_;
};

// Compares got against want; returns a message for the first element out of tolerance ("" when close).
std::string compare(const Tensor& got, const Tensor& want, double f16_atol = 0) {
  if (got.dtype() != want.dtype())
    return "dtype " + std::string(dtype_name(got.dtype())) + " vs " + dtype_name(want.dtype());
  if (got.shape() != want.shape()) return "shape " + shape_str(got.shape()) + " vs " + shape_str(want.shape());
  Tol t = tol_for(want.dtype());
  if (want.dtype() == DType::f16) t.atol = std::max(t.atol, f16_atol);
  for (int64_t i = 0; i < want.numel(); i++) {
    double g = got.get_f64(i), w = want.get_f64(i);
    if (std::isnan(w) && std::isnan(g)) continue;
    if (std::isinf(w) && g == w) continue;
    if (!(std::abs(g - w) <= t.atol + t.rtol * std::abs(w)))
      return "element " + std::to_string(i) + ": " + std::to_string(g) + " vs CPU " + std::to_string(w);
  }
  return "";
}

TEST_F(OpHarness, EveryRegisteredOpMatchesTheCpu) {
  Rng rng;
  int cases = 0;
  std::vector<std::string> missing;
  for (auto& [key, factory] : graph::device_op_table()) {
    auto it = generators().find(key);
    std::string op = (key.first.empty() ? "" : key.first + ".") + key.second;
    if (it == generators().end()) {
      missing.push_back(op);
      continue;
    }
    for (OpCase& c : it->second(rng)) {
      SCOPED_TRACE(op + " / " + c.label);
      Graph dev_graph = c.g;
      if (!c.fused_op.empty()) {
        graph::fuse_decoder_patterns(dev_graph);
        bool found = false;
        for (const Node& n : dev_graph.nodes) found |= n.op_type == c.fused_op;
        ASSERT_TRUE(found) << "the fusion did not produce " << c.fused_op;
        if (c.fused_nodes >= 0) {
          ASSERT_EQ((int)dev_graph.nodes.size(), c.fused_nodes) << "nodes after the fusion";
        }
      }
      std::vector<Tensor> want, got;
      try {
        want = run_cpu(c.cpu_graph ? *c.cpu_graph : c.g, c.inputs);
      } catch (const Error& e) {
        ADD_FAILURE() << "CPU: " << e.what();
        continue;
      }
      try {
        got = run_device(dev_graph, c.inputs);
      } catch (const Error& e) {
        ADD_FAILURE() << "Vulkan: " << e.what();
        continue;
      }
      ASSERT_EQ(got.size(), want.size());
      for (size_t k = 0; k < got.size(); k++) {
        std::string why = compare(got[k], want[k], c.f16_atol);
        EXPECT_EQ(why, "") << "output " << k;
      }
      cases++;
    }
  }
  std::string list;
  for (auto& m : missing) list += m + " ";
  EXPECT_TRUE(missing.empty()) << "ops registered on the Vulkan provider without a case generator in "
                                  "tests/test_ops.cpp: " << list;
  std::printf("[op harness] %d cases over %zu ops\n", cases, graph::device_op_table().size());
}

// What the device ops refuse, they refuse with the node's name (and the test's process stays usable).
TEST_F(OpHarness, RefusalsNameTheNode) {
  Rng rng;
  auto refuse = [&](OpCase c, const std::string& needle) {
    SCOPED_TRACE(c.label);
    try {
      run_device(c.g, c.inputs);
      ADD_FAILURE() << "expected an error mentioning '" << needle << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.g.nodes[0].name), std::string::npos) << e.what();
    }
  };
  auto one_node = [&](const std::string& label, const std::string& op, const std::vector<Tensor>& ins,
                      std::map<std::string, AttrValue> attrs) {
    CaseBuilder b(label);
    std::vector<std::string> names;
    for (const Tensor& t : ins) names.push_back(b.input(t));
    for (auto& o : b.node("", op, names, 1, std::move(attrs))) b.output(o);
    return b.done();
  };
  Tensor x = rng.floats(DType::f32, {2, 3});
  refuse(one_node("cast to float64", "Cast", {x}, {{"to", (int64_t)DType::f64}}), "float64");
  refuse(one_node("unknown gelu approximation", "Gelu", {x}, {{"approximate", std::string("cubic")}}), "attributes");
  refuse(one_node("sqrt of int64", "Sqrt", {rng.ints(DType::i64, {4}, 1, 9)}, {}), "int64");
  refuse(one_node("pad mode", "Pad", {x, i64s({0, 1, 0, 1})}, {{"mode", std::string("mirror")}}), "mirror");
  refuse(one_node("transpose perm", "Transpose", {x}, {{"perm", std::vector<int64_t>{0, 0}}}), "perm");
  refuse(one_node("split sizes", "Split", {x, i64s({1, 1})}, {{"axis", (int64_t)1}}), "split sizes");
  refuse(one_node("mixed dtypes", "Add", {x, rng.floats(DType::f16, {3})}, {}), "float16");
}

// Whole graphs in the shapes the reference model builder emits (ops the ogx builder does not use), through the
// Vulkan session — placement, host values, recording — against the CPU: Qwen3's fused qkv split with per-head
// q/k norms, Gemma-2's tanh-Gelu MLP and final logit soft-cap, a LayerNormalization / erf-Gelu block (phi-2).
TEST_F(OpHarness, BuilderShapedGraphsThroughTheSession) {
  Rng rng;
  const int64_t S = 5, K = 32, H = 2, D = 8, I = 48;
  std::vector<OpCase> graphs;
  for (DType dt : {DType::f32, DType::f16}) {
    std::string t = dtype_name(dt);
    {
      CaseBuilder b("qwen3 qkv split + q/k norm, " + t);
      std::string x = b.input(rng.floats(dt, {1, S, K}));
      std::string qkv = b.node("", "MatMul", {x, b.input(rng.floats(dt, {K, 3 * H * D}), true)})[0];
      auto parts = b.node("", "Split", {qkv, b.input(i64s({H * D, H * D, H * D}), true)}, 3, {{"axis", (int64_t)-1}});
      for (int k = 0; k < 2; k++) {
        std::string r = b.node("", "Reshape", {parts[k], b.input(i64s({1, S * H, D}), true)})[0];
        std::string n = b.node("", "SimplifiedLayerNormalization", {r, b.input(rng.floats(dt, {D}, 0.5f, 1.5f), true)},
                               1, {{"epsilon", 1e-6f}})[0];
        b.output(b.node("", "Reshape", {n, b.input(i64s({1, S, H * D}), true)})[0]);
      }
      b.output(parts[2]);
      graphs.push_back(b.done());
    }
    {
      CaseBuilder b("gemma2 gelu-tanh MLP + logit softcap, " + t);
      std::string x = b.input(rng.floats(dt, {1, S, K}));
      std::string g = b.node("", "MatMul", {x, b.input(rng.floats(dt, {K, I}), true)})[0];
      std::string u = b.node("", "MatMul", {x, b.input(rng.floats(dt, {K, I}), true)})[0];
      std::string a = b.node("", "Gelu", {g}, 1, {{"approximate", std::string("tanh")}})[0];
      std::string m = b.node("", "Mul", {a, u})[0];
      std::string y = b.node("", "MatMul", {m, b.input(rng.floats(dt, {I, K}), true)})[0];
      std::string cap = b.input(scalar_of(dt, 4.0), true);
      std::string d = b.node("", "Div", {y, cap})[0];
      b.output(b.node("", "Mul", {b.node("", "Tanh", {d})[0], cap})[0]);
      graphs.push_back(b.done());
    }
    {
      CaseBuilder b("layernorm + erf-gelu block, " + t);
      std::string x = b.input(rng.floats(dt, {1, S, K}));
      std::string gamma = b.input(rng.floats(dt, {K}, 0.5f, 1.5f), true), beta = b.input(rng.floats(dt, {K}), true);
      std::string n = b.node("", "LayerNormalization", {x, gamma, beta}, 1, {{"epsilon", 1e-5f}})[0];
      std::string h = b.node("", "MatMul", {n, b.input(rng.floats(dt, {K, I}), true)})[0];
      std::string a = b.node("", "Gelu", {h})[0];
      std::string y = b.node("", "MatMul", {a, b.input(rng.floats(dt, {I, K}), true)})[0];
      auto outs = b.node("com.microsoft", "SkipLayerNormalization", {y, x, b.input(rng.floats(dt, {K}), true),
                                                                       b.input(rng.floats(dt, {K}), true)}, 4, {},
                         {false, true, true, false});
      for (auto& o : outs) b.output(o);
      graphs.push_back(b.done());
    }
  }
  SessionOptions opts;
  opts.provider = "vulkan";
  opts.device_filtering = {{"hardware_device_type", ctx().info().type == DeviceType::cpu ? "cpu" : "gpu"}};
  opts.provider_options = {{"enable_validation", "1"}};
  for (OpCase& c : graphs) {
    SCOPED_TRACE(c.label);
    auto model = std::make_shared<Model>();
    model->graph = c.g;
    std::vector<Tensor> want = run_cpu(c.g, c.inputs);
    std::unique_ptr<Session> s = create_vulkan_session(model, opts);
    std::vector<NamedTensor> outs;
    for (const ValueInfo& o : c.g.outputs) outs.push_back({o.name, Tensor()});
    s->run(c.inputs, outs);
    ASSERT_EQ(outs.size(), want.size());
    for (size_t k = 0; k < outs.size(); k++) EXPECT_EQ(compare(outs[k].second, want[k]), "") << "output " << k;
  }
}

}  // namespace
}  // namespace ogx::vk::test
