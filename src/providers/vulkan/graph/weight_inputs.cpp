// Graph inputs that carry weights: inputs with an initializer default (ONNX Runtime's overridable initializers;
// LoRA adapter tensors, genai/adapters.h). Fed as ordinary step values they would be written into the step buffer
// before every step. Instead:
//   - each distinct host tensor fed to such an input is uploaded once into a device cache keyed by the tensor's
//     identity (its storage, offset, dtype and shape; the storage is watched so a freed one is never matched);
//   - a recorded plan reads the input from a device slot of its own (plans are per shape, so an adapter of another
//     rank records its own plan once), and before a submission whose tensor differs from the one the slot holds
//     (an adapter switch, or two generators with different adapters taking turns) one device-to-device copy
//     refreshes the slot. Switching adapters never re-records a plan and never re-uploads from the host.
#include "providers/vulkan/graph/session_impl.h"
#include "providers/vulkan/transfer.h"

namespace ogx::vk::graph {

struct WeightInputCache {
  struct Entry {
    std::weak_ptr<Storage> storage;
    size_t offset = 0;
    DType dtype = DType::undefined;
    Shape shape;
    DeviceBuffer buf;
    uint64_t id = 0;
  };
  std::vector<Entry> entries;
  uint64_t next_id = 1;
  uint64_t uploads = 0, slot_copies = 0;
};

void VulkanGraphSession::split_weight_inputs() {
  const Graph& g = model_->graph;
  std::set<int> inputs(g.input_ids.begin(), g.input_ids.end());
  auto is_weight = [&](int v) { return inputs.count(v) && !g.values[v].is_constant && !g.values[v].constant.empty(); };
  std::vector<std::pair<int, std::pair<int, int>>> kept;
  for (auto& sv : step_values_) {
    if (is_weight(sv.first)) weight_inputs_.push_back(sv.first);
    else kept.push_back(sv);
  }
  step_values_ = std::move(kept);
  if (!weight_inputs_.empty() && !weight_cache_) weight_cache_ = std::make_shared<WeightInputCache>();
}

std::string VulkanGraphSession::weight_input_signature(const std::vector<const Tensor*>& host) const {
  std::string s;
  for (int v : weight_inputs_)
    s += " w" + std::to_string(v) + dtype_name(host[v]->dtype()) + shape_str(host[v]->shape());
  return s;
}

void VulkanGraphSession::bind_weight_inputs(Plan& p, const std::vector<const Tensor*>& host) {
  for (int v : weight_inputs_) {
    const Tensor* t = host[v];
    DeviceBuffer slot = ctx_->memory().allocate("weight input " + model_->graph.values[v].name,
                                                std::max<VkDeviceSize>(t->bytes(), 4));
    p.views[v] = slot.view(t->dtype(), t->shape());
    p.on_device[v] = 1;
    p.weight_slots[v] = std::move(slot);
    p.weight_slot_source[v] = 0;  // holds nothing yet
  }
}

void VulkanGraphSession::refresh_weight_inputs(Plan& p, const std::vector<const Tensor*>& host) {
  if (weight_inputs_.empty()) return;
  WeightInputCache& c = *weight_cache_;
  std::unique_ptr<CommandRecorder> rec;
  for (int v : weight_inputs_) {
    const Tensor& t = *host[v];
    // Entries whose host tensor is gone can never match again: dropped.
    std::erase_if(c.entries, [](const WeightInputCache::Entry& e) { return e.storage.expired(); });
    WeightInputCache::Entry* hit = nullptr;
    for (auto& e : c.entries)
      if (e.storage.lock() == t.storage() && e.offset == t.offset() && e.dtype == t.dtype() && e.shape == t.shape())
        hit = &e;
    if (!hit) {
      WeightInputCache::Entry e;
      e.storage = t.storage();
      e.offset = t.offset();
      e.dtype = t.dtype();
      e.shape = t.shape();
      e.buf = ctx_->memory().allocate("cached weight input " + model_->graph.values[v].name,
                                      std::max<VkDeviceSize>(t.bytes(), 4));
      if (t.bytes()) ctx_->transfers().upload_tensor(e.buf.view(t.dtype(), t.shape()), t);
      e.id = c.next_id++;
      c.uploads++;
      c.entries.push_back(std::move(e));
      hit = &c.entries.back();
    }
    if (p.weight_slot_source[v] == hit->id) continue;
    if (t.bytes()) {
      if (!rec) {
        ctx_->transfers().flush();
        rec = std::make_unique<CommandRecorder>(*ctx_);
        rec->begin();
      }
      rec->copy(hit->buf.slice().sub(0, t.bytes()), p.weight_slots[v].slice().sub(0, t.bytes()));
      c.slot_copies++;
    }
    p.weight_slot_source[v] = hit->id;
  }
  if (rec) {
    rec->end();
    rec->run();
  }
}

void VulkanGraphSession::weight_input_stats(std::vector<std::pair<std::string, double>>& s) const {
  if (!weight_cache_) return;
  s.emplace_back("weight_input_uploads", (double)weight_cache_->uploads);
  s.emplace_back("weight_input_slot_copies", (double)weight_cache_->slot_copies);
}

}  // namespace ogx::vk::graph
