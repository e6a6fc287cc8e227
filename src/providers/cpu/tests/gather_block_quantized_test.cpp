// com.microsoft GatherBlockQuantized against a float64 reference: uint8 data packing 4-bit (and 8-bit) values low
// nibble first, int32/int64 indices (negative ones wrap), blockwise scales along the last axis, optional packed
// zero points (default 8 for 4 bits), fp32 and fp16 scales, and an error naming the node for out-of-range indices.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "providers/cpu/cpu_ops.h"
#include "providers/cpu/tests/kernel_test_util.h"

namespace {

using ogx::DType;
using ogx::Tensor;

struct G {
  int64_t rows = 10, mid = 1, cols = 64, bs = 32;  // data [rows, (mid,) cols/comp]
  int bits = 4;
  bool zp = false, fp16 = false, i64 = false, three_d = false;
  uint32_t seed = 1;
};

struct GData {
  std::vector<int> q;        // rows*mid*cols
  std::vector<float> scale;  // rows*mid*nblk
  std::vector<int> zp;       // rows*mid*nblk
  int64_t nblk = 0;
  Tensor data, scales, zps;
};

GData make(const G& g) {
  GData d;
  std::mt19937 rng(g.seed);
  const int comp = 8 / g.bits, qmax = (1 << g.bits) - 1;
  std::uniform_int_distribution<int> uq(0, qmax);
  std::uniform_real_distribution<float> us(0.01f, 0.2f);
  d.nblk = (g.cols + g.bs - 1) / g.bs;
  const int64_t R = g.rows * g.mid;
  d.q.resize((size_t)(R * g.cols));
  for (auto& v : d.q) v = uq(rng);
  d.scale.resize((size_t)(R * d.nblk));
  for (auto& v : d.scale) v = g.fp16 ? ogx::f16_to_f32(ogx::f32_to_f16(us(rng))) : us(rng);
  d.zp.assign((size_t)(R * d.nblk), 1 << (g.bits - 1));
  if (g.zp)
    for (auto& v : d.zp) v = uq(rng);
  auto shp = [&](int64_t last) { return g.three_d ? ogx::Shape{g.rows, g.mid, last} : ogx::Shape{g.rows, last}; };
  d.data = Tensor::zeros(DType::u8, shp(g.cols / comp));
  for (int64_t i = 0; i < R * g.cols; i++)
    d.data.data<uint8_t>()[i / comp] |= (uint8_t)(d.q[(size_t)i] << ((i % comp) * g.bits));
  d.scales = ogx::test::make_tensor(g.fp16 ? DType::f16 : DType::f32, shp(d.nblk), d.scale);
  if (g.zp) {
    const int64_t zrow = (d.nblk + comp - 1) / comp;
    d.zps = Tensor::zeros(DType::u8, shp(zrow));
    for (int64_t r = 0; r < R; r++)
      for (int64_t b = 0; b < d.nblk; b++)
        d.zps.data<uint8_t>()[r * zrow + b / comp] |= (uint8_t)(d.zp[(size_t)(r * d.nblk + b)] << ((b % comp) * g.bits));
  }
  return d;
}

ogx::test::NodeRun node(const G& g, const GData& d, const std::vector<int64_t>& idx, ogx::Shape idx_shape) {
  ogx::test::NodeRun r("com.microsoft", "GatherBlockQuantized", "/model/embed_tokens/GatherBlockQuantized");
  r.registry([](ogx::KernelRegistry& reg) { ogx::cpu::register_matmul_nbits(reg); });
  r.constant("data", d.data);
  r.input("ids", ogx::test::make_tensor(g.i64 ? DType::i64 : DType::i32, idx_shape, idx));
  r.constant("scales", d.scales);
  if (g.zp) r.constant("zp", d.zps);
  r.attr("bits", (int64_t)g.bits).attr("block_size", g.bs).attr("gather_axis", int64_t{0});
  r.attr("quantize_axis", int64_t{g.three_d ? 2 : 1});
  return r;
}

TEST(GatherBlockQuantized, MatchesReference) {
  uint32_t seed = 1;
  for (int bits : {4, 8})
    for (int64_t bs : {16, 32, 64, 128})
      for (int64_t cols : {bs * 2, bs + 16})  // last block full or partial
        for (int v = 0; v < 8; v++) {
          G g;
          g.bits = bits, g.bs = bs, g.cols = cols, g.zp = v & 1, g.fp16 = v & 2, g.i64 = v & 4;
          g.three_d = (seed % 3) == 0;
          g.mid = g.three_d ? 3 : 1;
          g.seed = seed++;
          GData d = make(g);
          std::vector<int64_t> idx{3, 0, -1, 9, 3, 5};
          Tensor y = node(g, d, idx, {2, 3}).run().at(0);
          ogx::Shape want_shape = g.three_d ? ogx::Shape{2, 3, g.mid, g.cols} : ogx::Shape{2, 3, g.cols};
          ASSERT_EQ(y.shape(), want_shape);
          ASSERT_EQ(y.dtype(), g.fp16 ? DType::f16 : DType::f32);
          for (size_t i = 0; i < idx.size(); i++) {
            int64_t row = idx[i] < 0 ? idx[i] + g.rows : idx[i];
            for (int64_t m = 0; m < g.mid; m++)
              for (int64_t c = 0; c < g.cols; c++) {
                int64_t r = row * g.mid + m, b = c / g.bs;
                double want = ((double)d.q[(size_t)(r * g.cols + c)] - d.zp[(size_t)(r * d.nblk + b)]) *
                              d.scale[(size_t)(r * d.nblk + b)];
                double got = y.get_f64((int64_t)((i * g.mid + m) * g.cols + c));
                ASSERT_NEAR(got, want, g.fp16 ? std::fabs(want) * 1e-3 + 1e-6 : std::fabs(want) * 1e-6 + 1e-7)
                    << "bits " << bits << " bs " << bs << " cols " << cols << " v " << v << " i " << i << " c " << c;
              }
          }
        }
}

TEST(GatherBlockQuantized, DefaultZeroPointIsEightForFourBits) {
  G g;
  g.rows = 2, g.cols = 32, g.bs = 32;
  GData d = make(g);
  d.data = Tensor::zeros(DType::u8, {2, 16});
  for (int i = 0; i < 32; i++) d.data.data<uint8_t>()[i] = 0x8F;  // low nibble 15, high nibble 8
  Tensor y = node(g, d, {1}, {1}).run().at(0);
  EXPECT_FLOAT_EQ((float)y.get_f64(0), 7 * d.scale[1]);  // row 1, its only block
  EXPECT_FLOAT_EQ((float)y.get_f64(1), 0.f);
}

TEST(GatherBlockQuantized, OutOfRangeIndexNamesTheNode) {
  G g;
  GData d = make(g);
  for (int64_t bad : {10, -11, 1000}) {
    try {
      node(g, d, {1, bad}, {2}).run();
      FAIL() << "index " << bad << " accepted";
    } catch (const ogx::Error& e) {
      std::string m = e.what();
      EXPECT_NE(m.find("/model/embed_tokens/GatherBlockQuantized"), std::string::npos) << m;
      EXPECT_NE(m.find("out of range"), std::string::npos) << m;
    }
  }
}

TEST(GatherBlockQuantized, BadAttributesAndShapes) {
  G g;
  GData d = make(g);
  auto expect_error = [](ogx::test::NodeRun r) {
    try {
      r.run();
      ADD_FAILURE() << "no error";
    } catch (const ogx::Error& e) {
      EXPECT_NE(std::string(e.what()).find("GatherBlockQuantized"), std::string::npos) << e.what();
    }
  };
  expect_error(node(g, d, {0}, {1}).attr("block_size", int64_t{8}));
  expect_error(node(g, d, {0}, {1}).attr("gather_axis", int64_t{1}));
  expect_error(node(g, d, {0}, {1}).attr("block_size", int64_t{16}));  // scales no longer match
  expect_error(node(g, d, {0}, {1}).attr("bits", int64_t{3}));
}

}  // namespace
