#include "common/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <set>

#include "common/error.h"

namespace ogx {

namespace {

// Live maps, so release_if_mapped can tell a map's memory from any other (never destroyed: maps may outlive
// static destruction).
std::mutex& maps_mutex() {
  static auto* m = new std::mutex;
  return *m;
}
std::set<const MappedFile*>& live_maps() {
  static auto* s = new std::set<const MappedFile*>;
  return *s;
}

}  // namespace

std::shared_ptr<MappedFile> MappedFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_error("cannot open '", path, "': ", std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw_error("'", path, "' is not a regular file");
  }
  std::shared_ptr<MappedFile> m(new MappedFile());
  m->path_ = path;
  m->size_ = (size_t)st.st_size;
  if (m->size_ > 0) {
    void* p = mmap(nullptr, m->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      throw_error("cannot map '", path, "': ", std::strerror(errno));
    }
    m->data_ = p;
    std::lock_guard<std::mutex> lock(maps_mutex());
    live_maps().insert(m.get());
  }
  ::close(fd);
  return m;
}

MappedFile::~MappedFile() {
  if (!data_) return;
  {
    std::lock_guard<std::mutex> lock(maps_mutex());
    live_maps().erase(this);
  }
  munmap(data_, size_);
}

void MappedFile::release_if_mapped(const void* p, size_t n) {
  std::lock_guard<std::mutex> lock(maps_mutex());
  const char* a = static_cast<const char*>(p);
  for (const MappedFile* m : live_maps()) {
    const char* lo = static_cast<const char*>(m->data_);
    if (!lo || a < lo || a + n > lo + m->size_) continue;
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t begin = ((uintptr_t)a + page - 1) & ~(page - 1), end = ((uintptr_t)a + n) & ~(page - 1);
    if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
    return;
  }
}

}  // namespace ogx
