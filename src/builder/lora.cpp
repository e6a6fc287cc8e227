#include "builder/lora.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "builder/decoder_graph.h"
#include "builder/graph_writer.h"
#include "builder/hf_config.h"
#include "common/checked.h"
#include "common/error.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ogx::builder {

namespace {

const char* kPrefix = "base_model.model.";

// PEFT's key matching for rank_pattern / alpha_pattern: the key is a regex matching the module's name or a suffix
// of it after a dot.
bool peft_key_matches(const std::string& module, const std::string& key) {
  try {
    return std::regex_match(module, std::regex("(.*\\.)?(" + key + ")"));
  } catch (const std::regex_error&) {
    throw_error("adapter_config.json: pattern key '", key, "' is not a valid regular expression");
  }
}

}  // namespace

std::shared_ptr<PeftAdapter> PeftAdapter::open(const std::string& dir) {
  auto a = std::make_shared<PeftAdapter>();
  a->dir_ = dir;
  a->name_ = fs::path(dir).lexically_normal().filename().string();
  if (a->name_.empty() || a->name_ == ".") a->name_ = fs::path(dir).lexically_normal().parent_path().filename().string();
  if (a->name_.empty()) a->name_ = "adapter";
  const std::string cfg_path = (fs::path(dir) / "adapter_config.json").string();
  OGX_CHECK(fs::exists(cfg_path), "--adapter ", dir, ": no adapter_config.json (a PEFT LoRA folder has one)");
  a->config_ = read_json_file(cfg_path);
  const json& c = a->config_;
  OGX_CHECK(c.is_object(), cfg_path, ": not a JSON object");
  const std::string type = c.value("peft_type", std::string("LORA"));
  OGX_CHECK(type == "LORA", cfg_path, ": peft_type '", type, "' is not supported (LoRA only)");
  OGX_CHECK(!c.value("use_dora", false), cfg_path, ": use_dora (DoRA) is not supported");
  OGX_CHECK(!c.value("fan_in_fan_out", false), cfg_path, ": fan_in_fan_out (Conv1D layers) is not supported");
  const std::string bias = c.contains("bias") && c["bias"].is_string() ? c["bias"].get<std::string>() : "none";
  OGX_CHECK(bias == "none", cfg_path, ": bias '", bias, "' is not supported (LoRA bias terms)");
  OGX_CHECK(!c.contains("modules_to_save") || c["modules_to_save"].is_null() ||
                (c["modules_to_save"].is_array() && c["modules_to_save"].empty()),
            cfg_path, ": modules_to_save (fully replaced modules) is not supported");
  OGX_CHECK(c.contains("lora_alpha") && c["lora_alpha"].is_number(), cfg_path, ": missing numeric lora_alpha");
  const std::string st_path = (fs::path(dir) / "adapter_model.safetensors").string();
  if (!fs::exists(st_path)) {
    OGX_CHECK(!fs::exists(fs::path(dir) / "adapter_model.bin"), "--adapter ", dir,
              ": adapter_model.bin (a pickle) is not read; save the adapter with safe_serialization=True");
    throw_error("--adapter ", dir, ": no adapter_model.safetensors");
  }
  a->st_.add_file(st_path);
  for (const auto& [name, t] : a->st_.tensors()) {
    const bool lora = name.find(".lora_A.") != std::string::npos || name.find(".lora_B.") != std::string::npos;
    OGX_CHECK(lora, st_path, ": tensor '", name, "' is not a LoRA A/B matrix (unsupported adapter content)");
    OGX_CHECK(t.shape.size() == 2, st_path, ": tensor '", name, "' must be 2-D, got rank ", t.shape.size());
  }
  return a;
}

std::string PeftAdapter::key(const std::string& module, const char* which) const {
  for (const std::string& k : {std::string(kPrefix) + module + "." + which + ".weight",
                               std::string(kPrefix) + module + "." + which + ".default.weight"})
    if (st_.has(k)) return k;
  return "";
}

float PeftAdapter::alpha_for(const std::string& module) const {
  if (config_.contains("alpha_pattern") && config_["alpha_pattern"].is_object())
    for (auto& [k, v] : config_["alpha_pattern"].items())
      if (v.is_number() && peft_key_matches(module, k)) return v.get<float>();
  return config_["lora_alpha"].get<float>();
}

