// Element types. Values equal ONNX TensorProto::DataType so they convert by cast.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace ogx {

enum class DType : int32_t {
  undefined = 0,
  f32 = 1,
  u8 = 2,
  i8 = 3,
  u16 = 4,
  i16 = 5,
  i32 = 6,
  i64 = 7,
  string = 8,
  boolean = 9,
  f16 = 10,
  f64 = 11,
  u32 = 12,
  u64 = 13,
  bf16 = 16,
};

// Bytes per element; 0 for undefined/string.
size_t dtype_size(DType t);
// Short name ("float32", "float16", "int64", ...); "dtype(N)" for unknown codes.
std::string dtype_name(DType t);
// True when t is one of the values above (ONNX codes ogx can hold in a Tensor).
bool dtype_known(int32_t code);
inline bool is_float(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16 || t == DType::f64; }

}  // namespace ogx
