#include "genai/adapters.h"

#include "genai/generator.h"

namespace ogx::genai {

AdapterLease::~AdapterLease() { owner_->release(name_); }

void Adapters::load(const std::string& path, const std::string& name) {
  OGX_CHECK(!name.empty(), "an adapter needs a name");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    OGX_CHECK(!adapters_.count(name), "adapter '", name, "' is already loaded");
  }
  auto file = std::make_shared<AdapterFile>(read_adapter_file(path));
  const Graph& g = model_->session().graph();
  const DecoderConfig& d = model_->config().model.decoder;
  OGX_CHECK(!file->parameters.empty(), "adapter file '", path, "' has no parameters");
  for (const AdapterParameter& p : file->parameters) {
    const std::string where = "adapter file '" + path + "': parameter '" + p.name + "'";
    const ValueInfo* v = g.input_info(p.name);
    OGX_CHECK(v, where, " is not an input of the model (built without this adapter's LoRA inputs?)");
    OGX_CHECK(p.name != d.input_ids && p.name != d.attention_mask && p.name != d.position_ids &&
                  p.name.rfind("past_key_values.", 0) != 0,
              where, " names an input the generator sets itself");
    OGX_CHECK(v->dtype == DType::undefined || v->dtype == p.tensor.dtype(), where, " is ",
              dtype_name(p.tensor.dtype()), ", the model's input is ", dtype_name(v->dtype));
    if (v->has_shape) {
      OGX_CHECK(v->shape.size() == p.tensor.shape().size(), where, " has shape ", shape_str(p.tensor.shape()),
                ", the model's input has rank ", v->shape.size());
      for (size_t k = 0; k < v->shape.size(); k++)
        OGX_CHECK(v->shape[k].value < 0 || v->shape[k].value == p.tensor.shape()[k], where, " has shape ",
                  shape_str(p.tensor.shape()), ": dimension ", k, " must be ", v->shape[k].value);
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  OGX_CHECK(!adapters_.count(name), "adapter '", name, "' is already loaded");
  adapters_[name].file = std::move(file);
}

void Adapters::unload(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = adapters_.find(name);
  OGX_CHECK(it != adapters_.end(), "adapter '", name, "' is not loaded");
  OGX_CHECK(it->second.users == 0, "adapter '", name, "' is in use by ", it->second.users,
            " generator(s): destroy them before unloading it");
  adapters_.erase(it);
}

std::unique_ptr<AdapterLease> Adapters::acquire(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = adapters_.find(name);
  OGX_CHECK(it != adapters_.end(), "adapter '", name, "' is not loaded");
  it->second.users++;
  return std::unique_ptr<AdapterLease>(new AdapterLease(shared_from_this(), name, it->second.file));
}

void Adapters::release(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = adapters_.find(name);
  if (it != adapters_.end() && it->second.users > 0) it->second.users--;
}

std::vector<std::string> Adapters::names() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out;
  for (const auto& [n, e] : adapters_) out.push_back(n);
  return out;
}

void Generator::set_active_adapter(const std::shared_ptr<Adapters>& adapters, const std::string& name) {
  OGX_CHECK(adapters != nullptr, "set_active_adapter: no adapters");
  OGX_CHECK(&adapters->model() == model_.get(), "set_active_adapter: the adapters were created for another model");
  for (const auto& l : adapter_leases_)
    if (l->owner() == adapters.get() && l->name() == name) return;  // already active
  std::unique_ptr<AdapterLease> lease = adapters->acquire(name);
  drop_queued();  // a step queued ahead ran without this adapter: its token is recomputed with it
  for (const AdapterParameter& p : lease->file().parameters) extra_io_.set_input(p.name, p.tensor);
  adapter_leases_.push_back(std::move(lease));
}

}  // namespace ogx::genai
