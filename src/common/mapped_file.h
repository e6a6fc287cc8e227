// Read-only memory map of a whole file. Weights are used in place from the map (no copy).
#pragma once
#include <cstddef>
#include <memory>
#include <string>

namespace ogx {

class MappedFile {
 public:
  static std::shared_ptr<MappedFile> open(const std::string& path);  // throws ogx::Error naming the path
  ~MappedFile();
  const void* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // When [p, p + n) lies inside a live MappedFile, drops its resident whole pages from the process (else does
  // nothing): maps are read-only and private, so the bytes stay what they were and a later read faults them back
  // in from the file. For weights a provider has copied into its own layout, so they do not count twice in memory.
  static void release_if_mapped(const void* p, size_t n);

 private:
  MappedFile() = default;
  void* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

}  // namespace ogx
