// Vulkan graph session: the load-time partition (fusion, constant folding, placement, device ops) and the stats.
// The per-run flow is in plan_cache.cpp (prepare, plan lookup or recording, replay), step_plan.cpp (recording),
// decode_loop.cpp / queued_steps.cpp (KV states, sampling, queued steps) and kv_pool.cpp (the paged KV cache).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <cstdlib>
#include <set>
#include <sstream>

#include "common/log.h"
#include "common/mapped_file.h"
#include "common/progress.h"
#include "providers/cpu/cpu_provider.h"
#include "providers/vulkan/graph/fusion.h"
#include "providers/vulkan/graph/session_impl.h"
#include "providers/vulkan/kernels/matmul.h"
#include "providers/vulkan/transfer.h"

namespace ogx::vk::graph {
namespace {

constexpr size_t kHostConstantBytes = 64 << 10;  // larger constants make a node a device node
// Prompt positions per run by default (provider option prefill_chunk_tokens): a 1B's prompt runs at full speed on the
// H200 in runs of 2048 (prefill 51.7k tok/s at 2048 against 49.8k at 512) with ~150 MB of activations.
constexpr int64_t kDefaultPrefillChunk = 2048;

bool is_gqa(const Node& n) { return n.domain == "com.microsoft" && n.op_type == "GroupQueryAttention"; }

// The provider options for Context::create, less ogx's session-level keys (validation, profiling, step values).
std::map<std::string, std::string> context_options(const SessionOptions& opts, InstanceOptions* inst, bool* profile,
                                                   bool* step_values_in_place, bool* cpu_fallback,
                                                   std::set<std::string>* cpu_ops, VkDeviceSize* kv_budget,
                                                   int64_t* prefill_chunk) {
  std::map<std::string, std::string> m;
  for (auto& kv : opts.provider_options) m[kv.first] = kv.second;
  for (auto& kv : opts.device_filtering) m[kv.first] = kv.second;
  if (auto it = m.find("enable_validation"); it != m.end()) {
    inst->validation = it->second == "1" || it->second == "true";
    m.erase(it);
  }
  if (auto it = m.find("enable_profiling"); it != m.end()) {
    *profile = it->second == "1" || it->second == "true";
    m.erase(it);
  }
  if (auto it = m.find("step_values_in_place"); it != m.end()) {
    OGX_CHECK(it->second == "0" || it->second == "1", "provider option step_values_in_place must be 0 or 1, not '",
              it->second, "'");
    *step_values_in_place = it->second == "1";
    m.erase(it);
  }
  // OGX_STRICT_PROVIDER=1 (tests): a node the device lacks fails loudly unless the options ask for fallback.
  if (const char* strict = std::getenv("OGX_STRICT_PROVIDER"); strict && std::string(strict) == "1")
    *cpu_fallback = false;
  if (auto it = m.find("enable_cpu_fallback"); it != m.end()) {
    OGX_CHECK(it->second == "0" || it->second == "1", "provider option enable_cpu_fallback must be 0 or 1, not '",
              it->second, "'");
    *cpu_fallback = it->second == "1";
    m.erase(it);
  }
  if (auto it = m.find("cpu_ops"); it != m.end()) {  // op types to run on the CPU provider (bisecting a kernel)
    std::stringstream ss(it->second);
    for (std::string op; std::getline(ss, op, ',');)
      if (!op.empty()) cpu_ops->insert(op);
    m.erase(it);
  }
  if (auto it = m.find("kv_cache_budget_mb"); it != m.end()) {  // the KV pool's limit (kv_pool.h); 0: none
    double mb = -1;
    try {
      size_t used = 0;
      mb = std::stod(it->second, &used);
      if (used != it->second.size()) mb = -1;
    } catch (const std::exception&) {
    }
    OGX_CHECK(mb >= 0 && mb < 1e9, "provider option kv_cache_budget_mb must be a number of MiB >= 0, not '",
              it->second, "'");
    *kv_budget = (VkDeviceSize)(mb * 1048576.0);
    m.erase(it);
  }
  if (auto it = m.find("prefill_chunk_tokens"); it != m.end()) {  // prompt positions per run (0: the whole prompt)
    int64_t n = -1;
    try {
      size_t used = 0;
      n = std::stoll(it->second, &used);
      if (used != it->second.size()) n = -1;
    } catch (const std::exception&) {
    }
    OGX_CHECK(n >= 0, "provider option prefill_chunk_tokens must be a whole number of tokens >= 0, not '", it->second,
              "'");
    *prefill_chunk = n;
    m.erase(it);
  }
  m.erase("intra_op_num_threads");
  return m;
}

}  // namespace

VulkanGraphSession::VulkanGraphSession(std::shared_ptr<const Model> model, const SessionOptions& opts)
    : model_(std::move(model)), opts_(opts) {
  InstanceOptions inst;
  VkDeviceSize kv_budget = 0;
  auto options =
      context_options(opts, &inst, &profile_, &step_values_in_place_, &cpu_fallback_, &cpu_ops_, &kv_budget,
                      &prefill_chunk_);
  OGX_CHECK(cpu_ops_.empty() || cpu_fallback_, "provider option cpu_ops needs CPU fallback (enable_cpu_fallback=1)");
  using Clock = std::chrono::steady_clock;
  auto lap = [t = Clock::now()](double* ms) mutable {  // load phases, reported by stats()
    auto now = Clock::now();
    *ms = std::chrono::duration<double, std::milli>(now - t).count();
    t = now;
  };
  context_options_ = options;
  context_options_["(validation)"] = inst.validation ? "1" : "0";  // an instance setting: part of what must match
  auto* other = dynamic_cast<const VulkanGraphSession*>(opts.share_device_with);
  if (other && other->context_options_ == context_options_ && !other->ctx_->device_lost())
    ctx_ = other->ctx_;  // one VkDevice for a target and its draft (no switches between device contexts)
  else
    ctx_ = Context::create(options, inst);
  pool_ = std::make_shared<KvPool>(*ctx_, kv_budget);
  lap(&load_ms_.context);
  graph_capture_ = ctx_->options().enable_graph_capture;  // parsed with the other DirectML keys
  original_ = model_;
  auto work = std::make_shared<Model>(*model_);  // private copy (weights shared) for the rewrites
  fusions_ = fuse_decoder_patterns(work->graph, &lazy_, &weight_layouts_, /*matmul_bias=*/!cpu_ops_.count("MatMul"));
  model_ = work;
  const Graph& g = model_->graph;
  if (!opts.last_position_output.empty()) last_position_value_ = g.find(opts.last_position_output);
  if (prefill_chunk_ < 0) {  // the default: 2048, except where a graph reads the whole prompt's extent (longrope's
    prefill_chunk_ = kDefaultPrefillChunk;  // switch to its long factors: an If on the total length, or the dml
    for (const Node& n : g.nodes)            // position-ids reformat's ReduceMax): chunks would see the short rows
      if (n.op_type == "If" || n.op_type == "ReduceMax") prefill_chunk_ = 0;
  }
  lap(&load_ms_.fuse);
  fold_constants();
  lap(&load_ms_.fold);
  place_nodes();
  lap(&load_ms_.place);
  build_ops();
  upload_constant_ifs();
  lap(&load_ms_.ops);
  load_ms_.pipelines = (double)ctx_->pipelines().size();
  load_ms_.pipeline_ms = ctx_->pipelines().create_ms();
  load_ms_.wait_ms = ctx_->wait_ms();
  load_ms_.alloc_ms = ctx_->memory().create_ms();
  if (profile_) {
    OGX_CHECK(ctx_->info().timestamp_period > 0, "enable_profiling: the device has no compute timestamps");
    query_count_ = (uint32_t)device_nodes_.size() + 2;  // + the end of device sampling
    query_pool_.create(ctx_->device(), query_count_);
  }

  log_info("vulkan: " + std::to_string(device_nodes_.size()) + " device nodes, " +
           std::to_string(host_outputs_.size()) + " host values per step, weights " +
           std::to_string(ctx_->memory().bytes_in_use() >> 20) + " MiB on " + ctx_->info().name);
}

VulkanGraphSession::~VulkanGraphSession() {
  if (ctx_) ctx_->wait_idle_for_teardown();
  plans_.clear();
  if (pool_) pool_->free_memory();  // generators' states may outlive the session: the memory goes with it
  kv_.clear();
  ops_.clear();
  const_bufs_.clear();
  matmul_weights_.clear();  // (after the views of them)
}

const Tensor* VulkanGraphSession::known_constant(int v) const {
  if (v < 0) return nullptr;
  const Value& val = model_->graph.values[v];
  if (val.is_constant) return &val.constant;
  auto it = folded_.find(v);
  return it == folded_.end() ? nullptr : &it->second;
}

bool VulkanGraphSession::is_constant(int v) const { return known_constant(v) || lazy_.count(v); }

const Tensor* VulkanGraphSession::constant(int v) const {
  if (const Tensor* t = known_constant(v)) return t;
  auto it = lazy_.find(v);
  if (it == lazy_.end()) return nullptr;
  auto m = materialized_.find(v);
  if (m == materialized_.end()) m = materialized_.emplace(v, it->second()).first;
  return &m->second;
}

std::optional<std::vector<int64_t>> VulkanGraphSession::constant_shape(int v) const {
  if (const Tensor* t = known_constant(v)) return t->shape();
  if (auto it = device_transposed_.find(v); it != device_transposed_.end()) {
    const Tensor* w = known_constant(it->second);  // [K, N] -> [N, K]
    if (w) return std::vector<int64_t>{w->dim(1), w->dim(0)};
  }
  if (const Tensor* t = constant(v)) return t->shape();
  return std::nullopt;
}

const TensorView& VulkanGraphSession::device_constant(int v) {
  auto it = const_views_.find(v);
  if (it != const_views_.end()) return it->second;
  if (auto tr = device_transposed_.find(v); tr != device_transposed_.end()) {
    // W^T of a 2-D weight W: the layout upload_matmul_weight makes on the device, so the host never transposes it;
    // and the lm_head's own for a table tied to it (the same bytes, held once).
    kernels::MatMulWeight w = matmul_weight(tr->second);
    TensorView view = w.data.view(w.dtype, {w.N, w.K});
    const_bufs_[v] = std::move(w.data);  // (a view)
    return const_views_[v] = view;
  }
  const Tensor* t = constant(v);
  OGX_CHECK(t, "value '", model_->graph.values[v].name, "' is not a constant");
  if (auto same = same_bytes_.find(v); same != same_bytes_.end() && t->bytes() > kHostConstantBytes) {
    const TensorView& src = device_constant(same->second);  // (the same bytes: a view of its upload)
    if (src.dtype == t->dtype() && src.numel() == t->numel()) {
      TensorView view = src;
      view.shape = t->shape();
      return const_views_[v] = view;
    }
  }
  DeviceBuffer buf = ctx_->memory().allocate(model_->graph.values[v].name, std::max<size_t>(t->bytes(), 4));
  TensorView view = buf.view(t->dtype(), t->shape());
  if (t->bytes()) ctx_->transfers().upload_tensor(view, *t);
  if (t->bytes() > kHostConstantBytes) MappedFile::release_if_mapped(t->raw(), t->bytes());  // on the device now
  const_bufs_[v] = std::move(buf);
  return const_views_[v] = view;
}

kernels::MatMulWeight VulkanGraphSession::matmul_weight(int v) {
  auto it = matmul_weights_.find(v);
  if (it == matmul_weights_.end()) {
    const Tensor* w = constant(v);
    OGX_CHECK(w, "value '", model_->graph.values[v].name, "' is not a constant");
    OGX_CHECK(w->rank() == 2, "MatMul weight '", model_->graph.values[v].name, "' must be 2-D, got ",
              shape_str(w->shape()));
    it = matmul_weights_.emplace(v, kernels::upload_matmul_weight(*ctx_, model_->graph.values[v].name, *w)).first;
  }
  const kernels::MatMulWeight& w = it->second;
  kernels::MatMulWeight view;
  view.dtype = w.dtype;
  view.K = w.K;
  view.N = w.N;
  view.data = w.data.alias();
  return view;
}

std::vector<kernels::WeightColumns> VulkanGraphSession::weight_parts(int v) const {
  std::vector<kernels::WeightColumns> parts;
  auto it = weight_layouts_.find(v);
  if (it == weight_layouts_.end()) return parts;
  for (const WeightPart& p : it->second) {
    const Tensor* w = known_constant(p.value);
    if (!w) return {};  // a part that is itself built on demand: the host builds the whole weight
    parts.push_back({w, p.offset, p.stride});
  }
  return parts;
}

// Nodes whose inputs are all constants run once on the host; their outputs become constants.
void VulkanGraphSession::fold_constants() {
  const Graph& g = model_->graph;
  std::vector<char> is_const(g.values.size(), 0);
  for (size_t v = 0; v < g.values.size(); v++) is_const[v] = g.values[v].is_constant;
  std::vector<int> nodes, outs;
  for (size_t i = 0; i < g.nodes.size(); i++) {
    const Node& n = g.nodes[i];
    bool all_out_const = true, all_in_const = !n.inputs.empty();
    for (int v : n.outputs) all_out_const &= v < 0 || is_const[v];
    for (int v : n.inputs) all_in_const &= v < 0 || is_const[v];
    if (all_out_const || !all_in_const) continue;
    if (defer_transpose(n)) {  // a big 2-D weight's transposition: done on the device when uploaded
      is_const[n.outputs[0]] = 1;
      continue;
    }
    nodes.push_back((int)i);
    for (int v : n.outputs)
      if (v >= 0) {
        is_const[v] = 1;
        outs.push_back(v);
      }
    // A reshaped constant has its input's bytes: on the device, a view of the input's upload (a tied int4 table's
    // GatherBlockQuantized reads the lm_head's quantized weight through a Reshape).
    const bool reshapes = n.domain.empty() && (n.op_type == "Reshape" || n.op_type == "Flatten" ||
                                               n.op_type == "Squeeze" || n.op_type == "Unsqueeze");
    if (reshapes && n.inputs[0] >= 0 && n.outputs[0] >= 0) {
      auto src = same_bytes_.find(n.inputs[0]);
      same_bytes_[n.outputs[0]] = src == same_bytes_.end() ? n.inputs[0] : src->second;
    }
  }
  if (nodes.empty()) return;
  HostSubgraph fold(g, nodes, outs);
  std::vector<Tensor> r = fold.run({});
  for (size_t i = 0; i < outs.size(); i++) folded_[outs[i]] = r[i];
  for (auto& [v, src] : same_bytes_) {  // reshapes: views of their source's memory, not copies held beside it
    auto it = folded_.find(v);
    const Tensor* from = known_constant(src);
    if (it != folded_.end() && from && from->dtype() == it->second.dtype() && from->numel() == it->second.numel())
      it->second = from->reshaped(it->second.shape());
  }
}

// Transpose (perm [1, 0]) of a 2-D fp32/fp16 initializer larger than a host constant (an lm_head weight read as the
// embedding table, as builders tie them): its output becomes a constant the device makes at upload
// (device_constant), and a host copy is built only if a host node asks for it (constant()). Folding it on the host
// took 1.9 s of a 1B folder's 6.1 s load on the H200.
bool VulkanGraphSession::defer_transpose(const Node& n) {
  if (n.op_type != "Transpose" || !n.domain.empty() || n.inputs.size() != 1 || n.outputs.size() != 1) return false;
  const Tensor* w = known_constant(n.inputs[0]);
  if (!w || w->rank() != 2 || (w->dtype() != DType::f32 && w->dtype() != DType::f16) || w->bytes() <= kHostConstantBytes)
    return false;
  std::vector<int64_t> perm = n.attr_ints("perm");
  if (!perm.empty() && perm != std::vector<int64_t>{1, 0}) return false;
  int out = n.outputs[0];
  device_transposed_[out] = n.inputs[0];
  lazy_[out] = [w] {
    int64_t K = w->dim(0), N = w->dim(1);
    size_t es = dtype_size(w->dtype());
    Tensor t(w->dtype(), {N, K});
    const char* src = static_cast<const char*>(w->raw());
    char* dst = static_cast<char*>(t.raw());
    for (int64_t k = 0; k < K; k++)
      for (int64_t c = 0; c < N; c++) std::memcpy(dst + (c * K + k) * es, src + (k * N + c) * es, es);
    return t;
  };
  return true;
}

// Decides where each node runs and which host values the device reads each step.
void VulkanGraphSession::place_nodes() {
  const Graph& g = model_->graph;
  size_t nv = g.values.size();
  host_known_.assign(nv, 0);
  is_kv_input_.assign(nv, 0);
  for (size_t v = 0; v < nv; v++) host_known_[v] = is_constant((int)v);
  // The KV cache: GQA inputs 3/4 and outputs 1/2 map to device slots.
  for (size_t i = 0; i < g.nodes.size(); i++) {
    const Node& n = g.nodes[i];
    if (!is_gqa(n)) continue;
    KvSlot s;
    s.node = (int)i;
    s.kv_heads = n.attr_int("kv_num_heads", 0);
    auto in = [&](int k) { return k < (int)n.inputs.size() ? n.inputs[k] : -1; };
    auto out = [&](int k) { return k < (int)n.outputs.size() ? n.outputs[k] : -1; };
    s.past_k = in(3), s.past_v = in(4), s.present_k = out(1), s.present_v = out(2);
    int slot = (int)kv_.size();
    for (int v : {s.past_k, s.present_k})
      if (v >= 0) kv_value_[v] = {slot, 0};
    for (int v : {s.past_v, s.present_v})
      if (v >= 0) kv_value_[v] = {slot, 1};
    for (int v : {s.past_k, s.past_v})
      if (v >= 0) is_kv_input_[v] = 1;
    if (total_len_value_ < 0) total_len_value_ = in(6);
    if (seqlens_value_ < 0) seqlens_value_ = in(5);
    if (kv_dtype_ == DType::undefined && s.past_k >= 0)
      if (const ValueInfo* vi = g.input_info(g.values[s.past_k].name)) kv_dtype_ = vi->dtype;
    kv_slot_of_node_[(int)i] = slot;
    kv_.push_back(std::move(s));
  }
  if (!kv_.empty()) kv_guard_ = ctx_->memory().allocate("kv cache order", (VkDeviceSize)kv_.size() * 512);
  for (int v : g.input_ids)
    if (!is_kv_input_[v]) host_known_[v] = 1;
  place_.assign(g.nodes.size(), Place::device);
  ops_.resize(g.nodes.size());
  stage_output_.assign(nv, 0);
  std::vector<std::string> unsupported;
  std::vector<int> host_nodes;
  for (size_t i = 0; i < g.nodes.size(); i++) {
    const Node& n = g.nodes[i];
    bool outs_known = true;
    for (int v : n.outputs) outs_known &= v < 0 || is_constant(v);
    if (outs_known) {
      place_[i] = Place::skip;
      continue;
    }
    if (place_constant_if((int)i)) continue;
    bool on_device = device_op_table().count({n.domain, n.op_type}) != 0 && !cpu_ops_.count(n.op_type);
    bool inputs_on_host = true, small_inputs = true;
    for (int v : n.inputs) {
      if (v < 0) continue;
      const Tensor* c = known_constant(v);
      inputs_on_host &= host_known_[v] && !lazy_.count(v);
      small_inputs &= !(c && c->bytes() > kHostConstantBytes);
    }
    bool cpu_kernel = cpu::kernel_registry().find(n.domain, n.op_type) != nullptr;
    if (on_device && cpu_fallback_ && cpu_kernel && !(inputs_on_host && host_capable(n) && small_inputs))
      on_device = device_accepts((int)i);  // else the device op refused it: it falls back too
    bool fallback = !on_device && cpu_fallback_ && cpu_kernel;
    if (inputs_on_host && ((host_capable(n) && small_inputs) || fallback)) {
      place_[i] = Place::host;
      host_nodes.push_back((int)i);
      if (!on_device && !(host_capable(n) && small_inputs)) fallback_host_nodes_.push_back((int)i);
      for (int v : n.outputs)
        if (v >= 0) host_known_[v] = 1;
      continue;
    }
    if (fallback) {
      place_fallback((int)i);
      continue;
    }
    if (!on_device) unsupported.push_back(n.describe());
    device_nodes_.push_back((int)i);
    if (std::find(n.outputs.begin(), n.outputs.end(), last_position_value_) != n.outputs.end() &&
        last_position_value_ >= 0)
      last_position_node_ = (int)i;
  }
  if (!unsupported.empty()) {
    std::string list;
    for (size_t i = 0; i < unsupported.size() && i < 5; i++) list += (i ? ", " : "") + unsupported[i];
    throw_error("the vulkan provider does not support ", unsupported.size(), " node(s): ", list,
                unsupported.size() > 5 ? ", ..." : "",
                cpu_fallback_ ? " (nor does the CPU provider, so they cannot fall back to it)"
                              : " (CPU fallback is off: enable_cpu_fallback=0 or OGX_STRICT_PROVIDER=1; or use --provider cpu)");
  }
  finish_fallback();
  // Host values needed after the host part: what device nodes read (and host-produced graph outputs).
  std::set<int> needed;
  for (int i : device_nodes_)
    for (int v : g.nodes[i].inputs)
      if (v >= 0 && host_known_[v] && !is_constant(v)) needed.insert(v);
  for (int v : g.output_ids)
    if (host_known_[v] && !is_constant(v)) needed.insert(v);
  for (const ConstantIf& ci : constant_ifs_)
    if (!is_constant(ci.cond)) needed.insert(ci.cond);
  for (const FallbackStage& st : stages_)
    for (int i : st.nodes)
      for (int v : g.nodes[i].inputs)
        if (v >= 0 && host_known_[v] && !is_constant(v)) needed.insert(v);
  std::set<int> produced;
  for (int i : host_nodes)
    for (int v : g.nodes[i].outputs)
      if (v >= 0) produced.insert(v);
  for (int v : needed)
    if (produced.count(v)) host_outputs_.push_back(v);
  host_ = std::make_unique<HostSubgraph>(g, host_nodes, host_outputs_, folded_);
}

void VulkanGraphSession::build_ops() {
  const Graph& g = model_->graph;
  ops_.resize(g.nodes.size());
  std::set<int> step_seen, host_read_seen;
  // Progress (common/progress.h): the constant bytes of the device nodes, counted as each node's op is built.
  std::vector<char> counted(g.values.size(), 0);
  auto constant_bytes = [&](const Node& n, bool count) {
    uint64_t b = 0;
    for (int v : n.inputs)
      if (v >= 0 && g.values[v].is_constant && !counted[v]) {
        b += g.values[v].constant.bytes();
        if (count) counted[v] = 1;
      }
    return b;
  };
  uint64_t upload_total = 0, uploaded = 0;
  for (int i : device_nodes_) upload_total += constant_bytes(g.nodes[i], false);
  for (int i : device_nodes_) {
    const Node& n = g.nodes[i];
    progress::report("uploading weights", uploaded, upload_total);
    uploaded += constant_bytes(n, true);
    if (!ops_[i]) ops_[i] = build_op(i);  // (place_nodes built those that could fall back)
    DeviceOp& op = *ops_[i];
    for (int k = 0; k < (int)n.inputs.size(); k++) {
      int v = n.inputs[k];
      if (v < 0 || op.prepares_input(k) || is_kv_input_[v]) continue;
      if (op.reads_on_host(k)) {
        if (!is_constant(v) && host_read_seen.insert(v).second) host_read_values_.push_back(v);
        OGX_CHECK(host_known_[v], n.describe(), ": input ", k, " must be known on the host (a constant or shape "
                  "value), but it is computed on the device");
      } else if (is_constant(v)) {
        device_constant(v);
      } else if (host_known_[v]) {
        step_value_uses_.push_back({v, {i, k}});
        if (step_seen.insert(v).second) step_values_.push_back({v, {i, k}});
      }
    }
    for (int v : n.inputs)  // (uploaded above where the op did not prepare it)
      if (v >= 0 && lazy_.count(v)) materialized_.erase(v);
  }
  split_weight_inputs();
  ctx_->transfers().flush();
  progress::report("uploading weights", upload_total, upload_total);
}

std::unique_ptr<DeviceOp> VulkanGraphSession::build_op(int i) {
  const Graph& g = model_->graph;
  const Node& n = g.nodes[i];
  OpBuildContext b{*ctx_, g, n, [&](int k) { return k < (int)n.inputs.size() ? constant(n.inputs[k]) : nullptr; },
                   [&](int k) -> const TensorView& { return device_constant(n.inputs[k]); },
                   [&](int k) { return weight_parts(k < (int)n.inputs.size() ? n.inputs[k] : -1); },
                   [&](int k) { return constant_shape(k < (int)n.inputs.size() ? n.inputs[k] : -1); },
                   [&](int k) {
                     OGX_CHECK(k < (int)n.inputs.size() && n.inputs[k] >= 0, n.describe(), ": no weight input ", k);
                     return matmul_weight(n.inputs[k]);
                   }};
  std::unique_ptr<DeviceOp> op;
  try {
    op = device_op_table().at({n.domain, n.op_type})(b);
  } catch (const Error& e) {
    std::string msg = e.what();
    throw Error(msg.find(n.name) == std::string::npos ? n.describe() + ": " + msg : msg);
  }
  for (int v : n.inputs)  // concatenated weights: on the device now, the host copy goes
    if (v >= 0 && lazy_.count(v)) materialized_.erase(v);
  return op;
}

std::vector<std::pair<std::string, double>> VulkanGraphSession::stats() const {
  std::set<const DeviceBuffer*> arenas;  // the prompt arena and older ones that kept plans still hold
  if (prompt_arena_) arenas.insert(prompt_arena_.get());
  for (const auto& [sig, plan] : plans_)
    if (plan->arena) arenas.insert(plan->arena.get());
  VkDeviceSize arena_bytes = 0;
  for (const DeviceBuffer* a : arenas) arena_bytes += a->size();
  std::set<const StepScratch*> scratches;  // the prompt steps' scratch (shared) as the kept plans hold it
  for (const auto& [sig, plan] : plans_)
    if (plan->prompt_step && plan->scratch) scratches.insert(plan->scratch.get());
  VkDeviceSize scratch_bytes = 0;
  for (const StepScratch* x : scratches) scratch_bytes += x->bytes();
  std::vector<std::pair<std::string, double>> s = {{"dispatches", (double)last_stats_.dispatches},
          {"prompt_arena_bytes", (double)arena_bytes},
          {"prompt_scratch_bytes", (double)scratch_bytes},
          {"barriers", (double)last_stats_.barriers},
          {"recordings", (double)recordings_},
          {"queued_runs", (double)queued_runs_},
          {"dropped_runs", (double)dropped_runs_},
          {"runs", (double)runs_},
          {"submits", (double)ctx_->submit_count()},
          {"device_bytes", (double)ctx_->memory().bytes_in_use()},
          {"kv_pool_blocks", (double)pool_->blocks_total()},
          {"kv_pool_blocks_held", (double)pool_->blocks_held()},
          {"kv_pool_block_bytes", (double)pool_->block_bytes()},
          {"kv_table_writes", (double)kv_table_writes_},
          {"last_rows_gathers", (double)last_rows_gathers_},
          {"fused_qkv", (double)fusions_.qkv},
          {"fused_rotary", (double)fusions_.rotary},
          {"fused_gate_up", (double)fusions_.gate_up},
          {"fused_norm", (double)fusions_.norm},
          {"load_context_ms", load_ms_.context},
          {"load_fuse_ms", load_ms_.fuse},
          {"load_fold_ms", load_ms_.fold},
          {"load_place_ms", load_ms_.place},
          {"load_ops_ms", load_ms_.ops},
          {"load_pipelines", load_ms_.pipelines},
          {"load_pipeline_ms", load_ms_.pipeline_ms},
          {"load_wait_ms", load_ms_.wait_ms},
          {"load_alloc_ms", load_ms_.alloc_ms},
          {"load_upload_bytes", (double)ctx_->transfers().uploaded_bytes()},
          {"load_upload_host_copy_ms", ctx_->transfers().host_copy_ms()},
          {"load_upload_wait_ms", ctx_->transfers().slot_wait_ms()},
          {"load_device_transposes", (double)device_transposed_.size()},
          {"load_host_transposes", (double)std::count_if(device_transposed_.begin(), device_transposed_.end(),
                                                         [&](auto& t) { return materialized_.count(t.first) > 0; })}};
  fallback_stats(s);
  weight_input_stats(s);
  auto median = [](std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : (double)v[v.size() / 2];
  };
  const std::string* steady_sig = nullptr;  // the most replayed signature: the decode step in a generation
  for (auto& [sig, st] : replay_stats_)
    if (!steady_sig || st.runs > replay_stats_.at(*steady_sig).runs) steady_sig = &sig;
  if (steady_sig) {
    const ReplayStats& steady = replay_stats_.at(*steady_sig);
    s.push_back({"replay_runs", steady.runs});
    s.push_back({"replay_run_us", steady.run_us / steady.runs});
    s.push_back({"replay_submit_wait_us", steady.wait_us / steady.runs});
    if (!steady.gpu_samples.empty()) {
      s.push_back({"replay_run_us_median", median(steady.run_samples)});
      s.push_back({"replay_gpu_us_median", median(steady.gpu_samples)});
    }
    if (auto pr = profile_stats_.find(*steady_sig); pr != profile_stats_.end())
      for (auto& [op, us] : pr->second.gpu_us) s.push_back({"gpu_us " + op, us / pr->second.runs});
  }
  // Every replayed plan with its run count and its first step value's shape (the input ids' [B, S]): "plan SHAPE
  // runs / run_us_median / gpu_us_median" (e.g. a speculative verify pass beside the one-token step).
  for (auto& [sig, st] : replay_stats_) {
    if (st.gpu_samples.empty()) continue;
    const size_t a = sig.find('['), b = sig.find(']', a);
    std::string name = "plan " + (a == std::string::npos || b == std::string::npos ? std::string("?")
                                                                                    : sig.substr(a, b - a + 1));
    const int same = (int)std::count_if(s.begin(), s.end(), [&](auto& kv) { return kv.first == name + " runs"; });
    if (same > 0) name += " #" + std::to_string(same + 1);  // e.g. the two plans of queued one-token steps
    s.push_back({name + " runs", st.runs});
    s.push_back({name + " run_us_median", median(st.run_samples)});
    s.push_back({name + " gpu_us_median", median(st.gpu_samples)});
  }
  // enable_pipeline_statistics: "pipeline NAME STATISTIC" of every pipeline built (NAME: shader variant and
  // specialization values, e.g. NVIDIA's "Register Count" of each matvec variant).
  for (const Pipeline* p : ctx_->pipelines().built())
    for (auto& st : p->statistics) s.push_back({"pipeline " + p->name + " " + st.name, st.value});
  const ProfileStats* longest = nullptr;  // the prompt in a generation
  auto step_us = [](const ProfileStats& st) { return st.gpu_us.at("(step total)") / st.runs; };
  for (auto& [sig, st] : profile_stats_)
    if (!longest || step_us(st) > step_us(*longest)) longest = &st;
  if (longest)
    for (auto& [op, us] : longest->gpu_us) s.push_back({"prompt_gpu_us " + op, us / longest->runs});
  return s;
}

}  // namespace ogx::vk::graph

namespace ogx::vk {
std::unique_ptr<Session> create_vulkan_session(std::shared_ptr<const Model> model, const SessionOptions& opts) {
  return std::make_unique<graph::VulkanGraphSession>(std::move(model), opts);
}
}  // namespace ogx::vk
