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

 private:
  MappedFile() = default;
  void* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

}  // namespace ogx
