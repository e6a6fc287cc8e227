// Internals of the Vulkan graph session (see vulkan_session.h), shared by vulkan_session.cpp (partitioning, run)
// and step_plan.cpp (recording one signature's step).
#pragma once
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "providers/vulkan/graph/device_op.h"
#include "providers/vulkan/graph/fusion.h"
#include "providers/vulkan/graph/host_eval.h"
#include "providers/vulkan/graph/vulkan_session.h"

namespace ogx::vk::graph {

// skip: folded at load; host: the host part (shape arithmetic, and nodes the device lacks whose inputs are all known
// on the host); device: a DeviceOp; fallback: a node the device lacks reading device values (a FallbackStage).
enum class Place : uint8_t { skip, host, device, fallback };

// Nodes the device cannot run, placed on the CPU provider between two device segments of a step: the segment before
// it copies the device values it reads into host-visible buffers, the host runs it after that segment completed,
// and the segment after it starts by copying its outputs that device nodes read into device memory.
struct FallbackStage {
  int before = 0;           // position in device_nodes_ of the first device node after it
  std::vector<int> nodes;   // graph nodes, in order
  std::vector<int> reads;   // device values it reads (read back)
  std::vector<int> writes;  // its outputs device nodes read (uploaded)
  std::vector<int> outputs;  // everything it makes that others read or the caller may ask for (writes first)
  std::unique_ptr<HostSubgraph> cpu;  // the nodes on the CPU provider, fed with reads and earlier stages' outputs
};

// One GroupQueryAttention layer's cache on the device.
struct KvSlot {
  int node = -1;                                               // the GQA node
  int past_k = -1, past_v = -1, present_k = -1, present_v = -1;  // value ids (-1 when absent)
  int64_t kv_heads = 0;
  DeviceBuffer k, v;  // [B, kv_heads, capacity, head_size] of kv dtype
};

// A timestamp query pool that destroys itself.
struct QueryPool {
  VkDevice device = VK_NULL_HANDLE;
  VkQueryPool pool = VK_NULL_HANDLE;
  QueryPool() = default;
  QueryPool(const QueryPool&) = delete;
  QueryPool& operator=(const QueryPool&) = delete;
  ~QueryPool() {
    if (pool) vkDestroyQueryPool(device, pool, nullptr);
  }
  void create(VkDevice dev, uint32_t timestamps) {
    VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qi.queryCount = timestamps;
    device = dev;
    OGX_VK(vkCreateQueryPool(dev, &qi, nullptr, &pool));
  }
};

// A recorded step for one signature.
struct Plan {
  std::string signature;
  std::vector<TensorView> views;  // per value id
  std::vector<char> on_device;    // views[v] is a device tensor for this plan
  std::vector<DeviceBuffer> buffers;            // activations (reused by liveness within the step)
  // Host values the device reads (positions, lengths, token ids), packed into step_host, which the host writes
  // before each submission. Where step_host is device-local (resizable BAR, unified memory) kernels read it in
  // place; otherwise the step starts by copying it into the device-local step_device (no PCIe reads from kernels).
  std::map<int, VkDeviceSize> step_offsets;     // by value id
  std::map<int, DType> step_dtypes;
  HostVisibleBuffer step_host;
  DeviceBuffer step_device;                     // only when step_host is not device-local
  int fed_value = -1;  // a queued step's token ids: read in place from the session's token_device_
  struct Readback {
    int value;
    HostVisibleBuffer buf;
  };
  std::vector<Readback> readbacks;
  // Per fallback stage (the session's stages_): the buffers of its boundary copies and the segment after it.
  struct StageIo {
    std::vector<Readback> reads;   // device values it reads, copied here by the end of the segment before it
    std::vector<Readback> writes;  // its outputs device nodes read, written by the host and copied in after it
    std::unique_ptr<CommandRecorder> rec;  // the device segment after it
  };
  std::vector<StageIo> stages;
  VkDeviceSize fallback_bytes = 0;  // bytes copied across the stages' boundaries per run
  CommandRecorder& tail() { return stages.empty() ? *rec : *stages.back().rec; }  // the step's last segment
  bool slice_last = false;    // the logits producer reads only the last position
  bool samples = false;       // picks the next token on the device (enable_device_sampling)
  HostVisibleBuffer token_host;  // int64 [B]: the step's tokens, written by the sampling kernel beside token_device_
  int64_t sample_rows = 0;       // B of token_host (samples)
  TensorView sliced_input;    // its input 0 restricted to that position
  TensorView sliced_skip;     // a folded norm's skip (input 1) restricted to that position
  StepScratch scratch;
  std::unique_ptr<CommandRecorder> rec;  // the step (its first segment when fallback stages split it)
  uint64_t last_used = 0;
  // Two timestamps around the step (where the device has compute timestamps): its GPU time for the stats.
  QueryPool step_pool;
};

class VulkanGraphSession : public Session {
 public:
  VulkanGraphSession(std::shared_ptr<const Model> model, const SessionOptions& opts);
  ~VulkanGraphSession() override;
  void run(const std::vector<NamedTensor>& inputs, std::vector<NamedTensor>& outputs) override;
  const Graph& graph() const override { return original_->graph; }
  std::string provider_name() const override { return "vulkan"; }
  bool owns_kv_cache() const override { return !kv_.empty(); }
  bool reorder_kv_rows(const std::vector<int32_t>& source_rows) override;  // kv_reorder.cpp
  std::vector<std::pair<std::string, double>> stats() const override;
  bool enable_device_sampling(const DeviceSampling& s) override;
  std::vector<int64_t> sampled_tokens() const override { return last_tokens_; }
  bool set_token_mask(const std::vector<uint32_t>& bits, int64_t words_per_row) override;
  void ensure_token_mask(int64_t words_per_row);  // token_mask_ for [32 rows x words_per_row], all tokens allowed
  bool read_last_output(Tensor* out) override;
  // queued_steps.cpp
  bool queue_next(const std::vector<NamedTensor>& inputs, const std::string& token_input) override;
  bool finish_queued() override;
  void drop_queued() override;

