#include "common/dtype.h"

namespace ogx {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32: case DType::i32: case DType::u32: return 4;
    case DType::f64: case DType::i64: case DType::u64: return 8;
    case DType::f16: case DType::bf16: case DType::i16: case DType::u16: return 2;
    case DType::u8: case DType::i8: case DType::boolean: return 1;
    default: return 0;
  }
}

std::string dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "float32";
    case DType::f16: return "float16";
    case DType::bf16: return "bfloat16";
    case DType::f64: return "float64";
    case DType::i8: return "int8";
    case DType::u8: return "uint8";
    case DType::i16: return "int16";
    case DType::u16: return "uint16";
    case DType::i32: return "int32";
    case DType::u32: return "uint32";
    case DType::i64: return "int64";
    case DType::u64: return "uint64";
    case DType::boolean: return "bool";
    case DType::string: return "string";
    default: return "dtype(" + std::to_string(static_cast<int>(t)) + ")";
  }
}

bool dtype_known(int32_t c) {
  return (c >= 1 && c <= 13) || c == 16;
}

}  // namespace ogx
