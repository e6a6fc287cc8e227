// If nodes that select between constants (the reference builder's and ogx's switch between the short and long
// rotary caches of longrope models): when the condition is known on the host and each branch returns constants —
// Constant nodes or initializers of the branch, or constants of the enclosing graph read by name directly or through
// Identity — no node runs. Both branches' values are uploaded once; each plan binds the outputs to the branch its
// condition picks (the condition's value is part of the plan's signature). Without this the If ran in the host part
// and the chosen cache (max_position x head_size / 2 values, twice) was uploaded with every step's values.
#include "providers/vulkan/graph/session_impl.h"
#include "providers/vulkan/transfer.h"

namespace ogx::vk::graph {

bool VulkanGraphSession::place_constant_if(int node) {
  const Graph& g = model_->graph;
  const Node& n = g.nodes[node];
  if (n.op_type != "If" || !n.domain.empty() || n.inputs.empty() || n.inputs[0] < 0 || !host_known_[n.inputs[0]])
    return false;
  ConstantIf ci;
  ci.node = node;
  ci.cond = n.inputs[0];
  const char* names[2] = {"then_branch", "else_branch"};
  for (int b = 0; b < 2; b++) {
    const Graph* sub = n.attr_graph(names[b]);
    if (!sub || sub->outputs.size() != n.outputs.size()) return false;
    for (int v : sub->output_ids) {
      // Through Identity nodes of the branch to a branch constant or a value of this graph.
      int at = v;
      for (int hops = 0; hops < 8 && !sub->values[at].is_constant; hops++) {
        const Node* producer = nullptr;
        for (const Node& sn : sub->nodes)
          if (!sn.outputs.empty() && sn.outputs[0] == at) producer = &sn;
        if (!producer) break;
        if (producer->op_type != "Identity" || !producer->domain.empty() || producer->inputs.empty()) return false;
        at = producer->inputs[0];
      }
      if (sub->values[at].is_constant) {
        ci.values[b].push_back({-1, &sub->values[at].constant});
        continue;
      }
      const int outer = g.find(sub->values[at].name);  // read by name from this graph
      const Tensor* t = outer >= 0 ? known_constant(outer) : nullptr;
      if (!t) return false;
      ci.values[b].push_back({outer, t});
    }
  }
  for (int v : n.outputs)
    if (v < 0) return false;
  ci.outputs = n.outputs;
  place_[node] = Place::skip;
  constant_ifs_.push_back(std::move(ci));
  return true;
}

void VulkanGraphSession::upload_constant_ifs() {
  for (ConstantIf& ci : constant_ifs_)
    for (int b = 0; b < 2; b++)
      for (ConstantIf::Value& val : ci.values[b]) {
        if (val.outer >= 0) {  // shared with any other reader of that constant
          val.view = device_constant(val.outer);
          continue;
        }
        const Tensor& t = *val.host;
        val.buf = ctx_->memory().allocate(model_->graph.nodes[ci.node].name, std::max<size_t>(t.bytes(), 4));
        val.view = val.buf.view(t.dtype(), t.shape());
        if (t.bytes()) ctx_->transfers().upload_tensor(val.view, t);
      }
}

void VulkanGraphSession::bind_constant_ifs(Plan& p, const std::vector<const Tensor*>& host) {
  for (const ConstantIf& ci : constant_ifs_) {
    const int b = host[ci.cond]->get_f64(0) != 0 ? 0 : 1;
    for (size_t k = 0; k < ci.outputs.size(); k++) {
      p.views[ci.outputs[k]] = ci.values[b][k].view;
      p.on_device[ci.outputs[k]] = 1;
    }
  }
}

std::string VulkanGraphSession::constant_if_signature(const std::vector<const Tensor*>& host) const {
  std::string s;
  for (const ConstantIf& ci : constant_ifs_) {
    OGX_CHECK(host[ci.cond] && host[ci.cond]->numel() == 1, model_->graph.nodes[ci.node].describe(),
              ": the condition must be one value known on the host");
    s += " if" + std::to_string(ci.node) + (host[ci.cond]->get_f64(0) != 0 ? "=1" : "=0");
  }
  return s;
}

}  // namespace ogx::vk::graph
