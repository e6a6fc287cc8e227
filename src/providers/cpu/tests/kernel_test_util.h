// Test helper for CPU kernels: builds a one-node Model by hand and runs it through ogx::GraphSession, so a kernel
// is exercised exactly as in a real model (factory at session creation with constant initializers visible through
// KernelInfo::constant_input, then compute()).
//
//   ogx::test::NodeRun run("com.microsoft", "MatMulNBits");
//   run.input("A", a).constant("B", b).omitted().attr("K", int64_t{64});
//   Tensor y = run.run().at(0);
#pragma once
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/half.h"
#include "exec/graph_session.h"
#include "exec/kernel.h"

namespace ogx::test {

class NodeRun {
 public:
  NodeRun(std::string domain, std::string op, std::string node_name = "test_node")
      : domain_(std::move(domain)), op_(std::move(op)), node_name_(std::move(node_name)) {}

  // A graph input fed at run time (the kernel sees no constant for it).
  NodeRun& input(const std::string& name, Tensor t) { return add(name, std::move(t), false); }
  // An initializer (KernelInfo::constant_input returns it).
  NodeRun& constant(const std::string& name, Tensor t) { return add(name, std::move(t), true); }
  // An omitted optional input (empty name in ONNX).
  NodeRun& omitted() {
    ins_.push_back(In{"", Tensor(), false, true});
    return *this;
  }
  NodeRun& attr(const std::string& k, AttrValue v) {
    attrs_[k] = std::move(v);
    return *this;
  }
  NodeRun& outputs(int n) {
    num_outputs_ = n;
    return *this;
  }
  // Output i is not connected (empty name in ONNX): the kernel's wants_output(i) is false.
  NodeRun& skip_output(int i) {
    skipped_.push_back(i);
    return *this;
  }
  // Output i is pre-bound to t (the caller's buffer, as the generator binds present to past when they share one).
  NodeRun& bind_output(int i, Tensor t) {
    bound_[i] = std::move(t);
    return *this;
  }
  // A provider option of the session (e.g. int4_gemm=mlas).
  NodeRun& option(const std::string& k, const std::string& v) {
    options_.emplace_back(k, v);
    return *this;
  }
  NodeRun& threads(int n) {
    threads_ = n;
    return *this;
  }
  // Kernels to use; default: only what `fill` registers (so a test does not depend on unrelated kernels).
  NodeRun& registry(std::function<void(KernelRegistry&)> fill) {
    fill_ = std::move(fill);
    return *this;
  }

  std::shared_ptr<Model> model() const {
    auto m = std::make_shared<Model>();
    Graph& g = m->graph;
    g.opsets[""] = 21;
    g.opsets["com.microsoft"] = 1;
    Node n;
    n.name = node_name_;
    n.op_type = op_;
    n.domain = domain_;
    n.attrs = attrs_;
    for (auto& in : ins_) {
      if (in.omitted) {
        n.inputs.push_back(-1);
        continue;
      }
      int id = g.add_value(in.name);
      n.inputs.push_back(id);
      if (in.constant) {
        g.values[id].is_constant = true;
        g.values[id].constant = in.t;
      } else {
        ValueInfo vi;
        vi.name = in.name;
        vi.dtype = in.t.dtype();
        g.inputs.push_back(vi);
        g.input_ids.push_back(id);
      }
    }
    for (int i = 0; i < num_outputs_; i++) {
      if (is_skipped(i)) {
        n.outputs.push_back(-1);
        continue;
      }
      std::string name = "output_" + std::to_string(i);
      int id = g.add_value(name);
      n.outputs.push_back(id);
      ValueInfo vi;
      vi.name = name;
      g.outputs.push_back(vi);
      g.output_ids.push_back(id);
    }
    g.nodes.push_back(std::move(n));
    return m;
  }

  // Creates the session (kernel factories run here) and runs it once; returns the outputs in order.
  std::vector<Tensor> run() const {
    KernelRegistry reg;
    if (fill_) fill_(reg);
    SessionOptions opts;
    opts.intra_op_num_threads = threads_;
    opts.provider_options = options_;
    GraphSession session(model(), reg, opts, "cpu");
    std::vector<NamedTensor> feeds;
    for (auto& in : ins_)
      if (!in.omitted && !in.constant) feeds.emplace_back(in.name, in.t);
    std::vector<NamedTensor> outs;
    for (int i = 0; i < num_outputs_; i++) {
      if (is_skipped(i)) continue;
      auto b = bound_.find(i);
      outs.emplace_back("output_" + std::to_string(i), b == bound_.end() ? Tensor() : b->second);
    }
    session.run(feeds, outs);
    std::vector<Tensor> result;  // one per output index; an empty Tensor for a skipped output
    size_t k = 0;
    for (int i = 0; i < num_outputs_; i++) result.push_back(is_skipped(i) ? Tensor() : outs[k++].second);
    return result;
  }

 private:
  struct In {
    std::string name;
    Tensor t;
    bool constant = false;
    bool omitted = false;
  };
  bool is_skipped(int i) const { return std::find(skipped_.begin(), skipped_.end(), i) != skipped_.end(); }
  NodeRun& add(const std::string& name, Tensor t, bool constant) {
    ins_.push_back(In{name, std::move(t), constant, false});
    return *this;
  }

  std::string domain_, op_, node_name_;
  std::vector<In> ins_;
  std::map<std::string, AttrValue> attrs_;
  int num_outputs_ = 1;
  std::vector<int> skipped_;
  std::map<int, Tensor> bound_;
  int threads_ = 2;
  std::vector<std::pair<std::string, std::string>> options_;
  std::function<void(KernelRegistry&)> fill_;
};

// A tensor from values (converted to dtype: f32/f16/bf16/integers).
template <typename T>
Tensor make_tensor(DType dtype, Shape shape, const std::vector<T>& vals) {
  Tensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numel(); i++) {
    double v = (double)vals[(size_t)i];
    switch (dtype) {
      case DType::f32: t.data<float>()[i] = (float)v; break;
      case DType::f16: t.data<uint16_t>()[i] = f32_to_f16((float)v); break;
      case DType::bf16: t.data<uint16_t>()[i] = f32_to_bf16((float)v); break;
      case DType::f64: t.data<double>()[i] = v; break;
      case DType::i64: t.data<int64_t>()[i] = (int64_t)v; break;
      case DType::i32: t.data<int32_t>()[i] = (int32_t)v; break;
      case DType::u8: t.data<uint8_t>()[i] = (uint8_t)v; break;
      case DType::i8: t.data<int8_t>()[i] = (int8_t)v; break;
      default: throw_error("make_tensor: unsupported dtype ", dtype_name(dtype));
    }
  }
  return t;
}

}  // namespace ogx::test
