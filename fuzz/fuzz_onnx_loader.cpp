// ONNX loader: model bytes + one external data blob. Input: 4-byte little-endian model length, the model bytes,
// then the external data (every `location` resolves to it). The model is parsed as load_model parses a file.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/onnx_pb.h>

#include <climits>
#include <cstring>

#include "fuzz_util.h"
#include "onnx/loader.h"

namespace {
struct Blob : ogx::ExternalDataSource {
  std::shared_ptr<ogx::Storage> st;
  std::shared_ptr<ogx::Storage> get(const std::string&) override { return st; }
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  uint32_t model_len = 0;
  std::memcpy(&model_len, data, 4);
  model_len = std::min<uint32_t>(model_len, (uint32_t)(size - 4));
  const uint8_t* model = data + 4;
  onnx::ModelProto proto;
  google::protobuf::io::ArrayInputStream ais(model, (int)model_len);
  google::protobuf::io::CodedInputStream cis(&ais);
  cis.SetTotalBytesLimit(INT_MAX);
  cis.SetRecursionLimit(256);
  if (!proto.ParseFromCodedStream(&cis)) return 0;
  Blob blob;
  const size_t ext = size - 4 - model_len;
  blob.st = ogx::Storage::allocate(ext);
  if (ext) std::memcpy(blob.st->data, model + model_len, ext);
  ogx::fuzz::expect_clean([&] { ogx::load_model_proto(proto, ".", &blob); });
  return 0;
}
