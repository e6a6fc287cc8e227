#include "builder/safetensors.h"

#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "builder/hf_config.h"
#include "common/checked.h"
#include "common/error.h"
#include "common/half.h"
#include "common/json_limits.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ogx::builder {

int64_t StTensor::numel() const { return numel_checked(shape, "safetensors tensor " + name); }

int64_t StTensor::row_size() const {
  if (shape.size() <= 1) return numel();
  return shape[0] ? numel() / shape[0] : 0;
}

namespace {

StDtype parse_dtype(const std::string& s, const std::string& tensor, const std::string& path) {
  if (s == "F32") return StDtype::F32;
  if (s == "F16") return StDtype::F16;
  if (s == "BF16") return StDtype::BF16;
  throw_error(path, ": tensor ", tensor, " has unsupported dtype ", s, " (supported: F32, F16, BF16)");
}

size_t dtype_size(StDtype d) { return d == StDtype::F32 ? 4 : 2; }

StTensor parse_entry(const std::string& name, const json& e, const uint8_t* data, size_t data_size,
                     const std::string& path) {
  if (!e.is_object() || !e.contains("dtype") || !e.contains("shape") || !e.contains("data_offsets"))
    throw_error(path, ": tensor ", name, " header entry lacks dtype/shape/data_offsets");
  StTensor t;
  t.name = name;
  if (!e["dtype"].is_string()) throw_error(path, ": tensor ", name, " has a non-string dtype");
  t.dtype = parse_dtype(e["dtype"].get<std::string>(), name, path);
  if (!e["shape"].is_array()) throw_error(path, ": tensor ", name, " has a shape that is not a list");
  for (const auto& d : e["shape"]) {
    if (!d.is_number_integer() || (d.is_number_unsigned() && d.get<uint64_t>() > (uint64_t)INT64_MAX) ||
        d.get<int64_t>() < 0)
      throw_error(path, ": tensor ", name, " has a bad shape");
    t.shape.push_back(d.get<int64_t>());
  }
  const auto& off = e["data_offsets"];
  if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
    throw_error(path, ": tensor ", name, " has bad data_offsets (two non-negative integers expected)");
  uint64_t b = off[0].get<uint64_t>(), en = off[1].get<uint64_t>();
  if (b > en || en > data_size)
    throw_error(path, ": tensor ", name, " data [", b, ", ", en, ") exceeds the file's ", data_size,
                " data bytes (truncated file?)");
  const std::string what = path + ": tensor " + name;
  const uint64_t need = bytes_checked(numel_checked(t.shape, what), dtype_size(t.dtype), what);
  if (en - b != need) throw_error(what, " has ", en - b, " bytes but its shape needs ", need);
  t.data = data + b;
  t.nbytes = en - b;
  return t;
}

}  // namespace

void SafeTensors::add_file(const std::string& path) {
  auto file = MappedFile::open(path);
  const auto* base = static_cast<const uint8_t*>(file->data());
  if (file->size() < 8) throw_error(path, ": truncated safetensors file (", file->size(), " bytes)");
  uint64_t hlen = 0;
  std::memcpy(&hlen, base, 8);
  if (hlen > file->size() - 8)
    throw_error(path, ": header length ", hlen, " exceeds the file size ", file->size(), " (truncated file?)");
  json header;
  check_json_depth(std::string_view(reinterpret_cast<const char*>(base + 8), hlen), path + ": safetensors header");
  try {
    header = json::parse(base + 8, base + 8 + hlen);
  } catch (const json::exception& e) {
    throw_error(path, ": bad safetensors JSON header: ", json_error_text(e));
  }
  if (!header.is_object()) throw_error(path, ": safetensors header is not a JSON object");
  const uint8_t* data = base + 8 + hlen;
  size_t data_size = file->size() - 8 - hlen;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    if (tensors_.count(it.key())) throw_error(path, ": tensor ", it.key(), " is also in another safetensors file");
    tensors_[it.key()] = parse_entry(it.key(), it.value(), data, data_size, path);
  }
  files_.push_back(std::move(file));
}

SafeTensors SafeTensors::open_dir(const std::string& dir) {
  SafeTensors st;
  st.dir_ = dir;
  fs::path index = fs::path(dir) / "model.safetensors.index.json";
  if (fs::exists(index)) {
    json j = read_json_file(index.string());
    if (!j.contains("weight_map") || !j["weight_map"].is_object())
      throw_error(index.string(), ": missing field weight_map");
    std::set<std::string> shards;
    for (auto it = j["weight_map"].begin(); it != j["weight_map"].end(); ++it) {
      if (!it.value().is_string()) throw_error(index.string(), ": weight_map.", it.key(), " must be a file name");
      shards.insert(it.value().get<std::string>());
    }
    for (const auto& s : shards) st.add_file((fs::path(dir) / s).string());
    for (auto it = j["weight_map"].begin(); it != j["weight_map"].end(); ++it)
      if (!st.has(it.key()))
        throw_error(index.string(), ": tensor ", it.key(), " is not in shard ", it.value().get<std::string>());
    return st;
  }
  fs::path single = fs::path(dir) / "model.safetensors";
  if (fs::exists(single)) {
    st.add_file(single.string());
    return st;
  }
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".safetensors") st.add_file(e.path().string());
  if (st.tensors_.empty()) throw_error(dir, ": no model.safetensors or model.safetensors.index.json");
  return st;
}

const StTensor& SafeTensors::get(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) throw_error("missing tensor ", name, " in the safetensors of ", dir_);
  return it->second;
}

void SafeTensors::read_rows(const StTensor& t, int64_t row0, int64_t nrows, float* out) const {
  int64_t rs = t.row_size();
  int64_t n = nrows * rs;
  int64_t first = row0 * rs;
  if (t.dtype == StDtype::F32) {
    std::memcpy(out, t.data + first * 4, n * 4);
    return;
  }
  const uint8_t* p = t.data + first * 2;
  for (int64_t i = 0; i < n; i++) {
    uint16_t h;
    std::memcpy(&h, p + i * 2, 2);
    out[i] = t.dtype == StDtype::F16 ? f16_to_f32(h) : bf16_to_f32(h);
  }
}

}  // namespace ogx::builder
