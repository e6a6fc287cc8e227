#include "builder/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "common/half.h"

namespace ogx::builder {

namespace {

// Scale as stored (fp32 or fp16), and read back as float for the reciprocal, as MLAS does.
float store_scale(float s, const Int4Layout& l, uint8_t* dst) {
  if (l.fp16_scales) {
    uint16_t h = f32_to_f16(s);
    std::memcpy(dst, &h, 2);
    return f16_to_f32(h);
  }
  std::memcpy(dst, &s, 4);
  return s;
}

// One block: range -> scale (and zero point), then v = clamp(roundf(x / scale + zp), 0, 15).
uint8_t quantize_block(const float* x, int64_t n, const Int4Layout& l, uint8_t* scale_dst, uint8_t* q) {
  float mn = std::numeric_limits<float>::max(), mx = -mn;
  for (int64_t i = 0; i < n; i++) {
    mn = std::min(mn, x[i]);
    mx = std::max(mx, x[i]);
  }
  uint8_t zp = 8;
  float scale;
  if (l.symmetric) {
    float m = std::fabs(mx) > std::fabs(mn) ? mx : mn;
    scale = store_scale(-m / 8.0f, l, scale_dst);
  } else {
    mn = std::min(mn, 0.0f);
    mx = std::max(mx, 0.0f);
    float s = (mx - mn) / 15.0f;
    float zf = s != 0.0f ? 0.0f - mn / s : mn;
    zp = zf < 0.0f ? 0 : zf > 15.0f ? 15 : (uint8_t)std::roundf(zf);
    scale = store_scale(s, l, scale_dst);
  }
  float recip = scale != 0.0f ? 1.0f / scale : 0.0f;
  for (int64_t i = 0; i < n; i += 2) {
    uint8_t v[2] = {0, 0};
    for (int64_t j = 0; j < 2 && i + j < n; j++) {
      volatile float t = x[i + j] * recip;  // no FMA contraction: MLAS rounds the product first
      v[j] = (uint8_t)std::clamp(std::roundf(t + (float)zp), 0.0f, 15.0f);
    }
    q[i / 2] = (uint8_t)((v[0] & 0xf) | (v[1] << 4));
  }
  return zp;
}

}  // namespace

void quantize_int4_rows(const float* rows, int64_t nrows, const Int4Layout& l, uint8_t* q, uint8_t* scales,
                        uint8_t* zero_points) {
  const int64_t nb = l.blocks();
  const int64_t ssz = l.fp16_scales ? 2 : 4;
  for (int64_t r = 0; r < nrows; r++) {
    const float* x = rows + r * l.K;
    uint8_t* qr = q + r * l.q_row_bytes();
    std::memset(qr, 0, l.q_row_bytes());  // padding of the last block stays 0, as in the reference
    uint8_t* zr = zero_points ? zero_points + r * l.zp_row_bytes() : nullptr;
    if (zr) std::memset(zr, 0x88, l.zp_row_bytes());  // unused nibble keeps MLAS's initial 8
    for (int64_t b = 0; b < nb; b++) {
      int64_t k0 = b * l.block, n = std::min<int64_t>(l.block, l.K - k0);
      uint8_t zp = quantize_block(x + k0, n, l, scales + (r * nb + b) * ssz, qr + b * l.block / 2);
      if (zr) zr[b / 2] = (uint8_t)((zr[b / 2] & (b % 2 ? 0x0f : 0xf0)) | (zp << (b % 2 ? 4 : 0)));
    }
  }
}

}  // namespace ogx::builder
