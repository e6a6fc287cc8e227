// Host evaluation of a subset of a graph's nodes with the CPU kernels: constant folding at session creation and
// the per-step shape arithmetic (attention_mask -> seqlens_k, total_sequence_length) that stays on the host.
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
  HostSubgraph(const Graph& g, const std::vector<int>& nodes, const std::vector<int>& outputs,
               const std::map<int, Tensor>& constants = {});
  bool empty() const { return session_ == nullptr; }
  // inputs: values of the graph inputs the nodes read (others are ignored). Returns the wanted outputs, in order.
  std::vector<Tensor> run(const std::vector<NamedTensor>& inputs);
  const std::vector<std::string>& input_names() const { return input_names_; }

 private:
  std::shared_ptr<Model> sub_;
  std::unique_ptr<Session> session_;
  std::vector<std::string> input_names_;
  std::vector<std::string> output_names_;
};

}  // namespace ogx::vk::graph
