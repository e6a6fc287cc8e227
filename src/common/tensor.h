// Tensor: dtype + shape + a view into shared storage. Storage is host memory: owned (aligned heap) or borrowed
// (a memory-mapped weight file kept alive by the owner pointer). Providers with device memory keep their own
// buffers; Tensor is the exchange type at the session boundary and the CPU provider's working type.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/dtype.h"
#include "common/error.h"

namespace ogx {

using Shape = std::vector<int64_t>;

int64_t shape_numel(const Shape& s);  // product of dims (1 for a scalar); throws on negative or overflow
std::string shape_str(const Shape& s);  // "[2,3,4]"

struct Storage {
  void* data = nullptr;
  size_t bytes = 0;     // visible size
  size_t capacity = 0;  // allocated size (owned storage)
  std::shared_ptr<const void> keep_alive;  // set for borrowed memory (mmap); null when owned
  bool owned = false;
  ~Storage();
  static std::shared_ptr<Storage> allocate(size_t bytes);  // 64-byte aligned, not zeroed
  static std::shared_ptr<Storage> borrow(void* data, size_t bytes, std::shared_ptr<const void> owner);
};

class Tensor {
 public:
  Tensor() = default;
  Tensor(DType dtype, Shape shape);  // allocates
  Tensor(DType dtype, Shape shape, std::shared_ptr<Storage> storage, size_t offset = 0);

  static Tensor zeros(DType dtype, Shape shape);

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t dim(int i) const { return shape_[i < 0 ? i + (int)shape_.size() : i]; }
  int rank() const { return (int)shape_.size(); }
  int64_t numel() const { return numel_; }
  size_t bytes() const { return (size_t)numel_ * dtype_size(dtype_); }
  bool empty() const { return storage_ == nullptr; }
  const std::shared_ptr<Storage>& storage() const { return storage_; }
  size_t offset() const { return offset_; }

  void* raw() { return storage_ ? (char*)storage_->data + offset_ : nullptr; }
  const void* raw() const { return storage_ ? (const char*)storage_->data + offset_ : nullptr; }
  template <typename T> T* data() { return static_cast<T*>(raw()); }
  template <typename T> const T* data() const { return static_cast<const T*>(raw()); }

  // Same storage, new shape with the same element count.
  Tensor reshaped(Shape shape) const;
  // Deep copy into fresh storage.
  Tensor clone() const;
  // Reads element i as double / int64 whatever the dtype (for shape-only values and tests).
  double get_f64(int64_t i) const;
  int64_t get_i64(int64_t i) const;
  // Values of an integer tensor as int64 (shape tensors).
  std::vector<int64_t> to_i64_vector() const;
  // Converts a float tensor (f32/f16/bf16/f64) to a new f32 tensor.
  Tensor to_f32() const;
  // Elements [offset, offset + n) of a float tensor as f32 into out (memcpy for f32, F16C for f16 when present).
  void read_f32(int64_t offset, int64_t n, float* out) const;
  // Converts an f32 tensor to dtype t (float types only).
  Tensor cast_float(DType t) const;

 private:
  DType dtype_ = DType::undefined;
  Shape shape_;
  int64_t numel_ = 0;
  std::shared_ptr<Storage> storage_;
  size_t offset_ = 0;
};

}  // namespace ogx
