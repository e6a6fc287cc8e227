#include "genai/batch_step.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "common/error.h"
#include "genai/adapters.h"
#include "genai/guidance/logit_mask.h"

namespace ogx::genai {

namespace {

// Rank-2 inputs [rows, width] of several generators stacked into [sum of rows, widest], zero on the right (an
// attention mask's padding: each row keeps its own count of ones, so its seqlens_k stays).
Tensor stack_rows(const std::vector<const Tensor*>& parts, const std::string& name) {
  int64_t rows = 0, width = 0;
  for (const Tensor* t : parts) {
    OGX_CHECK(t->rank() == 2 && t->dtype() == parts[0]->dtype(), "decode_together: input '", name,
              "' is not [rows, width] of one dtype in every generator");
    rows += t->dim(0);
    width = std::max(width, t->dim(1));
  }
  Tensor out = Tensor::zeros(parts[0]->dtype(), {rows, width});
  const size_t es = dtype_size(out.dtype());
  int64_t r0 = 0;
  for (const Tensor* t : parts) {
    for (int64_t r = 0; r < t->dim(0); r++)
      std::memcpy((char*)out.raw() + ((r0 + r) * width) * es, (const char*)t->raw() + r * t->dim(1) * es,
                  (size_t)t->dim(1) * es);
    r0 += t->dim(0);
  }
  return out;
}

}  // namespace

// Extra inputs (extra_io.h) may join a shared run only when every one is a parameter of one of the generator's
// active adapters (the very tensor the adapter file holds): weights every row shares, passed once for the run. A
// caller's own input could hold one value per row, and wanted outputs are per generator: those step alone.
bool Generator::can_decode_together() const {
  if (!kv_.on_provider() || spec_ || extra_io_.takes_hidden_states()) return false;
  std::vector<NamedTensor> extra_in, extra_out;
  extra_io_.add_inputs(extra_in);
  extra_io_.add_outputs(extra_out);
  if (!extra_out.empty()) return false;
  if (extra_in.empty()) return true;
  std::set<const void*> adapter_tensors;
  for (const auto& lease : adapter_leases_)
    for (const AdapterParameter& p : lease->file().parameters) adapter_tensors.insert(p.tensor.raw());
  for (const auto& [name, t] : extra_in)
    if (!adapter_tensors.count(t.raw())) return false;
  return true;
}

namespace {

// The shared inputs (adapter weights) of a generator that can decode together: (name, storage), in input order.
// Generators with equal keys share a run.
std::vector<std::pair<std::string, const void*>> shared_inputs_key(const ExtraIO& io) {
  std::vector<NamedTensor> extra;
  io.add_inputs(extra);
  std::vector<std::pair<std::string, const void*>> key;
  for (const auto& [name, t] : extra) key.emplace_back(name, t.raw());
  return key;
}

}  // namespace

// decode_together's work for one group of generators (one model, the same shared inputs): one model run per call,
// and with queue_ahead (the caller's next model use is the next call for the same generators) the group's next step
// queued on the device, as a generator alone queues its own (Generator: only where every row picks on the device).
struct DecodeGroup {
  static void step(const std::vector<Generator*>& together, bool queue_ahead);
  // The step without a queued one: generators whose logits are known pick now, the rest share one run.
  static void run(const std::vector<Generator*>& together, bool queue_ahead);
  // Generators on a provider without device KV caches (the CPU) whose session runs several runs together: each
  // generator's own step (its cache bound, its logits picked on the host), the model runs node by node together so
  // that every projection reads its weights once for all of them.
  static void run_host_together(const std::vector<Generator*>& together);
  // The run's token mask (DeviceSampling::token_mask): each guided generator's rows from its constraints (EOS banned
  // below min_length too), every other row all tokens; false when the provider takes none.
  static bool upload_masks(const std::vector<Generator*>& run, const std::vector<bool>& on_device);
  // Whether the oldest queued step is exactly this group's; otherwise its generators' queued steps are dropped,
  // except a lone generator's own (its generate_next_token takes its token from it).
  static bool queued_is_ours(const std::vector<Generator*>& together);
  // The group's queued step: queues the one after it (queue_ahead), then gives each generator its token.
  static void finish(const std::vector<Generator*>& run, bool queue_ahead);
  // Queues the next step of `run` (`ahead` steps past their committed KV lengths); true: queued.
  static bool queue(const std::vector<Generator*>& run, int64_t ahead);
  // The stacked inputs of one step of `run` (each generator's ids after `ahead` positions past its KV length) and
  // the run's rows: each generator's state, its total after the step, its own device sampling where it samples.
  static std::vector<NamedTensor> inputs(const std::vector<Generator*>& run, const std::vector<bool>& on_device,
                                         const std::vector<std::vector<int32_t>>& ids, int64_t ahead, DecodeRun& r);
};

void decode_together(const std::vector<Generator*>& generators, bool queue_ahead) {
  // Groups of one model and the same adapter weights (none, or the same adapters) each share a run.
  std::vector<std::vector<Generator*>> groups;
  std::vector<std::vector<std::pair<std::string, const void*>>> keys;  // [groups]
  std::vector<Generator*> alone;
  for (Generator* g : generators) {
    OGX_CHECK(g, "decode_together: a null generator");
    OGX_CHECK(g->token_count() > 0, "decode_together: append a prompt to every generator first");
    if (g->is_done()) continue;
    if (!g->can_decode_together()) {
      alone.push_back(g);
      continue;
    }
    auto key = shared_inputs_key(g->extra_io_);
    size_t k = 0;
    while (k < groups.size() && !(&groups[k][0]->model() == &g->model() && keys[k] == key)) k++;
    if (k == groups.size()) {
      groups.emplace_back();
      keys.push_back(std::move(key));
    }
    groups[k].push_back(g);
  }
  // Host-cache generators whose next step is a plain one (the pending tokens' run, then a pick from its logits) join
  // a run_together group per model.
  std::vector<std::vector<Generator*>> host_groups;
  std::vector<Generator*> rest;
  for (Generator* g : alone) {
    const bool plain = !g->kv_.on_provider() && !g->spec_ && !g->pending_.empty() && g->queued_ == 0 &&
                       !g->rope_rerun_due() && g->model().session().runs_together();
    if (!plain) {
      rest.push_back(g);
      continue;
    }
    size_t k = 0;
    while (k < host_groups.size() && &host_groups[k][0]->model() != &g->model()) k++;
    if (k == host_groups.size()) host_groups.emplace_back();
    host_groups[k].push_back(g);
  }
  alone = rest;
  for (auto& hg : host_groups) {
    if (hg.size() == 1) alone.push_back(hg[0]);
    else DecodeGroup::run_host_together(hg);
  }
  for (Generator* g : alone) g->generate_next_token();
  // Only the call's one model run queues ahead: a second model run in it would drop the queued step.
  const bool one_run = queue_ahead && alone.empty() && groups.size() == 1;
  for (const auto& together : groups) DecodeGroup::step(together, one_run);
}

void DecodeGroup::step(const std::vector<Generator*>& together, bool queue_ahead) {
  try {
    if (queued_is_ours(together)) return finish(together, queue_ahead);
    run(together, queue_ahead);
  } catch (...) {  // the caller may step them one by one: no step of theirs stays queued
    for (Generator* g : together) g->drop_queued();
    throw;
  }
}

bool DecodeGroup::upload_masks(const std::vector<Generator*>& run, const std::vector<bool>& on_device) {
  const int64_t V = run[0]->vocab_, words = (V + 31) / 32;
  std::vector<uint32_t> bits;
  for (size_t i = 0; i < run.size(); i++) {
    Generator& g = *run[i];
    OGX_CHECK(g.vocab_ == V, "decode_together: guided generators of one run with different vocabularies");
    if (on_device[i] && g.guidance_) g.append_mask_rows((int)g.token_count() < g.search_.min_length, words, bits);
    else bits.resize(bits.size() + (size_t)(g.rows() * words), ~0u);
  }
  return run[0]->kv_.decoder()->set_token_mask(*run[0]->kv_.state(), bits, words);
}

void DecodeGroup::run_host_together(const std::vector<Generator*>& together) {
  std::vector<Generator::ModelRun> runs;
  runs.reserve(together.size());
  for (Generator* g : together) runs.push_back(g->prepare_run(g->pending_, g->rows(), 1, true, true));
  std::vector<Session::Run> each;
  for (Generator::ModelRun& m : runs) each.push_back({&m.in, &m.out});
  together[0]->model().session().run_together(each);
  for (size_t i = 0; i < together.size(); i++) {
    Generator& g = *together[i];
    g.complete_run(runs[i]);
    g.pending_.clear();
    g.pick_host();
  }
}

bool DecodeGroup::queued_is_ours(const std::vector<Generator*>& together) {
  std::vector<const KvState*> states;
  bool all = together.size() > 1;
  for (Generator* g : together) {
    states.push_back(g->kv_.state());
    all = all && g->queued_ > 0;
  }
  const DecodeSession* session = together[0]->kv_.decoder();
  if (!session) return false;  // (a provider without device KV caches queues nothing)
  if (all && session->queued_for(states)) return true;
  for (Generator* g : together)
    if (g->queued_ > 0 && !session->queued_for({g->kv_.state()})) g->drop_queued();
  return false;
}

void DecodeGroup::finish(const std::vector<Generator*>& run, bool queue_ahead) {
  const bool next = queue_ahead && queue(run, 1);
  OGX_CHECK(run[0]->kv_.decoder()->finish_queued(*run[0]->kv_.state()), "decode_together: the queued step is gone");
  for (Generator* g : run) {
    g->kv_.commit({}, g->kv_.length() + 1);
    g->logits_on_device_ = true;
    g->queued_ = next ? 1 : 0;
    g->append_device_tokens();
  }
}

bool DecodeGroup::queue(const std::vector<Generator*>& run, int64_t ahead) {
  DeviceSampling greedy;
  greedy.greedy = true;
  for (Generator* g : run) {  // every row picks on the device (the queued step's tokens come from there)
    if (!g->device_sampling_ || !g->edits_allow_queue() || g->is_done() || g->guidance_ ||
        (!g->sampling_.logit_edits && (int)g->token_count() < g->search_.min_length) ||
        g->kv_.length() + ahead + 1 > g->max_length_)
      return false;
    greedy.logit_edits = greedy.logit_edits || g->sampling_.logit_edits;
  }
  std::vector<std::vector<int32_t>> placeholders;  // replaced on the device by the tokens the step before picks
  for (Generator* g : run) placeholders.emplace_back(g->rows(), 0);
  DecodeRun r;
  std::vector<NamedTensor> in = inputs(run, std::vector<bool>(run.size(), true), placeholders, ahead, r);
  r.sampling = &greedy;
  try {
    if (greedy.logit_edits) {  // penalties and bans of the sequences the host has (ahead: the device adds its token)
      std::vector<RowEdits> edits;
      for (Generator* g : run) g->add_logit_edits(edits, ahead > 0);
      if (!run[0]->kv_.decoder()->set_logit_edits(edits)) return false;
    }
    return run[0]->kv_.decoder()->queue_next(in, run[0]->model().config().model.decoder.input_ids, r);
  } catch (const Error&) {  // e.g. the KV pool is full: the step runs synchronously and reports it there
    return false;
  }
}

std::vector<NamedTensor> DecodeGroup::inputs(const std::vector<Generator*>& run, const std::vector<bool>& on_device,
                                             const std::vector<std::vector<int32_t>>& ids, int64_t ahead,
                                             DecodeRun& r) {
  std::vector<std::vector<NamedTensor>> each;
  for (size_t i = 0; i < run.size(); i++) {
    Generator* g = run[i];
    const int64_t past = g->kv_.length() + ahead, total = past + 1;
    OGX_CHECK(total <= g->max_length_, "sequence of ", total, " tokens exceeds max_length ", g->max_length_);
    each.push_back(g->step_inputs(ids[i], g->rows(), 1, past));
    // A generator sampling on the device picks with its own settings and random state (the run's default: argmax).
    const bool own = on_device[i] && !g->sampling_.greedy;
    r.kv.push_back({g->kv_.state(), total, own ? &g->sampling_ : nullptr});
  }
  // Each generator's row inputs stacked; the shared inputs (adapter weights, the same tensors in every generator of
  // the group, after the row inputs: Generator::step_inputs) once.
  const size_t shared = shared_inputs_key(run[0]->extra_io_).size();
  std::vector<NamedTensor> in;
  for (size_t k = 0; k < each[0].size(); k++) {
    std::vector<const Tensor*> parts;
    for (auto& e : each) {
      OGX_CHECK(e.size() == each[0].size() && e[k].first == each[0][k].first, "decode_together: generators differ "
                "in their inputs");
      parts.push_back(&e[k].second);
    }
    if (k >= each[0].size() - shared) in.emplace_back(each[0][k].first, each[0][k].second);
    else in.emplace_back(each[0][k].first, stack_rows(parts, each[0][k].first));
  }
  return in;
}

void DecodeGroup::run(const std::vector<Generator*>& together, bool queue_ahead) {
  // Generators whose next token is under way already (a step queued by the previous call) or whose next logits are
  // known (after a prompt, set_logits), or that run their sequence again first (phi3's long-RoPE switch), pick now;
  // the rest run together.
  const bool lone = queue_ahead && together.size() == 1;
  std::vector<Generator*> run;
  for (Generator* g : together) {
    g->batched_ = !lone;  // batched: no steps queued ahead (the next call runs it with the others)
    if (g->queued_ > 0 || g->pending_.empty() || g->rope_rerun_due()) g->generate_next_token();
    else run.push_back(g);
  }
  // Guided generators (structured output) pick under a token mask: one mask covers a run's rows, so they share the
  // run when every generator in it picks on the device (greedy or sampling, each row with its own settings and
  // logit edits; a row without a constraint gets a mask of every token). Otherwise they step alone.
  bool masked = false;
  for (Generator* g : run) masked = masked || g->guidance_;
  if (masked) {
    bool fits = true;
    for (Generator* g : run) fits = fits && g->device_sampling_ && g->vocab_ > 0;
    if (!fits) {
      std::vector<Generator*> kept;
      for (Generator* g : run) {
        if (g->guidance_) g->generate_next_token();
        else kept.push_back(g);
      }
      run = kept;
      masked = false;
    }
  }
  if (run.empty()) return;
  if (run.size() == 1) return run[0]->generate_next_token();
  const Model& model = run[0]->model();
  const DecoderConfig& d = model.config().model.decoder;
  int64_t rows = 0;
  bool device_rows = false, host_rows = false;
  std::vector<bool> on_device(run.size());
  for (size_t i = 0; i < run.size(); i++) {
    Generator& g = *run[i];
    rows += g.rows();
    // (penalties and bans, min_length's included: each row's logit edits, applied on the device; a guided
    // generator's EOS ban below min_length: in its mask rows)
    on_device[i] = g.device_sampling_ && (g.sampling_.logit_edits || g.guidance_ ||
                                          (int)g.token_count() >= g.search_.min_length);
    device_rows = device_rows || on_device[i];
    host_rows = host_rows || !on_device[i];
  }
  DeviceSampling greedy;
  greedy.greedy = true;
  for (size_t i = 0; i < run.size(); i++)
    greedy.logit_edits = greedy.logit_edits || (on_device[i] && run[i]->sampling_.logit_edits);
  greedy.token_mask = masked;
  if (device_rows && !run[0]->kv_.decoder()->can_sample(greedy, rows)) {
    // More rows than the device picks at once: every row's logits come to the host, except those of generators
    // sampling on the device, which step alone (their random state lives there: a host pick would change their
    // tokens).
    std::vector<Generator*> kept, sampled_alone;
    for (Generator* g : run) (g->device_sampling_ && !g->sampling_.greedy ? sampled_alone : kept).push_back(g);
    if (!sampled_alone.empty()) {
      for (Generator* g : sampled_alone) g->generate_next_token();
      if (kept.empty()) return;
      if (kept.size() == 1) return kept[0]->generate_next_token();
      run = kept;
      rows = 0;
      for (Generator* g : run) rows += g->rows();
    }
    on_device.assign(run.size(), false);
    device_rows = false;
    host_rows = true;
    greedy.token_mask = false;  // (the host applies the constraints)
  }
  if (device_rows && greedy.token_mask && !upload_masks(run, on_device)) {  // unsupported: picks on the host
    on_device.assign(run.size(), false);
    device_rows = false;
    host_rows = true;
    greedy.token_mask = false;
  }
  if (device_rows && greedy.logit_edits) {  // the rows' edits for this run, in its row order (none: unchanged)
    std::vector<RowEdits> edits;
    for (size_t i = 0; i < run.size(); i++) {
      if (on_device[i]) run[i]->add_logit_edits(edits, false);
      else edits.resize(edits.size() + (size_t)run[i]->rows());
    }
    if (!run[0]->kv_.decoder()->set_logit_edits(edits)) {  // unsupported: those rows' logits come back
      for (size_t i = 0; i < run.size(); i++) on_device[i] = on_device[i] && !run[i]->sampling_.logit_edits;
      device_rows = std::find(on_device.begin(), on_device.end(), true) != on_device.end();
      host_rows = true;
      greedy.logit_edits = false;
    }
  }
  // The inputs of each generator's step, stacked row after row.
  DecodeRun r;
  std::vector<std::vector<int32_t>> ids;
  for (Generator* g : run) ids.push_back(g->pending_);
  std::vector<NamedTensor> in = inputs(run, on_device, ids, 0, r);
  if (device_rows) r.sampling = &greedy;
  std::vector<NamedTensor> out;
  if (host_rows) out.emplace_back(d.logits, Tensor());
  run[0]->kv_.decoder()->run(in, out, r);
  const Tensor* logits = host_rows ? &out[0].second : nullptr;
  if (logits)
    OGX_CHECK(logits->rank() == 3 && logits->dim(0) == rows && logits->dim(1) == 1, "logits output has shape ",
              shape_str(logits->shape()), ", expected [", rows, ",1,vocab]");
  int64_t first = 0;
  for (size_t i = 0; i < run.size(); i++) {
    Generator& g = *run[i];
    g.kv_.commit({}, r.kv[i].total);
    g.pending_.clear();
    g.logits_on_device_ = logits == nullptr;
    if (logits) {
      const int64_t V = logits->dim(2);
      g.logits_.resize((size_t)(g.rows() * V));
      logits->read_f32(first * V, g.rows() * V, g.logits_.data());
    }
    first += g.rows();
    if (on_device[i]) {
      g.append_device_tokens();
    } else {
      if (g.logits_on_device_) g.logits();
      g.pick_host();
    }
  }
  if (queue_ahead && queue(run, 0))
    for (Generator* g : run) g->queued_ = 1;
}

}  // namespace ogx::genai
