#include "exec/graph_session.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "common/progress.h"

namespace ogx {

std::shared_ptr<Storage> BufferPool::take(size_t bytes) {
  auto it = free_.lower_bound(bytes);
  // Reuse a buffer up to 2x the request; larger ones stay for bigger tensors.
  if (it != free_.end() && it->first <= bytes * 2 + 4096) {
    auto s = std::move(it->second);
    pooled_ -= it->first;
    free_.erase(it);
    s->bytes = bytes;
    return s;
  }
  return Storage::allocate(bytes);
}

void BufferPool::give(std::shared_ptr<Storage> s) {
  if (!s || !s->owned) return;
  size_t cap = s->capacity;
  pooled_ += cap;
  free_.emplace(cap, std::move(s));
}

class GraphKernelContext : public KernelContext {
 public:
  GraphKernelContext(GraphSession& s, const Node& n, std::vector<Tensor>& slots, std::vector<bool>& bound)
      : s_(s), n_(n), slots_(slots), bound_(bound) {}
  const Node& node() const override { return n_; }
  int num_inputs() const override { return (int)n_.inputs.size(); }
  const Tensor* input_or_null(int i) const override {
    if (i < 0 || i >= (int)n_.inputs.size() || n_.inputs[i] < 0) return nullptr;
    const Tensor& t = slots_[n_.inputs[i]];
    return t.dtype() == DType::undefined ? nullptr : &t;
  }
  int num_outputs() const override { return (int)n_.outputs.size(); }
  bool wants_output(int i) const override { return i < (int)n_.outputs.size() && n_.outputs[i] >= 0; }
  Tensor* bound_output(int i) override {
    if (!wants_output(i)) return nullptr;
    int v = n_.outputs[i];
    return bound_[v] ? &slots_[v] : nullptr;
  }
  Tensor& output(int i, DType dtype, const Shape& shape) override {
    OGX_CHECK(wants_output(i), n_.describe(), ": output ", i, " is not connected");
    int v = n_.outputs[i];
    Tensor& slot = slots_[v];
    if (bound_[v]) {
      OGX_CHECK(slot.dtype() == dtype && slot.shape() == shape, n_.describe(), ": output '",
                s_.graph().values[v].name, "' was bound as ", dtype_name(slot.dtype()), " ", shape_str(slot.shape()),
                " but the node produces ", dtype_name(dtype), " ", shape_str(shape));
      return slot;
    }
    size_t bytes = (size_t)shape_numel(shape) * dtype_size(dtype);
    slot = Tensor(dtype, shape, s_.buffers_.take(bytes), 0);
    return slot;
  }
  void set_output(int i, const Tensor& t) override {
    if (bound_output(i)) return KernelContext::set_output(i, t);
    OGX_CHECK(wants_output(i), n_.describe(), ": output ", i, " is not connected");
    slots_[n_.outputs[i]] = t;
  }
  ThreadPool& pool() override { return *s_.pool_; }

