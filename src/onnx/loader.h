// Loads an ONNX model file into the graph IR. External data (location/offset/length) is memory-mapped and
// tensors point into the map. Every inconsistency is an ogx::Error naming the tensor or node.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "onnx/graph.h"

namespace onnx {
class ModelProto;
class TensorProto;
}

namespace ogx {

class MappedFile;

struct Model {
  Graph graph;
  int64_t ir_version = 0;
  std::string producer;
  std::string path;                                  // model.onnx path ("" when built in memory)
  std::vector<std::shared_ptr<MappedFile>> mapped;   // external data files kept alive
};

// Resolves external data of a proto loaded from memory: location -> bytes. Returns nullptr when unknown.
struct ExternalDataSource {
  virtual ~ExternalDataSource() = default;
  // Returns a storage covering the whole named file/blob, or nullptr.
  virtual std::shared_ptr<Storage> get(const std::string& location) = 0;
};

std::shared_ptr<Model> load_model(const std::string& path);
// Named byte blobs held in memory (Config.add_model_data): file name -> bytes.
using MemoryBlobs = std::map<std::string, std::shared_ptr<const std::vector<uint8_t>>>;
// As load_model(path), but when `blobs` holds path's file name the model is parsed from those bytes; external data
// is looked up in `blobs` by location first, then as files beside `path`.
std::shared_ptr<Model> load_model(const std::string& path, const MemoryBlobs& blobs);
// One TensorProto (inline or external data) as a Tensor; external data resolved through src.
Tensor tensor_from_proto(const onnx::TensorProto& t, ExternalDataSource& src);
// From an in-memory proto; external data resolved through `source` (or relative to base_dir when source is null).
std::shared_ptr<Model> load_model_proto(const onnx::ModelProto& proto, const std::string& base_dir,
                                        ExternalDataSource* source);

}  // namespace ogx