std::optional<LoraWeights> PeftAdapter::find(const std::string& module, int64_t out, int64_t in, int64_t row0,
                                             int64_t nrows) {
  const std::string ka = key(module, "lora_A"), kb = key(module, "lora_B");
  if (ka.empty() && kb.empty()) return std::nullopt;
  OGX_CHECK(!ka.empty() && !kb.empty(), "adapter ", dir_, ": ", module, " has only one of lora_A / lora_B");
  used_.insert(ka);
  used_.insert(kb);
  const StTensor& A = st_.get(ka);
  const StTensor& B = st_.get(kb);
  const int64_t r = A.shape[0];
  OGX_CHECK(r > 0 && A.shape[1] == in, "adapter ", dir_, ": ", ka, " is ", shape_str(A.shape), ", expected [r, ", in,
            "]");
  OGX_CHECK(B.shape[0] == out && B.shape[1] == r, "adapter ", dir_, ": ", kb, " is ", shape_str(B.shape),
            ", expected [", out, ", ", r, "]");
  auto source = [this](const StTensor& t, const std::string& name) {
    Source s;
    s.name = name;
    s.rows = t.shape[0];
    s.cols = t.shape[1];
    const StTensor* tp = &t;
    s.read = [this, tp](int64_t r0, int64_t n, float* dst) { st_.read_rows(*tp, r0, n, dst); };
    return s;
  };
  LoraWeights w;
  w.rank = r;
  w.A = source(A, ka);
  w.B = source(B, kb);
  if (nrows >= 0) w.B = slice_rows(w.B, row0, nrows, kb + "[rows]");
  const double alpha = alpha_for(module);
  const bool rs = config_.value("use_rslora", false);
  w.scale = (float)(rs ? alpha / std::sqrt((double)r) : alpha / (double)r);
  return w;
}

std::vector<std::string> PeftAdapter::unused() const {
  std::vector<std::string> out;
  for (const auto& [name, t] : st_.tensors())
    if (!used_.count(name)) out.push_back(name);
  return out;
}

namespace {

// W' = W + scale * B A for adapted projections; everything else passes through.
class MergedProvider : public WeightProvider {
 public:
  MergedProvider(WeightProvider& base, std::shared_ptr<PeftAdapter> lora) : base_(base), lora_(std::move(lora)) {}
  Source get(const std::string& name, const std::vector<int64_t>& shape) override {
    Source w = base_.get(name, shape);
    const std::string suffix = ".weight";
    if (shape.size() != 2 || name.size() <= suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      return w;
    auto l = lora_->find(name.substr(0, name.size() - suffix.size()), shape[0], shape[1]);
    if (!l) return w;
    auto A = std::make_shared<std::vector<float>>(read_all(l->A));  // [r, in]
    Source B = l->B;
    const float scale = l->scale;
    const int64_t r = l->rank, cols = w.cols;
    Source m = w;
    m.name = name + " (LoRA merged)";
    m.read = [w, B, A, scale, r, cols](int64_t r0, int64_t n, float* out) {
      w.read(r0, n, out);
      std::vector<float> b((size_t)(n * r));
      B.read(r0, n, b.data());
      for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < r; k++) {
          const float c = scale * b[(size_t)(i * r + k)];
          const float* a = A->data() + k * cols;
          float* o = out + i * cols;
          for (int64_t j = 0; j < cols; j++) o[j] += c * a[j];
        }
    };
    return m;
  }
  bool has_nonzero(const std::string& name, const std::vector<int64_t>& shape) override {
    return base_.has_nonzero(name, shape);
  }
  std::vector<std::string> unused_nonzero() const override { return base_.unused_nonzero(); }

 private:
  WeightProvider& base_;
  std::shared_ptr<PeftAdapter> lora_;
};

// Records the 2-D projection weights ("..._proj.weight") a graph asks for, with their shapes.
class ProjectionRecorder : public WeightProvider {
 public:
  explicit ProjectionRecorder(WeightProvider& inner) : inner_(inner) {}
  Source get(const std::string& name, const std::vector<int64_t>& shape) override {
    const std::string suffix = "_proj.weight";
    if (shape.size() == 2 && name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 && !seen_.count(name)) {
      seen_[name] = shape;
      order_.push_back(name);
    }
    return inner_.get(name, shape);
  }
  bool has_nonzero(const std::string& name, const std::vector<int64_t>& shape) override {
    return inner_.has_nonzero(name, shape);
  }
  std::vector<std::string> order_;
  std::map<std::string, std::vector<int64_t>> seen_;

