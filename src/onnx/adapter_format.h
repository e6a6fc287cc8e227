// ONNX Runtime's LoRA adapter file (.onnx_adapter, adapter_format.fbs): a flatbuffer holding format, adapter and
// model versions and named tensors. read_adapter_file maps the file and returns tensors that borrow the map (no
// copy); every offset, size, dtype and shape is checked first (flatbuffers' verifier for the structure, then the
// tensors), so a bad file is an ogx::Error naming the file and the parameter, never a crash.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/tensor.h"

namespace ogx {

inline constexpr int kAdapterFormatVersion = 1;  // the only version ONNX Runtime writes and reads

struct AdapterParameter {
  std::string name;  // the graph input it feeds, e.g. "model.layers.0.attn.q_proj.lora_A.weight"
  Tensor tensor;     // any shape the file gives ([K, r] / [r, N] for LoRA A / B); borrows the file's bytes
};

struct AdapterFile {
  int format_version = kAdapterFormatVersion;
  int adapter_version = 0;
  int model_version = 0;
  std::vector<AdapterParameter> parameters;  // in file order, names unique
};

// Maps `path` and parses it (throws naming the path).
AdapterFile read_adapter_file(const std::string& path);
// Parses bytes kept alive by `owner`; `what` names them in errors. Tensors borrow the bytes when aligned for their
// dtype, else they are copied.
AdapterFile parse_adapter_bytes(const uint8_t* data, size_t size, std::shared_ptr<const void> owner,
                                const std::string& what);
// The file's bytes, laid out as ONNX Runtime's AdapterFormatBuilder lays them out.
std::vector<uint8_t> serialize_adapter(const AdapterFile& adapter);
void write_adapter_file(const AdapterFile& adapter, const std::string& path);

}  // namespace ogx
