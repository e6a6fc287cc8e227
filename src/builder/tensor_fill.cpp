#include "builder/tensor_fill.h"

#include <cstring>
#include <vector>

#include "common/half.h"

namespace ogx::builder {

namespace {

constexpr int64_t kRowsPerChunk = 64;

void store(float v, int dtype, uint8_t* dst, int64_t index) {
  if (dtype == onnx::TensorProto::FLOAT16) {
    uint16_t h = f32_to_f16(v);
    std::memcpy(dst + index * 2, &h, 2);
  } else {
    std::memcpy(dst + index * 4, &v, 4);
  }
}

}  // namespace

FillFn fill_float(Source src, int dtype, bool transpose) {
  return [src, dtype, transpose](uint8_t* dst, ThreadPool& pool) {
    const int64_t N = src.rows, K = src.cols;
    int64_t chunks = (N + kRowsPerChunk - 1) / kRowsPerChunk;
    pool.parallel_for(chunks, 1, [&](int64_t c0, int64_t c1) {
      std::vector<float> buf;
      for (int64_t c = c0; c < c1; c++) {
        int64_t r0 = c * kRowsPerChunk, nr = std::min(kRowsPerChunk, N - r0);
        buf.resize(nr * K);
        src.read(r0, nr, buf.data());
        for (int64_t r = 0; r < nr; r++)
          for (int64_t k = 0; k < K; k++)
            store(buf[r * K + k], dtype, dst, transpose ? k * N + (r0 + r) : (r0 + r) * K + k);
      }
    });
  };
}

JointFillFn fill_int4(Source src, Int4Layout l) {
  return [src, l](const std::vector<uint8_t*>& dsts, ThreadPool& pool) {
    const int64_t N = src.rows, K = src.cols;
    const int64_t ssz = l.fp16_scales ? 2 : 4;
    int64_t chunks = (N + kRowsPerChunk - 1) / kRowsPerChunk;
    pool.parallel_for(chunks, 1, [&](int64_t c0, int64_t c1) {
      std::vector<float> buf;
      for (int64_t c = c0; c < c1; c++) {
        int64_t r0 = c * kRowsPerChunk, nr = std::min(kRowsPerChunk, N - r0);
        buf.resize(nr * K);
        src.read(r0, nr, buf.data());
        if (l.fp16_scales)  // the reference quantizes the fp16 weights
          for (float& v : buf) v = f16_to_f32(f32_to_f16(v));
        uint8_t* zp = dsts.size() > 2 ? dsts[2] + r0 * l.zp_row_bytes() : nullptr;
        quantize_int4_rows(buf.data(), nr, l, dsts[0] + r0 * l.q_row_bytes(), dsts[1] + r0 * l.blocks() * ssz, zp);
      }
    });
  };
}

}  // namespace ogx::builder
