// File reading with transparent .xz decompression (liblzma).
#include <lzma.h>
#include <sys/stat.h>

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
std::string xz_decompress(const std::string& in, const std::string& path) {
  lzma_stream strm = LZMA_STREAM_INIT;
  if (lzma_stream_decoder(&strm, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK) throw_error(path, ": cannot start the xz decoder");
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
  } while (ret == LZMA_OK);
  lzma_end(&strm);
  if (ret != LZMA_STREAM_END) throw_error(path, ": corrupt xz data (liblzma error ", static_cast<int>(ret), ")");
  return out;
}
}  // namespace

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw_error(path, ": cannot open file");
  std::ostringstream ss;
  ss << f.rdbuf();
  std::string data = ss.str();
  if (path.size() > 3 && path.compare(path.size() - 3, 3, ".xz") == 0) return xz_decompress(data, path);
  return data;
}

}  // namespace ogx::tok
