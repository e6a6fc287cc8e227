// Host evaluation of a subset of a graph's nodes with the CPU kernels: constant folding at session creation, the
// per-step shape arithmetic (attention_mask -> seqlens_k, total_sequence_length) that stays on the host, and the
// nodes the device cannot run (per-node CPU fallback), fed with values read back from the device.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "exec/session.h"

namespace ogx::vk::graph {

class HostSubgraph {
 public:
  // nodes: indices into g.nodes (in topological order); outputs: value ids the caller wants back.
  // constants: values known beyond the graph's own constants (e.g. folded at load), by value id.
  // fed: values the caller passes by name to run() besides graph inputs (e.g. device values read back).
  // threads: the CPU kernels' intra-op threads (0: all cores).
  HostSubgraph(const Graph& g, const std::vector<int>& nodes, const std::vector<int>& outputs,
               const std::map<int, Tensor>& constants = {}, const std::vector<int>& fed = {}, int threads = 1);
  bool empty() const { return session_ == nullptr; }
  // inputs: values of the graph inputs (and fed values) the nodes read, by name (others are ignored). Returns the
  // wanted outputs, in order.
  std::vector<Tensor> run(const std::vector<NamedTensor>& inputs);
  const std::vector<std::string>& input_names() const { return input_names_; }

 private:
  std::shared_ptr<Model> sub_;
  std::unique_ptr<Session> session_;
  std::vector<std::string> input_names_;
  std::vector<std::string> output_names_;
};

}  // namespace ogx::vk::graph
