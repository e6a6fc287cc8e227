// Host store of the external-data bytes of a built model: one contiguous buffer laid out exactly like
// model.onnx.data, so writing the file is a single sequential stream and the engine can use it in place.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace ogx::builder {

class WeightStore {
 public:
  WeightStore() = default;
  explicit WeightStore(size_t size);
  WeightStore(WeightStore&&) noexcept;
  WeightStore& operator=(WeightStore&&) noexcept;
  ~WeightStore();

  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  // Bytes of an initializer by its external-data (offset, length); throws naming the range when outside.
  const uint8_t* at(size_t offset, size_t length) const;
  void write_file(const std::string& path) const;  // streams the buffer in chunks

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace ogx::builder
