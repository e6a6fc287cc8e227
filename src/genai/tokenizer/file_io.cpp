// File reading with transparent .xz decompression (liblzma).
#include <lzma.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>

#include "common/error.h"
#include "genai/tokenizer/backend.h"

namespace ogx::tok {

bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

namespace {
// Decompressed size caps: a tokenizer file inflates by well under 100x (JSON vocabularies compress about 5-10x), and
// the largest published tokenizer.json is under 40 MB. A file beyond either cap is refused before it fills memory.
constexpr uint64_t kXzMaxRatio = 100;
constexpr uint64_t kXzMinCap = uint64_t(64) << 20;   // small files may still inflate to 64 MiB
constexpr uint64_t kXzMaxOutput = uint64_t(1) << 30;  // never more than 1 GiB
constexpr uint64_t kXzMemLimit = uint64_t(256) << 20;  // liblzma's own dictionary memory

std::string xz_decompress(const std::string& in, const std::string& path) {
  const uint64_t cap = std::min(kXzMaxOutput, std::max(kXzMinCap, kXzMaxRatio * (uint64_t)in.size()));
  lzma_stream strm = LZMA_STREAM_INIT;
  if (lzma_stream_decoder(&strm, kXzMemLimit, LZMA_CONCATENATED) != LZMA_OK)
    throw_error(path, ": cannot start the xz decoder");
  std::string out;
  std::vector<uint8_t> buf(1 << 20);
  strm.next_in = reinterpret_cast<const uint8_t*>(in.data());
  strm.avail_in = in.size();
  lzma_ret ret;
  do {
    strm.next_out = buf.data();
    strm.avail_out = buf.size();
    ret = lzma_code(&strm, LZMA_FINISH);
    out.append(reinterpret_cast<const char*>(buf.data()), buf.size() - strm.avail_out);
    if (out.size() > cap) {
      lzma_end(&strm);
      throw_error(path, ": decompresses to more than ", cap, " bytes (", in.size(),
                  " compressed; the limit is 100x the compressed size, at least 64 MiB and at most 1 GiB)");
    }
  } while (ret == LZMA_OK);
  lzma_end(&strm);
  if (ret == LZMA_MEMLIMIT_ERROR)
    throw_error(path, ": xz data needs more than ", kXzMemLimit >> 20, " MiB of decoder memory");
  if (ret != LZMA_STREAM_END) throw_error(path, ": corrupt xz data (liblzma error ", static_cast<int>(ret), ")");
  return out;
}
}  // namespace

std::string read_file(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) throw_error(path, ": is a directory, not a file");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw_error(path, ": cannot open file");
  std::ostringstream ss;
  ss << f.rdbuf();
  std::string data = ss.str();
  if (path.size() > 3 && path.compare(path.size() - 3, 3, ".xz") == 0) return xz_decompress(data, path);
  return data;
}

}  // namespace ogx::tok
