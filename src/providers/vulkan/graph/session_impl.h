// Internals of the Vulkan graph session (see vulkan_session.h), shared by vulkan_session.cpp (the load-time
// partition), plan_cache.cpp (runs: prepare, plan lookup, replay), step_plan.cpp (recording one signature's step),
// decode_loop.cpp and queued_steps.cpp (the decode loop) and fallback.cpp; the KV pool is kv_pool.h.
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
#include "providers/vulkan/graph/kv_pool.h"
#include "providers/vulkan/graph/vulkan_session.h"
#include "providers/vulkan/kernels/sampling.h"

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

// An If selecting between constants on a host-known condition (constant_if.cpp): no node runs, plans bind its
// outputs to the chosen branch's device copies.
struct ConstantIf {
  int node = -1, cond = -1;  // the If node, its condition's value id
  std::vector<int> outputs;  // value ids
  struct Value {
    int outer = -1;               // a constant of the enclosing graph (uploaded once, shared), or -1
    const Tensor* host = nullptr;  // the branch's value
    DeviceBuffer buf;             // its device copy when the branch holds it (outer < 0)
    TensorView view;
  };
  std::vector<Value> values[2];  // per output: then (0), else (1)
};

// One GroupQueryAttention layer's cache: its part of every block of the session's KV pool (kv_pool.h).
struct KvSlot {
  int node = -1;                                               // the GQA node
  int past_k = -1, past_v = -1, present_k = -1, present_v = -1;  // value ids (-1 when absent)
  int64_t kv_heads = 0;
};

// The rows of one run: which KvState's rows sit where in the batch.
struct RunRows {
  const KvState* state = nullptr;
  uint64_t serial = 0;          // VulkanKvState::serial(): tells a state from a later one at the same address
  int64_t first = 0, rows = 0;  // rows [first, first + rows) of the run's batch
};

// The sampling kernel's settings for a run's (or a row's) way of picking.
inline kernels::SamplingParams kernel_sampling(const DeviceSampling& s) {
  kernels::SamplingParams sp;
  sp.greedy = s.greedy;
  sp.top_k = (uint32_t)s.top_k;
  sp.top_p = s.top_p;
  sp.temperature = s.temperature;
  return sp;
}

constexpr int64_t kMaxSampleRows = 256;  // rows a step picks tokens for on the device (its buffers are this large)

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
  std::shared_ptr<DeviceBuffer> arena;          // a prompt step's activations instead: the arena it was recorded in
  // Host values the device reads (positions, lengths, token ids), packed into step_host, which the host writes
  // before each submission. Where step_host is device-local (resizable BAR, unified memory) kernels read it in
  // place; otherwise the step starts by copying it into the device-local step_device (no PCIe reads from kernels).
  std::map<int, VkDeviceSize> step_offsets;     // by value id
  std::map<int, DType> step_dtypes;
  HostVisibleBuffer step_host;
  DeviceBuffer step_device;                     // only when step_host is not device-local
  int fed_value = -1;  // a queued step's token ids: read in place from the session's token_device_
  // Weight inputs (weight_inputs.cpp): the device slot each reads, and the cache entry it holds (0: none yet).
  std::map<int, DeviceBuffer> weight_slots;
  std::map<int, uint64_t> weight_slot_source;
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
  bool prompt_step = false;  // a prompt's (or a chunk's) step: some row takes more than a few positions
                             // (plan_cache.cpp kFewPositions)
  bool slice_last = false;    // the logits producer reads only the last position
  bool samples = false;       // picks the next token on the device (DecodeRun::sampling)
  HostVisibleBuffer token_host;  // int64 [B]: the step's tokens, written by the sampling kernel beside token_device_
  int64_t sample_rows = 0;       // B of token_host (samples)
  int64_t beam_k = 0;            // > 0: samples beam candidates instead, token_host uint32 [B, 2 + 2 beam_k]
  int64_t beam_vocab = 0;        // the length of the rows they come from
  DeviceBuffer edited_logits;    // DeviceSampling::logit_edits: f32 [B, V], the logits with the rows' edits applied
  HostVisibleBuffer edits;       // ... the edits (kernels::pack_logit_edits words), written before each submission
  // A queued step's plan (fed_value >= 0) that samples: the session's random state as the step found it, copied on
  // the device before its sampling advances it (drop_queued puts it back: a dropped step leaves no trace).
  DeviceBuffer rng_before;
  TensorView sliced_input;    // its input 0 restricted to that position (B > 1: the rows gathered into scratch)
  TensorView sliced_skip;     // a folded norm's skip (input 1) restricted to that position
  // Its nodes' scratch (norm outputs, fused gate/up products, attention workspaces): its own, or for a prompt step
  // the session's prompt scratch, shared as the prompt arena is (prompt steps run one at a time).
  std::shared_ptr<StepScratch> scratch;
  // The block table of the run's rows, uint64 [B, pool heads, max_blocks] (kv_pool.h): a step value at this offset
  // of step_host; per KV slot the pages the GQA node reads through it.
  VkDeviceSize kv_table_offset = 0;
  int64_t kv_max_blocks = 0;
  std::vector<kernels::KvPages> kv_pages;  // per KvSlot
  std::unique_ptr<CommandRecorder> rec;  // the step (its first segment when fallback stages split it)
  uint64_t last_used = 0;
  // Two timestamps around the step (where the device has compute timestamps): its GPU time for the stats.
  QueryPool step_pool;
};

