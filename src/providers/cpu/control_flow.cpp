// ONNX If: runs then_branch or else_branch (each a GraphSession over the subgraph on the CPU kernels, built once)
// and returns the branch's outputs. The branches read values of the enclosing graph by name; the loader appended
// those values to the node's inputs (Graph::outer_inputs), so they arrive here as inputs 1..n.
#include <memory>

#include "exec/graph_session.h"
#include "providers/cpu/cpu_ops.h"
#include "providers/cpu/cpu_provider.h"

namespace ogx::cpu {
namespace {

class IfKernel : public Kernel {
 public:
  explicit IfKernel(const KernelInfo& info) : node_(info.node) {
    const Graph* then_g = info.node.attr_graph("then_branch");
    const Graph* else_g = info.node.attr_graph("else_branch");
    OGX_CHECK(then_g && else_g, info.node.describe(), ": needs then_branch and else_branch graph attributes");
    OGX_CHECK(then_g->outputs.size() == info.node.outputs.size() && else_g->outputs.size() == info.node.outputs.size(),
              info.node.describe(), ": the branches have ", then_g->outputs.size(), " and ", else_g->outputs.size(),
              " outputs, the node ", info.node.outputs.size());
    branches_[0] = make_branch(info, *then_g);
    branches_[1] = make_branch(info, *else_g);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& cond = ctx.input(0);
    OGX_CHECK(cond.numel() == 1, node_.describe(), ": the condition must hold one value, got ", shape_str(cond.shape()));
    Branch& b = branches_[cond.get_f64(0) != 0 ? 0 : 1];
    std::vector<NamedTensor> inputs;
    for (size_t k = 0; k < b.outer.size(); k++) {
      const Tensor* t = ctx.input_or_null(b.outer[k]);
      OGX_CHECK(t, node_.describe(), ": outer value '", b.session->graph().outer_inputs[k], "' is missing");
      inputs.emplace_back(b.session->graph().outer_inputs[k], *t);
    }
    std::vector<NamedTensor> outputs;
    for (const ValueInfo& o : b.session->graph().outputs) outputs.emplace_back(o.name, Tensor());
    b.session->run(inputs, outputs);
    for (size_t i = 0; i < outputs.size(); i++)
      if (ctx.wants_output((int)i)) ctx.set_output((int)i, outputs[i].second);
  }

 private:
  struct Branch {
    std::unique_ptr<GraphSession> session;
    std::vector<int> outer;  // per outer input of the branch: the node's input index holding it
  };

  static Branch make_branch(const KernelInfo& info, const Graph& g) {
    Branch b;
    auto model = std::make_shared<Model>();
    model->graph = g;
    SessionOptions opts;
    opts.intra_op_num_threads = 1;  // branches select or reshape values; their own pools would idle
    b.session = std::make_unique<GraphSession>(std::move(model), kernel_registry(), opts, "cpu");
    for (const std::string& name : g.outer_inputs) {
      int at = -1;
      for (size_t k = 1; k < info.node.inputs.size() && at < 0; k++)
        if (info.node.inputs[k] >= 0 && info.graph.values[info.node.inputs[k]].name == name) at = (int)k;
      OGX_CHECK(at >= 0, info.node.describe(), ": its subgraph reads '", name, "', which is not an input of the node");
      b.outer.push_back(at);
    }
    return b;
  }

  const Node& node_;
  Branch branches_[2];
};

}  // namespace

void register_control_flow(KernelRegistry& r) {
  r.add("", "If", [](const KernelInfo& info) { return std::make_unique<IfKernel>(info); });
}

}  // namespace ogx::cpu
