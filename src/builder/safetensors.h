// Minimal safetensors reader: 8-byte little-endian header length, JSON header, raw data. Single file or
// sharded (model.safetensors.index.json). Files are memory-mapped; tensors are read row by row as fp32.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/mapped_file.h"

namespace ogx::builder {

enum class StDtype { F32, F16, BF16 };

struct StTensor {
  std::string name;
  StDtype dtype = StDtype::F32;
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;  // inside the mapped file
  size_t nbytes = 0;
  int64_t numel() const;
  int64_t row_size() const;  // elements per row of dim 0 (numel for 1-D)
};

class SafeTensors {
 public:
  // Opens dir/model.safetensors.index.json (sharded) or dir/model.safetensors (or the single *.safetensors).
  static SafeTensors open_dir(const std::string& dir);
  // Parses one file and adds its tensors (throws naming the file and the tensor/field at fault).
  void add_file(const std::string& path);

  bool has(const std::string& name) const { return tensors_.count(name) != 0; }
  const StTensor& get(const std::string& name) const;  // throws "missing tensor NAME"
  // Reads rows [row0, row0 + nrows) of dim 0 converted to fp32.
  void read_rows(const StTensor& t, int64_t row0, int64_t nrows, float* out) const;
  const std::map<std::string, StTensor>& tensors() const { return tensors_; }

 private:
  std::vector<std::shared_ptr<MappedFile>> files_;
  std::map<std::string, StTensor> tensors_;
  std::string dir_;
};

}  // namespace ogx::builder