class VulkanGraphSession : public Session, public DecodeSession {
 public:
  VulkanGraphSession(std::shared_ptr<const Model> model, const SessionOptions& opts);
  ~VulkanGraphSession() override;
  void run(const std::vector<NamedTensor>& inputs, std::vector<NamedTensor>& outputs) override;
  const Graph& graph() const override { return original_->graph; }
  std::string provider_name() const override { return "vulkan"; }
  DecodeSession* decoder() override { return kv_.empty() ? nullptr : this; }
  std::vector<std::pair<std::string, double>> stats() const override;
  // DecodeSession (decode_loop.cpp)
  std::unique_ptr<KvState> create_kv(int rows, int64_t max_length) override;
  void rewind_kv(KvState& kv, int64_t length) override;
  void reorder_kv(KvState& kv, const std::vector<int32_t>& source_rows, int64_t final_positions) override;
  bool can_sample(const DeviceSampling& s, int64_t rows) const override;
  int64_t prefill_chunk() const override { return prefill_chunk_; }
  void run(const std::vector<NamedTensor>& inputs, std::vector<NamedTensor>& outputs, const DecodeRun& r) override;
  std::vector<int64_t> sampled_tokens(const KvState& kv) const override;
  std::vector<BeamRow> beam_candidates(const KvState& kv) const override;
  bool read_last_output(const KvState& kv, Tensor* out) override;
  // guidance: the next run's allowed tokens (decode_loop.cpp)
  bool set_token_mask(const KvState& kv, const std::vector<uint32_t>& bits, int64_t words_per_row) override;
  void ensure_token_mask(int64_t words_per_row);  // token_mask_ for [kMaxSampleRows x words_per_row], all allowed
  bool set_logit_edits(const std::vector<RowEdits>& rows) override;
  // queued_steps.cpp
  bool queue_next(const std::vector<NamedTensor>& inputs, const std::string& token_input, const DecodeRun& r) override;
  bool finish_queued(const KvState& kv) override;
  void drop_queued() override;
  bool has_queued(const KvState& kv) const override;
  bool queued_for(const std::vector<const KvState*>& states) const override;

