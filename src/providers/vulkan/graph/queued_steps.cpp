// Queued decode steps (Session::queue_next): the next step is submitted before the host has the token the step
// before it picks; its token ids come from the device (token_device_), its other step values (positions, lengths)
// from the host as for any run. Two plans of the queued signature alternate, so the host writes the step values of
// one while the other may still run. A queued step that is dropped leaves no trace in later results: its KV writes
// lie past the sequences, and the random state of sampling rows, which it advanced, is put back from the copy its
// plan made before sampling (Plan::rng_before).
#include "providers/vulkan/graph/session_impl.h"

namespace ogx::vk::graph {

bool VulkanGraphSession::is_queued(const Plan* p) const {
  for (const Queued& q : queued_)
    if (q.plan == p) return true;
  return false;
}

namespace {
uint64_t serial_of(const KvState* kv) { return static_cast<const VulkanKvState*>(kv)->serial(); }
bool same_rows(const std::vector<RunRows>& a, const std::vector<KvRows>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++)
    if (a[i].state != b[i].state || a[i].serial != serial_of(b[i].state)) return false;
  return true;
}
bool holds(const std::vector<RunRows>& rows, const KvState& kv) {
  for (const RunRows& r : rows)
    if (r.state == &kv && r.serial == serial_of(&kv)) return true;
  return false;
}
}  // namespace

bool VulkanGraphSession::has_queued(const KvState& kv) const {
  for (const Queued& q : queued_)
    if (holds(q.rows, kv)) return true;
  return false;
}

bool VulkanGraphSession::queued_for(const std::vector<const KvState*>& states) const {
  if (queued_.empty() || queued_.front().rows.size() != states.size()) return false;
  const std::vector<RunRows>& rows = queued_.front().rows;
  for (size_t i = 0; i < states.size(); i++)
    if (rows[i].state != states[i] || rows[i].serial != serial_of(states[i])) return false;
  return true;
}

bool VulkanGraphSession::queue_next(const std::vector<NamedTensor>& inputs, const std::string& token_input,
                                    const DecodeRun& r) {
  if (!r.sampling || r.sampling->beam_candidates > 0 || profile_ || !graph_capture_ || queued_.size() >= 2 ||
      !token_device_.size() || !last_plan_ || !last_plan_->samples || !stages_.empty())
    return false;  // (a step split by CPU fallback stages needs the host between its segments: run synchronously)
  // Its tokens are those the step before it picked: that step must have run the same rows.
  if (!same_rows(queued_.empty() ? last_rows_ : queued_.back().rows, r.kv)) return false;
  const Graph& g = model_->graph;
  int v = g.find(token_input);
  bool step_value = false;
  for (auto& sv : step_values_) step_value |= sv.first == v;
  if (v < 0 || !step_value) return false;
  for (auto& [name, t] : inputs)
    if (name == token_input && (t.rank() != 2 || t.dim(1) != 1 || t.dim(0) > kMaxSampleRows)) return false;
  auto t_start = std::chrono::steady_clock::now();
  Prepared pr = prepare(inputs, {}, v, r);
  if (!pr.plan) return false;
  Plan& p = *pr.plan;
  if (p.step_dtypes[v] != DType::i64 || !p.samples) return false;  // the device copy moves int64 token ids
  bool advances_rng = !r.sampling->greedy;
  for (const KvRows& k : r.kv) advances_rng = advances_rng || (k.sampling && !k.sampling->greedy);
  if (advances_rng && !p.rng_before.size()) return false;  // (every sampling plan of a queued step keeps it)
  write_steps(p, pr.host, pr.kv_table);
  queued_.push_back({&p, p.rec->submit(), !pr.recorded, t_start, pr.rows, r.kv, advances_rng});
  fed_parity_ ^= 1;
  return true;
}

bool VulkanGraphSession::finish_queued(const KvState& kv) {
  if (queued_.empty() || !holds(queued_.front().rows, kv)) return false;
  Queued q = queued_.front();
  queued_.pop_front();
  auto t_wait = std::chrono::steady_clock::now();
  ctx_->wait(q.value);
  runs_++;
  queued_runs_++;
  for (size_t i = 0; i < q.kv.size(); i++)  // (a state destroyed since is not touched: q.rows holds its serial)
    if (VulkanKvState* s = pool_->live(q.kv[i].state, q.rows[i].serial)) s->set_length(q.kv[i].total);
  complete(*q.plan, q.replayed, q.t_start, std::chrono::steady_clock::now() - t_wait, q.rows);
  return true;
}

void VulkanGraphSession::drop_queued() {
  if (queued_.empty()) return;
  ctx_->wait(queued_.back().value);
  bool advanced = false;
  for (const Queued& q : queued_) {
    if (q.plan == last_plan_) last_plan_ = nullptr;  // its buffers now hold the dropped step's values
    advanced = advanced || q.advances_rng;
  }
  if (advanced) {  // the random state as the oldest dropped step found it
    CommandRecorder rec(*ctx_);
    rec.begin();
    rec.copy(queued_.front().plan->rng_before.slice(), rng_.slice());
    rec.end();
    rec.run();
  }
  dropped_runs_ += queued_.size();
  queued_.clear();
}

}  // namespace ogx::vk::graph
