#include "builder/weight_store.h"

#include <sys/mman.h>

#include <cstdio>
#include <utility>

#include "common/error.h"
#include "common/progress.h"

namespace ogx::builder {

// Anonymous mmap: pages are only committed when a tensor is written, and freed at once on destruction.
WeightStore::WeightStore(size_t size) : size_(size) {
  if (size == 0) return;
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw_error("weight store: cannot allocate ", size, " bytes");
  data_ = static_cast<uint8_t*>(p);
}

WeightStore::WeightStore(WeightStore&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}

WeightStore& WeightStore::operator=(WeightStore&& o) noexcept {
  if (this != &o) {
    if (data_) munmap(data_, size_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

WeightStore::~WeightStore() {
  if (data_) munmap(data_, size_);
}

const uint8_t* WeightStore::at(size_t offset, size_t length) const {
  if (offset > size_ || length > size_ - offset)
    throw_error("weight store: range [", offset, ", +", length, ") is outside the ", size_, "-byte store");
  return data_ + offset;
}

void WeightStore::write_file(const std::string& path) const {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw_error("cannot create ", path);
  constexpr size_t kChunk = size_t(64) << 20;
  for (size_t off = 0; off < size_; off += kChunk) {
    progress::report("writing model.onnx.data", off, size_);
    size_t n = std::min(kChunk, size_ - off);
    if (std::fwrite(data_ + off, 1, n, f) != n) {
      std::fclose(f);
      throw_error("write failed: ", path, " at offset ", off);
    }
  }
  if (std::fclose(f) != 0) throw_error("write failed: ", path);
  progress::report("writing model.onnx.data", size_, size_);
}

}  // namespace ogx::builder