 private:
  GraphSession& s_;
  const Node& n_;
  std::vector<Tensor>& slots_;
  std::vector<bool>& bound_;
};

GraphSession::GraphSession(std::shared_ptr<const Model> model, const KernelRegistry& registry,
                           const SessionOptions& opts, std::string provider_name)
    : model_(std::move(model)), provider_name_(std::move(provider_name)) {
  pool_ = std::make_unique<ThreadPool>(opts.intra_op_num_threads);
  const Graph& g = model_->graph;
  std::vector<std::string> missing;
  // Progress (common/progress.h) of building the kernels, some of which repack their weights: constant bytes read.
  auto constant_bytes = [&](const Node& n) {
    uint64_t b = 0;
    for (int v : n.inputs)
      if (v >= 0 && g.values[v].is_constant) b += g.values[v].constant.bytes();
    return b;
  };
  uint64_t prepare_total = 0, prepared = 0;
  for (auto& n : g.nodes) prepare_total += constant_bytes(n);
  for (auto& n : g.nodes) {
    progress::report("preparing weights", prepared, prepare_total);
    prepared += constant_bytes(n);
    auto* f = registry.find(n.domain, n.op_type);
    if (!f) {
      missing.push_back(n.describe());
      continue;
    }
    KernelInfo info{n, g, pool_->num_threads(), nullptr, &opts.provider_options};
    kernels_.push_back((*f)(info));
  }
  progress::report("preparing weights", prepare_total, prepare_total);
  if (!missing.empty()) {
    std::string list;
    for (size_t i = 0; i < missing.size() && i < 5; i++) list += (i ? ", " : "") + missing[i];
    throw_error("provider '", provider_name_, "' does not support ", missing.size(), " node(s): ", list,
                missing.size() > 5 ? ", ..." : "");
  }
  last_use_.assign(g.values.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); i++)
    for (int v : g.nodes[i].inputs)
      if (v >= 0) last_use_[v] = (int)i;
  is_graph_output_.assign(g.values.size(), false);
  for (int v : g.output_ids) is_graph_output_[v] = true;
  fold_constants();
  // Kernels of nodes that read folded values are built again, now seeing those values as constants (a MatMul on
  // the transposed tied embedding repacks it once, as it does an initializer).
  for (size_t i = 0; i < g.nodes.size(); i++) {
    const Node& n = g.nodes[i];
    if (skip_[i] || !std::any_of(n.inputs.begin(), n.inputs.end(), [&](int v) { return v >= 0 && !folded_[v].empty(); }))
      continue;
    KernelInfo info{n, g, pool_->num_threads(), &folded_, &opts.provider_options};
    kernels_[i] = (*registry.find(n.domain, n.op_type))(info);
  }
  find_last_position_node(opts.last_position_output);
  for (auto& n : g.nodes) {
    const std::string type = n.domain.empty() || n.domain == "ai.onnx" ? n.op_type : n.domain + "." + n.op_type;
    auto it = std::find(op_types_.begin(), op_types_.end(), type);
    node_op_type_.push_back((int)(it - op_types_.begin()));
    if (it == op_types_.end()) op_types_.push_back(type);
  }
  op_ns_.assign(op_types_.size(), 0);
}

std::vector<std::pair<std::string, double>> GraphSession::stats() const {
  std::vector<std::pair<std::string, double>> out;
  for (size_t t = 0; t < op_types_.size(); t++)
    if (op_ns_[t] > 0) out.emplace_back("op_ms." + op_types_[t], (double)op_ns_[t] * 1e-6);
  // The last run_together: how many runs, and how many of its nodes ran once over their rows stacked.
  out.emplace_back("runs_together", (double)together_runs_);
  out.emplace_back("stacked_nodes", (double)stacked_nodes_);
  return out;
}

void GraphSession::find_last_position_node(const std::string& output) {
  const Graph& g = model_->graph;
  const int out = output.empty() ? -1 : g.find(output);
  if (out < 0 || !is_graph_output_[out]) return;
  std::vector<int> producer(g.values.size(), -1), readers(g.values.size(), 0);
  for (size_t i = 0; i < g.nodes.size(); i++) {
    for (int v : g.nodes[i].outputs)
      if (v >= 0) producer[v] = (int)i;
    for (int v : g.nodes[i].inputs)
      if (v >= 0) readers[v]++;
  }
  // Walk back through Casts whose outputs nothing else reads, to a MatMul or MatMulNBits with a constant weight.
  int v = out;
  for (;;) {
    const int p = producer[v];
    if (p < 0 || skip_[p] || readers[v] > (v == out ? 0 : 1)) return;
    const Node& n = g.nodes[p];
    if (n.op_type == "Cast" && n.domain.empty()) {
      v = n.inputs[0];
      continue;
    }
    const bool nbits = n.op_type == "MatMulNBits" && n.domain == "com.microsoft";
    const bool matmul = n.op_type == "MatMul" && n.domain.empty();
    if ((nbits || matmul) && n.inputs.size() >= 2 && n.inputs[1] >= 0 && g.values[n.inputs[1]].is_constant)
      last_pos_node_ = p, last_pos_out_ = out;
    return;
  }
}

// [B, S, K] -> [B, 1, K], the last position of each batch row (a view when B == 1).
Tensor GraphSession::last_position(const Tensor& a) const {
  const int64_t B = a.dim(0), S = a.dim(1), K = a.dim(2);
  const size_t row = (size_t)K * dtype_size(a.dtype());
  if (B == 1) return Tensor(a.dtype(), {1, 1, K}, a.storage(), a.offset() + (size_t)(S - 1) * row);
  Tensor t(a.dtype(), {B, 1, K});
  for (int64_t b = 0; b < B; b++)
    std::memcpy((char*)t.raw() + b * row, (const char*)a.raw() + (size_t)(b * S + S - 1) * row, row);
  return t;
}

