#include "providers/vulkan/graph/host_eval.h"

#include <set>

#include "exec/graph_session.h"
#include "providers/cpu/cpu_provider.h"

namespace ogx::vk::graph {

HostSubgraph::HostSubgraph(const Graph& g, const std::vector<int>& nodes, const std::vector<int>& outputs,
                           const std::map<int, Tensor>& constants, const std::vector<int>& fed, int threads) {
  if (nodes.empty() && outputs.empty()) return;
  sub_ = std::make_shared<Model>();
  Graph& s = sub_->graph;
  s.values = g.values;  // constants share their storage with the parent graph
  for (auto& [v, t] : constants) {
    s.values[v].is_constant = true;
    s.values[v].constant = t;
  }
  s.value_index = g.value_index;
  s.opsets = g.opsets;
  std::set<int> read;
  for (int i : nodes) {
    s.nodes.push_back(g.nodes[i]);
    for (int v : g.nodes[i].inputs)
      if (v >= 0) read.insert(v);
  }
  for (size_t i = 0; i < g.input_ids.size(); i++)
    if (read.count(g.input_ids[i])) {
      s.inputs.push_back(g.inputs[i]);
      s.input_ids.push_back(g.input_ids[i]);
      input_names_.push_back(g.inputs[i].name);
    }
  for (int v : fed) {
    ValueInfo vi;
    vi.name = g.values[v].name;
    s.inputs.push_back(vi);
    s.input_ids.push_back(v);
    input_names_.push_back(vi.name);
  }
  for (int v : outputs) {
    ValueInfo vi;
    vi.name = g.values[v].name;
    s.outputs.push_back(vi);
    s.output_ids.push_back(v);
    output_names_.push_back(vi.name);
  }
  SessionOptions opts;
  opts.intra_op_num_threads = threads;  // 1 for the shape arithmetic: a handful of scalars per step
  session_ = std::make_unique<GraphSession>(sub_, cpu::kernel_registry(), opts, "cpu (host part of vulkan)");
}

std::vector<Tensor> HostSubgraph::run(const std::vector<NamedTensor>& inputs) {
  std::vector<NamedTensor> in, out;
  for (auto& [name, t] : inputs)
    for (auto& n : input_names_)
      if (n == name) in.emplace_back(name, t);
  for (auto& n : output_names_) out.emplace_back(n, Tensor());
  session_->run(in, out);
  std::vector<Tensor> r;
  for (auto& [name, t] : out) r.push_back(t);
  return r;
}

}  // namespace ogx::vk::graph