 private:
  // vulkan_session.cpp
  const Tensor* known_constant(int v) const;  // initializer, Constant or folded (never builds a lazy one)
  bool is_constant(int v) const;               // any of those or a lazy one
  const Tensor* constant(int v) const;        // any, building a lazy one (kept until its op is built)
  const TensorView& device_constant(int v);
  void fold_constants();
  bool defer_transpose(const Node& n);  // see vulkan_session.cpp
  std::vector<kernels::WeightColumns> weight_parts(int v) const;  // a fused weight's parts; empty: none
  void place_nodes();
  void build_ops();
  std::unique_ptr<DeviceOp> build_op(int node);  // throws an Error naming the node when the device op refuses it
  void ensure_kv(int64_t batch, int64_t capacity, int64_t head_size);
  struct ReplayStats {                      // per plan signature
    double runs = 0, run_us = 0, wait_us = 0;
    std::vector<float> run_samples, gpu_samples;  // per replay (the first 4096): host time of run(), GPU step time
  };
  struct ProfileStats {                     // per plan signature, with enable_profiling
    double runs = 0;                        // profiled runs (recording runs included)
    std::map<std::string, double> gpu_us;  // op type -> summed microseconds
  };
  void collect_profile(ProfileStats& st, bool sampled);  // sampled: the step ran device sampling
  // Replays by signature; stats() reports the most replayed one (the steady decode step), so a few long prompt
  // replays do not inflate the per-step figures. Profiles: that one as "gpu_us OP", and the signature with the
  // longest step (the prompt) as "prompt_gpu_us OP".
  std::map<std::string, ReplayStats> replay_stats_;
  std::map<std::string, ProfileStats> profile_stats_;
  // A run made ready to submit: inputs checked, the host part run, the KV cache sized, the plan of its signature
  // found or recorded (plan null: a queued step that cannot run now).
  struct Prepared {
    Plan* plan = nullptr;
    bool recorded = false;            // this run recorded the plan
    std::vector<const Tensor*> host;  // per value: known on the host
    std::vector<Tensor> host_vals;    // the host part's outputs (host points into them)
    std::vector<Tensor> stage_vals;   // the fallback stages' outputs (host points into them)
  };
  // fed >= 0: a queued step whose value `fed` (the token ids) the plan takes from token_device_.
  Prepared prepare(const std::vector<NamedTensor>& inputs, const std::vector<std::string>& output_names, int fed);
  // After a run's step completed: stats, the last plan, the sampled token.
  void complete(Plan& p, bool replayed, std::chrono::steady_clock::time_point t_start,
                std::chrono::steady_clock::duration wait);
  // step_plan.cpp
  std::unique_ptr<Plan> build_plan(const std::vector<const Tensor*>& host, const std::vector<int>& wanted,
                                   int64_t batch, int64_t total, int fed);
  OpArgs make_args(Plan& p, int node, const std::vector<const Tensor*>& host);
  void write_steps(Plan& p, const std::vector<const Tensor*>& host);
  void record_sampling(Plan& p, int64_t batch);
  // fallback.cpp
  bool device_accepts(int node);   // builds the node's DeviceOp; false (the reason kept) when the op refuses it
  void place_fallback(int node);  // appends a node to the current fallback stage (or opens one)
  void finish_fallback();          // stage reads/writes/outputs, their CPU subgraphs, the load-time warning
  // Shapes of a stage's outputs for a plan (a CPU run over zeros of the recorded input shapes).
  void infer_stage(Plan& p, const FallbackStage& st, const std::vector<const Tensor*>& host);
  // Runs the steps's segments after the first: each stage on the CPU, then the segment after it. `host` gains the
  // stages' outputs (kept in `vals`).
  void run_stages(Plan& p, std::vector<const Tensor*>& host, std::vector<Tensor>& vals);
  // "fallback_nodes", "fallback_stages", "fallback_bytes" (the last run's), "fallback_op TYPE" (count per op type).
  void fallback_stats(std::vector<std::pair<std::string, double>>& s) const;

