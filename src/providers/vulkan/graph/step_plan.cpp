// Recording one signature's step: shapes of every device value (pass 1), then activation memory assigned by
// liveness and every dispatch recorded into one command buffer (pass 2; one per device segment where CPU fallback
// stages split the step), ending with copies of the requested outputs into host-visible readback buffers.
#include <algorithm>
#include <numeric>

#include "common/log.h"
#include "providers/vulkan/graph/session_impl.h"
#include "providers/vulkan/kernels/layout.h"
#include "providers/vulkan/kernels/sampling.h"
#include "providers/vulkan/transfer.h"

namespace ogx::vk::graph {
namespace {

template <typename F>
void with_node_context(const Node& n, F&& f) {
  try {
    f();
  } catch (const Error& e) {
    std::string msg = e.what();
    throw Error(msg.find(n.name) == std::string::npos ? n.describe() + ": " + msg : msg);
  }
}

VkDeviceSize bytes_of(const TensorView& t) { return (VkDeviceSize)t.numel() * dtype_size(t.dtype); }

// The logits' producer may read only the last position of its input when it is a projection (applied row by row),
// also one with a folded norm (row by row too) whose residual output nobody reads. With a batch of B rows, each
// row's last position (every row's prompt ends at S - 1: a padded batch binds every position's logits).
bool reads_last_position_only(const Node& n, const TensorView& a) {
  bool projection = n.op_type == "MatMul" || n.op_type == "MatMulNBits" ||
                    (n.op_type == "NormProjection" && (n.outputs.size() < 2 || n.outputs[1] < 0));
  return projection && a.shape.size() == 3 && a.shape[0] >= 1 && a.shape[1] > 1;
}

// Position S - 1 of each row of a [B, S, K] view: a view for B = 1; for B > 1 the rows are not adjacent, and
// gather_last_rows copies them into step scratch (mem set there; here the shape only).
TensorView last_row(const TensorView& x, const TensorView& gathered) {
  int64_t B = x.shape[0], S = x.shape[1], K = x.shape[2];
  TensorView r = x;
  r.shape = {B, 1, K};
  VkDeviceSize row = (VkDeviceSize)K * dtype_size(x.dtype);
  if (B > 1) r.mem = gathered.mem;
  else if (x.mem.size) r.mem = x.mem.sub((VkDeviceSize)(S - 1) * row, row);
  return r;
}

}  // namespace

OpArgs VulkanGraphSession::make_args(Plan& p, int i, const std::vector<const Tensor*>& host) {
  const Node& n = model_->graph.nodes[i];
  DeviceOp& op = *ops_[i];
  OpArgs a;
  a.in.assign(n.inputs.size(), nullptr);
  a.host.assign(n.inputs.size(), nullptr);
  a.out.assign(n.outputs.size(), nullptr);
  for (size_t k = 0; k < n.inputs.size(); k++) {
    int v = n.inputs[k];
    if (v < 0) continue;
    a.host[k] = host[v];
    if (!op.prepares_input((int)k) && p.on_device[v]) a.in[k] = &p.views[v];
  }
  if (i == last_position_node_ && p.slice_last) {
    p.sliced_input = last_row(p.views[n.inputs[0]], p.sliced_input);
    a.in[0] = &p.sliced_input;
    if (n.op_type == "NormProjection" && a.in.size() > 1 && a.in[1]) {
      p.sliced_skip = last_row(*a.in[1], p.sliced_skip);
      a.in[1] = &p.sliced_skip;
    }
  }
  for (size_t k = 0; k < n.outputs.size(); k++)
    if (n.outputs[k] >= 0) a.out[k] = &p.views[n.outputs[k]];
  if (auto it = kv_slot_of_node_.find(i); it != kv_slot_of_node_.end() && it->second < (int)p.kv_pages.size())
    a.kv = &p.kv_pages[it->second];
  return a;
}

void VulkanGraphSession::set_kv_views(Plan& p, int64_t batch, int64_t capacity) {
  for (auto& [v, slot] : kv_value_) {
    const KvSlot& s = kv_[slot.first];
    // The shape the ops see; the memory is the slot's guard slice (the cache itself lives in the pool's blocks).
    p.views[v] = TensorView{kv_guard_.slice().sub((VkDeviceSize)(2 * slot.first + slot.second) * 256, 256), kv_dtype_,
                            {batch, s.kv_heads, capacity, kv_head_size_}};
    p.on_device[v] = 1;
  }
}

std::unique_ptr<Plan> VulkanGraphSession::build_plan(const std::vector<const Tensor*>& host,
                                                     const std::vector<int>& wanted, int64_t batch, int64_t capacity,
                                                     int fed, bool prompt_step) {
  const Graph& g = model_->graph;
  size_t nv = g.values.size();
  auto p = std::make_unique<Plan>();
  p->views.assign(nv, TensorView{});
  p->on_device.assign(nv, 0);
  for (auto& [v, view] : const_views_) {
    p->views[v] = view;
    p->on_device[v] = 1;
  }
  bind_constant_ifs(*p, host);
  for (auto& [v, use] : step_values_) {
    const Tensor* t = host[v];
    DType dt = ops_[use.first]->step_input_dtype(use.second, t->dtype());
    p->step_dtypes[v] = dt;
    p->views[v] = TensorView{{}, dt, t->shape()};
    p->on_device[v] = 1;
  }
  bind_weight_inputs(*p, host);
  if (kv_head_size_ > 0) {
    set_kv_views(*p, batch, capacity);
  } else {
    for (auto& [v, slot] : kv_value_) {
      p->views[v] = TensorView{{}, kv_dtype_, {batch, kv_[slot.first].kv_heads, 0, 0}};
      p->on_device[v] = 1;
    }
  }

  // Pass 1: shapes (a fallback stage's by running it over zeros).
  std::vector<char> alias(g.nodes.size(), 0);
  int64_t head_size = 0;
  size_t next_stage = 0;
  auto infer_stages_before = [&](size_t pos) {
    for (; next_stage < stages_.size() && stages_[next_stage].before == (int)pos; next_stage++)
      infer_stage(*p, stages_[next_stage], host);
  };
  for (size_t pos = 0; pos < device_nodes_.size(); pos++) {
    infer_stages_before(pos);
    int i = device_nodes_[pos];
    const Node& n = g.nodes[i];
    for (int v : n.outputs)
      if (v >= 0) p->on_device[v] = 1;
    if (i == last_position_node_) p->slice_last = !all_positions_ && reads_last_position_only(n, p->views[n.inputs[0]]);
    with_node_context(n, [&] {
      OpArgs a = make_args(*p, i, host);
      ops_[i]->infer(a);
    });
    alias[i] = ops_[i]->is_alias();
    if (n.op_type == "GroupQueryAttention" && head_size == 0)
      head_size = p->views[n.outputs[0]].shape.back() / n.attr_int("num_heads", 1);
  }
  infer_stages_before(device_nodes_.size());
  if (!kv_.empty() && kv_head_size_ == 0) {  // the first recorded step: the pool's block layout
    OGX_CHECK(head_size > 0, "cannot tell the attention head size");
    std::vector<int64_t> heads;
    for (const KvSlot& s : kv_) heads.push_back(s.kv_heads);
    pool_->configure(heads, head_size, kv_dtype_);
    kv_head_size_ = head_size;
    set_kv_views(*p, batch, capacity);
  }

  // Pass 2: memory by liveness, then record.
  std::vector<int> root(nv);
  std::iota(root.begin(), root.end(), 0);
  std::vector<int> last_use(nv, -1);
  for (size_t pos = 0; pos < device_nodes_.size(); pos++) {
    const Node& n = g.nodes[device_nodes_[pos]];
    if (alias[device_nodes_[pos]] && n.outputs[0] >= 0) root[n.outputs[0]] = root[n.inputs[0]];
    for (int v : n.inputs)
      if (v >= 0) last_use[root[v]] = (int)pos;
  }
  for (const FallbackStage& st : stages_)  // read back at the end of the segment before the stage
    for (int v : st.reads) last_use[root[v]] = std::max(last_use[root[v]], st.before);
  if (p->slice_last && p->views[g.nodes[last_position_node_].inputs[0]].shape[0] > 1)  // (last_rows reads them)
    for (size_t pos = 0; pos < device_nodes_.size(); pos++)
      if (device_nodes_[pos] == last_position_node_)
        for (int v : {seqlens_value_, total_len_value_})
          if (v >= 0) last_use[root[v]] = std::max(last_use[root[v]], (int)pos);
  std::vector<char> pinned(nv, 0);
  for (int v : wanted) pinned[root[v]] = 1;
  if (last_position_value_ >= 0) pinned[root[last_position_value_]] = 1;  // read_last_output / sampling read it
  // Activation memory: slots assigned by liveness (a value takes a free slot of up to twice its size, else a new
  // one), first without memory, so that a prompt step's slots can be laid out in the session's prompt arena.
  std::vector<VkDeviceSize> slot_bytes;
  std::vector<std::string> slot_name;  // the first value in each (errors name it)
  std::multimap<VkDeviceSize, size_t> free_list;  // bytes -> slot
  std::vector<int> buf_of(nv, -1), slot_of(nv, -1);
  auto take_slot = [&](int v) {
    VkDeviceSize bytes = bytes_of(p->views[v]);
    auto it = free_list.lower_bound(bytes);
    size_t idx;
    if (it != free_list.end() && it->first <= 2 * bytes + (64 << 10)) {
      idx = it->second;
      free_list.erase(it);
    } else {
      slot_bytes.push_back((std::max<VkDeviceSize>(bytes, 256) + 255) / 256 * 256);
      slot_name.push_back(g.values[v].name);
      idx = slot_bytes.size() - 1;
    }
    buf_of[v] = slot_of[v] = (int)idx;
  };
  auto release = [&](int r) {
    if (buf_of[r] < 0 || pinned[r]) return;
    free_list.emplace(slot_bytes[(size_t)buf_of[r]], (size_t)buf_of[r]);
    buf_of[r] = -1;
  };
  {
    size_t stage = 0;
    auto stage_writes_before = [&](size_t pos) {
      for (; stage < stages_.size() && stages_[stage].before == (int)pos; stage++)
        for (int v : stages_[stage].writes) take_slot(v);
    };
    for (size_t pos = 0; pos < device_nodes_.size(); pos++) {
      stage_writes_before(pos);
      int i = device_nodes_[pos];
      const Node& n = g.nodes[i];
      for (size_t k = 0; k < n.outputs.size(); k++) {
        int v = n.outputs[k];
        if (v < 0 || kv_value_.count(v) || (alias[i] && k == 0)) continue;
        take_slot(v);
      }
      for (int v : n.inputs)
        if (v >= 0 && last_use[root[v]] == (int)pos) release(root[v]);
      for (int v : n.outputs)
        if (v >= 0 && root[v] == v && last_use[v] < 0) release(v);
    }
    stage_writes_before(device_nodes_.size());
  }
  std::vector<BufferSlice> slot_mem(slot_bytes.size());
  // Prompt steps share the session's scratch (a 2,048-token chunk of the 1B: ~110 MB of norm outputs, gate/up
  // products and attention workspace, held by each prompt plan before); like the arena, a new one is the session's
  // once the step is recorded.
  p->scratch = prompt_step && prompt_scratch_ ? prompt_scratch_ : std::make_shared<StepScratch>();
  if (prompt_step) {  // one arena for every prompt step: they run one at a time (run() waits for each)
    VkDeviceSize total = 0;
    for (VkDeviceSize b : slot_bytes) total += b;
    // A larger step: a larger arena, the session's once the step is recorded (a step that fails to record, e.g.
    // out of device memory, leaves none behind); plans recorded in the smaller one keep it alive.
    p->arena = prompt_arena_ && prompt_arena_->size() >= total
                   ? prompt_arena_
                   : std::make_shared<DeviceBuffer>(
                         ctx_->memory().allocate("prompt step activations", std::max<VkDeviceSize>(total, 256)));
    VkDeviceSize at = 0;
    for (size_t s = 0; s < slot_bytes.size(); s++) {
      slot_mem[s] = p->arena->slice().sub(at, slot_bytes[s]);
      at += slot_bytes[s];
    }
  } else {
    for (size_t s = 0; s < slot_bytes.size(); s++) {
      p->buffers.push_back(ctx_->memory().allocate(slot_name[s], slot_bytes[s]));
      slot_mem[s] = p->buffers.back().slice();
    }
  }
  for (size_t v = 0; v < nv; v++)  // (views of an alias op's output are its input's, set as the step is recorded)
    if (slot_of[v] >= 0) p->views[v].mem = slot_mem[(size_t)slot_of[v]].sub(0, bytes_of(p->views[v]));
  VkDeviceSize step_bytes = 0;
  for (auto& [v, use] : step_values_) {
    p->step_offsets[v] = step_bytes;
    step_bytes += (bytes_of(p->views[v]) + 255) / 256 * 256;
  }
  VkDeviceSize table_bytes = 0;
  if (!kv_.empty()) {  // the block table, a step value too
    p->kv_max_blocks = capacity / kKvBlock;
    p->kv_table_offset = step_bytes;
    table_bytes = (VkDeviceSize)(batch * pool_->max_heads() * p->kv_max_blocks) * 8;
    step_bytes += (table_bytes + 255) / 256 * 256;
  }
  p->rec = std::make_unique<CommandRecorder>(*ctx_);
  p->rec->begin();
  if (step_bytes) {
    p->step_host = HostVisibleBuffer::device_local_if_possible(ctx_->memory(), "step values (host)", step_bytes);
    BufferSlice read_from = p->step_host.slice();
    if (!p->step_host.device_local() || !step_values_in_place_) {
      p->step_device = ctx_->memory().allocate("step values", step_bytes);
      read_from = p->step_device.slice();
      p->rec->copy(p->step_host.slice(), read_from.sub(0, step_bytes));
    }
    for (auto& [v, off] : p->step_offsets) p->views[v].mem = read_from.sub(off, bytes_of(p->views[v]));
    for (size_t slot = 0; slot < kv_.size(); slot++) {
      kernels::KvPages pages;
      pages.table = read_from.sub(p->kv_table_offset, table_bytes);
      pages.k_off = pool_->key_offset(slot);
      pages.v_off = pool_->value_offset(slot);
      p->kv_pages.push_back(pages);
    }
  }
  if (fed >= 0) {  // the token ids sampled by the step before this one (queue_next checked the dtype and size)
    p->fed_value = fed;
    p->views[fed].mem = token_device_.slice().sub(0, bytes_of(p->views[fed]));
  }
  if (profile_) p->rec->write_timestamp(query_pool_.pool, 0);
  if (ctx_->info().timestamp_period > 0) {
    p->step_pool.create(ctx_->device(), 2);
    p->rec->write_timestamp(p->step_pool.pool, 0);
  }
  // A fallback stage ends the current segment (copying what the stage reads into readback buffers) and opens the next
  // (copying the stage's outputs that device nodes read into device memory).
  next_stage = 0;
  auto cut_before = [&](size_t pos) {
    for (; next_stage < stages_.size() && stages_[next_stage].before == (int)pos; next_stage++) {
      const FallbackStage& st = stages_[next_stage];
      Plan::StageIo io;
      for (int v : st.reads) {
        VkDeviceSize bytes = bytes_of(p->views[v]);
        HostVisibleBuffer rb(ctx_->memory(), "fallback read of " + g.values[v].name, std::max<VkDeviceSize>(bytes, 16),
                             true);
        if (bytes) p->tail().copy(p->views[v].mem, rb.slice().sub(0, bytes));
        io.reads.push_back({v, std::move(rb)});
        p->fallback_bytes += bytes;
      }
      p->tail().end();
      io.rec = std::make_unique<CommandRecorder>(*ctx_);
      io.rec->begin();
      for (int v : st.writes) {
        VkDeviceSize bytes = bytes_of(p->views[v]);
        HostVisibleBuffer up(ctx_->memory(), "fallback write of " + g.values[v].name, std::max<VkDeviceSize>(bytes, 16));
        if (bytes) io.rec->copy(up.slice().sub(0, bytes), p->views[v].mem);
        io.writes.push_back({v, std::move(up)});
        p->fallback_bytes += bytes;
      }
      p->stages.push_back(std::move(io));
    }
  };
  for (size_t pos = 0; pos < device_nodes_.size(); pos++) {
    cut_before(pos);
    int i = device_nodes_[pos];
    const Node& n = g.nodes[i];
    if (const int v = n.outputs.empty() ? -1 : n.outputs[0]; alias[i] && v >= 0 && !kv_value_.count(v)) {
      const TensorView& src = p->views[n.inputs[0]];
      OGX_CHECK(bytes_of(src) == bytes_of(p->views[v]), n.describe(), ": view changes the byte size");
      p->views[v].mem = src.mem;
    }
    with_node_context(n, [&] {
      if (i == last_position_node_ && p->slice_last) gather_last_rows(*p, n);
      OpArgs a = make_args(*p, i, host);
      ops_[i]->record(p->tail(), a, *p->scratch);
    });
    if (profile_) p->tail().write_timestamp(query_pool_.pool, (uint32_t)pos + 1);
  }
  cut_before(device_nodes_.size());
  if (sampling_ && last_position_value_ >= 0 && p->on_device[last_position_value_]) {
    record_sampling(*p, batch);
    if (profile_ && p->samples) p->tail().write_timestamp(query_pool_.pool, (uint32_t)device_nodes_.size() + 1);
  }
  for (int v : wanted) {
    if (!p->on_device[v] || stage_output_[v]) continue;  // a stage's output: the host has it
    VkDeviceSize bytes = bytes_of(p->views[v]);
    HostVisibleBuffer rb(ctx_->memory(), "readback of " + g.values[v].name, std::max<VkDeviceSize>(bytes, 16), true);
    p->tail().copy(p->views[v].mem, rb.slice().sub(0, bytes));
    p->readbacks.push_back({v, std::move(rb)});
  }
  if (p->step_pool.pool) p->tail().write_timestamp(p->step_pool.pool, 1);
  if (p->arena) prompt_arena_ = p->arena;  // (recorded: the arena of the next prompt steps)
  if (prompt_step) prompt_scratch_ = p->scratch;
  p->tail().end();
  if (!p->stages.empty()) {  // the cost in bytes, once as a warning (with the load-time one), then per recording
    std::string msg = "vulkan: CPU fallback copies " + std::to_string(p->fallback_bytes) + " bytes per run of a step "
                      "of batch " + std::to_string(batch) + " at KV capacity " + std::to_string(capacity);
    if (fallback_bytes_told_) log_info(msg);
    else log_warning(msg);
    fallback_bytes_told_ = true;
  }
  return p;
}

// For a batch's logits from each row's last position only: those rows of the producer's input (and of a folded
// norm's skip) copied next to each other into step scratch, recorded before the node (make_args takes them).
void VulkanGraphSession::gather_last_rows(Plan& p, const Node& n) {
  p.sliced_input.mem = {};
  p.sliced_skip.mem = {};
  const TensorView& x = p.views[n.inputs[0]];
  if (x.shape[0] < 2) return;
  // Each row's last real position by the attention's lengths (a right-padded prompt's rows end early), else S - 1.
  const bool lengths = seqlens_value_ >= 0 && total_len_value_ >= 0 && p.on_device[seqlens_value_] &&
                       p.on_device[total_len_value_];
  auto gather = [&](const TensorView& from, const char* key) {
    const int64_t B = from.shape[0], S = from.shape[1];
    const VkDeviceSize row = (VkDeviceSize)from.shape[2] * dtype_size(from.dtype);
    BufferSlice dst = p.scratch->buffer(*ctx_, key, std::max<VkDeviceSize>(B * row, 256)).slice().sub(0, B * row);
    TensorView y{dst, from.dtype, {B, 1, from.shape[2]}};
    if (lengths) {
      kernels::last_rows(p.tail(), from, p.views[seqlens_value_], p.views[total_len_value_], y);
      return y;
    }
    for (int64_t b = 0; b < B; b++)
      p.tail().copy(from.mem.sub((VkDeviceSize)(b * S + S - 1) * row, row), dst.sub((VkDeviceSize)b * row, row));
    return y;
  };
  p.sliced_input = gather(x, "last rows");
  last_rows_gathers_++;
  if (n.op_type == "NormProjection" && n.inputs.size() > 1 && n.inputs[1] >= 0 && p.on_device[n.inputs[1]])
    p.sliced_skip = gather(p.views[n.inputs[1]], "last rows of the skip");
}

// The next token from the last position of the logits, on the device: [B, V] rows into int64 [B], copied back.
void VulkanGraphSession::record_sampling(Plan& p, int64_t batch) {
  const TensorView& l = p.views[last_position_value_];
  if (l.shape.size() != 3 || (l.shape[0] > 1 && l.shape[1] > 1)) return;  // rows not contiguous: host sampling
  int64_t B = l.shape[0], S = l.shape[1], V = l.shape[2];
  size_t es = dtype_size(l.dtype);
  TensorView rows = l;
  rows.shape = {B, V};
  rows.mem = l.mem.sub((VkDeviceSize)((S - 1) * V) * es, (VkDeviceSize)(B * V) * es);
  OGX_CHECK(B <= kMaxSampleRows, "device sampling: batch ", B, " exceeds ", kMaxSampleRows);
  if (!token_device_.size()) token_device_ = ctx_->memory().allocate("sampled tokens", kMaxSampleRows * 8);
  if (sampling_params_.logit_edits) {  // the picks read a copy with each row's penalties and bans applied
    OGX_CHECK(logit_edit_capacity_ > 0, "device sampling with logit edits: set_logit_edits was not called");
    p.edited_logits = ctx_->memory().allocate("edited logits", (VkDeviceSize)(B * V * 4));
    TensorView edited = p.edited_logits.view(DType::f32, {B, V});
    const int64_t words = kernels::logit_edit_words(logit_edit_capacity_);
    p.edits = HostVisibleBuffer(ctx_->memory(), "logit edits", (VkDeviceSize)words * 4);
    // (a pending row's token: the one the step before picked, which token_device_ holds until this step's pick)
    kernels::edit_logits(p.tail(), rows, p.edits.view(DType::i32, {words}),
                         token_device_.view(DType::i64, {kMaxSampleRows}), edited);
    rows = edited;
  }
  if (sampling_params_.beam_candidates > 0) {  // beam search: each row's statistics and best logits come back
    const int64_t K = std::min<int64_t>(sampling_params_.beam_candidates, V);
    const int64_t words = B * kernels::beam_candidate_words(K);
    p.token_host =
        HostVisibleBuffer(ctx_->memory(), "beam candidates (host)", std::max<VkDeviceSize>(words * 4, 256), true);
    TensorView mask;
    if (sampling_params_.token_mask) {  // (below min_length: EOS banned)
      ensure_token_mask((V + 31) / 32);
      mask = token_mask_.view(DType::i32, {B, token_mask_words_});
    }
    kernels::beam_candidates(p.tail(), rows, K, p.token_host.view(DType::i32, {words}),
                             sampling_params_.token_mask ? &mask : nullptr);
    p.samples = true;
    p.sample_rows = B;
    p.beam_k = K;
    p.beam_vocab = V;
    return;
  }
  if (!rng_.size()) rng_ = ctx_->memory().allocate("sampling state", kMaxSampleRows * 4);  // seeded by bind_rng
  p.token_host = HostVisibleBuffer(ctx_->memory(), "sampled tokens (host)", std::max<VkDeviceSize>(B * 8, 256), true);
  const kernels::SamplingParams sp = kernel_sampling(sampling_params_);
  TensorView tokens = token_device_.view(DType::i64, {B});
  TensorView host_tokens = p.token_host.view(DType::i64, {B});
  // One scratch for every recorded step (any batch) of this model's vocabulary; allocated once, since recorded steps
  // keep its address (a larger V later, which one model does not have, is refused).
  int64_t scratch_words = kernels::argmax_scratch_words(kMaxSampleRows, V);
  if (!argmax_scratch_.size()) {
    argmax_scratch_ = ctx_->memory().allocate("argmax scratch", (VkDeviceSize)scratch_words * 4);
    ctx_->transfers().fill_zero(argmax_scratch_.slice());
    ctx_->transfers().flush();
  }
  OGX_CHECK((VkDeviceSize)scratch_words * 4 <= argmax_scratch_.size(), "device sampling: logits of ", V,
            " tokens do not fit the sampling scratch made for an earlier step");
  TensorView scratch = argmax_scratch_.view(DType::i32, {scratch_words});
  TensorView mask;
  if (sampling_params_.token_mask) {
    ensure_token_mask((V + 31) / 32);
    mask = token_mask_.view(DType::i32, {B, token_mask_words_});
  }
  TensorView row_params;
  if (row_sampling_) row_params = row_params_.view(DType::i32, {B, 4});  // written by prepare() before each run
  if (p.fed_value >= 0) {  // a queued step: keeps the random state it starts from (drop_queued restores it)
    p.rng_before = ctx_->memory().allocate("sampling state before a queued step", kMaxSampleRows * 4);
    p.tail().copy(rng_.slice(), p.rng_before.slice());
  }
  kernels::sample_tokens(p.tail(), sp, rows, tokens, rng_.view(DType::i32, {B}), &host_tokens, &scratch,
                         sampling_params_.token_mask ? &mask : nullptr, row_sampling_ ? &row_params : nullptr);
  p.samples = true;
  p.sample_rows = B;
  (void)batch;
}

void VulkanGraphSession::write_steps(Plan& p, const std::vector<const Tensor*>& host,
                                     const std::vector<uint64_t>& kv_table) {
  p.rec->wait();  // kernels may read step_host until the plan's previous submission completes
  if (p.edits.slice().size) {  // this run's logit edits (set_logit_edits before it)
    OGX_CHECK(!staged_edits_.empty(), "device sampling with logit edits: set_logit_edits was not called");
    OGX_CHECK(staged_edits_.size() * 4 <= p.edits.slice().size, "logit edits: more than the step was recorded for");
    p.edits.write(staged_edits_.data(), (VkDeviceSize)(staged_edits_.size() * 4));
    staged_edits_.clear();  // (each run sets its own)
  }
  if (!kv_table.empty()) {
    p.step_host.write(kv_table.data(), kv_table.size() * 8, p.kv_table_offset);
    kv_table_writes_++;
  }
  for (auto& [v, off] : p.step_offsets) {
    if (v == p.fed_value) continue;  // read from token_device_
    const Tensor* t = host[v];
    DType dt = p.step_dtypes[v];
    OGX_CHECK(t->shape() == p.views[v].shape, "step value '", model_->graph.values[v].name, "' changed shape");
    if (t->dtype() == dt) {
      p.step_host.write(t->raw(), t->bytes(), off);
      continue;
    }
    OGX_CHECK(dt == DType::i64 || dt == DType::i32, "cannot convert '", model_->graph.values[v].name, "' from ",
              dtype_name(t->dtype()), " to ", dtype_name(dt));
    std::vector<char> tmp((size_t)t->numel() * dtype_size(dt));
    for (int64_t i = 0; i < t->numel(); i++) {
      if (dt == DType::i64) reinterpret_cast<int64_t*>(tmp.data())[i] = t->get_i64(i);
      else reinterpret_cast<int32_t*>(tmp.data())[i] = (int32_t)t->get_i64(i);
    }
    p.step_host.write(tmp.data(), tmp.size(), off);
  }
  refresh_weight_inputs(p, host);
}

}  // namespace ogx::vk::graph
