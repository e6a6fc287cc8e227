// Per-node CPU fallback, as ONNX Runtime places nodes DirectML cannot run on its CPU provider: a node the device
// lacks (not in device_op_table()) whose inputs are all known on the host joins the host part; one that reads device
// values runs in a FallbackStage between two device segments of the step. The segment before a stage copies the
// device values the stage reads into host-visible buffers, the host runs the stage's nodes with the CPU kernels once
// that segment completed, writes the outputs device nodes read into host-visible buffers, and the segment after it
// starts by copying them into device memory. A model with no such node keeps one segment: one submit per step.
#include <algorithm>
#include <set>
#include <sstream>

#include "common/log.h"
#include "providers/vulkan/graph/session_impl.h"

namespace ogx::vk::graph {

void VulkanGraphSession::place_fallback(int node) {
  const Graph& g = model_->graph;
  const Node& n = g.nodes[node];
  for (int v : n.inputs)
    OGX_CHECK(v < 0 || !(is_kv_input_[v] || kv_value_.count(v)), n.describe(), ": cannot run on the CPU provider "
              "(the vulkan provider lacks this op): it reads the KV cache, which lives on the device");
  place_[node] = Place::fallback;
  int before = (int)device_nodes_.size();
  if (stages_.empty() || stages_.back().before != before) {
    stages_.emplace_back();
    stages_.back().before = before;
  }
  stages_.back().nodes.push_back(node);
  for (int v : n.outputs)
    if (v >= 0) stage_output_[v] = 1;
}

// A device op may refuse a node it has no variant for (an attribute value, an input it needs on the host but the
// device computes): then the node falls back too, as ONNX Runtime places a node that no kernel of the GPU provider
// matches on its CPU provider. The op built here serves build_ops.
bool VulkanGraphSession::device_accepts(int node) {
  const Node& n = model_->graph.nodes[node];
  try {
    ops_[node] = build_op(node);
    for (int k = 0; k < (int)n.inputs.size(); k++)  // e.g. a Reshape to a shape computed on the device
      OGX_CHECK(n.inputs[k] < 0 || !ops_[node]->reads_on_host(k) || host_known_[n.inputs[k]], n.describe(),
                ": input ", k, " must be known on the host, but it is computed on the device");
    return true;
  } catch (const Error& e) {
    ops_[node].reset();
    refused_.push_back(e.what());
    return false;
  }
}

void VulkanGraphSession::finish_fallback() {
  const Graph& g = model_->graph;
  std::vector<char> device_reads(g.values.size(), 0), graph_output(g.values.size(), 0);
  for (int i : device_nodes_)
    for (int v : g.nodes[i].inputs)
      if (v >= 0) device_reads[v] = 1;
  for (int v : g.output_ids) graph_output[v] = 1;
  std::set<int> graph_inputs(g.input_ids.begin(), g.input_ids.end());
  size_t reads = 0, writes = 0;
  for (size_t k = 0; k < stages_.size(); k++) {
    FallbackStage& st = stages_[k];
    std::set<int> produced, fed;
    for (int i : st.nodes)
      for (int v : g.nodes[i].outputs)
        if (v >= 0) produced.insert(v);
    for (int i : st.nodes)
      for (int v : g.nodes[i].inputs) {
        if (v < 0 || produced.count(v) || is_constant(v)) continue;
        if (!graph_inputs.count(v)) fed.insert(v);  // graph inputs: the subgraph's own inputs
        if (!host_known_[v] && !stage_output_[v] && std::find(st.reads.begin(), st.reads.end(), v) == st.reads.end())
          st.reads.push_back(v);
      }
    // Outputs others read: device nodes (uploaded), later stages, the caller.
    std::set<int> later_reads;
    for (size_t j = k + 1; j < stages_.size(); j++)
      for (int i : stages_[j].nodes)
        for (int v : g.nodes[i].inputs)
          if (v >= 0) later_reads.insert(v);
    std::vector<int> others;
    for (int v : produced) {
      if (device_reads[v]) st.writes.push_back(v);
      else if (later_reads.count(v) || graph_output[v]) others.push_back(v);
    }
    st.outputs = st.writes;
    st.outputs.insert(st.outputs.end(), others.begin(), others.end());
    st.cpu = std::make_unique<HostSubgraph>(g, st.nodes, st.outputs, folded_, std::vector<int>(fed.begin(), fed.end()),
                                            opts_.intra_op_num_threads);
    reads += st.reads.size();
    writes += st.writes.size();
  }
  size_t staged = 0;
  std::map<std::string, int> ops;
  for (const FallbackStage& st : stages_) {
    staged += st.nodes.size();
    for (int i : st.nodes) ops[g.nodes[i].op_type]++;
  }
  for (int i : fallback_host_nodes_) ops[g.nodes[i].op_type]++;
  if (ops.empty()) return;
  std::ostringstream msg;
  msg << "vulkan: " << staged + fallback_host_nodes_.size() << " node(s) the device lacks run on the CPU provider (";
  bool first = true;
  for (auto& [op, count] : ops) {
    msg << (first ? "" : ", ") << op << " x" << count;
    first = false;
  }
  msg << "): " << fallback_host_nodes_.size() << " in the host part, " << staged << " in " << stages_.size()
      << " stage(s) between device segments, costing " << reads << " device->host and " << writes
      << " host->device copies and " << stages_.size() << " extra submit(s) with host waits per step (bytes: "
      << "warned at the first recorded step); enable_cpu_fallback=0 makes this an error";
  for (size_t i = 0; i < refused_.size() && i < 3; i++) msg << (i ? "; " : "; refused by the device op: ") << refused_[i];
  if (refused_.size() > 3) msg << "; ...";
  log_warning(msg.str());
}

void VulkanGraphSession::infer_stage(Plan& p, const FallbackStage& st, const std::vector<const Tensor*>& host) {
  const Graph& g = model_->graph;
  std::vector<NamedTensor> feeds;
  for (const std::string& name : st.cpu->input_names()) {
    int v = g.find(name);
    if (host[v]) feeds.emplace_back(name, *host[v]);
    else feeds.emplace_back(name, Tensor::zeros(p.views[v].dtype, p.views[v].shape));  // a device value or a stage's
  }
  std::vector<Tensor> outs;
  try {
    outs = st.cpu->run(feeds);
  } catch (const Error& e) {
    throw Error(std::string("CPU fallback (shapes of ") + g.nodes[st.nodes.front()].describe() + "...): " + e.what());
  }
  for (size_t k = 0; k < st.outputs.size(); k++) {
    int v = st.outputs[k];
    p.views[v] = TensorView{{}, outs[k].dtype(), outs[k].shape()};
    p.on_device[v] = k < st.writes.size();
  }
}

void VulkanGraphSession::run_stages(Plan& p, std::vector<const Tensor*>& host, std::vector<Tensor>& vals) {
  const Graph& g = model_->graph;
  size_t total = 0;
  for (const FallbackStage& st : stages_) total += st.outputs.size();
  vals.clear();
  vals.reserve(total);  // host points into it
  for (size_t k = 0; k < stages_.size(); k++) {
    const FallbackStage& st = stages_[k];
    Plan::StageIo& io = p.stages[k];
    std::vector<NamedTensor> feeds;
    for (const std::string& name : st.cpu->input_names()) {
      int v = g.find(name);
      if (host[v]) {
        feeds.emplace_back(name, *host[v]);
        continue;
      }
      auto rb = std::find_if(io.reads.begin(), io.reads.end(), [&](const Plan::Readback& r) { return r.value == v; });
      OGX_CHECK(rb != io.reads.end(), "CPU fallback: value '", name, "' was not read back from the device");
      Tensor t(p.views[v].dtype, p.views[v].shape);
      rb->buf.read(t.raw(), t.bytes());
      feeds.emplace_back(name, std::move(t));
    }
    std::vector<Tensor> outs = st.cpu->run(feeds);
    for (size_t j = 0; j < st.outputs.size(); j++) {
      int v = st.outputs[j];
      const TensorView& rec = p.views[v];
      OGX_CHECK(outs[j].dtype() == rec.dtype && outs[j].shape() == rec.shape, "CPU fallback: '", g.values[v].name,
                "' is ", dtype_name(outs[j].dtype()), shape_str(outs[j].shape()), " but the recorded step expects ",
                dtype_name(rec.dtype), shape_str(rec.shape), " (an output shape that depends on values cannot be "
                "recorded; use --provider cpu)");
      vals.push_back(std::move(outs[j]));
      host[v] = &vals.back();
    }
    for (Plan::Readback& w : io.writes) w.buf.write(host[w.value]->raw(), host[w.value]->bytes());
    io.rec->run();
  }
}

void VulkanGraphSession::fallback_stats(std::vector<std::pair<std::string, double>>& s) const {
  std::map<std::string, int> ops;
  for (const FallbackStage& st : stages_)
    for (int i : st.nodes) ops[model_->graph.nodes[i].op_type]++;
  for (int i : fallback_host_nodes_) ops[model_->graph.nodes[i].op_type]++;
  int nodes = 0;
  for (auto& [op, count] : ops) nodes += count;
  s.push_back({"fallback_nodes", (double)nodes});
  s.push_back({"fallback_stages", (double)stages_.size()});
  s.push_back({"fallback_bytes", (double)last_fallback_bytes_});
  for (auto& [op, count] : ops) s.push_back({"fallback_op " + op, (double)count});
}

}  // namespace ogx::vk::graph
