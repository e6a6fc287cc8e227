// Maps a runtime DType to a C++ storage type and the type arithmetic is done in (f16/bf16 compute in float).
#pragma once
#include <cstdint>
#include <type_traits>

#include "common/half.h"
#include "common/tensor.h"

namespace ogx::cpu {

template <typename S> struct Compute { using type = S; };
template <> struct Compute<f16_t> { using type = float; };
template <> struct Compute<bf16_t> { using type = float; };
template <> struct Compute<bool> { using type = bool; };

template <typename S> inline typename Compute<S>::type load(S v) { return v; }
inline float load(f16_t v) { return f16_to_f32(v.bits); }
inline float load(bf16_t v) { return bf16_to_f32(v.bits); }

// f16/bf16 from any arithmetic value through float (clang instantiates store<f16_t, bool> for comparison ops).
template <typename S, typename C> inline S store(C v) {
  if constexpr (std::is_same_v<S, f16_t>) return f16_t{f32_to_f16(static_cast<float>(v))};
  else if constexpr (std::is_same_v<S, bf16_t>) return bf16_t{f32_to_bf16(static_cast<float>(v))};
  else return static_cast<S>(v);
}

template <typename T> struct TypeTag { using type = T; };

// Calls fn(TypeTag<S>{}) for the storage type S of dtype. Unsupported dtypes throw naming `what`.
// dispatch_numeric: every type but bool (its lambdas may use arithmetic that bool lacks).
template <typename Fn>
auto dispatch_numeric(DType t, const char* what, Fn&& fn) {
  switch (t) {
    case DType::f32: return fn(TypeTag<float>{});
    case DType::f16: return fn(TypeTag<f16_t>{});
    case DType::bf16: return fn(TypeTag<bf16_t>{});
    case DType::f64: return fn(TypeTag<double>{});
    case DType::i64: return fn(TypeTag<int64_t>{});
    case DType::i32: return fn(TypeTag<int32_t>{});
    case DType::i16: return fn(TypeTag<int16_t>{});
    case DType::i8: return fn(TypeTag<int8_t>{});
    case DType::u64: return fn(TypeTag<uint64_t>{});
    case DType::u32: return fn(TypeTag<uint32_t>{});
    case DType::u16: return fn(TypeTag<uint16_t>{});
    case DType::u8: return fn(TypeTag<uint8_t>{});
    default: throw_error(what, ": unsupported data type ", dtype_name(t));
  }
}

template <typename Fn>
auto dispatch_all(DType t, const char* what, Fn&& fn) {
  if (t == DType::boolean) return fn(TypeTag<bool>{});
  return dispatch_numeric(t, what, fn);
}

template <typename Fn>
auto dispatch_float(DType t, const char* what, Fn&& fn) {
  switch (t) {
    case DType::f32: return fn(TypeTag<float>{});
    case DType::f16: return fn(TypeTag<f16_t>{});
    case DType::bf16: return fn(TypeTag<bf16_t>{});
    case DType::f64: return fn(TypeTag<double>{});
    default: throw_error(what, ": expects a float tensor, got ", dtype_name(t));
  }
}

}  // namespace ogx::cpu
