// C API: the plain data objects — token sequences, tensors and string arrays.
#include <cstring>
#include <limits>

#include "api/handles.h"
#include "api/tensor_util.h"
#include "common/checked.h"

using namespace ogx::api;

size_t OgxTensor::element_count() const {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

size_t OgxTensor::byte_size() const { return element_count() * element_size(type); }

namespace ogx::api {

size_t element_size(OgxElementType type) { return element_size_of(enum_bits(type)); }

size_t element_size_of(int type_bits) {
  switch (type_bits) {
    case OgxElementType_uint8:
    case OgxElementType_int8:
    case OgxElementType_bool: return 1;
    case OgxElementType_uint16:
    case OgxElementType_int16:
    case OgxElementType_float16: return 2;
    case OgxElementType_float32:
    case OgxElementType_int32:
    case OgxElementType_uint32: return 4;
    case OgxElementType_int64:
    case OgxElementType_uint64:
    case OgxElementType_float64: return 8;
    default: return 0;
  }
}

OgxTensor make_tensor(int type_bits, std::vector<int64_t> shape, const char* fn) {
  if (element_size_of(type_bits) == 0)
    fail(OgxErrorCode_InvalidArgument, std::string(fn) + ": element type " + std::to_string(type_bits) +
                                           " is not a supported OgxElementType");
  auto type = static_cast<OgxElementType>(type_bits);
  size_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) fail(OgxErrorCode_InvalidArgument, std::string(fn) + ": negative dimension " + std::to_string(d));
    if (d != 0 && n > std::numeric_limits<size_t>::max() / element_size(type) / static_cast<size_t>(d))
      fail(OgxErrorCode_InvalidArgument, std::string(fn) + ": tensor size overflows");
    n *= static_cast<size_t>(d);
  }
  if (n * element_size(type) > ogx::kMaxBytes)  // no overflow: checked above
    fail(OgxErrorCode_InvalidArgument, std::string(fn) + ": a tensor of " + std::to_string(n) + " elements needs " +
                                           std::to_string(n * element_size(type)) + " bytes, more than the " +
                                           std::to_string(ogx::kMaxBytes) + "-byte limit");
  OgxTensor t;
  t.type = type;
  t.shape = std::move(shape);
  return t;
}

std::vector<int64_t> read_integers(const OgxTensor& t, size_t begin, size_t count, const char* fn) {
  std::vector<int64_t> out(count);
  for (size_t i = 0; i < count; i++) {
    if (t.type == OgxElementType_int32) out[i] = static_cast<const int32_t*>(t.data)[begin + i];
    else if (t.type == OgxElementType_int64) out[i] = static_cast<const int64_t*>(t.data)[begin + i];
    else fail(OgxErrorCode_InvalidArgument, std::string(fn) + ": expected an int32 or int64 tensor");
  }
  return out;
}

Tensor to_engine_tensor(const OgxTensor& t, const char* fn) {
  if (t.data == nullptr && t.byte_size() > 0) fail(OgxErrorCode_InvalidArgument, std::string(fn) + ": tensor has no data");
  Tensor out(static_cast<DType>(enum_bits(t.type)), Shape(t.shape.begin(), t.shape.end()));
  if (out.bytes() != t.byte_size())
    fail(OgxErrorCode_InvalidArgument, std::string(fn) + ": element type not supported for model inputs");
  if (t.byte_size() > 0) std::memcpy(out.raw(), t.data, t.byte_size());
  return out;
}

OgxTensor from_engine_tensor(const Tensor& t, const char* fn) {
  OgxTensor out = make_tensor(static_cast<int>(t.dtype()), std::vector<int64_t>(t.shape().begin(), t.shape().end()), fn);
  out.owned.resize(out.byte_size());
  if (out.byte_size() != t.bytes()) fail(OgxErrorCode_Internal, std::string(fn) + ": tensor size mismatch");
  if (!out.owned.empty()) std::memcpy(out.owned.data(), t.raw(), out.owned.size());
  out.data = out.owned.data();
  return out;
}

}  // namespace ogx::api