 private:
  // vulkan_session.cpp (load time)
  const Tensor* known_constant(int v) const;  // initializer, Constant or folded (never builds a lazy one)
  bool is_constant(int v) const;               // any of those or a lazy one
  const Tensor* constant(int v) const;        // any, building a lazy one (kept until its op is built)
  const TensorView& device_constant(int v);
  std::optional<std::vector<int64_t>> constant_shape(int v) const;  // OpBuildContext::constant_shape
  void fold_constants();
  bool defer_transpose(const Node& n);  // see vulkan_session.cpp
  std::vector<kernels::WeightColumns> weight_parts(int v) const;  // a fused weight's parts; empty: none
  void place_nodes();
  void build_ops();
  std::unique_ptr<DeviceOp> build_op(int node);  // throws an Error naming the node when the device op refuses it
  // decode_loop.cpp: the run's KV states checked, their blocks reserved, the block table filled in.
  void bind_kv(const DecodeRun& r, int64_t batch, int64_t total, Plan& p, std::vector<uint64_t>& table,
               std::vector<RunRows>& rows);
  VulkanKvState& own(KvState& kv) const;  // a state of this session's, else an error
  // Swaps the device random state of sampling rows to the run's states (non-greedy sampling, decode_loop.cpp).
  // seeds: per entry of rows, the seed of a state whose rows have no random state yet.
  void bind_rng(const std::vector<RunRows>& rows, const std::vector<uint64_t>& seeds);
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
  // plan_cache.cpp. A run made ready to submit: inputs checked, the host part run, the plan of its signature found
  // or recorded, its KV states' blocks reserved and their block table filled (plan null: a queued step that cannot
  // run now).
  struct Prepared {
    Plan* plan = nullptr;
    bool recorded = false;            // this run recorded the plan
    std::vector<uint64_t> kv_table;   // the block table (Plan::kv_table_offset)
    std::vector<RunRows> rows;        // whose rows the run holds
    std::vector<const Tensor*> host;  // per value: known on the host
    std::vector<Tensor> host_vals;    // the host part's outputs (host points into them)
    std::vector<Tensor> stage_vals;   // the fallback stages' outputs (host points into them)
  };
  // fed >= 0: a queued step whose value `fed` (the token ids) the plan takes from token_device_.
  Prepared prepare(const std::vector<NamedTensor>& inputs, const std::vector<std::string>& output_names, int fed,
                   const DecodeRun& r);
  // After a run's step completed: stats, the last plan, the sampled token.
  void complete(Plan& p, bool replayed, std::chrono::steady_clock::time_point t_start,
                std::chrono::steady_clock::duration wait, const std::vector<RunRows>& rows);
  // step_plan.cpp
  // capacity: the block-table width (kv_capacity()).
  // prompt_step: the activations go in the prompt arena (prompt_arena_), else in the plan's own buffers.
  std::unique_ptr<Plan> build_plan(const std::vector<const Tensor*>& host, const std::vector<int>& wanted,
                                   int64_t batch, int64_t capacity, int fed, bool prompt_step);
  OpArgs make_args(Plan& p, int node, const std::vector<const Tensor*>& host);
  void gather_last_rows(Plan& p, const Node& n);
  bool last_real_positions() const override {
    return last_position_node_ >= 0 && seqlens_value_ >= 0 && total_len_value_ >= 0;
  }
  void write_steps(Plan& p, const std::vector<const Tensor*>& host, const std::vector<uint64_t>& kv_table);
  void record_sampling(Plan& p, int64_t batch);
  // weight_inputs.cpp: inputs with an initializer default (LoRA adapter tensors), uploaded once per host tensor.
  void split_weight_inputs();  // after build_ops: moves them out of step_values_ into weight_inputs_
  std::string weight_input_signature(const std::vector<const Tensor*>& host) const;  // their dtypes and shapes
  void bind_weight_inputs(Plan& p, const std::vector<const Tensor*>& host);     // build_plan: a slot per input
  void refresh_weight_inputs(Plan& p, const std::vector<const Tensor*>& host);  // before a submission
  void weight_input_stats(std::vector<std::pair<std::string, double>>& s) const;
  void set_kv_views(Plan& p, int64_t batch, int64_t capacity);  // the KV values' views and pages of a plan
  // constant_if.cpp
  bool place_constant_if(int node);  // true: an If over constants, placed (skip) and recorded in constant_ifs_
  void upload_constant_ifs();
  void bind_constant_ifs(Plan& p, const std::vector<const Tensor*>& host);
  std::string constant_if_signature(const std::vector<const Tensor*>& host) const;
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
  std::shared_ptr<Context> ctx_;                       // shared with a draft model's session (share_device_with)
  std::map<std::string, std::string> context_options_;  // what ctx_ was created from (a sharer must match)
  bool graph_capture_ = true;
  std::map<int, Tensor> folded_;             // values computed from constants at load
  std::map<int, int> same_bytes_;            // folded reshapes of constants -> the constant whose bytes they hold
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
  // MatMul weights in the kernels' layout by the value they come from (OpBuildContext::matmul_weight): uploaded once
  // however many nodes read them, a tied table's Transpose included.
  std::map<int, kernels::MatMulWeight> matmul_weights_;
  kernels::MatMulWeight matmul_weight(int v);  // a view of matmul_weights_[v] (uploaded on first use)
  std::map<int, TensorView> const_views_;
  std::vector<std::pair<int, std::pair<int, int>>> step_values_;  // host value read on the device: (value, (node, input))
  // Every (value, (node, input)) use of a step value, checked on the host before each run (DeviceOp::check_step_input).
  std::vector<std::pair<int, std::pair<int, int>>> step_value_uses_;
  std::vector<int> host_read_values_;        // non-constant host values device ops read on the host
  std::vector<int> weight_inputs_;           // graph inputs with an initializer default read on the device
  std::shared_ptr<struct WeightInputCache> weight_cache_;  // their device copies (weight_inputs.cpp)
  bool cpu_fallback_ = true;                 // enable_cpu_fallback (off: a node the device lacks is an error)
  std::set<std::string> cpu_ops_;            // cpu_ops: op types placed as if the device lacked them
  std::vector<FallbackStage> stages_;        // in order of their `before`
  std::vector<ConstantIf> constant_ifs_;     // If nodes selecting constants (constant_if.cpp)
  std::vector<int> fallback_host_nodes_;     // nodes the device lacks that joined the host part
  std::vector<std::string> refused_;         // why device ops refused nodes that fell back (their errors)
  std::vector<char> stage_output_;           // per value: made by a fallback stage
  VkDeviceSize last_fallback_bytes_ = 0;     // copied across fallback stage boundaries by the last run
  bool fallback_bytes_told_ = false;         // the first recorded step's fallback bytes were logged as a warning
  std::vector<KvSlot> kv_;
  std::map<int, std::pair<int, int>> kv_value_;  // value id -> (slot, 0 key / 1 value)
  std::map<int, int> kv_slot_of_node_;       // GQA node -> slot
  std::vector<char> is_kv_input_;            // per value: a past_key/past_value graph input
  DType kv_dtype_ = DType::undefined;
  int64_t kv_head_size_ = 0;                 // known after the first recorded step
  std::shared_ptr<KvPool> pool_;             // the KV blocks of every state of this session
  // Prompt positions per run (provider option prefill_chunk_tokens, default kDefaultPrefillChunk; 0: whole prompts).
  int64_t prefill_chunk_ = -1;
  DeviceBuffer kv_guard_;                    // [slots][2] 256-byte slices: order each layer's cache accesses
  std::vector<RunRows> last_rows_;           // the last run's rows (sampled_tokens, read_last_output)
  uint64_t kv_table_writes_ = 0;             // runs whose block table was written (stats)
  int total_len_value_ = -1;                 // total_sequence_length of the first GQA node
  int seqlens_value_ = -1;                   // ... and its seqlens_k (each row's last real position: last_rows)
  int last_position_value_ = -1;             // SessionOptions::last_position_output's value id
  int last_position_node_ = -1;              // the node producing it
  bool all_positions_ = false;               // this run's caller bound it for every position (no slicing)
  std::map<std::string, std::unique_ptr<Plan>> plans_;
  std::unique_ptr<Plan> retired_plan_;       // the last run's plan when graph capture is off
  // The activations of prompt steps (Plan::arena): one at a time runs (run() waits for each, and a run's outputs are
  // read before the next), so the prompt steps kept share one arena of the largest one's size, not one each. A
  // larger step makes a larger arena; plans recorded in the smaller one keep it until they are dropped.
  std::shared_ptr<DeviceBuffer> prompt_arena_;
  std::shared_ptr<StepScratch> prompt_scratch_;  // the prompt steps' scratch (Plan::scratch), kept with them
  Plan* last_plan_ = nullptr;                // the plan of the last run
  bool sampling_ = false;                    // the run being prepared samples (DecodeRun::sampling)
  DeviceSampling sampling_params_;           // its way of sampling
  bool row_sampling_ = false;                // its rows pick in their own ways (KvRows::sampling): row_params_
  HostVisibleBuffer row_params_;             // uint32 [kMaxSampleRows, 4]: kernels::write_row_params per row
  DeviceBuffer rng_;                         // uint32 [32] random state of device sampling, of rng_rows_' rows
  std::vector<RunRows> rng_rows_;            // whose rows' random state rng_ holds (non-greedy sampling)
  DeviceBuffer argmax_scratch_;              // uint32, zero between steps: the spread argmax's chunk results
  HostVisibleBuffer token_mask_;             // DeviceSampling::token_mask: uint32 [kMaxSampleRows x token_mask_words_]
  int64_t token_mask_words_ = 0;
  // DeviceSampling::logit_edits: the next run's edits (kernels::pack_logit_edits words), written into the plan's own
  // buffer (Plan::edits) when the run is submitted, so that a queued step's edits do not touch those of the step
  // before it. Plans hold edit buffers of logit_edit_capacity_ edits (in their signature: more edits, new plans).
  std::vector<uint32_t> staged_edits_;
  int64_t logit_edit_capacity_ = 0;
  std::vector<int64_t> last_tokens_;         // [B] the last run's device-sampled tokens (empty: none)
  std::vector<uint32_t> last_beam_;          // [B, 2 + 2K] the last run's beam candidates (empty: none)
  int64_t last_beam_k_ = 0;                  // their K
  int64_t last_beam_vocab_ = 0;              // the rows' length
  uint64_t runs_ = 0, recordings_ = 0;
  uint64_t last_rows_gathers_ = 0;  // recorded steps that gathered a batch's last positions for the logits
  struct LoadMs {  // wall time of the constructor's phases (stats(): load_*_ms)
    double context = 0, fuse = 0, fold = 0, place = 0, ops = 0;
    double pipelines = 0, pipeline_ms = 0, wait_ms = 0, alloc_ms = 0;  // at the end of loading: pipelines built, their time, waits
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
    std::vector<RunRows> rows;
    std::vector<KvRows> kv;  // their lengths after it
    bool advances_rng;       // some row samples (not argmax): the step advances the random state rng_
  };
  std::deque<Queued> queued_;
  int fed_parity_ = 0;
  uint64_t queued_runs_ = 0, dropped_runs_ = 0;  // queued steps finished / dropped
  bool is_queued(const Plan* p) const;
};

}  // namespace ogx::vk::graph
