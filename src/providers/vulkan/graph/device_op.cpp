#include "providers/vulkan/graph/device_op.h"

#include <set>

namespace ogx::vk::graph {

const std::map<std::pair<std::string, std::string>, OpFactory>& device_op_table() {
  static const auto table = [] {
    std::map<std::pair<std::string, std::string>, OpFactory> t;
    register_linear_ops(t);
    register_transformer_ops(t);
    register_elementwise_ops(t);
    register_fused_ops(t);
    register_layout_ops(t);
    return t;
  }();
  return table;
}

bool host_capable(const Node& n) {
  static const std::set<std::string> ops = {
      "Shape", "Size", "Gather", "Cast", "ReduceSum", "ReduceMax", "ReduceMin", "Add", "Sub", "Mul", "Div", "Neg",
      "Unsqueeze", "Squeeze", "Concat", "Reshape", "Slice", "Range", "Equal", "Less", "Greater", "Where", "Not",
      "And", "Or", "Min", "Max", "Expand", "ConstantOfShape", "Identity", "Constant", "Flatten", "Abs"};
  return n.domain.empty() && ops.count(n.op_type) != 0;
}

const TensorView& need_in(const OpArgs& a, int i, const Node& n) {
  OGX_CHECK(i < (int)a.in.size() && a.in[i], n.describe(), ": input ", i, " is missing (or not on the device)");
  return *a.in[i];
}

TensorView& need_out(const OpArgs& a, int i, const Node& n) {
  OGX_CHECK(i < (int)a.out.size() && a.out[i], n.describe(), ": output ", i, " is not connected");
  return *a.out[i];
}

kernels::GqaWorkspace& StepScratch::gqa_workspace(Context& ctx, int64_t B, int64_t S, int64_t Hq, int64_t D,
                                                  int64_t max_seq) {
  int64_t want[5] = {B, S, Hq, D, max_seq};
  bool fits = true;
  for (int i = 0; i < 5; i++) fits &= want[i] <= dims_[i];
  if (!fits) {
    for (int i = 0; i < 5; i++) dims_[i] = std::max(dims_[i], want[i]);
    // Buffers large enough carry over; the others stay with the commands recorded earlier.
    kernels::GqaWorkspace grown = kernels::regrow_gqa_workspace(ctx, gqa_, dims_[0], dims_[1], dims_[2], dims_[3],
                                                                dims_[4]);
    if (gqa_.q_rotated.size() || gqa_.partials.size() || gqa_.counters.size()) retired_.push_back(std::move(gqa_));
    gqa_ = std::move(grown);
  }
  return gqa_;
}

}  // namespace ogx::vk::graph

namespace ogx::vk::graph {
const DeviceBuffer& StepScratch::buffer(Context& ctx, const std::string& key, VkDeviceSize bytes) {
  DeviceBuffer& b = buffers_[key];
  if (b.size() < bytes) {
    if (b.size()) retired_buffers_.push_back(std::move(b));
    b = ctx.memory().allocate("scratch " + key, bytes);
  }
  return b;
}

VkDeviceSize StepScratch::bytes() const {
  auto of = [](const kernels::GqaWorkspace& w) { return w.q_rotated.size() + w.partials.size() + w.counters.size(); };
  VkDeviceSize n = of(gqa_);
  for (const auto& w : retired_) n += of(w);
  for (const auto& [key, b] : buffers_) n += b.size();
  for (const auto& b : retired_buffers_) n += b.size();
  return n;
}
}  // namespace ogx::vk::graph