extern "C" {

// ---- sequences ----

OgxResult* OgxCreateSequences(OgxSequences** out) {
  return guard([&] {
    need(out, "OgxCreateSequences", "out");
    *out = make_handle(OgxSequences{});
  });
}

void OgxDestroySequences(OgxSequences* sequences) { destroy_handle(sequences, "OgxDestroySequences"); }

size_t OgxSequencesCount(const OgxSequences* sequences) {
  if (!is_live(sequences, Kind::sequences, "OgxSequencesCount")) return 0;
  return sequences->seqs.size();
}

OgxResult* OgxAppendTokenSequence(const int32_t* token_ptr, size_t token_count, OgxSequences* sequences) {
  return guard([&] {
    auto& s = live(sequences, "OgxAppendTokenSequence", "sequences");
    if (token_count > 0) need(token_ptr, "OgxAppendTokenSequence", "token_ptr");
    s.seqs.emplace_back(token_ptr, token_ptr + token_count);
  });
}

OgxResult* OgxAppendTokenToSequence(int32_t token, OgxSequences* sequences, size_t sequence_index) {
  return guard([&] {
    auto& s = live(sequences, "OgxAppendTokenToSequence", "sequences");
    if (sequence_index > s.seqs.size())
      fail(OgxErrorCode_InvalidArgument, "OgxAppendTokenToSequence: sequence_index " + std::to_string(sequence_index) +
                                             " is past the " + std::to_string(s.seqs.size()) + " sequences");
    if (sequence_index == s.seqs.size()) s.seqs.emplace_back();
    s.seqs[sequence_index].push_back(token);
  });
}

size_t OgxSequencesGetSequenceCount(const OgxSequences* sequences, size_t sequence_index) {
  if (!is_live(sequences, Kind::sequences, "OgxSequencesGetSequenceCount")) return 0;
  return sequence_index < sequences->seqs.size() ? sequences->seqs[sequence_index].size() : 0;
}

const int32_t* OgxSequencesGetSequenceData(const OgxSequences* sequences, size_t sequence_index) {
  if (!is_live(sequences, Kind::sequences, "OgxSequencesGetSequenceData")) return nullptr;
  static const int32_t empty = 0;  // a valid pointer for a valid index, even with no tokens
  if (sequence_index >= sequences->seqs.size()) return nullptr;
  return sequences->seqs[sequence_index].empty() ? &empty : sequences->seqs[sequence_index].data();
}

// ---- tensors ----

OgxResult* OgxCreateTensorFromBuffer(void* data, const int64_t* shape_dims, size_t shape_dims_count,
                                     OgxElementType element_type, OgxTensor** out) {
  return guard([&] {
    need(out, "OgxCreateTensorFromBuffer", "out");
    *out = nullptr;
    if (shape_dims_count > 0) need(shape_dims, "OgxCreateTensorFromBuffer", "shape_dims");
    std::vector<int64_t> shape(shape_dims, shape_dims + shape_dims_count);
    OgxTensor t = make_tensor(enum_bits(element_type), std::move(shape), "OgxCreateTensorFromBuffer");
    if (data) {
      t.data = data;
    } else {
      ogx::check_host_bytes(t.byte_size(), "OgxCreateTensorFromBuffer: the tensor");
      t.owned.assign(t.byte_size(), 0);
      t.data = t.owned.data();
    }
    *out = make_handle(std::move(t));
  });
}

void OgxDestroyTensor(OgxTensor* tensor) { destroy_handle(tensor, "OgxDestroyTensor"); }

OgxResult* OgxTensorGetType(const OgxTensor* tensor, OgxElementType* out) {
  return guard([&] {
    auto& t = live(tensor, "OgxTensorGetType", "tensor");
    need(out, "OgxTensorGetType", "out");
    *out = t.type;
  });
}

OgxResult* OgxTensorGetShapeRank(const OgxTensor* tensor, size_t* out) {
  return guard([&] {
    auto& t = live(tensor, "OgxTensorGetShapeRank", "tensor");
    need(out, "OgxTensorGetShapeRank", "out");
    *out = t.shape.size();
  });
}

OgxResult* OgxTensorGetShape(const OgxTensor* tensor, int64_t* shape_dims, size_t shape_dims_count) {
  return guard([&] {
    auto& t = live(tensor, "OgxTensorGetShape", "tensor");
    if (shape_dims_count != t.shape.size())
      fail(OgxErrorCode_InvalidArgument, "OgxTensorGetShape: shape_dims_count is " + std::to_string(shape_dims_count) +
                                             ", the tensor's rank is " + std::to_string(t.shape.size()));
    if (shape_dims_count > 0) need(shape_dims, "OgxTensorGetShape", "shape_dims");
    std::copy(t.shape.begin(), t.shape.end(), shape_dims);
  });
}

OgxResult* OgxTensorGetData(const OgxTensor* tensor, void** out) {
  return guard([&] {
    auto& t = live(tensor, "OgxTensorGetData", "tensor");
    need(out, "OgxTensorGetData", "out");
    *out = t.data;
  });
}

// ---- string arrays ----

void OgxDestroyStringArray(OgxStringArray* array) { destroy_handle(array, "OgxDestroyStringArray"); }

OgxResult* OgxStringArrayGetCount(const OgxStringArray* array, size_t* out) {
  return guard([&] {
    auto& a = live(array, "OgxStringArrayGetCount", "array");
    need(out, "OgxStringArrayGetCount", "out");
    *out = a.items.size();
  });
}

OgxResult* OgxStringArrayGetString(const OgxStringArray* array, size_t index, const char** out) {
  return guard([&] {
    auto& a = live(array, "OgxStringArrayGetString", "array");
    need(out, "OgxStringArrayGetString", "out");
    if (index >= a.items.size())
      fail(OgxErrorCode_InvalidArgument, "OgxStringArrayGetString: index " + std::to_string(index) + " is past the " +
                                             std::to_string(a.items.size()) + " strings");
    *out = a.items[index].c_str();
  });
}

}  // extern "C"
