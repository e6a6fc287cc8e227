// write_random_checkpoint: a Hugging Face folder (config.json + model.safetensors) holding seeded random weights
// of a config's shape. The tensor list is whatever the graph builder asks for, so the checkpoint has exactly the
// names and shapes a real one of that architecture has (fused qkv for phi3, q/k norms for qwen3, gemma2's four
// norms, biases for qwen2...). Used to test architectures against an independent reference implementation.
#include <filesystem>
#include <fstream>
#include <map>

#include "builder/builder.h"
#include "builder/decoder_graph.h"
#include "builder/graph_writer.h"
#include "builder/hf_config.h"
#include "builder/size_plan.h"
#include "builder/weight_source.h"
#include "common/checked.h"
#include "common/error.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ogx::builder {

namespace {

// Forwards to a provider and records each tensor asked for, in order.
class RecordingProvider : public WeightProvider {
 public:
  explicit RecordingProvider(WeightProvider& inner) : inner_(inner) {}
  Source get(const std::string& name, const std::vector<int64_t>& shape) override {
    if (!seen_.count(name)) {
      seen_[name] = shape;
      order_.push_back(name);
    }
    return inner_.get(name, shape);
  }
  bool has_nonzero(const std::string& name, const std::vector<int64_t>& shape) override {
    return inner_.has_nonzero(name, shape);
  }
  const std::vector<std::string>& order() const { return order_; }
  const std::vector<int64_t>& shape(const std::string& n) const { return seen_.at(n); }

 private:
  WeightProvider& inner_;
  std::map<std::string, std::vector<int64_t>> seen_;
  std::vector<std::string> order_;
};

}  // namespace

void write_random_checkpoint(const std::string& config_path, const std::string& out_dir, uint64_t seed,
                             float stddev) {
  json config = read_json_file(config_path);
  HfConfig cfg = parse_hf_config(config, json());
  // An fp32 checkpoint is written: a shape larger than the free disk space fails before a byte is written.
  const SizePlan plan = plan_sizes(cfg, Precision::fp32);
  check_fits(plan.weight_bytes, plan.params, free_disk_bytes(out_dir), "the fp32 checkpoint of " + config_path,
             "free disk space at " + out_dir);
  auto random = make_random_provider(seed, cfg.arch == Arch::qwen2, stddev);
  RecordingProvider rec(*random);
  GraphWriter scratch;  // only the tensor list is needed; initializer bytes are never produced
  build_decoder_graph(cfg, GraphSettings{Precision::fp32, Provider::cpu, 32, true}, rec, scratch);

  json header = json::object();
  size_t offset = 0;
  for (const auto& name : rec.order()) {
    const size_t n = bytes_checked(rec.shape(name), DType::f32, "tensor " + name);
    header[name] = {{"dtype", "F32"}, {"shape", rec.shape(name)}, {"data_offsets", {offset, offset + n}}};
    offset += n;
  }
  std::string hs = header.dump();
  hs.resize((hs.size() + 7) / 8 * 8, ' ');  // data 8-byte aligned, as safetensors writers pad
  fs::create_directories(out_dir);
  const std::string path = (fs::path(out_dir) / "model.safetensors").string();
  std::ofstream out(path, std::ios::binary);
  uint64_t len = hs.size();
  out.write(reinterpret_cast<const char*>(&len), 8);
  out.write(hs.data(), (std::streamsize)hs.size());
  std::vector<float> buf;
  for (const auto& name : rec.order()) {
    Source s = random->get(name, rec.shape(name));
    for (int64_t r = 0; r < s.rows; r += 256) {
      int64_t n = std::min<int64_t>(256, s.rows - r);
      buf.resize((size_t)(n * s.cols));
      s.read(r, n, buf.data());
      out.write(reinterpret_cast<const char*>(buf.data()), (std::streamsize)(buf.size() * 4));
    }
  }
  if (!out) throw_error("cannot write ", path);
  std::ofstream(fs::path(out_dir) / "config.json") << config.dump(2) << "\n";
}

}  // namespace ogx::builder
