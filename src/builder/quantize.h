// Blockwise 4-bit RTN quantization, the rule of ONNX Runtime's MLAS BlockwiseQuantizer (used by the reference
// builder through MatMulNBitsQuantizer), so the same weights give byte-identical MatMulNBits tensors.
#pragma once
#include <cstdint>

namespace ogx::builder {

struct Int4Layout {
  int64_t K = 0;           // reduction dim (HF in_features)
  int block = 32;
  bool symmetric = true;   // no zero points (implicit 8)
  bool fp16_scales = false;
  int64_t blocks() const { return (K + block - 1) / block; }
  int64_t q_row_bytes() const { return blocks() * block / 2; }
  int64_t scale_row_bytes() const { return blocks() * (fp16_scales ? 2 : 4); }
  int64_t zp_row_bytes() const { return (blocks() + 1) / 2; }
};

// Quantizes `nrows` rows of K floats (HF [out, in] layout: one row = one output column N). When fp16_scales,
// the caller passes values already rounded to fp16. Writes per row: q (q_row_bytes), scales, zero points.
void quantize_int4_rows(const float* rows, int64_t nrows, const Int4Layout& l, uint8_t* q, uint8_t* scales,
                        uint8_t* zero_points);

}  // namespace ogx::builder
