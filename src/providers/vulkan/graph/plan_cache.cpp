// The plan cache of the Vulkan session: each run is prepared (inputs checked, the host part run, the signature of
// its shapes found), its plan (the recorded step, step_plan.cpp) looked up or recorded, the KV states it names
// bound (decode_loop.cpp), then replayed with the step values written; complete() keeps the stats, the last plan and
// the sampled tokens. Plans are kept by signature, the least recently used dropped past kMaxPlans; recording a
// prompt's step (more than kFewPositions tokens per row) drops the other prompt steps but the most recently used,
// so at most two prompt steps' activations are held.
#include <algorithm>
#include <chrono>
#include <sstream>

#include "providers/vulkan/graph/session_impl.h"

namespace ogx::vk::graph {
namespace {
constexpr size_t kMaxPlans = 6;  // recorded signatures kept (decode, two queued decode plans, recent prompts)
constexpr int64_t kFewPositions = 16;  // positions per row up to which a run is not a prompt's (a verify pass)
}  // namespace

VulkanGraphSession::Prepared VulkanGraphSession::prepare(const std::vector<NamedTensor>& inputs,
                                                         const std::vector<std::string>& output_names, int fed,
                                                         const DecodeRun& r) {
  const Graph& g = model_->graph;
  // Inputs, checked like the CPU executor checks them.
  Prepared pr;
  std::vector<const Tensor*>& host = pr.host;
  host.assign(g.values.size(), nullptr);
  for (size_t v = 0; v < g.values.size(); v++) host[v] = known_constant((int)v);
  for (auto& [name, t] : inputs) {
    int v = g.find(name);
    const ValueInfo* info = g.input_info(name);
    OGX_CHECK(v >= 0 && info, "'", name, "' is not an input of the model");
    OGX_CHECK(!is_kv_input_[v], "the vulkan provider keeps the KV cache on the device: do not pass '", name, "'");
    OGX_CHECK(info->dtype == DType::undefined || info->dtype == t.dtype(), "input '", name, "' must be ",
              dtype_name(info->dtype), ", got ", dtype_name(t.dtype()));
    OGX_CHECK(!info->has_shape || info->shape.size() == t.shape().size(), "input '", name, "' must have rank ",
              info->shape.size(), ", got ", shape_str(t.shape()));
    host[v] = &t;
  }
  for (size_t i = 0; i < g.input_ids.size(); i++) {
    const int v = g.input_ids[i];
    if (!host[v] && !is_kv_input_[v] && !g.values[v].constant.empty()) host[v] = &g.values[v].constant;  // default
    OGX_CHECK(host[v] || is_kv_input_[v], "missing model input '", g.inputs[i].name, "'");
  }
  // The host part.
  if (!host_->empty()) pr.host_vals = host_->run(inputs);
  for (size_t i = 0; i < host_outputs_.size(); i++) host[host_outputs_[i]] = &pr.host_vals[i];
  // The batch (of seqlens_k) and total_sequence_length: the block table's shape.
  int64_t batch = 1, total = 0;
  if (!kv_.empty()) {
    OGX_CHECK(total_len_value_ >= 0 && host[total_len_value_], "GroupQueryAttention's total_sequence_length must be "
              "computable on the host");
    total = host[total_len_value_]->get_i64(0);
    const Node& n = g.nodes[kv_[0].node];
    if (n.inputs.size() > 5 && n.inputs[5] >= 0 && host[n.inputs[5]]) batch = host[n.inputs[5]]->numel();
    OGX_CHECK(total > 0, "total_sequence_length must be positive, got ", total);
    int64_t rows = 0;
    for (const KvRows& k : r.kv) {
      OGX_CHECK(k.state, "a decode run names no KV state");
      rows += k.state->rows();
      OGX_CHECK(k.total >= 1 && k.total <= total, "a KV state's length after the run (", k.total, ") must be in [1, ",
                "total_sequence_length ", total, "]");
    }
    OGX_CHECK(rows == batch, "the run's KV states hold ", rows, " rows, its inputs ", batch);
  }
  sampling_ = r.sampling != nullptr;
  row_sampling_ = false;
  std::vector<uint64_t> seeds;  // per KV state: the seed of its rows' random state
  bool any_sampled = false;     // some row samples (not argmax): the random states are bound
  if (sampling_) {
    OGX_CHECK(can_sample(*r.sampling, batch), "device sampling of ", batch, " rows: top_p must be in (0, 1], "
              "temperature > 0, top_k >= 0, at most ", kMaxSampleRows, " rows");
    sampling_params_ = *r.sampling;
    std::vector<const DeviceSampling*> of_state;  // per KV state: how its rows pick
    for (const KvRows& k : r.kv) of_state.push_back(k.sampling ? k.sampling : r.sampling);
    for (const KvRows& k : r.kv) row_sampling_ = row_sampling_ || k.sampling != nullptr;
    any_sampled = !sampling_params_.greedy;
    for (const DeviceSampling* s : of_state) {
      seeds.push_back(s->seed);
      any_sampled = any_sampled || !s->greedy;
    }
    if (row_sampling_) {  // each row's settings, read by the sampling kernel when the step runs (not recorded)
      // (with the run's token mask: every row's reads of its logits go through the mask, whatever its settings)
      if (!row_params_.slice().size)
        row_params_ = HostVisibleBuffer(ctx_->memory(), "sampling settings per row", kMaxSampleRows * 16);
      std::vector<uint32_t> words((size_t)(batch * 4), 0);
      int64_t row = 0;
      for (size_t j = 0; j < r.kv.size(); j++) {
        const DeviceSampling& s = *of_state[j];
        OGX_CHECK(can_sample(s, batch) && (!s.token_mask || sampling_params_.token_mask), "device sampling of a "
                  "decode run's rows: top_p must be in (0, 1], temperature > 0, top_k >= 0, a token mask only with the "
                  "run's");
        const kernels::SamplingParams sp = kernel_sampling(s);
        for (int i = 0; i < r.kv[j].state->rows(); i++, row++) kernels::write_row_params(sp, &words[(size_t)(row * 4)]);
      }
      row_params_.write(words.data(), (VkDeviceSize)(words.size() * 4));
      sampling_params_.greedy = true;  // the recorded kernel's default; each row's own settings come from row_params_
    }
  }
  // Requested outputs and the signature of this run.
  std::vector<int> wanted;
  std::ostringstream sig;  // after the batch/capacity prefix
  for (const std::string& name : output_names) {
    int v = g.find(name);
    OGX_CHECK(v >= 0 && g.output_info(name), "'", name, "' is not an output of the model");
    if (kv_value_.count(v)) continue;  // present caches stay on the device
    wanted.push_back(v);
    sig << " out" << v;
  }
  for (auto& sv : step_values_) {
    const Tensor* t = host[sv.first];
    OGX_CHECK(t, "host value '", g.values[sv.first].name, "' was not computed");
    sig << " s" << sv.first << dtype_name(t->dtype()) << shape_str(t->shape());
  }
  // Host values are checked where the op needs it (token ids against the table), as the CPU kernels check them.
  for (auto& [v, use] : step_value_uses_)
    if (host[v]) ops_[use.first]->check_step_input(use.second, *host[v]);
  if (sampling_) {  // (per-row settings are read when the step runs; whether it edits logits, and for how many
                    // edits, is recorded: a plan without the edits kernel would sample unedited logits)
    if (row_sampling_)
      sig << " sample_rows";
    else
      sig << " sample" << sampling_params_.greedy << "," << sampling_params_.top_k << "," << sampling_params_.top_p
          << "," << sampling_params_.temperature << (sampling_params_.token_mask ? ",mask" : "") << ",beams"
          << sampling_params_.beam_candidates;
    sig << ",edits" << (sampling_params_.logit_edits ? logit_edit_capacity_ : -1);
  }
  sig << weight_input_signature(host);
  for (int v : host_read_values_) {
    sig << " h" << v << shape_str(host[v]->shape()) << "=";
    for (int64_t x : host[v]->to_i64_vector()) sig << x << ",";
  }
  if (fed >= 0) sig << " fed" << fed << "," << fed_parity_;  // two plans: a queued step and the one before it
  if (all_positions_) sig << " all_positions";
  sig << constant_if_signature(host);
  // A prompt (or a chunk of one): some row takes more than kFewPositions positions (a queued step takes one after
  // the pending one, which the state does not count yet). Runs of up to kFewPositions per row (a speculative verify
  // pass, a draft model catching up, a short prompt) hold small activations and come back every round: they are
  // kept like one-token steps (their recordings not dropped by the next prompt's, their capacity in steps of 256).
  int64_t most_new = 0;
  for (const KvRows& k : r.kv) most_new = std::max<int64_t>(most_new, k.total - k.state->length());
  const bool prompt_step = fed < 0 && most_new > kFewPositions;
  const int64_t capacity = kv_capacity(total, prompt_step);
  auto key = [&] { return "B" + std::to_string(batch) + " cap" + std::to_string(capacity) + sig.str(); };
  auto it = plans_.find(key());
  if (it == plans_.end()) {
    if (plans_.size() >= kMaxPlans) {
      auto oldest = std::min_element(plans_.begin(), plans_.end(), [&](auto& a, auto& b) {
        return std::make_pair(is_queued(a.second.get()), a.second->last_used) <
               std::make_pair(is_queued(b.second.get()), b.second->last_used);
      });
      if (is_queued(oldest->second.get())) return pr;  // every plan is in flight (a guard: at most 2 are)
      ctx_->wait_idle();
      if (oldest->second.get() == last_plan_) last_plan_ = nullptr;
      plans_.erase(oldest);
      if (prompt_arena_ && prompt_arena_.use_count() == 1) prompt_arena_.reset();  // no prompt step left in it
      if (prompt_scratch_ && prompt_scratch_.use_count() == 1) prompt_scratch_.reset();
    }
    if (prompt_step) {  // prompt steps hold the largest activations: besides the new one, only the most
      Plan* keep = nullptr;  // recently used (another prompt whose chunks interleave with this one's, as ogx serve runs)
      for (auto& [sig_of, plan] : plans_)
        if (plan->prompt_step && (!keep || plan->last_used > keep->last_used)) keep = plan.get();
      for (auto o = plans_.begin(); o != plans_.end();) {
        if (!o->second->prompt_step || o->second.get() == keep || is_queued(o->second.get())) {
          ++o;
          continue;
        }
        ctx_->wait_idle();
        if (o->second.get() == last_plan_) last_plan_ = nullptr;
        o = plans_.erase(o);
      }
    }
    auto plan = build_plan(host, wanted, batch, capacity, fed, prompt_step);  // fixes the KV pool's layout (first run)
    plan->prompt_step = prompt_step;
    plan->signature = key();
    recordings_++;
    pr.recorded = true;
    it = plans_.emplace(plan->signature, std::move(plan)).first;
  }
  pr.plan = it->second.get();
  pr.plan->last_used = runs_;
  if (!kv_.empty()) bind_kv(r, batch, total, *pr.plan, pr.kv_table, pr.rows);  // throws before anything ran
  if (sampling_ && any_sampled) bind_rng(pr.rows, seeds);
  return pr;
}

void VulkanGraphSession::run(const std::vector<NamedTensor>& inputs, std::vector<NamedTensor>& outputs) {
  OGX_CHECK(kv_.empty(), "this model's KV cache lives on the vulkan device: run it through Session::decoder() with a "
            "KV state (as the generator does)");
  run(inputs, outputs, DecodeRun{});
}

void VulkanGraphSession::run(const std::vector<NamedTensor>& inputs, std::vector<NamedTensor>& outputs,
                             const DecodeRun& r) {
  drop_queued();
  const Graph& g = model_->graph;
  auto t_start = std::chrono::steady_clock::now();
  std::vector<std::string> names;
  for (auto& [name, t] : outputs) {
    names.push_back(name);
    // The caller bound last_position_output for every position (speculative verification): no last-row slicing.
    if (!t.empty() && t.rank() == 3 && t.dim(1) > 1 && name == opts_.last_position_output) all_positions_ = true;
  }
  Prepared pr = [&] {
    struct Reset {
      bool& flag;
      ~Reset() { flag = false; }
    } reset{all_positions_};
    return prepare(inputs, names, -1, r);
  }();
  runs_++;
  Plan& p = *pr.plan;
  write_steps(p, pr.host, pr.kv_table);
  auto t_submit = std::chrono::steady_clock::now();
  p.rec->run();
  if (!p.stages.empty()) run_stages(p, pr.host, pr.stage_vals);
  auto t_done = std::chrono::steady_clock::now();
  for (const KvRows& k : r.kv) static_cast<VulkanKvState*>(k.state)->set_length(k.total);
  complete(p, !pr.recorded, t_start, t_done - t_submit, pr.rows);
  // Outputs.
  for (auto& [name, t] : outputs) {
    int v = g.find(name);
    if (kv_value_.count(v)) {
      t = Tensor();
      continue;
    }
    if (pr.host[v] && (!p.on_device[v] || stage_output_[v])) {
      t = *pr.host[v];
      continue;
    }
    for (auto& rb : p.readbacks)
      if (rb.value == v) {
        const TensorView& view = p.views[v];
        Tensor out(view.dtype, view.shape);
        rb.buf.read(out.raw(), out.bytes());
        t = std::move(out);
      }
  }
  if (!graph_capture_) {  // kept until the next run so read_last_output still works
    auto it = plans_.find(p.signature);
    retired_plan_ = std::move(it->second);
    plans_.erase(it);
  }
}

void VulkanGraphSession::complete(Plan& p, bool replayed, std::chrono::steady_clock::time_point t_start,
                                  std::chrono::steady_clock::duration wait, const std::vector<RunRows>& rows) {
  last_rows_ = rows;
  last_stats_ = p.rec->stats();
  for (const Plan::StageIo& io : p.stages) {  // the segments after fallback stages
    last_stats_.dispatches += io.rec->stats().dispatches;
    last_stats_.barriers += io.rec->stats().barriers;
  }
  last_fallback_bytes_ = p.fallback_bytes;
  if (profile_) collect_profile(profile_stats_[p.signature], p.samples);
  last_plan_ = &p;
  last_tokens_.assign(p.samples && !p.beam_k ? (size_t)p.sample_rows : 0, -1);
  if (p.samples && !p.beam_k) p.token_host.read(last_tokens_.data(), (VkDeviceSize)p.sample_rows * 8);
  last_beam_k_ = p.samples ? p.beam_k : 0;
  last_beam_vocab_ = p.beam_vocab;
  last_beam_.assign(last_beam_k_ ? (size_t)(p.sample_rows * kernels::beam_candidate_words(p.beam_k)) : 0, 0u);
  if (last_beam_k_) p.token_host.read(last_beam_.data(), (VkDeviceSize)(last_beam_.size() * 4));
  if (!replayed) return;
  using us = std::chrono::duration<double, std::micro>;
  ReplayStats& st = replay_stats_[p.signature];
  st.runs += 1;
  double run_us = us(std::chrono::steady_clock::now() - t_start).count();
  st.run_us += run_us;
  st.wait_us += us(wait).count();
  uint64_t ts[2];
  if (p.step_pool.pool && st.run_samples.size() < 4096 &&
      vkGetQueryPoolResults(ctx_->device(), p.step_pool.pool, 0, 2, sizeof(ts), ts, 8, VK_QUERY_RESULT_64_BIT) ==
          VK_SUCCESS) {
    st.run_samples.push_back((float)run_us);
    st.gpu_samples.push_back((float)((double)(ts[1] - ts[0]) * ctx_->info().timestamp_period * 1e-3));
  }
}

void VulkanGraphSession::collect_profile(ProfileStats& st, bool sampled) {
  st.runs += 1;
  uint32_t n = query_count_ - (sampled ? 0 : 1);  // the sampling timestamp was written only when it sampled
  std::vector<uint64_t> ts(n);
  OGX_VK(vkGetQueryPoolResults(ctx_->device(), query_pool_.pool, 0, n, ts.size() * 8, ts.data(), 8,
                               VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
  double tick_us = ctx_->info().timestamp_period * 1e-3;
  for (size_t pos = 0; pos < device_nodes_.size(); pos++)
    st.gpu_us[model_->graph.nodes[device_nodes_[pos]].op_type] += (double)(ts[pos + 1] - ts[pos]) * tick_us;
  if (sampled) st.gpu_us["(device sampling)"] += (double)(ts[n - 1] - ts[n - 2]) * tick_us;
  st.gpu_us["(step total)"] += (double)(ts.back() - ts[0]) * tick_us;
}

}  // namespace ogx::vk::graph