void GraphSession::fold_constants() {
  const Graph& g = model_->graph;
  folded_.assign(g.values.size(), Tensor());
  skip_.assign(g.nodes.size(), false);
  std::vector<Tensor> slots(g.values.size());
  std::vector<bool> bound(g.values.size(), false);
  auto is_const = [&](int v) { return v < 0 || g.values[v].is_constant || !folded_[v].empty(); };
  for (size_t i = 0; i < g.nodes.size(); i++) {  // nodes are in topological order
    const Node& n = g.nodes[i];
    if (n.op_type.rfind("Random", 0) == 0 || n.op_type == "Multinomial" || n.op_type == "Bernoulli") continue;
    if (!std::all_of(n.inputs.begin(), n.inputs.end(), is_const)) continue;
    if (std::any_of(n.outputs.begin(), n.outputs.end(), [&](int v) { return v >= 0 && is_graph_output_[v]; }))
      continue;
    for (int v : n.inputs)
      if (v >= 0) slots[v] = g.values[v].is_constant ? g.values[v].constant : folded_[v];
    GraphKernelContext ctx(*this, n, slots, bound);
    try {
      kernels_[i]->compute(ctx);
    } catch (const Error&) {
      continue;  // left to run time, where the error is reported with its inputs
    }
    skip_[i] = true;
    for (int v : n.outputs)
      if (v >= 0) folded_[v] = slots[v];
  }
  // Keep only the folded values that a node still run reads (not the intermediates of a folded chain).
  std::vector<bool> read(g.values.size(), false);
  for (size_t i = 0; i < g.nodes.size(); i++)
    if (!skip_[i])
      for (int v : g.nodes[i].inputs)
        if (v >= 0) read[v] = true;
  for (size_t v = 0; v < g.values.size(); v++)
    if (!read[v]) folded_[v] = Tensor();
}

void GraphSession::reset_run(RunState& st) {
  const Graph& g = model_->graph;
  for (size_t v = 0; v < g.values.size() && v < st.slots.size(); v++) {
    if (g.values[v].is_constant || !folded_[v].empty()) continue;
    if (!st.slots[v].empty()) st.slots[v] = Tensor();
    st.bound[v] = false;
    st.given[v] = false;
  }
}

void GraphSession::begin_run(RunState& st, const std::vector<NamedTensor>& inputs,
                             std::vector<NamedTensor>& outputs) {
  const Graph& g = model_->graph;
  // The slots of constants and folded values persist between runs; every other slot is emptied when the run ends
  // (also on an error: reset_run), so the next run starts from the same state without rebuilding the table.
  std::vector<Tensor>& slots = st.slots;
  if (slots.size() != g.values.size()) {
    slots.assign(g.values.size(), Tensor());
    for (size_t v = 0; v < g.values.size(); v++) {
      if (g.values[v].is_constant) slots[v] = g.values[v].constant;
      else if (!folded_[v].empty()) slots[v] = folded_[v];
    }
    st.bound.assign(g.values.size(), false);
    st.given.assign(g.values.size(), false);
  }
  for (auto& [name, t] : inputs) {
    int v = g.find(name);
    OGX_CHECK(v >= 0 && g.input_info(name), "'", name, "' is not an input of the model");
    const ValueInfo* info = g.input_info(name);
    OGX_CHECK(info->dtype == DType::undefined || info->dtype == t.dtype(), "input '", name, "' must be ",
              dtype_name(info->dtype), ", got ", dtype_name(t.dtype()));
    if (info->has_shape) {
      OGX_CHECK(info->shape.size() == t.shape().size(), "input '", name, "' must have rank ", info->shape.size(),
                ", got ", shape_str(t.shape()));
      for (size_t d = 0; d < info->shape.size(); d++)
        OGX_CHECK(info->shape[d].value < 0 || info->shape[d].value == t.shape()[d], "input '", name,
                  "' dimension ", d, " must be ", info->shape[d].value, ", got ", shape_str(t.shape()));
    }
    slots[v] = t;
    st.given[v] = true;
  }
  for (size_t i = 0; i < g.input_ids.size(); i++) {
    if (!st.given[g.input_ids[i]] && !g.values[g.input_ids[i]].constant.empty()) {
      slots[g.input_ids[i]] = g.values[g.input_ids[i]].constant;  // an overridable initializer's default (loader)
      st.given[g.input_ids[i]] = true;
    }
    OGX_CHECK(st.given[g.input_ids[i]], "missing model input '", g.inputs[i].name, "'");
  }
  for (auto& [name, t] : outputs) {
    int v = g.find(name);
    OGX_CHECK(v >= 0 && g.output_info(name), "'", name, "' is not an output of the model");
    if (!t.empty()) {
      slots[v] = t;
      st.bound[v] = true;
    }
  }
}

