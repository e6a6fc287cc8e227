// Int4 quantization rule: symmetric and asymmetric round-trips stay within half a step; zero-point packing.
#include <cmath>
#include <cstring>
#include <random>

#include "builder/quantize.h"
#include "common/half.h"
#include "test_util.h"

namespace ogx::builder::test {
namespace {

std::vector<float> dequant(const std::vector<uint8_t>& q, const std::vector<float>& s, const std::vector<uint8_t>* zp,
                           const Int4Layout& l) {
  std::vector<float> out(l.K);
  for (int64_t k = 0; k < l.K; k++) {
    int64_t b = k / l.block;
    int v = (q[k / 2] >> (k % 2 ? 4 : 0)) & 0xf;
    int z = zp ? (((*zp)[b / 2] >> (b % 2 ? 4 : 0)) & 0xf) : 8;
    out[k] = (v - z) * s[b];
  }
  return out;
}

void check_roundtrip(bool symmetric) {
  Int4Layout l;
  l.K = 80;  // 3 blocks of 32, the last one padded
  l.block = 32;
  l.symmetric = symmetric;
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.2f, 1.0f);
  std::vector<float> x(l.K);
  for (float& v : x) v = nd(rng);
  std::vector<uint8_t> q(l.q_row_bytes()), zp(l.zp_row_bytes());
  std::vector<float> s(l.blocks());
  quantize_int4_rows(x.data(), 1, l, q.data(), reinterpret_cast<uint8_t*>(s.data()), symmetric ? nullptr : zp.data());
  auto y = dequant(q, s, symmetric ? nullptr : &zp, l);
  // Symmetric maps the signed extreme to -8, so the opposite extreme may clamp at +7: up to one step.
  const float tol = symmetric ? 1.0f : 0.5f;
  for (int64_t k = 0; k < l.K; k++) EXPECT_LE(std::fabs(x[k] - y[k]), std::fabs(s[k / l.block]) * tol + 1e-6f) << k;
  for (int64_t k = l.K; k < l.q_row_bytes() * 2; k++) EXPECT_EQ((q[k / 2] >> (k % 2 ? 4 : 0)) & 0xf, 0) << "padding";
  if (!symmetric) {
    EXPECT_EQ(zp[1] >> 4, 8) << "unused zero-point nibble keeps 8";
  }
}

TEST(Int4Quantize, SymmetricRoundTrip) { check_roundtrip(true); }
TEST(Int4Quantize, AsymmetricRoundTrip) { check_roundtrip(false); }

TEST(Int4Quantize, SymmetricScaleUsesSignedMax) {
  Int4Layout l;
  l.K = 32;
  std::vector<float> x(32, 0.0f);
  x[3] = -2.0f;  // largest magnitude negative -> scale = 2/8 > 0, maps to 0
  x[5] = 1.0f;
  std::vector<uint8_t> q(16);
  float s;
  quantize_int4_rows(x.data(), 1, l, q.data(), reinterpret_cast<uint8_t*>(&s), nullptr);
  EXPECT_FLOAT_EQ(s, 0.25f);
  EXPECT_EQ((q[1] >> 4) & 0xf, 0);  // x[3] = -2 -> -8 + 8
  EXPECT_EQ((q[2] >> 4) & 0xf, 12); // x[5] = 1 -> 4 + 8
}

}  // namespace
}  // namespace ogx::builder::test
