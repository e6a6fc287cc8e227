// MappedFile::release_if_mapped: dropping a weight file's pages from the process (after a provider copied the
// weights into its own layout) keeps every byte readable and unchanged, and memory that is not a map is untouched.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "common/mapped_file.h"

namespace ogx::test {
namespace {

TEST(MappedFile, ReleasedPagesReadBackUnchanged) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE), n = 5 * page + 123;
  std::vector<char> bytes(n);
  std::mt19937 rng(7);
  for (char& c : bytes) c = (char)(rng() & 0xff);
  std::string path = ::testing::TempDir() + "ogx_mapped_file_test.bin";
  {
    std::ofstream f(path, std::ios::binary);
    f.write(bytes.data(), (std::streamsize)n);
  }
  auto m = MappedFile::open(path);
  const char* p = static_cast<const char*>(m->data());
  ASSERT_EQ(std::vector<char>(p, p + n), bytes);
  MappedFile::release_if_mapped(p + 100, 3 * page + 50);  // partial first and last pages are kept
  MappedFile::release_if_mapped(p, n);                    // the whole map
  EXPECT_EQ(std::vector<char>(p, p + n), bytes);
  std::vector<char> heap = bytes;  // not a map: nothing happens
  MappedFile::release_if_mapped(heap.data(), heap.size());
  EXPECT_EQ(heap, bytes);
  m.reset();
  std::remove(path.c_str());
}

}  // namespace
}  // namespace ogx::test
