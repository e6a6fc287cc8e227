// Case generators of the one-node op test (test_ops.cpp): small graphs over random data per registered op.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/half.h"
#include "exec/session.h"
#include "onnx/graph.h"

namespace ogx::vk::test {

// One test graph: its nodes, graph inputs (with values) and constants; outputs are every node output.
struct OpCase {
  std::string label;
  Graph g;
  std::vector<NamedTensor> inputs;
  std::string fused_op;              // non-empty: fuse g on the device side and expect this op type
  int fused_nodes = -1;              // and, when >= 0, this many nodes after the fusion
  std::shared_ptr<Graph> cpu_graph;  // the CPU's graph when it differs (an op the CPU spells differently)
  double f16_atol = 0;               // > 0: fp16 outputs' absolute tolerance where a case's kernels round more than
                                     // one fp16 op does (the int4 matvec's packed-fp16 products)
};

class CaseBuilder {
 public:
  CaseBuilder(std::string label) { c_.label = std::move(label); }
  // A graph input (a value the session would supply each step) or a constant (initializer).
  std::string input(const Tensor& t, bool constant = false) {
    std::string name = "v" + std::to_string(c_.g.values.size());
    int v = c_.g.add_value(name);
    if (constant) {
      c_.g.values[v].is_constant = true;
      c_.g.values[v].constant = t;
    } else {
      c_.g.inputs.push_back(ValueInfo{name, t.dtype(), {}, false});
      c_.g.input_ids.push_back(v);
      c_.inputs.push_back({name, t});
    }
    return name;
  }
  // Appends a node; "" in `ins` omits an input. Returns its output names.
  std::vector<std::string> node(const std::string& domain, const std::string& op, const std::vector<std::string>& ins,
                                int outputs = 1, std::map<std::string, AttrValue> attrs = {},
                                const std::vector<bool>& omit_out = {}) {
    Node n;
    n.domain = domain;
    n.op_type = op;
    n.name = op + "_" + std::to_string(c_.g.nodes.size());
    n.attrs = std::move(attrs);
    for (auto& s : ins) n.inputs.push_back(s.empty() ? -1 : c_.g.find(s));
    std::vector<std::string> outs;
    for (int k = 0; k < outputs; k++) {
      if (k < (int)omit_out.size() && omit_out[k]) {
        n.outputs.push_back(-1);
        continue;
      }
      std::string name = n.name + "_out" + std::to_string(k);
      n.outputs.push_back(c_.g.add_value(name));
      outs.push_back(name);
    }
    c_.g.nodes.push_back(n);
    return outs;
  }
  void output(const std::string& name) {
    c_.g.outputs.push_back(ValueInfo{name, DType::undefined, {}, false});
    c_.g.output_ids.push_back(c_.g.find(name));
  }
  OpCase done() { return std::move(c_); }
  OpCase& get() { return c_; }

 private:
  OpCase c_;
};

// ---- random data ----
struct Rng {
  std::mt19937 g{1234};
  Tensor floats(DType dt, const Shape& s, float lo = -1.0f, float hi = 1.0f) {
    std::uniform_real_distribution<float> d(lo, hi);
    Tensor t(DType::f32, s);
    for (int64_t i = 0; i < t.numel(); i++) t.data<float>()[i] = d(g);
    return convert(t, dt);
  }
  Tensor ints(DType dt, const Shape& s, int64_t lo, int64_t hi, bool nonzero = false) {
    std::uniform_int_distribution<int64_t> d(lo, hi);
    Tensor t(dt, s);
    for (int64_t i = 0; i < t.numel(); i++) {
      int64_t v = d(g);
      if (nonzero && v == 0) v = 1;
      if (dt == DType::i64) t.data<int64_t>()[i] = v;
      else if (dt == DType::i32) t.data<int32_t>()[i] = (int32_t)v;
      else if (dt == DType::u8) t.data<uint8_t>()[i] = (uint8_t)v;
      else if (dt == DType::boolean) t.data<bool>()[i] = v != 0;
      else t.data<float>()[i] = (float)v;
    }
    return t;
  }
  static Tensor convert_to_f32(const Tensor& t) {
    Tensor f(DType::f32, t.shape());
    for (int64_t i = 0; i < t.numel(); i++) f.data<float>()[i] = (float)t.get_f64(i);
    return f;
  }
  static Tensor convert(const Tensor& f32, DType dt) {
    if (dt == DType::f32) return f32;
    Tensor t(dt, f32.shape());
    for (int64_t i = 0; i < t.numel(); i++) {
      float v = f32.data<float>()[i];
      if (dt == DType::f16) t.data<f16_t>()[i] = f16_t{f32_to_f16(v)};
      else if (dt == DType::i64) t.data<int64_t>()[i] = (int64_t)v;
      else if (dt == DType::i32) t.data<int32_t>()[i] = (int32_t)v;
      else if (dt == DType::boolean) t.data<bool>()[i] = v != 0;
    }
    return t;
  }
};

inline Tensor i64s(std::vector<int64_t> v) {
  Tensor t(DType::i64, {(int64_t)v.size()});
  for (size_t i = 0; i < v.size(); i++) t.data<int64_t>()[i] = v[i];
  return t;
}
inline Tensor scalar_of(DType dt, double v) {
  Tensor f(DType::f32, {});
  f.data<float>()[0] = (float)v;
  return Rng::convert(f, dt);
}

using Gen = std::function<std::vector<OpCase>(Rng&)>;
// Case generators by (domain, op_type).
const std::map<std::pair<std::string, std::string>, Gen>& generators();

}  // namespace ogx::vk::test
