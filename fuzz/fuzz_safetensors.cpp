// safetensors: the whole file (8-byte header length, JSON header, data), then every tensor read as fp32 rows.
#include <unistd.h>

#include <fstream>

#include "builder/safetensors.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // /dev/shm: a file write per input costs little there.
  static const std::string path = std::string(::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp") +
                                  "/ogx_fuzz_safetensors_" + std::to_string(::getpid()) + ".safetensors";
  static const struct Cleanup {
    ~Cleanup() { ::unlink(path.c_str()); }
  } cleanup;
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), (std::streamsize)size);
  }
  ogx::fuzz::expect_clean([&] {
    ogx::builder::SafeTensors st;
    st.add_file(path);
    std::vector<float> row;
    for (const auto& [name, t] : st.tensors()) {
      const int64_t rows = t.shape.size() <= 1 ? 1 : t.shape[0];
      if (rows == 0 || t.row_size() > (1 << 20)) continue;
      row.resize((size_t)t.row_size());
      st.read_rows(t, rows - 1, 1, row.data());
    }
  });
  return 0;
}
