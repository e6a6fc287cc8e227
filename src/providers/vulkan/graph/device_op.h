// One ONNX node placed on the Vulkan device: prepared once at session creation (weights uploaded and laid out for
// the kernels), then, per shape signature, asked for its output shapes and recorded into the step's command buffer.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "onnx/graph.h"
#include "providers/vulkan/command_recorder.h"
#include "providers/vulkan/context.h"
#include "providers/vulkan/kernels/attention.h"
#include "providers/vulkan/kernels/matmul.h"

namespace ogx::vk::graph {

// What a node sees of its inputs and outputs for one shape signature.
struct OpArgs {
  std::vector<const TensorView*> in;  // device views, nullptr for omitted inputs and inputs the op prepared itself
  std::vector<const Tensor*> host;    // host values of inputs known on the host (constants, shape values), else nullptr
  std::vector<TensorView*> out;       // nullptr for omitted outputs
  const kernels::KvPages* kv = nullptr;  // GroupQueryAttention in a session: its layer of the paged KV cache
};

// Per-signature scratch shared by the nodes of one recorded step.
struct StepScratch {
  // Attention workspace large enough for these dimensions (allocated on first use, grown when a layer needs more).
  kernels::GqaWorkspace& gqa_workspace(Context& ctx, int64_t B, int64_t S, int64_t Hq, int64_t D, int64_t max_seq);
  // A device buffer of at least `bytes` under `key`, shared by the nodes of the step (each use is ordered by the
  // recorder's hazard tracking).
  const DeviceBuffer& buffer(Context& ctx, const std::string& key, VkDeviceSize bytes);
  VkDeviceSize bytes() const;  // device memory held (outgrown buffers included)

 private:
  kernels::GqaWorkspace gqa_;
  std::vector<kernels::GqaWorkspace> retired_;  // outgrown, still referenced by commands recorded earlier
  std::map<std::string, DeviceBuffer> buffers_;
  std::vector<DeviceBuffer> retired_buffers_;
  int64_t dims_[5] = {0, 0, 0, 0, 0};
};

// Session services available while ops are built.
struct OpBuildContext {
  Context& ctx;
  const Graph& graph;
  const Node& node;
  // Constant value of input i (initializer, Constant or folded at load), or nullptr.
  std::function<const Tensor*(int input)> constant;
  // The device copy of constant input i, uploaded once per session and shared by every node that reads it.
  std::function<const TensorView&(int input)> device_constant;
  // When constant input i is a MatMul weight a rewrite assembled from others (fusion.h WeightLayouts): its parts,
  // to be placed on the device without building the weight on the host; else empty.
  std::function<std::vector<kernels::WeightColumns>(int input)> weight_parts;
  // The shape of constant input i without building its host value (a transposed table the device makes, e.g. a
  // tied embedding: building it on the host took seconds), or nullopt when input i is not constant. May be empty
  // (callers other than the session): then constant() answers.
  std::function<std::optional<std::vector<int64_t>>(int input)> constant_shape;
  // Constant 2-D MatMul weight input i ([K, N]) as the matmul kernels read it ([N, K], kernels::upload_matmul_weight),
  // uploaded once per session: every node reading the weight, and a Transpose of it read as a table (a tied
  // embedding: the same bytes), share it (its buffers are views of the session's). May be empty (callers other than
  // the session): then the op uploads its own.
  std::function<kernels::MatMulWeight(int input)> matmul_weight;
};

class DeviceOp {
 public:
  virtual ~DeviceOp() = default;
  // True when input i is read on the host at record time (e.g. Reshape's shape): its value joins the signature.
  virtual bool reads_on_host(int input) const { return false; }
  // True when the op uploaded input i itself in its own layout (weights): the session passes no view for it.
  virtual bool prepares_input(int input) const { return false; }
  // Dtype the op wants for an integer input the host supplies each step (e.g. int64 token ids for Gather).
  virtual DType step_input_dtype(int input, DType given) const { return given; }
  // Checks the host values of an input the host supplies each step, before they are uploaded (e.g. Gather's token
  // ids against its table: the kernel cannot report an error, so a bad id is refused here as the CPU refuses it).
  virtual void check_step_input(int input, const Tensor& host) const {}
  // The output aliases input 0's memory with a new shape (Reshape, Identity, ...): no dispatch.
  virtual bool is_alias() const { return false; }
  // Fills dtype and shape of every wanted output from the inputs' dtypes/shapes (and host values).
  virtual void infer(const OpArgs& args) = 0;
  virtual void record(CommandRecorder& rec, const OpArgs& args, StepScratch& scratch) = 0;
};

using OpFactory = std::function<std::unique_ptr<DeviceOp>(OpBuildContext&)>;

// The ops the Vulkan provider runs on the device, by (domain, op_type).
const std::map<std::pair<std::string, std::string>, OpFactory>& device_op_table();
// Ops cheap enough to run on the host when all their inputs are known there (shape arithmetic over the mask).
bool host_capable(const Node& n);

// Registration helpers used by the ops_*.cpp files.
void register_linear_ops(std::map<std::pair<std::string, std::string>, OpFactory>& t);
void register_transformer_ops(std::map<std::pair<std::string, std::string>, OpFactory>& t);
void register_elementwise_ops(std::map<std::pair<std::string, std::string>, OpFactory>& t);
void register_fused_ops(std::map<std::pair<std::string, std::string>, OpFactory>& t);
void register_layout_ops(std::map<std::pair<std::string, std::string>, OpFactory>& t);

// Checks shared by ops: a required device input / output.
const TensorView& need_in(const OpArgs& a, int i, const Node& n);
TensorView& need_out(const OpArgs& a, int i, const Node& n);

}  // namespace ogx::vk::graph
