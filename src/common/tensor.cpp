#include "common/tensor.h"

#include <cpuid.h>
#include <immintrin.h>

#include <cstdlib>
#include <cstring>
#include <limits>

#include "common/checked.h"
#include "common/half.h"

// F16C (CPUID.1:ECX bit 29), read directly: clang's __builtin_cpu_supports does not know "f16c".
static bool cpu_has_f16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
}

namespace ogx {

int64_t shape_numel(const Shape& s) { return numel_checked(s, "tensor shape"); }

std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); i++) r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

Storage::~Storage() {
  if (owned) std::free(data);
}

// Errors name no tensor here: Tensor's constructor and the graph executor add the tensor and the node.
std::shared_ptr<Storage> Storage::allocate(size_t bytes) {
  OGX_CHECK(bytes <= kMaxBytes, "cannot allocate ", bytes, " bytes: more than the ", kMaxBytes, "-byte limit");
  auto s = std::make_shared<Storage>();
  size_t rounded = (bytes + 63) / 64 * 64;
  if (rounded == 0) rounded = 64;
  s->data = std::aligned_alloc(64, rounded);
  if (!s->data) throw_error("out of host memory allocating ", bytes, " bytes");
  s->bytes = bytes;
  s->capacity = rounded;
  s->owned = true;
  return s;
}

std::shared_ptr<Storage> Storage::borrow(void* data, size_t bytes, std::shared_ptr<const void> owner) {
  auto s = std::make_shared<Storage>();
  s->data = data;
  s->bytes = bytes;
  s->keep_alive = std::move(owner);
  return s;
}

Tensor::Tensor(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  OGX_CHECK(dtype_size(dtype_) > 0, "cannot allocate a tensor of ", dtype_name(dtype_));
  numel_ = shape_numel(shape_);
  uint64_t b = 0;
  // The message is built only on failure: tensors are created on every kernel call.
  const auto what = [&] { return "a " + dtype_name(dtype_) + " " + shape_str(shape_) + " tensor"; };
  if (__builtin_mul_overflow((uint64_t)numel_, (uint64_t)dtype_size(dtype_), &b) || b > kMaxBytes)
    bytes_checked(shape_, dtype_, what());  // throws with the sizes
  if (b > host_memory_bytes()) check_host_bytes(b, what());
  try {
    storage_ = Storage::allocate(b);
  } catch (const Error&) {
    throw_error("out of host memory allocating ", b, " bytes for ", what());
  }
}

Tensor::Tensor(DType dtype, Shape shape, std::shared_ptr<Storage> storage, size_t offset)
    : dtype_(dtype), shape_(std::move(shape)), storage_(std::move(storage)), offset_(offset) {
  numel_ = shape_numel(shape_);
  const size_t need = bytes_checked(shape_, dtype_, "tensor view");
  OGX_CHECK(storage_ && offset_ <= storage_->bytes && need <= storage_->bytes - offset_, "tensor view ",
            shape_str(shape_), " of ", dtype_name(dtype_), " exceeds its storage");
}

Tensor Tensor::zeros(DType dtype, Shape shape) {
  Tensor t(dtype, std::move(shape));
  std::memset(t.raw(), 0, t.bytes());
  return t;
}

Tensor Tensor::reshaped(Shape shape) const {
  OGX_CHECK(shape_numel(shape) == numel_, "cannot reshape ", shape_str(shape_), " to ", shape_str(shape));
  return Tensor(dtype_, std::move(shape), storage_, offset_);
}

Tensor Tensor::clone() const {
  Tensor t(dtype_, shape_);
  if (bytes()) std::memcpy(t.raw(), raw(), bytes());
  return t;
}

double Tensor::get_f64(int64_t i) const {
  const void* p = raw();
  switch (dtype_) {
    case DType::f32: return ((const float*)p)[i];
    case DType::f64: return ((const double*)p)[i];
    case DType::f16: return f16_to_f32(((const uint16_t*)p)[i]);
    case DType::bf16: return bf16_to_f32(((const uint16_t*)p)[i]);
    default: return (double)get_i64(i);
  }
}

int64_t Tensor::get_i64(int64_t i) const {
  const void* p = raw();
  switch (dtype_) {
    case DType::i64: return ((const int64_t*)p)[i];
    case DType::i32: return ((const int32_t*)p)[i];
    case DType::i16: return ((const int16_t*)p)[i];
    case DType::i8: return ((const int8_t*)p)[i];
    case DType::u64: return (int64_t)((const uint64_t*)p)[i];
    case DType::u32: return ((const uint32_t*)p)[i];
    case DType::u16: return ((const uint16_t*)p)[i];
    case DType::u8: case DType::boolean: return ((const uint8_t*)p)[i];
    case DType::f32: case DType::f64: case DType::f16: case DType::bf16: return (int64_t)get_f64(i);
    default: throw_error("cannot read elements of ", dtype_name(dtype_));
  }
}

std::vector<int64_t> Tensor::to_i64_vector() const {
  std::vector<int64_t> v((size_t)numel_);
  for (int64_t i = 0; i < numel_; i++) v[i] = get_i64(i);
  return v;
}

namespace {
__attribute__((target("f16c,avx"))) void f16_to_f32_f16c(const uint16_t* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
  for (; i < n; i++) out[i] = f16_to_f32(in[i]);
}
}  // namespace

void Tensor::read_f32(int64_t offset, int64_t n, float* out) const {
  OGX_CHECK(is_float(dtype_), "read_f32 needs a float tensor, got ", dtype_name(dtype_));
  OGX_CHECK(offset >= 0 && n >= 0 && offset + n <= numel_, "read_f32: range [", offset, ", ", offset + n,
            ") outside ", numel_, " elements");
  if (dtype_ == DType::f32) {
    std::memcpy(out, data<float>() + offset, (size_t)n * 4);
  } else if (dtype_ == DType::f16 && cpu_has_f16c() && __builtin_cpu_supports("avx")) {
    f16_to_f32_f16c(data<uint16_t>() + offset, out, n);
  } else {
    for (int64_t i = 0; i < n; i++) out[i] = (float)get_f64(offset + i);
  }
}

Tensor Tensor::to_f32() const {
  OGX_CHECK(is_float(dtype_), "to_f32 needs a float tensor, got ", dtype_name(dtype_));
  Tensor t(DType::f32, shape_);
  read_f32(0, numel_, t.data<float>());
  return t;
}

Tensor Tensor::cast_float(DType to) const {
  OGX_CHECK(dtype_ == DType::f32, "cast_float needs float32 input");
  Tensor t(to, shape_);
  const float* s = data<float>();
  for (int64_t i = 0; i < numel_; i++) {
    switch (to) {
      case DType::f32: t.data<float>()[i] = s[i]; break;
      case DType::f64: t.data<double>()[i] = s[i]; break;
      case DType::f16: t.data<uint16_t>()[i] = f32_to_f16(s[i]); break;
      case DType::bf16: t.data<uint16_t>()[i] = f32_to_bf16(s[i]); break;
      default: throw_error("cast_float to ", dtype_name(to), " unsupported");
    }
  }
  return t;
}

}  // namespace ogx
