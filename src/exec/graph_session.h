// Runs a graph node by node on the host with kernels from a registry. Intermediate buffers are released after
// their last use and recycled through a size-keyed pool that lives as long as the session, so steady-state
// decoding allocates nothing. Nodes whose inputs are all constants (a Transpose of a tied embedding, a Cast or
// Reshape of an initializer) are run once at session creation and their outputs kept as constants. When the caller
// needs only the last position of an output (the decoder's logits), the projection making it reads only that row.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "exec/kernel.h"
#include "exec/session.h"

namespace ogx {

class BufferPool {
 public:
  std::shared_ptr<Storage> take(size_t bytes);
  void give(std::shared_ptr<Storage> s);  // only when nobody else holds it
  size_t pooled_bytes() const { return pooled_; }

 private:
  std::multimap<size_t, std::shared_ptr<Storage>> free_;  // by capacity
  size_t pooled_ = 0;
};

class GraphSession : public Session {
 public:
  GraphSession(std::shared_ptr<const Model> model, const KernelRegistry& registry, const SessionOptions& opts,
               std::string provider_name);
  void run(const std::vector<NamedTensor>& inputs, std::vector<NamedTensor>& outputs) override;
  // Node by node over every run; a node whose kernel is rows_independent (a projection with constant weights) runs
  // once over all the runs' rows stacked, so its weights are read once per step instead of once per run.
  void run_together(const std::vector<Run>& runs) override;
  bool runs_together() const override { return true; }
  const Graph& graph() const override { return model_->graph; }
  std::string provider_name() const override { return provider_name_; }
  // The last run's time per operator type in milliseconds ("op_ms.MatMulNBits", ...), nodes run only.
  std::vector<std::pair<std::string, double>> stats() const override;

 private:
  friend class GraphKernelContext;
  std::shared_ptr<const Model> model_;
  std::string provider_name_;
  std::unique_ptr<ThreadPool> pool_;
  std::vector<std::unique_ptr<Kernel>> kernels_;  // one per node
  std::vector<int> last_use_;                      // per value: index of the last node reading it (-1: none)
  std::vector<bool> is_graph_output_;
  std::vector<Tensor> folded_;  // per value: output of a node folded at creation (empty: none)
  std::vector<bool> skip_;      // per node: folded, not run
  void fold_constants();
  // SessionOptions::last_position_output: the MatMul(NBits) that makes it (through Casts only) reads just the
  // last position of its [B, S, K] input, so the output is [B, 1, ...]. -1: not found, every output in full.
  void find_last_position_node(const std::string& output);
  Tensor last_position(const Tensor& a) const;
  int last_pos_node_ = -1, last_pos_out_ = -1;
  // Per-value state of a run, kept between runs (constants and folded values stay in place; everything else is
  // emptied when the run ends, also on an error).
  struct RunState {
    std::vector<Tensor> slots;
    std::vector<bool> bound, given;
  };
  RunState run_state_;
  std::vector<RunState> together_states_;  // run_together's, one per run
  size_t together_runs_ = 0, stacked_nodes_ = 0;  // of the last run_together (stats)
  void begin_run(RunState& st, const std::vector<NamedTensor>& inputs, std::vector<NamedTensor>& outputs);
  // Whether `node` (reading value a as its input 0) is the last-position node and runs on a's last position only.
  bool slices_last(const RunState& st, size_t node, int a) const;
  void run_node(RunState& st, size_t node);
  void run_node_stacked(std::vector<RunState*>& states, size_t node);  // rows_independent node over all runs
  void release_after(RunState& st, size_t node);  // intermediates whose last reader was `node`
  void end_run(RunState& st, std::vector<NamedTensor>& outputs);
  void reset_run(RunState& st);
  BufferPool buffers_;
  // Per node: index of its operator type in op_types_; per type: the last run's nanoseconds (two clock reads per
  // node, ~50 ns, against the microseconds a node takes).
  std::vector<int> node_op_type_;
  std::vector<std::string> op_types_;
  std::vector<int64_t> op_ns_;
};

}  // namespace ogx
