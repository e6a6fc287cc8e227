// .onnx_adapter (ONNX Runtime's flatbuffers adapter file): the bytes parsed and verified, then every parameter's
// tensor read end to end (a borrowed view must lie inside the input).
#include <memory>

#include "fuzz_util.h"
#include "onnx/adapter_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ogx::fuzz::expect_clean([&] {
    // A copy the tensors may borrow (libFuzzer's buffer is exactly `size` bytes: ASan sees any read past it).
    auto bytes = std::make_shared<std::vector<uint8_t>>(data, data + size);
    ogx::AdapterFile f = ogx::parse_adapter_bytes(bytes->data(), bytes->size(), bytes, "fuzz input");
    volatile uint8_t sink = 0;
    for (const auto& p : f.parameters) {
      const auto* b = static_cast<const uint8_t*>(p.tensor.raw());
      for (size_t i = 0; i < p.tensor.bytes(); i++) sink = sink ^ b[i];
    }
  });
  return 0;
}
