// Kernel interface of graph-executing providers: a factory per (domain, op_type) builds a Kernel for one node at
// session creation (validating attributes, preparing constant weights); compute() runs it for one step.
#pragma once
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/thread_pool.h"
#include "onnx/graph.h"

namespace ogx {

class KernelContext {
 public:
  virtual ~KernelContext() = default;
  virtual const Node& node() const = 0;
  virtual int num_inputs() const = 0;
  virtual const Tensor* input_or_null(int i) const = 0;  // nullptr when omitted or out of range
  virtual int num_outputs() const = 0;
  virtual bool wants_output(int i) const = 0;  // the node has output i (not omitted)
  // Output i with this dtype and shape: a pre-bound buffer when it matches, else freshly allocated.
  virtual Tensor& output(int i, DType dtype, const Shape& shape) = 0;
  virtual Tensor* bound_output(int i) = 0;  // the caller's pre-bound buffer for output i, or nullptr
  // Output i is `t` itself, sharing its storage (If returning a branch's value); a pre-bound output gets a copy.
  virtual void set_output(int i, const Tensor& t) {
    Tensor& o = output(i, t.dtype(), t.shape());
    if (t.bytes()) std::memcpy(o.raw(), t.raw(), t.bytes());
  }
  virtual ThreadPool& pool() = 0;

  bool has_input(int i) const { return input_or_null(i) != nullptr; }
  const Tensor& input(int i) const {
    const Tensor* t = input_or_null(i);
    if (!t) throw_error(node().describe(), ": required input ", i, " is missing");
    return *t;
  }
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual void compute(KernelContext& ctx) = 0;
  // True when output 0 is input 0 row by row (rows: input 0's leading dimensions; the rest of the node's inputs
  // constant): runs of the same graph may then stack their rows into one compute (Session::run_together).
  virtual bool rows_independent() const { return false; }
  // The most rows a rows_independent compute takes while giving each row what it gives alone (a kernel that
  // switches to another summation for many rows caps it below that).
  virtual int64_t max_rows_together() const { return INT64_MAX; }
};

struct KernelInfo {
  const Node& node;
  const Graph& graph;
  int num_threads = 1;
  // Values computed once at session creation (a host session's folded constants), by value id; may be null.
  const std::vector<Tensor>* folded = nullptr;
  // The session's provider options (key, value), or null.
  const std::vector<std::pair<std::string, std::string>>* provider_options = nullptr;
  // The value of provider option `key`, or `def` when it is not set.
  std::string option(const std::string& key, const std::string& def) const {
    if (provider_options)
      for (auto& kv : *provider_options)
        if (kv.first == key) return kv.second;
    return def;
  }
  // Constant (initializer or folded) tensor feeding input i, or nullptr.
  const Tensor* constant_input(int i) const {
    if (i >= (int)node.inputs.size() || node.inputs[i] < 0) return nullptr;
    const int id = node.inputs[i];
    auto& v = graph.values[id];
    if (v.is_constant) return &v.constant;
    if (folded && id < (int)folded->size() && !(*folded)[id].empty()) return &(*folded)[id];
    return nullptr;
  }
};

using KernelFactory = std::function<std::unique_ptr<Kernel>(const KernelInfo&)>;

// A kernel made of one function: no per-node preparation.
class FnKernel : public Kernel {
 public:
  explicit FnKernel(std::function<void(KernelContext&)> fn) : fn_(std::move(fn)) {}
  void compute(KernelContext& ctx) override { fn_(ctx); }

 private:
  std::function<void(KernelContext&)> fn_;
};

class KernelRegistry {
 public:
  void add(const std::string& domain, const std::string& op, KernelFactory f) { map_[{domain, op}] = std::move(f); }
  void add_fn(const std::string& domain, const std::string& op, std::function<void(KernelContext&)> fn) {
    add(domain, op, [fn](const KernelInfo&) { return std::make_unique<FnKernel>(fn); });
  }
  const KernelFactory* find(const std::string& domain, const std::string& op) const {
    auto it = map_.find({domain, op});
    return it == map_.end() ? nullptr : &it->second;
  }

 private:
  std::map<std::pair<std::string, std::string>, KernelFactory> map_;
};

}  // namespace ogx
