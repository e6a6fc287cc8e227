// com.microsoft MatMulNBits against float64 references written here: accuracy_level 0 (fp32 dequantize) and
// accuracy_level 4 (A quantized to int8 per block the way MLAS does, integer block dots), fp32/fp16 A, M = 1 and
// M > 1, block sizes 16..128, K a multiple of the block size or not, with/without zero points and bias.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>

#include "providers/cpu/cpu_ops.h"
#include "providers/cpu/matmul_nbits_packed.h"
#include "providers/cpu/simd.h"
#include "providers/cpu/tests/kernel_test_util.h"
#include "providers/cpu/tests/matmul_nbits_mlas_model.h"

namespace ogx::cpu::nbits {
bool set_force_scalar(bool on);
void quantize_row_int8(const float* a, int64_t K, int64_t bs, int64_t nb, int8_t* q, float* scale);
}  // namespace ogx::cpu::nbits

namespace {

using ogx::DType;
using ogx::Tensor;

struct Case {
  int64_t M = 1, K = 64, N = 37, bs = 32;
  int bits = 4;
  bool zp = false, bias = false, fp16 = false;
  int level = 0;
  uint32_t seed = 1;
};

struct Data {
  Case c;
  int64_t nb = 0, blob = 0;
  std::vector<float> a;        // M*K (fp16-rounded when fp16)
  std::vector<uint8_t> q;      // N*nb*bs values (unpacked, includes padding past K)
  std::vector<float> scale;    // N*nb (fp16-rounded when fp16)
  std::vector<uint8_t> zp;     // N*nb
  std::vector<float> bias;     // N
  Tensor A, B, S, Z, Bias;
};

float round_t(float v, bool fp16) { return fp16 ? ogx::f16_to_f32(ogx::f32_to_f16(v)) : v; }

Data make(const Case& c) {
  Data d;
  d.c = c;
  d.nb = (c.K + c.bs - 1) / c.bs;
  d.blob = c.bs * c.bits / 8;
  std::mt19937 rng(c.seed);
  std::uniform_real_distribution<float> ua(-1.f, 1.f), us(0.005f, 0.05f);
  const int qmax = (1 << c.bits) - 1;
  std::uniform_int_distribution<int> uq(0, qmax);
  d.a.resize((size_t)(c.M * c.K));
  for (auto& v : d.a) v = round_t(ua(rng), c.fp16);
  d.q.resize((size_t)(c.N * d.nb * c.bs));
  for (auto& v : d.q) v = (uint8_t)uq(rng);
  d.scale.resize((size_t)(c.N * d.nb));
  for (auto& v : d.scale) v = round_t(us(rng), c.fp16);
  d.zp.assign((size_t)(c.N * d.nb), (uint8_t)(1 << (c.bits - 1)));
  if (c.zp)
    for (auto& v : d.zp) v = (uint8_t)uq(rng);
  if (c.bias) {
    d.bias.resize((size_t)c.N);
    for (auto& v : d.bias) v = round_t(ua(rng), c.fp16);
  }
  const DType T = c.fp16 ? DType::f16 : DType::f32;
  d.A = ogx::test::make_tensor(T, {c.M, c.K}, d.a);
  d.B = Tensor(DType::u8, {c.N, d.nb, d.blob});
  uint8_t* b = d.B.data<uint8_t>();
  for (int64_t i = 0; i < c.N * d.nb * d.blob; i++) {
    if (c.bits == 8) b[i] = d.q[(size_t)i];
    else b[i] = (uint8_t)(d.q[(size_t)(2 * i)] | (d.q[(size_t)(2 * i + 1)] << 4));
  }
  d.S = ogx::test::make_tensor(T, {c.N * d.nb}, d.scale);
  if (c.zp) {
    const int64_t zb = (d.nb * c.bits + 7) / 8;
    d.Z = Tensor::zeros(DType::u8, {c.N * zb});
    uint8_t* z = d.Z.data<uint8_t>();
    for (int64_t n = 0; n < c.N; n++)
      for (int64_t k = 0; k < d.nb; k++) {
        uint8_t v = d.zp[(size_t)(n * d.nb + k)];
        if (c.bits == 8) z[n * zb + k] = v;
        else z[n * zb + k / 2] |= (uint8_t)(v << ((k & 1) * 4));
      }
  }
  if (c.bias) d.Bias = ogx::test::make_tensor(T, {c.N}, d.bias);
  return d;
}

double w_at(const Data& d, int64_t n, int64_t k) {
  const int64_t blk = k / d.c.bs;
  return ((double)d.q[(size_t)(n * d.nb * d.c.bs + k)] - d.zp[(size_t)(n * d.nb + blk)]) *
         d.scale[(size_t)(n * d.nb + blk)];
}

// Exact product with dequantized weights; `bound` gets sum |a*w| (for tolerances).
std::vector<double> ref_f32(const Data& d, std::vector<double>* bound = nullptr) {
  const Case& c = d.c;
  std::vector<double> y((size_t)(c.M * c.N));
  if (bound) bound->assign(y.size(), 0.0);
  for (int64_t m = 0; m < c.M; m++)
    for (int64_t n = 0; n < c.N; n++) {
      double s = 0, b = 0;
      for (int64_t k = 0; k < c.K; k++) {
        double t = d.a[(size_t)(m * c.K + k)] * w_at(d, n, k);
        s += t;
        b += std::fabs(t);
      }
      y[(size_t)(m * c.N + n)] = s + (c.bias ? d.bias[(size_t)n] : 0.0);
      if (bound) (*bound)[(size_t)(m * c.N + n)] = b;
    }
  return y;
}

// accuracy_level 4: A quantized like MLAS (scale amax/127.f, q = round_half_even(a * 127.f/amax)), exact integer
// block dots scaled by the fp32 product scale_a * scale_b. Independent of the kernel's quantizer.
std::vector<double> ref_int8(const Data& d) {
  const Case& c = d.c;
  std::vector<double> y((size_t)(c.M * c.N));
  for (int64_t m = 0; m < c.M; m++) {
    std::vector<int> qa((size_t)(d.nb * c.bs), 0);
    std::vector<float> sa((size_t)d.nb);
    for (int64_t blk = 0; blk < d.nb; blk++) {
      float amax = 0;
      for (int64_t k = blk * c.bs; k < std::min(c.K, (blk + 1) * c.bs); k++)
        amax = std::max(amax, std::fabs(d.a[(size_t)(m * c.K + k)]));
      sa[(size_t)blk] = amax / 127.f;
      float inv = amax != 0 ? 127.f / amax : 0.f;
      for (int64_t k = blk * c.bs; k < std::min(c.K, (blk + 1) * c.bs); k++) {
        volatile float p = d.a[(size_t)(m * c.K + k)] * inv;
        qa[(size_t)k] = (int)std::nearbyint((float)p);
      }
    }
    for (int64_t n = 0; n < c.N; n++) {
      double s = 0;
      for (int64_t blk = 0; blk < d.nb; blk++) {
        int64_t dot = 0;
        for (int64_t k = blk * c.bs; k < (blk + 1) * c.bs; k++)
          dot += (int64_t)qa[(size_t)k] * ((int)d.q[(size_t)(n * d.nb * c.bs + k)] - d.zp[(size_t)(n * d.nb + blk)]);
        float cs = sa[(size_t)blk] * d.scale[(size_t)(n * d.nb + blk)];
        s += (double)dot * cs;
      }
      y[(size_t)(m * c.N + n)] = s + (c.bias ? d.bias[(size_t)n] : 0.0);
    }
  }
  return y;
}

ogx::test::NodeRun node(const Data& d, bool b_constant = true, int threads = 2, const char* gemm = "auto") {
  const Case& c = d.c;
  ogx::test::NodeRun r("com.microsoft", "MatMulNBits", "/model/layers.0/mlp/MatMul_Q4");
  r.option("int4_gemm", gemm);
  r.registry([](ogx::KernelRegistry& reg) { ogx::cpu::register_matmul_nbits(reg); });
  r.threads(threads);
  r.input("A", d.A);
  if (b_constant) r.constant("B", d.B);
  else r.input("B", d.B);
  r.constant("scales", d.S);
  if (c.zp) r.constant("zero_points", d.Z);
  else r.omitted();
  r.omitted();  // g_idx
  if (c.bias) r.constant("bias", d.Bias);
  r.attr("K", c.K).attr("N", c.N).attr("bits", (int64_t)c.bits).attr("block_size", c.bs);
  r.attr("accuracy_level", (int64_t)c.level);
  return r;
}

std::vector<double> out_vals(const Tensor& y) {
  std::vector<double> v((size_t)y.numel());
  for (int64_t i = 0; i < y.numel(); i++) v[(size_t)i] = y.get_f64(i);
  return v;
}

std::vector<double> run(const Data& d, bool b_constant = true, int threads = 2, const char* gemm = "auto") {
  Tensor y = node(d, b_constant, threads, gemm).run().at(0);
  EXPECT_EQ(y.dtype(), d.c.fp16 ? DType::f16 : DType::f32);
  EXPECT_EQ(y.shape(), (ogx::Shape{d.c.M, d.c.N}));
  return out_vals(y);
}

std::string name(const Case& c) {
  std::ostringstream os;
  os << "M" << c.M << " K" << c.K << " N" << c.N << " bs" << c.bs << " bits" << c.bits << " zp" << c.zp << " bias"
     << c.bias << " fp16" << c.fp16 << " level" << c.level;
  return os.str();
}

// |got - want| <= rel * scale_i + abs for every element.
void expect_close(const std::vector<double>& got, const std::vector<double>& want, const std::vector<double>& scale,
                  double rel, double abs, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  int bad = 0;
  for (size_t i = 0; i < got.size(); i++) {
    double tol = rel * scale[i] + abs;
    if (!(std::fabs(got[i] - want[i]) <= tol) && bad++ < 5)
      ADD_FAILURE() << what << " [" << i << "]: got " << got[i] << " want " << want[i] << " tol " << tol;
  }
}

std::vector<Case> sweep(int level, bool fp16, int bits = 4) {
  std::vector<Case> cs;
  uint32_t seed = 100;
  for (int64_t bs : {16, 32, 64, 128})
    for (int64_t kmul : {0, 1})  // K a multiple of bs, or not
      for (int64_t M : {1, 5})
        for (int zb = 0; zb < 4; zb++) {
          Case c;
          c.M = M;
          c.bs = bs;
          c.K = kmul ? bs * 2 + 7 : bs * 3;
          c.N = 19 + (int64_t)zb * 7;
          c.zp = zb & 1;
          c.bias = zb & 2;
          c.level = level;
          c.fp16 = fp16;
          c.bits = bits;
          c.seed = seed++;
          cs.push_back(c);
        }
  return cs;
}

TEST(MatMulNBits, Level0MatchesDequantizedProduct) {
  for (bool fp16 : {false, true})
    for (const Case& c : sweep(0, fp16)) {
      Data d = make(c);
      std::vector<double> bound;
      auto want = ref_f32(d, &bound);
      auto got = run(d);
      // fp32 accumulation; fp16 output rounding on top for fp16.
      for (size_t i = 0; i < bound.size(); i++) bound[i] += fp16 ? std::fabs(want[i]) * 1000 : 0;
      expect_close(got, want, bound, 4e-6, 1e-6, name(c));
    }
}

TEST(MatMulNBits, Level4MatchesInt8Reference) {
  for (bool fp16 : {false, true})
    for (const Case& c : sweep(4, fp16)) {
      Data d = make(c);
      std::vector<double> bound;
      ref_f32(d, &bound);
      auto want = ref_int8(d);
      auto got = run(d);
      for (size_t i = 0; i < bound.size(); i++) bound[i] += fp16 ? std::fabs(want[i]) * 1000 : 0;
      expect_close(got, want, bound, 4e-6, 1e-6, name(c));
    }
}

// The int8 quantization of A costs at most half a quantization step per element:
// |y4 - y| <= sum_k |w_k| * amax_blk / 254 (plus fp32 rounding).
TEST(MatMulNBits, Level4WithinQuantizationErrorOfExactProduct) {
  for (const Case& c0 : sweep(4, false)) {
    Data d = make(c0);
    auto exact = ref_f32(d);
    auto got = run(d);
    const Case& c = d.c;
    std::vector<double> tol((size_t)(c.M * c.N));
    for (int64_t m = 0; m < c.M; m++)
      for (int64_t n = 0; n < c.N; n++) {
        double t = 0;
        for (int64_t blk = 0; blk < d.nb; blk++) {
          float amax = 0;
          double wsum = 0;
          for (int64_t k = blk * c.bs; k < std::min(c.K, (blk + 1) * c.bs); k++) {
            amax = std::max(amax, std::fabs(d.a[(size_t)(m * c.K + k)]));
            wsum += std::fabs(w_at(d, n, k));
          }
          t += wsum * amax / 254.0;
        }
        tol[(size_t)(m * c.N + n)] = t * 1.001;
      }
    expect_close(got, exact, tol, 1.0, 1e-5, name(c));
  }
}

TEST(MatMulNBits, Level4DiffersFromLevel0) {  // the int8 path is really taken
  Case c;
  c.M = 3, c.K = 256, c.N = 16, c.bs = 32, c.level = 4;
  Data d = make(c);
  auto l4 = run(d);
  d.c.level = 0;
  auto l0 = run(d);
  double maxdiff = 0;
  for (size_t i = 0; i < l4.size(); i++) maxdiff = std::max(maxdiff, std::fabs(l4[i] - l0[i]));
  EXPECT_GT(maxdiff, 1e-5);
}

TEST(MatMulNBits, EightBitWeights) {
  for (int level : {0, 4})
    for (const Case& c : sweep(level, false, 8)) {
      Data d = make(c);
      std::vector<double> bound;
      auto exact = ref_f32(d, &bound);
      auto want = level == 4 ? ref_int8(d) : exact;
      expect_close(run(d), want, bound, 4e-6, 1e-6, name(c));
    }
}

// ORT takes the int8 path only with a constant (pre-packed) B; a B fed at run time is dequantized to fp32.
TEST(MatMulNBits, Level4WithRuntimeBUsesFp32Path) {
  Case c;
  c.M = 2, c.K = 96, c.N = 23, c.bs = 32, c.level = 4, c.zp = true, c.bias = true;
  Data d = make(c);
  std::vector<double> bound;
  auto want = ref_f32(d, &bound);
  expect_close(run(d, /*b_constant=*/false), want, bound, 4e-6, 1e-6, "runtime B");
}

TEST(MatMulNBits, SimdMatchesScalar) {
  if (!ogx::cpu::cpu_has_avx2()) GTEST_SKIP() << "no AVX2 on this CPU";
  for (int bits : {4, 8})
    for (int level : {0, 4})
      for (const Case& c : sweep(level, false, bits)) {
        Data d = make(c);
        std::vector<double> bound;
        ref_f32(d, &bound);
        auto simd = run(d);
        bool prev = ogx::cpu::nbits::set_force_scalar(true);
        auto scalar = run(d);
        ogx::cpu::nbits::set_force_scalar(prev);
        // Same integer block dots; only the fp32 summation order differs.
        expect_close(simd, scalar, bound, 2e-6, 1e-6, "simd vs scalar " + name(c));
      }
}

// The packed int4 GEMM (AVX-512 VNNI, taken for accuracy_level 4 with constant B when the CPU has it) over rows
// that fill 4-row tiles or not, columns that fill kTile-column tiles or not, K a multiple of 64 or not, every block
// size, absent / random / all-8 zero points: against the float64 int8 reference and against the scalar kernels.
TEST(MatMulNBits, PackedGemmMatchesReferenceAndScalar) {
  if (!ogx::cpu::nbits::q4_packed_available()) GTEST_SKIP() << "no AVX2 on this CPU";
  uint32_t seed = 500;
  for (int64_t bs : {16, 32, 64, 128})
    for (int64_t M : {1, 3, 4, 9})
      for (int64_t N : {1, 4, 6, 67})
        for (int64_t K : {bs, int64_t{64 * 3}, int64_t{64 * 5 + 13}, int64_t{1000}})
          for (int zpk = 0; zpk < 3; zpk++) {
            Case c;
            c.M = M, c.N = N, c.K = K, c.bs = bs, c.level = 4, c.seed = seed++;
            c.zp = zpk > 0;
            c.bias = (seed & 1) != 0;
            c.fp16 = (seed % 7) == 0;
            Data d = make(c);
            if (zpk == 2) {  // explicit zero points, all 8: the symmetric kernel
              std::fill(d.zp.begin(), d.zp.end(), (uint8_t)8);
              uint8_t* z = d.Z.data<uint8_t>();
              for (int64_t i = 0; i < d.Z.numel(); i++) z[i] = 0x88;
            }
            std::vector<double> bound;
            ref_f32(d, &bound);
            auto want = ref_int8(d);
            auto got = run(d);
            auto tol = bound;
            for (size_t i = 0; i < tol.size(); i++) tol[i] += c.fp16 ? std::fabs(want[i]) * 1000 : 0;
            expect_close(got, want, tol, 4e-6, 1e-6, "packed " + name(c));
            bool prev = ogx::cpu::nbits::set_force_scalar(true);
            auto scalar = run(d);
            ogx::cpu::nbits::set_force_scalar(prev);
            expect_close(got, scalar, tol, 4e-6, 1e-6, "packed vs scalar " + name(c));
          }
}

// accuracy_level 4 with constant 4-bit B is bit-identical to the scalar model of MLAS's arithmetic
// (matmul_nbits_mlas_model.h; tools/ortgenai_check/README.md records the check against ONNX Runtime itself) for every
// block size MLAS has, M from 1 to 512, K and N off the kernel's groups and tiles, the qwen3 test model's projection
// shapes, zero points absent / random, bias, fp16 A, 1..3 threads; the AVX-512 VNNI kernel and its AVX2 twin
// (with the provider option int4_gemm=mlas: the default takes the AMX kernel for many rows, see matmul_nbits_amx_test).
TEST(MatMulNBits, BitIdenticalToMlas) {
  if (!ogx::cpu::nbits::q4_packed_available()) GTEST_SKIP() << "no AVX2 on this CPU: the unpacked kernels";
  struct Shape {
    int64_t K, N;
    std::vector<int64_t> Ms;
  };
  std::vector<int64_t> all_m;
  for (int64_t M = 1; M <= 9; M++) all_m.push_back(M);
  for (int64_t M : {16, 17, 33, 43, 129, 256, 257, 512}) all_m.push_back(M);
  const std::vector<Shape> shapes = {
      {64, 128, all_m},       // qwen3 (arch test model): q / gate / up projections
      {64, 64, {1, 7, 43}},   // k / v
      {128, 64, {1, 7, 43}},  // o / down
      {64, 2048, {1, 43}},    // lm_head
      {200, 37, all_m},       // whole groups and remaining blocks, the last one partial
      {1056, 1027, {1, 5}},
      {1056, 67, {64}},
      {32, 5, {1, 2, 3}},
  };
  uint32_t seed = 900;
  for (int64_t bs : {16, 32, 64, 128, 256})
    for (const Shape& s : shapes)
      for (int64_t M : s.Ms) {
        if (bs != 32 && s.K * s.N * M > (1 << 20)) continue;  // the large cases once, at the default block size
        const int v = (int)(seed % 3);
        Case c;
        c.M = M, c.K = s.K, c.N = s.N, c.bs = bs, c.level = 4, c.seed = seed++;
        c.zp = v == 1, c.bias = v >= 1, c.fp16 = v == 2 && M % 2 == 1;
        Data d = make(c);
        auto want = ogx::test::mlas_int8_model(d.a, d.q, d.scale, d.zp, c.bias ? d.bias.data() : nullptr, c.M, c.K,
                                               c.N, c.bs);
        // Both ISAs of the packed kernel (the AVX-512 VNNI one where the CPU has it, and its AVX2 twin), 1..3
        // threads: column ranges split anywhere.
        for (bool force_avx2 : {false, true}) {
          const bool prev = ogx::cpu::nbits::set_q4_force_avx2(force_avx2);
          auto got = run(d, true, 1 + (int)(seed % 3), "mlas");  // int4_gemm=mlas: the exact kernels at every M
          ogx::cpu::nbits::set_q4_force_avx2(prev);
          int bad = 0;
          for (size_t i = 0; i < want.size(); i++) {
            const double w = c.fp16 ? (double)ogx::f16_to_f32(ogx::f32_to_f16(want[i])) : (double)want[i];
            if (got[i] != w && bad++ < 3)
              ADD_FAILURE() << name(c) << (force_avx2 ? " (AVX2 twin)" : "") << " [" << i << "]: got " << got[i]
                            << " want " << w;
          }
        }
      }
}

TEST(MatMulNBits, ThreadCountDoesNotChangeResult) {
  Case c;
  c.M = 7, c.K = 320, c.N = 301, c.bs = 64, c.level = 4, c.zp = true;
  Data d = make(c);
  EXPECT_EQ(run(d, true, 1), run(d, true, 4));
  d.c.level = 0;
  EXPECT_EQ(run(d, true, 1), run(d, true, 3));
}

TEST(MatMulNBits, BatchedLeadingDims) {
  Case c;
  c.M = 6, c.K = 64, c.N = 9, c.bs = 16, c.level = 4;
  Data d = make(c);
  auto want = run(d);
  d.A = d.A.reshaped({2, 3, 64});
  Tensor y = node(d).run().at(0);
  EXPECT_EQ(y.shape(), (ogx::Shape{2, 3, 9}));
  EXPECT_EQ(out_vals(y), want);
}

TEST(MatMulNBits, FloatZeroPoints) {
  Case c;
  c.M = 3, c.K = 64, c.N = 11, c.bs = 32, c.level = 4;
  Data d = make(c);
  std::vector<float> zf((size_t)(c.N * d.nb));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uz(0.f, 15.f);
  for (auto& v : zf) v = uz(rng);
  auto r = node(d);
  ogx::test::NodeRun r2("com.microsoft", "MatMulNBits", "mm");
  r2.registry([](ogx::KernelRegistry& reg) { ogx::cpu::register_matmul_nbits(reg); });
  r2.input("A", d.A).constant("B", d.B).constant("scales", d.S);
  r2.constant("zp", ogx::test::make_tensor(DType::f32, {c.N * d.nb}, zf));
  r2.attr("K", c.K).attr("N", c.N).attr("bits", int64_t{4}).attr("block_size", c.bs).attr("accuracy_level", int64_t{4});
  auto got = out_vals(r2.run().at(0));
  for (int64_t m = 0; m < c.M; m++)
    for (int64_t n = 0; n < c.N; n++) {
      double s = 0;
      for (int64_t k = 0; k < c.K; k++) {
        int64_t blk = k / c.bs;
        s += d.a[(size_t)(m * c.K + k)] * ((d.q[(size_t)(n * d.nb * c.bs + k)] - (double)zf[(size_t)(n * d.nb + blk)]) *
                                            d.scale[(size_t)(n * d.nb + blk)]);
      }
      EXPECT_NEAR(got[(size_t)(m * c.N + n)], s, 1e-4);
    }
}

TEST(MatMulNBits, GIdx) {
  Case c;
  c.M = 2, c.K = 64, c.N = 8, c.bs = 32, c.level = 4;
  Data d = make(c);
  std::vector<int32_t> g(64);
  for (int i = 0; i < 64; i++) g[(size_t)i] = i / 32;
  auto mk = [&](const std::vector<int32_t>& gv) {
    ogx::test::NodeRun r("com.microsoft", "MatMulNBits", "/model/q_proj/MatMul_Q4");
    r.registry([](ogx::KernelRegistry& reg) { ogx::cpu::register_matmul_nbits(reg); });
    r.input("A", d.A).constant("B", d.B).constant("scales", d.S).omitted();
    r.constant("g_idx", ogx::test::make_tensor(DType::i32, {64}, gv));
    r.attr("K", c.K).attr("N", c.N).attr("bits", int64_t{4}).attr("block_size", c.bs).attr("accuracy_level", int64_t{4});
    return r;
  };
  std::vector<double> bound;
  auto want = ref_f32(d, &bound);  // trivial g_idx: ORT's unpacked fp32 path
  expect_close(out_vals(mk(g).run().at(0)), want, bound, 4e-6, 1e-6, "trivial g_idx");
  std::swap(g[0], g[40]);
  try {
    mk(g).run();
    FAIL() << "non-trivial g_idx accepted";
  } catch (const ogx::Error& e) {
    EXPECT_NE(std::string(e.what()).find("/model/q_proj/MatMul_Q4"), std::string::npos) << e.what();
  }
}

TEST(MatMulNBits, BadInputsNameTheNode) {
  Case c;
  Data d = make(c);
  auto expect_error = [](ogx::test::NodeRun r) {
    try {
      r.run();
      ADD_FAILURE() << "no error";
    } catch (const ogx::Error& e) {
      EXPECT_NE(std::string(e.what()).find("MatMul_Q4"), std::string::npos) << e.what();
    }
  };
  expect_error(node(d).attr("block_size", int64_t{24}));
  expect_error(node(d).attr("bits", int64_t{3}));
  expect_error(node(d).attr("K", int64_t{65}));
  Data d2 = d;
  d2.A = ogx::test::make_tensor(DType::f32, {1, 32}, std::vector<float>(32, 1.f));
  expect_error(node(d2));
}

// MLAS's activation quantizer: scale = amax / 127.f, values multiplied by 127.f / amax and rounded half to even.
TEST(MatMulNBits, ActivationQuantizerRoundsLikeMlas) {
  std::vector<float> a(16, 0.f);
  a[0] = 127.f;  // amax -> multiplier exactly 1
  a[1] = 2.5f, a[2] = 3.5f, a[3] = -2.5f, a[4] = -0.5f, a[5] = 0.5f, a[6] = 1.5f, a[7] = -127.f;
  std::vector<int8_t> q(32, 99);
  std::vector<float> s(2);
  ogx::cpu::nbits::quantize_row_int8(a.data(), 16, 16, 2, q.data(), s.data());
  EXPECT_EQ(s[0], 1.f);
  std::vector<int> got(q.begin(), q.begin() + 8), want{127, 2, 4, -2, 0, 0, 2, -127};
  EXPECT_EQ(got, want);
  for (int i = 16; i < 32; i++) EXPECT_EQ(q[(size_t)i], 0) << "padding past K is zero";
}

// The AVX2 quantizer gives the scalar one's bytes and scales (ties included: values at k + 0.5 after scaling).
TEST(MatMulNBits, ActivationQuantizerSimdMatchesScalar) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-3.f, 3.f);
  for (int64_t bs : {16, 32, 64, 128})
    for (int64_t K : {bs, bs * 3 + 5, int64_t{1000}}) {
      const int64_t nb = (K + bs - 1) / bs;
      std::vector<float> a((size_t)K);
      for (auto& v : a) v = u(rng);
      for (int64_t i = 0; i < K; i += 7) a[(size_t)i] = (float)((int)(a[(size_t)i] * 10)) + 0.5f;  // ties
      a[0] = 127.f;
      std::vector<int8_t> q1((size_t)(nb * bs)), q2(q1.size());
      std::vector<float> s1((size_t)nb), s2((size_t)nb);
      ogx::cpu::nbits::quantize_row_int8(a.data(), K, bs, nb, q1.data(), s1.data());
      bool prev = ogx::cpu::nbits::set_force_scalar(true);
      ogx::cpu::nbits::quantize_row_int8(a.data(), K, bs, nb, q2.data(), s2.data());
      ogx::cpu::nbits::set_force_scalar(prev);
      EXPECT_EQ(q1, q2) << "bs" << bs << " K" << K;
      EXPECT_EQ(s1, s2) << "bs" << bs << " K" << K;
    }
}

}  // namespace
