#include "providers/cpu/cpu_provider.h"

#include "exec/graph_session.h"
#include "providers/cpu/cpu_ops.h"

namespace ogx::cpu {

const KernelRegistry& kernel_registry() {
  static const KernelRegistry reg = [] {
    KernelRegistry r;
    register_elementwise(r);
    register_compare(r);
    register_variadic(r);
    register_unary(r);
    register_shape_ops(r);
    register_gather(r);
    register_scatter(r);
    register_pad(r);
    register_reduce(r);
    register_matmul(r);
    register_matmul_nbits(r);
    register_norm(r);
    register_rotary(r);
    register_attention(r);
    register_attention_mha(r);
    register_embed_layer_norm(r);
    register_control_flow(r);
    return r;
  }();
  return reg;
}

namespace {
class CpuProvider : public ExecutionProvider {
 public:
  std::string name() const override { return "cpu"; }
  std::unique_ptr<Session> create_session(std::shared_ptr<const Model> model, const SessionOptions& opts) override {
    return std::make_unique<GraphSession>(std::move(model), kernel_registry(), opts, "cpu");
  }
};
}  // namespace

std::unique_ptr<ExecutionProvider> make_cpu_provider() { return std::make_unique<CpuProvider>(); }

}  // namespace ogx::cpu
