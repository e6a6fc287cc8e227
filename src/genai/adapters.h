// LoRA adapters, as ONNX Runtime GenAI's Adapters: a registry of .onnx_adapter files loaded for one model, by name;
// a generator activates any of them (Generator::set_active_adapter) and their tensors become extra inputs of its
// every run (the graph inputs of the same names, which default to zero-rank tensors when no adapter feeds them).
// Several adapters stay loaded at once and each generator picks its own. An adapter in use by a generator cannot
// be unloaded (an error, as upstream); it is released when the generator goes away. Thread-safe.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "genai/model.h"
#include "onnx/adapter_format.h"

namespace ogx::genai {

class Adapters;

// One generator's hold on a loaded adapter: its parameters stay loaded (and the adapter cannot be unloaded) while
// the lease lives.
class AdapterLease {
 public:
  ~AdapterLease();
  AdapterLease(const AdapterLease&) = delete;
  AdapterLease& operator=(const AdapterLease&) = delete;
  const std::string& name() const { return name_; }
  const Adapters* owner() const { return owner_.get(); }
  const AdapterFile& file() const { return *file_; }

 private:
  friend class Adapters;
  AdapterLease(std::shared_ptr<Adapters> owner, std::string name, std::shared_ptr<const AdapterFile> file)
      : owner_(std::move(owner)), name_(std::move(name)), file_(std::move(file)) {}
  std::shared_ptr<Adapters> owner_;
  std::string name_;
  std::shared_ptr<const AdapterFile> file_;
};

class Adapters : public std::enable_shared_from_this<Adapters> {
 public:
  static std::shared_ptr<Adapters> create(std::shared_ptr<const Model> model) {
    return std::shared_ptr<Adapters>(new Adapters(std::move(model)));
  }
  // Reads `path` and checks every parameter against the model: a graph input of that name the caller may set,
  // of its dtype, rank and fixed dimensions (throws naming the file and the parameter). Throws when `name` is taken.
  void load(const std::string& path, const std::string& name);
  // Throws when `name` is not loaded or a generator still uses it.
  void unload(const std::string& name);
  // A lease on adapter `name` (throws when it is not loaded).
  std::unique_ptr<AdapterLease> acquire(const std::string& name);
  const Model& model() const { return *model_; }
  std::vector<std::string> names() const;

 private:
  friend class AdapterLease;
  explicit Adapters(std::shared_ptr<const Model> model) : model_(std::move(model)) {}
  void release(const std::string& name);
  struct Entry {
    std::shared_ptr<const AdapterFile> file;
    int users = 0;  // leases alive
  };
  std::shared_ptr<const Model> model_;
  mutable std::mutex mutex_;
  std::map<std::string, Entry> adapters_;
};

}  // namespace ogx::genai