void GraphSession::release_after(RunState& st, size_t i) {
  const Graph& g = model_->graph;
  const Node& n = g.nodes[i];
  for (int v : n.inputs) {
    if (v < 0 || last_use_[v] != (int)i || is_graph_output_[v] || st.bound[v] || g.values[v].is_constant ||
        !folded_[v].empty())
      continue;
    auto sto = st.slots[v].storage();
    st.slots[v] = Tensor();
    if (sto && sto.use_count() == 1 && !st.given[v]) buffers_.give(std::move(sto));
  }
  // Outputs nobody reads (and that are not graph outputs) are released at once.
  for (int v : n.outputs) {
    if (v < 0 || last_use_[v] >= 0 || is_graph_output_[v] || st.bound[v]) continue;
    auto sto = st.slots[v].storage();
    st.slots[v] = Tensor();
    if (sto && sto.use_count() == 1) buffers_.give(std::move(sto));
  }
}

namespace {
[[noreturn]] void rethrow_naming(const Node& n, const Error& e) {
  std::string msg = e.what();
  if (msg.find(n.name) == std::string::npos) msg = n.describe() + ": " + msg;
  throw Error(msg);
}
}  // namespace

bool GraphSession::slices_last(const RunState& st, size_t i, int a) const {
  return (int)i == last_pos_node_ && a >= 0 && !st.bound[last_pos_out_] && st.slots[a].rank() == 3 &&
         st.slots[a].dim(1) > 1;
}

void GraphSession::run_node(RunState& st, size_t i) {
  const Node& n = model_->graph.nodes[i];
  std::vector<Tensor>& slots = st.slots;
  GraphKernelContext ctx(*this, n, slots, st.bound);
  Tensor full;  // the last-position node's full input, put back after it ran
  const int a = n.inputs.empty() ? -1 : n.inputs[0];
  if (slices_last(st, i, a)) {
    full = slots[a];
    slots[a] = last_position(full);
  }
  try {
    kernels_[i]->compute(ctx);
    if (!full.empty()) slots[a] = full;
  } catch (const Error& e) {
    rethrow_naming(n, e);
  }
  release_after(st, i);
}

void GraphSession::end_run(RunState& st, std::vector<NamedTensor>& outputs) {
  const Graph& g = model_->graph;
  for (auto& [name, t] : outputs) {
    int v = g.find(name);
    OGX_CHECK(!st.slots[v].empty(), "output '", name, "' was not produced");
    t = st.slots[v];
  }
}

void GraphSession::run(const std::vector<NamedTensor>& inputs, std::vector<NamedTensor>& outputs) {
  const Graph& g = model_->graph;
  struct Reset {
    GraphSession& s;
    ~Reset() { s.reset_run(s.run_state_); }
  } reset{*this};
  begin_run(run_state_, inputs, outputs);
  std::fill(op_ns_.begin(), op_ns_.end(), 0);
  using Clock = std::chrono::steady_clock;
  for (size_t i = 0; i < g.nodes.size(); i++) {
    if (skip_[i]) continue;
    const Clock::time_point t0 = Clock::now();
    run_node(run_state_, i);
    op_ns_[node_op_type_[i]] += std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
  }
  end_run(run_state_, outputs);
}

