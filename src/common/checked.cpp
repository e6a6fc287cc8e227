#include "common/checked.h"

#include <sys/sysinfo.h>

#include "common/error.h"
#include "common/tensor.h"

namespace ogx {

int64_t mul_checked(int64_t a, int64_t b, std::string_view what) {
  int64_t r = 0;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r)) throw_error(what, ": size ", a, " x ", b, " overflows");
  return r;
}

uint64_t mul_checked(uint64_t a, uint64_t b, std::string_view what) {
  uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw_error(what, ": size ", a, " x ", b, " overflows");
  return r;
}

int64_t add_checked(int64_t a, int64_t b, std::string_view what) {
  int64_t r = 0;
  if (a < 0 || b < 0 || __builtin_add_overflow(a, b, &r)) throw_error(what, ": size ", a, " + ", b, " overflows");
  return r;
}

uint64_t add_checked(uint64_t a, uint64_t b, std::string_view what) {
  uint64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) throw_error(what, ": size ", a, " + ", b, " overflows");
  return r;
}

int64_t numel_checked(const std::vector<int64_t>& dims, std::string_view what) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) throw_error(what, ": negative dimension in shape ", shape_str(dims));
    if (__builtin_mul_overflow(n, d, &n)) throw_error(what, ": shape ", shape_str(dims), " has too many elements");
  }
  return n;
}

size_t bytes_checked(int64_t n, size_t elem_size, std::string_view what) {
  uint64_t b = 0;
  if (n < 0 || __builtin_mul_overflow((uint64_t)n, (uint64_t)elem_size, &b) || b > kMaxBytes)
    throw_error(what, ": ", n, " elements of ", elem_size, " bytes are more than ", kMaxBytes, " bytes");
  return (size_t)b;
}

size_t bytes_checked(const std::vector<int64_t>& dims, DType dtype, std::string_view what) {
  const int64_t n = numel_checked(dims, what);
  uint64_t b = 0;
  if (__builtin_mul_overflow((uint64_t)n, (uint64_t)dtype_size(dtype), &b) || b > kMaxBytes)
    throw_error(what, ": ", dtype_name(dtype), " ", shape_str(dims), " needs ", n, " x ", dtype_size(dtype),
                " bytes, more than the ", kMaxBytes, "-byte limit");
  return (size_t)b;
}

uint64_t host_memory_bytes() {
  static const uint64_t bytes = [] {
    struct sysinfo si {};
    if (sysinfo(&si) != 0 || si.totalram == 0) return kMaxBytes;
    return ((uint64_t)si.totalram + (uint64_t)si.totalswap) * (uint64_t)si.mem_unit;
  }();
  return bytes;
}

void check_host_bytes(uint64_t bytes, std::string_view what) {
  if (bytes > host_memory_bytes())
    throw_error(what, " needs ", bytes, " bytes, more than this machine's ", host_memory_bytes(),
                " bytes of memory and swap");
}

void check_range(uint64_t offset, uint64_t length, uint64_t size, std::string_view what) {
  uint64_t end = 0;
  if (__builtin_add_overflow(offset, length, &end) || end > size)
    throw_error(what, ": bytes [", offset, ", ", offset, " + ", length, ") lie outside the ", size, " bytes there");
}

}  // namespace ogx
