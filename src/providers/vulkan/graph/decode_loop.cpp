// The decode loop's interface of the Vulkan session (DecodeSession): KV states from the session's paged pool
// (kv_pool.h), runs over the rows of one or several states, the tokens and logits of a state's rows, beam reorders
// as block moves and copies on the device, and the device random state of sampling rows kept per state.
#include <algorithm>

#include "common/error.h"
#include "providers/vulkan/graph/session_impl.h"
#include <cstring>

#include "providers/vulkan/kernels/sampling.h"
#include "providers/vulkan/transfer.h"

namespace ogx::vk::graph {

VulkanKvState& VulkanGraphSession::own(KvState& kv) const {
  auto* s = dynamic_cast<VulkanKvState*>(&kv);
  OGX_CHECK(s && s->session() == this, "a KV state of another session (or provider) was given to this vulkan session");
  return *s;
}

std::unique_ptr<KvState> VulkanGraphSession::create_kv(int rows, int64_t max_length) {
  OGX_CHECK(!kv_.empty(), "this model has no KV cache on the device");
  OGX_CHECK(rows > 0 && max_length > 0, "a KV state needs rows > 0 and max_length > 0, got ", rows, " and ",
            max_length);
  return std::make_unique<VulkanKvState>(pool_, this, rows, max_length);
}

void VulkanGraphSession::rewind_kv(KvState& kv, int64_t length) {
  VulkanKvState& s = own(kv);
  OGX_CHECK(length >= 0 && length <= s.length(), "cannot rewind the cache to ", length, " (it holds ", s.length(), ")");
  // Blocks stay held (the positions are overwritten by the next runs); queued steps past `length` are harmless.
  // Blocks shared between rows that the rows will write again become each row's own first.
  // (Queued steps never write shared blocks: they stay.)
  s.set_length(length);
  if (!s.writable_shared()) return;
  CommandRecorder rec(*ctx_);
  rec.begin();
  s.unshare_writable(rec);
  rec.end();
  rec.run();
}

void VulkanGraphSession::reorder_kv(KvState& kv, const std::vector<int32_t>& src, int64_t final_positions) {
  VulkanKvState& s = own(kv);
  OGX_CHECK(!src.empty(), "KV cache reorder: no rows");
  bool identity = (int)src.size() == s.rows();
  for (size_t r = 0; identity && r < src.size(); r++) identity = src[r] == (int32_t)r;
  if (identity) return;
  drop_queued();
  CommandRecorder rec(*ctx_);
  rec.begin();
  std::vector<int32_t> freed = s.reorder(src, final_positions, rec);
  rec.end();
  rec.run();  // the copies ran: the blocks of rows no one continues go back
  pool_->give(freed);
  for (RunRows& rr : rng_rows_)  // the rows' random states no longer line up with the state's rows
    if (rr.serial == s.serial()) rng_rows_.clear();
  s.rng.clear();
}

bool VulkanGraphSession::can_sample(const DeviceSampling& s, int64_t rows) const {
  if (last_position_node_ < 0 || rows > kMaxSampleRows) return false;
  if (s.logit_edits && rows > kernels::kLogitEditMaxRows) return false;
  if (s.beam_candidates != 0)  // beam search: candidates only (a token mask: min_length's EOS ban)
    return s.beam_candidates > 0 && s.beam_candidates <= kernels::kMaxBeamCandidates;
  return s.greedy || (s.top_p > 0 && s.top_p <= 1 && s.temperature > 0 && s.top_k >= 0);
}

void VulkanGraphSession::bind_kv(const DecodeRun& r, int64_t batch, int64_t total, Plan& p,
                                 std::vector<uint64_t>& table, std::vector<RunRows>& rows) {
  OGX_CHECK(!r.kv.empty(), "this model's KV cache lives on the vulkan device: a run must name its KV states");
  const int64_t heads = pool_->max_heads(), mb = p.kv_max_blocks;
  // Reserve first (all states, before anything is written): a failure leaves every state as it was.
  for (const KvRows& k : r.kv) {
    VulkanKvState& s = own(*k.state);
    OGX_CHECK(k.total <= s.max_length(), "sequence of ", k.total, " tokens exceeds max_length ", s.max_length());
    s.reserve(k.total);
  }
  table.assign((size_t)(batch * heads * mb), 0);
  int64_t first = 0;
  for (const KvRows& k : r.kv) {
    const VulkanKvState& s = own(*k.state);
    s.write_table(table.data() + first * heads * mb, mb);
    rows.push_back({k.state, s.serial(), first, s.rows()});
    first += s.rows();
  }
  (void)total;
}

void VulkanGraphSession::bind_rng(const std::vector<RunRows>& rows, const std::vector<uint64_t>& seeds) {
  // The random state of each sampling row lives in rng_ (the recorded steps read it there). When another state's
  // rows sample, the rows held there are saved into their (live) states and the new rows' loaded or seeded.
  bool same = rows.size() == rng_rows_.size();
  for (size_t i = 0; same && i < rows.size(); i++)
    same = rows[i].serial == rng_rows_[i].serial && rows[i].first == rng_rows_[i].first;
  if (same) return;
  if (!rng_.size()) rng_ = ctx_->memory().allocate("sampling state", kMaxSampleRows * 4);
  if (!rng_rows_.empty()) {
    Tensor held = ctx_->transfers().download_tensor(rng_.view(DType::i32, {kMaxSampleRows}));
    const uint32_t* w = (const uint32_t*)held.raw();
    for (const RunRows& rr : rng_rows_)
      if (VulkanKvState* st = pool_->live(rr.state, rr.serial)) st->rng.assign(w + rr.first, w + rr.first + rr.rows);
  }
  std::vector<uint32_t> words(kMaxSampleRows, 0);
  for (size_t i = 0; i < rows.size(); i++) {
    const RunRows& rr = rows[i];
    VulkanKvState* st = pool_->live(rr.state, rr.serial);
    std::vector<uint32_t> seed = st && (int64_t)st->rng.size() == rr.rows ? st->rng
                                                                            : kernels::seed_sampling_state(seeds[i], rr.rows);
    std::copy(seed.begin(), seed.end(), words.begin() + rr.first);
  }
  ctx_->transfers().upload(rng_.slice(), 0, words.data(), words.size() * 4);
  ctx_->transfers().flush();
  rng_rows_ = rows;
}

std::vector<int64_t> VulkanGraphSession::sampled_tokens(const KvState& kv) const {
  const uint64_t serial = static_cast<const VulkanKvState&>(kv).serial();
  for (const RunRows& rr : last_rows_)
    if (rr.state == &kv && rr.serial == serial && !last_tokens_.empty())
      return std::vector<int64_t>(last_tokens_.begin() + rr.first, last_tokens_.begin() + rr.first + rr.rows);
  return {};
}

std::vector<BeamRow> VulkanGraphSession::beam_candidates(const KvState& kv) const {
  const uint64_t serial = static_cast<const VulkanKvState&>(kv).serial();
  const int64_t words = kernels::beam_candidate_words(last_beam_k_);
  std::vector<BeamRow> out;
  for (const RunRows& rr : last_rows_) {
    if (rr.state != &kv || rr.serial != serial || last_beam_.empty()) continue;
    for (int64_t r = rr.first; r < rr.first + rr.rows; r++) {
      const uint32_t* w = last_beam_.data() + r * words;
      BeamRow row;
      row.vocab = last_beam_vocab_;
      std::memcpy(&row.max, &w[0], 4);
      std::memcpy(&row.sum, &w[1], 4);
      row.logits.resize((size_t)last_beam_k_);
      row.tokens.resize((size_t)last_beam_k_);
      std::memcpy(row.logits.data(), &w[2], (size_t)last_beam_k_ * 4);
      std::memcpy(row.tokens.data(), &w[2 + last_beam_k_], (size_t)last_beam_k_ * 4);
      out.push_back(std::move(row));
    }
  }
  return out;
}

bool VulkanGraphSession::read_last_output(const KvState& kv, Tensor* out) {
  if (!last_plan_ || last_position_value_ < 0 || !last_plan_->on_device[last_position_value_]) return false;
  const RunRows* rr = nullptr;
  for (const RunRows& r : last_rows_)
    if (r.state == &kv && r.serial == static_cast<const VulkanKvState&>(kv).serial()) rr = &r;
  if (!rr) return false;
  const TensorView& v = last_plan_->views[last_position_value_];
  if (v.shape.size() < 2 || (v.shape[0] > 1 && v.shape[1] > 1)) return false;
  TensorView last = v;  // [rows, 1, ...] of the last position
  int64_t row = v.numel() / (v.shape[0] * v.shape[1]);
  size_t es = dtype_size(v.dtype);
  last.shape[0] = rr->rows;
  last.shape[1] = 1;
  last.mem = v.mem.sub((VkDeviceSize)((v.shape[1] - 1) * row + rr->first * row) * es, (VkDeviceSize)(rr->rows * row) * es);
  *out = ctx_->transfers().download_tensor(last);
  return true;
}

void VulkanGraphSession::ensure_token_mask(int64_t words_per_row) {
  if (token_mask_words_ == words_per_row) return;
  // Recorded steps hold the buffer's address: it is made once, for the logits' width.
  OGX_CHECK(token_mask_words_ == 0, "token mask of ", words_per_row, " words per row after one of ", token_mask_words_);
  token_mask_ = HostVisibleBuffer(ctx_->memory(), "token mask", (VkDeviceSize)(kMaxSampleRows * words_per_row * 4));
  std::vector<uint32_t> all((size_t)(kMaxSampleRows * words_per_row), ~0u);  // every token until the first mask
  token_mask_.write(all.data(), (VkDeviceSize)(all.size() * 4));
  token_mask_words_ = words_per_row;
}

bool VulkanGraphSession::set_logit_edits(const std::vector<RowEdits>& rows) {
  OGX_CHECK((int64_t)rows.size() <= kMaxSampleRows, "logit edits: ", rows.size(), " rows (at most ", kMaxSampleRows,
            ")");
  staged_edits_ = kernels::pack_logit_edits(rows);
  int64_t n = 0;
  for (const RowEdits& r : rows) n += (int64_t)r.edits.size();
  if (n > logit_edit_capacity_ || logit_edit_capacity_ == 0) {  // (plans of the old capacity are not reused)
    int64_t cap = std::max<int64_t>(1024, logit_edit_capacity_);
    while (cap < n) cap *= 2;
    logit_edit_capacity_ = cap;
  }
  return true;
}

bool VulkanGraphSession::set_token_mask(const KvState& kv, const std::vector<uint32_t>& bits, int64_t words_per_row) {
  (void)kv;  // the next run's rows start at row 0 of the mask (a guided generator runs alone: decode_together)
  OGX_CHECK(words_per_row > 0 && bits.size() % words_per_row == 0 && bits.size() / words_per_row <= kMaxSampleRows,
            "token mask: ", bits.size(), " words are not rows (at most ", kMaxSampleRows, ") of ", words_per_row);
  ensure_token_mask(words_per_row);
  drop_queued();
  ctx_->wait_idle();  // an earlier step may still read the mask
  token_mask_.write(bits.data(), (VkDeviceSize)(bits.size() * 4));
  return true;
}

}  // namespace ogx::vk::graph