 private:
  WeightProvider& inner_;
};

}  // namespace

std::unique_ptr<WeightProvider> make_merged_provider(WeightProvider& base, std::shared_ptr<PeftAdapter> lora) {
  return std::make_unique<MergedProvider>(base, std::move(lora));
}

void write_random_lora(const std::string& config_path, const std::string& out_dir, const RandomLoraOptions& o) {
  OGX_CHECK(o.rank > 0 && o.rank <= 4096, "--lora-r must be in [1, 4096], got ", o.rank);
  json config = read_json_file(config_path);
  HfConfig cfg = parse_hf_config(config, json());
  auto shape_weights = make_random_provider(1, cfg.arch == Arch::qwen2);
  ProjectionRecorder rec(*shape_weights);
  GraphWriter scratch;  // only the projection list is needed
  build_decoder_graph(cfg, GraphSettings{Precision::fp32, Provider::cpu, 32, true}, rec, scratch);
  std::set<std::string> found;
  std::vector<std::pair<std::string, std::vector<int64_t>>> tensors;  // safetensors name, shape
  for (const std::string& w : rec.order_) {
    const std::string module = w.substr(0, w.size() - 7);  // without ".weight"
    const std::string leaf = module.substr(module.rfind('.') + 1);
    if (!o.targets.empty() && std::find(o.targets.begin(), o.targets.end(), leaf) == o.targets.end()) continue;
    found.insert(leaf);
    const auto& s = rec.seen_.at(w);
    tensors.push_back({kPrefix + module + ".lora_A.weight", {o.rank, s[1]}});
    tensors.push_back({kPrefix + module + ".lora_B.weight", {s[0], o.rank}});
  }
  for (const std::string& t : o.targets)
    OGX_CHECK(found.count(t), "--lora-targets: the ", cfg.architecture, " graph has no projection '", t, "'");
  OGX_CHECK(!tensors.empty(), "--save-lora: no projection to adapt");
  auto random = make_random_provider(o.seed, false, o.stddev);
  json header = json::object();
  size_t offset = 0;
  for (const auto& [name, shape] : tensors) {
    const size_t n = bytes_checked(shape, DType::f32, "tensor " + name);
    header[name] = {{"dtype", "F32"}, {"shape", shape}, {"data_offsets", {offset, offset + n}}};
    offset += n;
  }
  std::string hs = header.dump();
  hs.resize((hs.size() + 7) / 8 * 8, ' ');
  fs::create_directories(out_dir);
  const std::string path = (fs::path(out_dir) / "adapter_model.safetensors").string();
  std::ofstream out(path, std::ios::binary);
  uint64_t len = hs.size();
  out.write(reinterpret_cast<const char*>(&len), 8);
  out.write(hs.data(), (std::streamsize)hs.size());
  for (const auto& [name, shape] : tensors) {
    std::vector<float> buf = read_all(random->get(name, shape));
    out.write(reinterpret_cast<const char*>(buf.data()), (std::streamsize)(buf.size() * 4));
  }
  if (!out) throw_error("cannot write ", path);
  json targets = json::array();
  for (const std::string& t : found) targets.push_back(t);
  json ac = {{"peft_type", "LORA"},      {"task_type", "CAUSAL_LM"}, {"r", o.rank},
             {"lora_alpha", o.alpha},    {"use_rslora", o.rslora},  {"target_modules", targets},
             {"lora_dropout", 0.0},      {"bias", "none"},          {"fan_in_fan_out", false},
             {"use_dora", false},        {"modules_to_save", nullptr}, {"rank_pattern", json::object()},
             {"alpha_pattern", json::object()}, {"base_model_name_or_path", config_path}, {"inference_mode", true}};
  std::ofstream(fs::path(out_dir) / "adapter_config.json") << ac.dump(2) << "\n";
}

}  // namespace ogx::builder