  std::shared_ptr<const Model> model_;     // the graph the session runs: the caller's after the fusion rewrites
  std::shared_ptr<const Model> original_;  // the caller's
  FusionCounts fusions_;
  SessionOptions opts_;
  std::unique_ptr<Context> ctx_;
  bool graph_capture_ = true;
  std::map<int, Tensor> folded_;             // values computed from constants at load
  LazyConstants lazy_;                       // weights concatenated by the rewrites, built on demand
  std::map<int, int> device_transposed_;     // value -> the 2-D initializer it transposes (made on the device)
  WeightLayouts weight_layouts_;             // fused MatMul weights -> their parts (placed on the device)
  mutable std::map<int, Tensor> materialized_;  // lazy constants built and not yet uploaded
  std::vector<Place> place_;                 // per node
  std::vector<char> host_known_;             // per value: known on the host each run
  std::vector<std::unique_ptr<DeviceOp>> ops_;  // per node (device nodes only)
  std::vector<int> device_nodes_;            // in order
  std::unique_ptr<HostSubgraph> host_;       // the host part, run each step
  std::vector<int> host_outputs_;            // values it returns
  std::map<int, DeviceBuffer> const_bufs_;   // constants uploaded for device ops
  std::map<int, TensorView> const_views_;
  std::vector<std::pair<int, std::pair<int, int>>> step_values_;  // host value read on the device: (value, (node, input))
  // Every (value, (node, input)) use of a step value, checked on the host before each run (DeviceOp::check_step_input).
  std::vector<std::pair<int, std::pair<int, int>>> step_value_uses_;
  std::vector<int> host_read_values_;        // non-constant host values device ops read on the host
  bool cpu_fallback_ = true;                 // enable_cpu_fallback (off: a node the device lacks is an error)
  std::set<std::string> cpu_ops_;            // cpu_ops: op types placed as if the device lacked them
  std::vector<FallbackStage> stages_;        // in order of their `before`
  std::vector<int> fallback_host_nodes_;     // nodes the device lacks that joined the host part
  std::vector<std::string> refused_;         // why device ops refused nodes that fell back (their errors)
  std::vector<char> stage_output_;           // per value: made by a fallback stage
  VkDeviceSize last_fallback_bytes_ = 0;     // copied across fallback stage boundaries by the last run
  bool fallback_bytes_told_ = false;         // the first recorded step's fallback bytes were logged as a warning
  std::vector<KvSlot> kv_;
  std::map<int, std::pair<int, int>> kv_value_;  // value id -> (slot, 0 key / 1 value)
  std::vector<char> is_kv_input_;            // per value: a past_key/past_value graph input
  DType kv_dtype_ = DType::undefined;
  int64_t kv_batch_ = 0, kv_capacity_ = 0, kv_head_size_ = 0;
  int64_t kv_length_ = 0;                    // positions held: the last run's total_sequence_length
  int total_len_value_ = -1;                 // total_sequence_length of the first GQA node
  int last_position_value_ = -1;             // SessionOptions::last_position_output's value id
  int last_position_node_ = -1;              // the node producing it
  std::map<std::string, std::unique_ptr<Plan>> plans_;
  std::unique_ptr<Plan> retired_plan_;       // the last run's plan when graph capture is off
  Plan* last_plan_ = nullptr;                // the plan of the last run
  bool sampling_ = false;                    // enable_device_sampling
  DeviceSampling sampling_params_;
  DeviceBuffer rng_;                         // uint32 [rng_batch_] random state of device sampling
  int64_t rng_batch_ = 0;
  DeviceBuffer argmax_scratch_;              // uint32, zero between steps: the spread argmax's chunk results
  HostVisibleBuffer token_mask_;             // DeviceSampling::token_mask: uint32 [32 rows x token_mask_words_]
  int64_t token_mask_words_ = 0;
  std::vector<int64_t> last_tokens_;         // [B] the last run's device-sampled tokens (empty: none)
  uint64_t runs_ = 0, recordings_ = 0;
  struct LoadMs {  // wall time of the constructor's phases (stats(): load_*_ms)
    double context = 0, fuse = 0, fold = 0, place = 0, ops = 0;
  } load_ms_;
  RecorderStats last_stats_;
  // Timing of replayed runs (runs that recorded nothing): host time of run(), time in submit + wait, and with
  // enable_profiling=1 the GPU time per op type from timestamps written after every node.
  bool profile_ = false;
  // step_values_in_place=0: copy the step values into device memory at each step's start even where the host-visible
  // buffer holding them is device-local (the path of devices without such memory; kept testable on lavapipe).
  bool step_values_in_place_ = true;
  QueryPool query_pool_;  // enable_profiling: a timestamp after every node and after device sampling
  uint32_t query_count_ = 0;
  // Device sampling's output, int64 [B <= 32]: every sampling plan writes it, a queued step reads its token ids
  // from it (so the step after a run or another queued step needs no host round trip).
  DeviceBuffer token_device_;
  // Queued steps (queue_next), oldest first: at most two, the parity alternating between two plans so the host
  // writes one's step values while the other runs.
  struct Queued {
    Plan* plan;
    uint64_t value;  // timeline value of its submission
    bool replayed;
    std::chrono::steady_clock::time_point t_start;
  };
  std::deque<Queued> queued_;
  int fed_parity_ = 0;
  uint64_t queued_runs_ = 0, dropped_runs_ = 0;  // queued steps finished / dropped
  bool is_queued(const Plan* p) const;
};

}  // namespace ogx::vk::graph