// Input 0 of every run (its last position only where run() would slice it), stacked as rows [sum of rows, K]; one
// compute over them in the first run's context; each run's output 0 its own rows, in its own shape.
void GraphSession::run_node_stacked(std::vector<RunState*>& states, size_t i) {
  const Node& n = model_->graph.nodes[i];
  const int a = n.inputs[0], y = n.outputs[0];
  std::vector<Tensor> parts;
  int64_t rows = 0;
  for (RunState* st : states) {
    Tensor x = slices_last(*st, i, a) ? last_position(st->slots[a]) : st->slots[a];
    rows += x.numel() / x.dim(-1);
    parts.push_back(std::move(x));
  }
  const int64_t K = parts[0].dim(-1);
  const size_t row_bytes = (size_t)K * dtype_size(parts[0].dtype());
  Tensor stacked(parts[0].dtype(), {rows, K}, buffers_.take(rows * row_bytes), 0);
  size_t at = 0;
  for (const Tensor& x : parts) {
    std::memcpy((char*)stacked.raw() + at, x.raw(), x.bytes());
    at += x.bytes();
  }
  RunState& first = *states[0];
  Tensor kept = first.slots[a];
  first.slots[a] = stacked;
  GraphKernelContext ctx(*this, n, first.slots, first.bound);
  try {
    kernels_[i]->compute(ctx);
  } catch (const Error& e) {
    first.slots[a] = kept;
    rethrow_naming(n, e);
  }
  first.slots[a] = kept;
  Tensor out = first.slots[y];
  OGX_CHECK(out.rank() == 2 && out.dim(0) == rows, n.describe(), ": stacked rows gave ", shape_str(out.shape()));
  const size_t out_row = (size_t)out.dim(1) * dtype_size(out.dtype());
  at = 0;
  for (size_t r = 0; r < states.size(); r++) {
    Shape shape = parts[r].shape();
    shape.back() = out.dim(1);
    const size_t bytes = (size_t)(parts[r].numel() / K) * out_row;
    Tensor own(out.dtype(), shape, buffers_.take(bytes), 0);
    std::memcpy(own.raw(), (const char*)out.raw() + at, bytes);
    at += bytes;
    states[r]->slots[y] = std::move(own);
  }
  for (Tensor* t : {&stacked, &out}) {  // (no slot holds them now)
    auto sto = t->storage();
    *t = Tensor();
    if (sto && sto.use_count() == 1) buffers_.give(std::move(sto));
  }
  for (RunState* s : states) release_after(*s, i);
}

void GraphSession::run_together(const std::vector<Run>& runs) {
  if (runs.size() == 1) return run(*runs[0].inputs, *runs[0].outputs);
  if (runs.empty()) return;
  const Graph& g = model_->graph;
  if (together_states_.size() < runs.size()) together_states_.resize(runs.size());
  std::vector<RunState*> states;
  for (size_t r = 0; r < runs.size(); r++) states.push_back(&together_states_[r]);
  struct Reset {
    GraphSession& s;
    std::vector<RunState*>& states;
    ~Reset() {
      for (RunState* st : states) s.reset_run(*st);
    }
  } reset{*this, states};
  for (size_t r = 0; r < runs.size(); r++) begin_run(*states[r], *runs[r].inputs, *runs[r].outputs);
  std::fill(op_ns_.begin(), op_ns_.end(), 0);
  together_runs_ = runs.size();
  stacked_nodes_ = 0;
  using Clock = std::chrono::steady_clock;
  for (size_t i = 0; i < g.nodes.size(); i++) {
    if (skip_[i]) continue;
    const Node& n = g.nodes[i];
    const Clock::time_point t0 = Clock::now();
    // Stacked when every run has input 0 of one dtype and width, and none bound the output (a caller's buffer).
    bool stack = kernels_[i]->rows_independent() && !n.inputs.empty() && n.inputs[0] >= 0 && !n.outputs.empty() &&
                 n.outputs[0] >= 0;
    int64_t rows = 0;
    for (RunState* st : states) {
      if (!stack) break;
      const Tensor& x = st->slots[n.inputs[0]];
      const Tensor& x0 = states[0]->slots[n.inputs[0]];
      stack = !st->bound[n.outputs[0]] && x.rank() >= 1 && x.dtype() == x0.dtype() && x.dim(-1) == x0.dim(-1) &&
              x.numel() > 0;
      if (stack) rows += x.numel() / x.dim(-1);
    }
    stack = stack && rows <= kernels_[i]->max_rows_together();
    if (stack) {
      stacked_nodes_++;
      run_node_stacked(states, i);
    } else {
      for (RunState* st : states) run_node(*st, i);
    }
    op_ns_[node_op_type_[i]] += std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
  }
  for (size_t r = 0; r < runs.size(); r++) end_run(*states[r], *runs[r].outputs);
}

}  // namespace ogx
