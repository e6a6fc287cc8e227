// Checked size arithmetic: the one place where dims multiply into element counts, element counts into byte sizes,
// and offsets add to lengths. Every result is checked for overflow and for the largest size an allocation or a
// mapping can have (kMaxBytes); a failure throws an ogx::Error naming `what` (a tensor, a key, a file) with the
// numbers that overflowed, never a wrapped value.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "common/dtype.h"

namespace ogx {

// Largest byte size ogx will plan for: 2^48 bytes (256 TiB, the x86-64 user address space). Any size above it is
// certainly an error (a corrupted or hostile file), and keeping sizes below it means offset + size never overflows.
inline constexpr uint64_t kMaxBytes = uint64_t(1) << 48;

// a * b for non-negative values; throws "<what>: <a> x <b> overflows" on overflow or a negative operand.
int64_t mul_checked(int64_t a, int64_t b, std::string_view what);
uint64_t mul_checked(uint64_t a, uint64_t b, std::string_view what);
// a + b for non-negative values; throws on overflow or a negative operand.
int64_t add_checked(int64_t a, int64_t b, std::string_view what);
uint64_t add_checked(uint64_t a, uint64_t b, std::string_view what);

// Product of dims (1 for a scalar); throws naming `what` on a negative dim or overflow.
int64_t numel_checked(const std::vector<int64_t>& dims, std::string_view what);
// Bytes of `dims` elements of `dtype`, at most kMaxBytes; throws naming `what` with the shape and the size.
size_t bytes_checked(const std::vector<int64_t>& dims, DType dtype, std::string_view what);
// Bytes of n elements of elem_size bytes each, at most kMaxBytes.
size_t bytes_checked(int64_t n, size_t elem_size, std::string_view what);
// Physical memory plus swap of this machine in bytes, read once (kMaxBytes when unknown).
uint64_t host_memory_bytes();
// Throws "<what> needs N bytes, more than this machine's M bytes of memory and swap" when bytes exceed
// host_memory_bytes(): such an allocation could only fail, or succeed through overcommit and get the process killed
// when its pages are touched.
void check_host_bytes(uint64_t bytes, std::string_view what);

// Checks that [offset, offset + length) lies inside a buffer of `size` bytes, without overflow; throws naming `what`.
void check_range(uint64_t offset, uint64_t length, uint64_t size, std::string_view what);

// Converts a double to an integer type T when it is an integer in T's range; false otherwise (never UB).
template <typename T>
bool double_to_int(double v, T& out) {
  static_assert(std::numeric_limits<T>::is_integer);
  // [min, max + 1) as doubles: both are 0 or powers of two, so exact.
  const double lo = (double)std::numeric_limits<T>::min();
  const double hi_exclusive = std::ldexp(1.0, std::numeric_limits<T>::digits);
  if (!(v >= lo && v < hi_exclusive)) return false;  // also false for NaN
  T t = (T)v;
  if ((double)t != v) return false;
  out = t;
  return true;
}

}  // namespace ogx
