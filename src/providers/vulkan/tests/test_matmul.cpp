// MatMul (fp32/fp16, matvec and tiled paths), MatMulNBits int4 with and without zero points, batched MatMul.
// References: plain loops in float64 over the values the device holds (inputs rounded to the storage dtype).
#include <cstring>

#include "providers/vulkan/kernels/elementwise.h"
#include "providers/vulkan/kernels/matmul.h"
#include "providers/vulkan/kernels/norm.h"
#include "providers/vulkan/tests/vk_test_util.h"

namespace ogx::vk::test {
namespace {

using kernels::MatMulWeight;

// fp16 storage: inputs are exact fp16 values, accumulation is fp32 on the device, and the output is rounded to
// fp16 (relative error 2^-11 ~ 4.9e-4) — so 2e-3 relative plus a small absolute term for cancellation in sums of
// K products of magnitude <= 1.
double rel_tol(DType t) { return t == DType::f16 ? 2e-3 : 1e-4; }
double abs_tol(DType t, int64_t K) { return (t == DType::f16 ? 2e-3 : 1e-5) * std::sqrt((double)K); }

struct MatMulCase {
  int64_t M, K, N;
  DType dtype;
};

class VulkanMatMulTest : public VulkanTest, public ::testing::WithParamInterface<MatMulCase> {};

TEST_P(VulkanMatMulTest, MatchesReference) {
  auto [M, K, N, dt] = GetParam();
  uint32_t seed = (uint32_t)(M * 1000003 + K * 101 + N);
  auto a = round_to(random_values(M * K, seed), dt);
  auto b = round_to(random_values(K * N, seed + 1), dt);  // ONNX layout [K, N]
  auto bias = round_to(random_values(N, seed + 2), dt);
  MatMulWeight w = kernels::upload_matmul_weight(ctx(), "w", host_tensor(b, dt, {K, N}));
  TensorView av = upload(a, dt, {M, K}), biasv = upload(bias, dt, {N}), c = empty(dt, {M, N});
  TensorView c2 = empty(dt, {M, N});
  CommandRecorder rec(ctx());
  rec.begin();
  kernels::matmul(rec, av, w, &biasv, c);
  kernels::matmul(rec, av, w, nullptr, c2);
  rec.end();
  rec.run();
  std::vector<double> want(M * N), want2(M * N);
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < N; n++) {
      double s = 0;
      for (int64_t k = 0; k < K; k++) s += (double)a[m * K + k] * b[k * N + n];
      want[m * N + n] = s + bias[n];
      want2[m * N + n] = s;
    }
  expect_close(download(c), want, rel_tol(dt), abs_tol(dt, K), "matmul+bias");
  expect_close(download(c2), want2, rel_tol(dt), abs_tol(dt, K), "matmul");
}

INSTANTIATE_TEST_SUITE_P(Shapes, VulkanMatMulTest,
                         ::testing::Values(MatMulCase{1, 64, 48, DType::f32}, MatMulCase{1, 259, 37, DType::f32},
                                           MatMulCase{2, 512, 130, DType::f32}, MatMulCase{1, 256, 96, DType::f16},
                                           MatMulCase{1, 100, 33, DType::f16}, MatMulCase{7, 67, 45, DType::f32},
                                           MatMulCase{33, 128, 70, DType::f32}, MatMulCase{40, 96, 100, DType::f16},
                                           MatMulCase{64, 64, 64, DType::f32},
                                           MatMulCase{1, 1024, 1100, DType::f32},  // transposed in 2 groups
                                           MatMulCase{1, 4096, 72, DType::f16}, MatMulCase{2, 2056, 40, DType::f32}));  // unrolled K

// The tiled kernel's variants (matmul.comp): on the test device (a CPU driver: tiles up to 128, chosen for >= 8
// workgroups) 128x128, 64x128, 128x64 and 64x64 output tiles; 16-byte loads (K % 8 == 0 fp16, K % 4 == 0 fp32)
// and element loads (other K); M, N, K edges inside the last tile and K slice.
INSTANTIATE_TEST_SUITE_P(Tiles, VulkanMatMulTest,
                         ::testing::Values(MatMulCase{300, 264, 520, DType::f16},   // 128x128, vectors
                                           MatMulCase{300, 72, 520, DType::f32},    // 128x128, vectors
                                           MatMulCase{300, 263, 520, DType::f16},   // 128x128, elements
                                           MatMulCase{130, 264, 300, DType::f16},   // 64x128, vectors
                                           MatMulCase{130, 264, 300, DType::f32},   // 64x128, vectors
                                           MatMulCase{130, 263, 300, DType::f16},   // 64x128, K odd: elements
                                           MatMulCase{130, 263, 300, DType::f32},   // 64x128, K odd: elements
                                           MatMulCase{200, 100, 300, DType::f16},   // K % 8 == 4: elements
                                           MatMulCase{150, 102, 200, DType::f32},   // K % 4 == 2: elements
                                           MatMulCase{1100, 40, 48, DType::f16},    // 128x64, vectors
                                           MatMulCase{1100, 37, 40, DType::f32},    // 128x64, elements
                                           MatMulCase{1100, 21, 48, DType::f16},    // 128x64, elements
                                           MatMulCase{65, 16, 65, DType::f32},      // 64x64, one row / column over
                                           MatMulCase{100, 5, 90, DType::f16},      // K < one slice
                                           MatMulCase{3, 8, 3, DType::f32}));       // the smallest tiled M

// Seeded random shapes on top of the fixed ones: odd sizes, both paths, both dtypes.
std::vector<MatMulCase> random_matmul_cases() {
  std::mt19937 rng(2024);
  std::vector<MatMulCase> out;
  for (int i = 0; i < 8; i++) {
    int64_t M = i % 2 == 0 ? 1 + rng() % 2 : 3 + rng() % 60;
    out.push_back({M, 1 + (int64_t)(rng() % 300), 1 + (int64_t)(rng() % 200), i % 3 == 0 ? DType::f16 : DType::f32});
  }
  return out;
}
INSTANTIATE_TEST_SUITE_P(RandomShapes, VulkanMatMulTest, ::testing::ValuesIn(random_matmul_cases()));

// The skinny matmul of batched decode (matvec_skinny.comp): every M from 2 to 16 once, seeded random K (odd ones
// take element loads, K % 8 == 0 16-byte loads) and N (odd: the last workgroup's rows past N), both dtypes; and
// K long enough for several units per thread (loaded 2 per iteration where the tuning row's skinny_unroll and the
// register budget allow: M <= 8 at 4 weight rows).
std::vector<MatMulCase> skinny_matmul_cases() {
  std::mt19937 rng(16);
  std::vector<MatMulCase> out;
  for (int64_t M = 2; M <= 16; M++) {
    int64_t K = M % 3 == 0 ? 8 * (1 + rng() % 40) : 1 + rng() % 300;
    out.push_back({M, K, 1 + (int64_t)(rng() % 100), M % 2 == 0 ? DType::f16 : DType::f32});
  }
  out.push_back({16, 2048, 24, DType::f16});
  out.push_back({5, 1030, 19, DType::f32});   // 2 units per iteration (skinny_unroll), K % 8 != 0, last repeated
  out.push_back({8, 1536, 30, DType::f16});   // 2 units per iteration, 16-byte loads
  // fp16 with K % 8 == 0 takes the matrix-unit skinny kernel where the device has one (matvec_coop.comp): K with a
  // half step of 16 at the end, N not a multiple of its 16 outputs per workgroup, K split over several subgroups.
  out.push_back({3, 136, 50, DType::f16});
  out.push_back({16, 264, 33, DType::f16});
  out.push_back({11, 4104, 100, DType::f16});
  // 17..64 rows: the matrix-unit kernel's 2..4 row tiles (elsewhere the tiled matmul), a last tile of 1 row.
  out.push_back({17, 264, 40, DType::f16});
  out.push_back({33, 136, 50, DType::f16});
  out.push_back({49, 520, 16, DType::f16});
  out.push_back({64, 1032, 35, DType::f16});
  return out;
}
INSTANTIATE_TEST_SUITE_P(Skinny, VulkanMatMulTest, ::testing::ValuesIn(skinny_matmul_cases()));

struct NBitsCase {
  int64_t M, K, N, block;
  bool zero_points;
  DType dtype;
};

class VulkanMatMulNBitsTest : public VulkanTest, public ::testing::WithParamInterface<NBitsCase> {};

// MatMulNBits through `ctx` against the float64 dequantized reference; activations uniform in [-amp, amp], scales
// in [0.01, 0.2] / amp (outputs of the same size whatever the amplitude).
void check_nbits(Context& ctx, const NBitsCase& c, float amp = 1.0f) {
  auto [M, K, N, bs, with_zp, dt] = c;
  std::mt19937 rng((uint32_t)(K * 7 + N * 13 + bs + with_zp));
  int64_t nb = (K + bs - 1) / bs, zp_stride = (nb + 1) / 2;
  Tensor packed(DType::u8, {N, nb, bs / 2});
  for (int64_t i = 0; i < packed.numel(); i++) packed.data<uint8_t>()[i] = (uint8_t)(rng() & 0xff);
  auto scales = round_to(random_values(N * nb, (uint32_t)rng(), 0.01f / amp, 0.2f / amp), dt);
  Tensor zp(DType::u8, {N * zp_stride});
  for (int64_t i = 0; i < zp.numel(); i++) zp.data<uint8_t>()[i] = (uint8_t)(rng() & 0xff);
  auto a = round_to(random_values(M * K, (uint32_t)rng(), -amp, amp), dt);
  MatMulWeight w = kernels::upload_matmul_nbits(ctx, "q", packed, host_tensor(scales, dt, {N * nb}),
                                                with_zp ? &zp : nullptr, K, N, bs);
  std::vector<DeviceBuffer> keep;
  TensorView av = upload_to(ctx, keep, a, dt, {M, K});
  TensorView out = upload_to(ctx, keep, std::vector<float>(M * N, 0.0f), dt, {M, N});
  CommandRecorder rec(ctx);
  rec.begin();
  kernels::matmul(rec, av, w, nullptr, out);
  rec.end();
  rec.run();
  std::vector<double> want(M * N);
  for (int64_t n = 0; n < N; n++)
    for (int64_t m = 0; m < M; m++) {
      double s = 0;
      for (int64_t k = 0; k < K; k++) {
        int64_t blk = k / bs, within = k % bs;
        uint8_t byte = packed.data<uint8_t>()[(n * nb + blk) * (bs / 2) + within / 2];
        int q = within % 2 == 0 ? byte & 15 : byte >> 4;
        int z = 8;
        if (with_zp) {
          uint8_t zb = zp.data<uint8_t>()[n * zp_stride + blk / 2];
          z = blk % 2 == 0 ? zb & 15 : zb >> 4;
        }
        s += (double)a[m * K + k] * (q - z) * scales[n * nb + blk];
      }
      want[m * N + n] = s;
    }
  expect_close(download_from(ctx, out), want, rel_tol(dt), abs_tol(dt, K), "MatMulNBits");
}

TEST_P(VulkanMatMulNBitsTest, MatchesDequantizedReference) { check_nbits(ctx(), GetParam()); }

// The int4 decode matvec with its products in packed fp16 (tuning q4_wide_half, matvec_q4_wide.comp HALF_DOT) and
// with fp32 products, forced on this device: one activation row and 3 / 5 / 8 rows in one workgroup
// (q4_wide_max_m; 13 and 16 rows in two groups), fp16 (and fp32 activations for the rows), K a multiple of 32, with and without zero points, block
// sizes 32 / 64 / 128, and activations up to +-60000 (fp16's range: the products are scaled so no sum
// overflows; the scales are divided by the amplitude, so outputs stay O(1)). Tolerance as the other fp16 cases (2e-3
// relative, 2e-3 sqrt(K) absolute): each product and each word's sum rounds to fp16 (2^-11 relative), as the
// activations themselves are rounded; with q4_wide_half_acc 4 a whole chunk's 16 products per lane are summed in
// fp16 (no overflow: 16 x 15/256 x 60000 < 65504). One row's outputs also in groups (q4_wide_groups).
TEST_F(VulkanMatMulNBitsTest, PackedHalfProductsMatchTheReference) {
  if (!ctx().info().features.fp16_arithmetic) GTEST_SKIP() << "no fp16 arithmetic on " << ctx().info().name;
  // fp32 products; packed fp16 summed per word; ... per whole chunk; one row's outputs in 3 groups of 4 (packed
  // fp16) and in 2 groups of 4 with 2 chunks per thread (fp32; q4_wide_groups)
  for (uint32_t variant : {0u, 1u, 2u, 3u, 4u}) {
    const uint32_t half = variant > 0 && variant < 4 ? 1 : 0;
    ContextOptions o = options_like(ctx());
    o.tuning->q4_wide_rows = 4;
    o.tuning->q4_wide_half = half;
    o.tuning->q4_wide_half_acc = variant == 2 ? 4 : 1;
    o.tuning->q4_wide_max_m = 16;  // 2..8 rows in one workgroup too, 9..16 in two
    o.tuning->q4_wide_rows_batch = half ? 8 : 0;  // with several rows: 8 outputs per workgroup, or q4_wide_rows
    o.tuning->q4_wide_groups = variant == 3 ? 3 : (variant == 4 ? 2 : 1);
    if (variant == 4) o.tuning->q4_wide_unroll = 2;
    Context other(o);
    const NBitsCase cases[] = {{1, 64, 9, 32, false, DType::f16},   {1, 2048, 37, 32, true, DType::f16},
                               {1, 4096, 20, 64, false, DType::f16}, {1, 1536, 13, 128, true, DType::f16},
                               {3, 256, 21, 32, true, DType::f16},   {5, 2048, 9, 64, false, DType::f16},
                               {8, 512, 40, 32, true, DType::f32},   {13, 1024, 11, 32, true, DType::f16},
                               {16, 256, 24, 64, false, DType::f16}};
    for (const NBitsCase& c : cases)
      for (float amp : {1.0f, 60000.0f}) {
        SCOPED_TRACE("variant " + std::to_string(variant) + ", K " + std::to_string(c.K) + ", block " +
                     std::to_string(c.block) + ", amplitude " + std::to_string(amp));
        check_nbits(other, c, amp);
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, VulkanMatMulNBitsTest,
                         ::testing::Values(NBitsCase{1, 128, 40, 32, false, DType::f32},
                                           NBitsCase{1, 96, 33, 32, true, DType::f32},  // K not a block multiple
                                           NBitsCase{1, 256, 64, 64, true, DType::f16},
                                           NBitsCase{2, 160, 17, 16, true, DType::f16},
                                           NBitsCase{9, 128, 50, 32, true, DType::f32},
                                           NBitsCase{20, 64, 24, 16, false, DType::f16},
                                           NBitsCase{1, 2048, 40, 32, true, DType::f16},  // 4 units per thread
                                           NBitsCase{2, 1024, 24, 64, false, DType::f32}));

// The tiled kernel's int4 variants: tiles 128x128 (300 x 520), 64x128 (130 x 300), 128x64 (1100 x 40), 64x64
// (70 x 60); A in 16-byte vectors (K % 8 == 0 fp16, % 4 fp32) or elements; K inside the last block; an odd number
// of blocks (zero-point rows start mid-word).
INSTANTIATE_TEST_SUITE_P(Tiles, VulkanMatMulNBitsTest,
                         ::testing::Values(NBitsCase{300, 200, 520, 64, false, DType::f16},
                                           NBitsCase{300, 160, 520, 32, true, DType::f32},
                                           NBitsCase{300, 90, 520, 16, true, DType::f16},
                                           NBitsCase{130, 256, 300, 32, true, DType::f16},
                                           NBitsCase{130, 256, 300, 32, false, DType::f32},
                                           NBitsCase{1100, 64, 40, 16, false, DType::f32},
                                           NBitsCase{130, 150, 300, 32, true, DType::f16},  // 5 blocks, K % 8 == 6
                                           NBitsCase{100, 100, 150, 32, true, DType::f32},
                                           NBitsCase{77, 90, 130, 16, false, DType::f16},
                                           NBitsCase{1100, 128, 40, 128, true, DType::f16},
                                           NBitsCase{70, 61, 60, 16, true, DType::f32}));

std::vector<NBitsCase> random_nbits_cases() {
  std::mt19937 rng(4048);
  std::vector<NBitsCase> out;
  for (int i = 0; i < 6; i++) {
    int64_t bs = 16 << (rng() % 3);
    out.push_back({i % 2 == 0 ? 1 : 2 + (int64_t)(rng() % 40), bs + (int64_t)(rng() % 300), 1 + (int64_t)(rng() % 90),
                   bs, rng() % 2 == 0, i % 3 == 1 ? DType::f32 : DType::f16});
  }
  return out;
}
INSTANTIATE_TEST_SUITE_P(RandomShapes, VulkanMatMulNBitsTest, ::testing::ValuesIn(random_nbits_cases()));

// int4 through the skinny matmul: M 2..16, block sizes 16..64, K inside the last block and odd block counts, with
// and without zero points.
std::vector<NBitsCase> skinny_nbits_cases() {
  std::mt19937 rng(1616);
  std::vector<NBitsCase> out;
  for (int64_t M = 2; M <= 16; M += 1 + (int64_t)(rng() % 2)) {
    int64_t bs = 16 << (rng() % 3);
    out.push_back({M, bs + (int64_t)(rng() % 300), 1 + (int64_t)(rng() % 70), bs, M % 2 == 0,
                   M % 3 == 1 ? DType::f32 : DType::f16});
  }
  out.push_back({16, 1024, 20, 32, true, DType::f16});
  out.push_back({4, 2048, 24, 32, true, DType::f16});   // 2 units per iteration
  out.push_back({7, 1000, 13, 16, false, DType::f32});  // 2 units per iteration, the last one repeated
  out.push_back({16, 520, 37, 32, true, DType::f16});   // the matrix-unit skinny kernel (fp16 activations)
  out.push_back({3, 136, 40, 16, false, DType::f16});
  out.push_back({9, 4096, 18, 128, true, DType::f16});
  out.push_back({40, 520, 37, 32, true, DType::f16});  // 3 row tiles of the matrix-unit kernel
  out.push_back({64, 1024, 20, 32, false, DType::f16});
  return out;
}
INSTANTIATE_TEST_SUITE_P(Skinny, VulkanMatMulNBitsTest, ::testing::ValuesIn(skinny_nbits_cases()));

TEST_F(VulkanTest, GridsBeyond65535WorkgroupsFold) {
  // N / rows-per-workgroup and the norm's row count exceed maxComputeWorkGroupCount's guaranteed 65535.
  int64_t K = 8, N = 300000, rows = 70000, D = 4;
  auto b = random_values(K * N, 61), a = random_values(K, 62), x = random_values(rows * D, 63);
  auto w = kernels::upload_matmul_weight(ctx(), "wide", host_tensor(b, DType::f32, {K, N}));
  TensorView av = upload(a, DType::f32, {1, K}), c = empty(DType::f32, {1, N});
  TensorView xv = upload(x, DType::f32, {rows, D}), g = upload({1, 1, 1, 1}, DType::f32, {D});
  TensorView y = empty(DType::f32, {rows, D});
  CommandRecorder rec(ctx());
  rec.begin();
  kernels::matmul(rec, av, w, nullptr, c);
  kernels::rms_norm(rec, xv, g, 1e-6f, y);
  rec.end();
  rec.run();
  std::vector<double> want(N), want_y(rows * D);
  for (int64_t n = 0; n < N; n++)
    for (int64_t k = 0; k < K; k++) want[n] += (double)a[k] * b[k * N + n];
  for (int64_t r = 0; r < rows; r++) {
    double ss = 0;
    for (int64_t d = 0; d < D; d++) ss += (double)x[r * D + d] * x[r * D + d];
    for (int64_t d = 0; d < D; d++) want_y[r * D + d] = x[r * D + d] / std::sqrt(ss / D + 1e-6);
  }
  expect_close(download(c), want, 1e-4, 1e-5, "matvec over a folded grid");
  expect_close(download(y), want_y, 1e-4, 1e-5, "rms norm over a folded grid");
}

TEST_F(VulkanTest, WeightUploadTransposesOnTheDeviceExactly) {
  // upload_matmul_weight streams [K, N] as stored and transposes it on the device into [N, K] in blocks of rows of
  // at most 32 MiB: odd shapes inside one block, and an fp32 weight of 36 MB (two blocks; the second partial).
  struct Case { int64_t K, N; DType dt; };
  for (Case c : {Case{1, 1, DType::f16}, Case{33, 65, DType::f16}, Case{7, 1000, DType::f32}, Case{130, 31, DType::f32},
                 Case{3000, 3001, DType::f32}}) {
    auto b = random_values(c.K * c.N, 71 + c.K);
    Tensor host = host_tensor(b, c.dt, {c.K, c.N});
    auto w = kernels::upload_matmul_weight(ctx(), "w", host);
    Tensor got = ctx().transfers().download_tensor(w.data.view(c.dt, {c.N, c.K}));
    size_t es = dtype_size(c.dt);
    const char* src = static_cast<const char*>(host.raw());
    const char* dst = static_cast<const char*>(got.raw());
    int64_t bad = 0;
    for (int64_t k = 0; k < c.K; k++)
      for (int64_t n = 0; n < c.N; n++) bad += std::memcmp(src + (k * c.N + n) * es, dst + (n * c.K + k) * es, es) != 0;
    EXPECT_EQ(bad, 0) << "K " << c.K << " N " << c.N << " " << dtype_name(c.dt);
  }
}

TEST_F(VulkanTest, WeightPartsArePlacedAsTheFusedWeight) {
  // A packed QKV weight (parts side by side) and an interleaved gate/up weight (parts on alternate columns) placed
  // from their parts on the device: the same bytes as the fused [K, N] weight built on the host, transposed.
  for (DType dt : {DType::f16, DType::f32}) {
    const int64_t K = 67;
    Tensor q = host_tensor(random_values(K * 40, 81), dt, {K, 40}), k = host_tensor(random_values(K * 9, 82), dt, {K, 9});
    Tensor v = host_tensor(random_values(K * 9, 83), dt, {K, 9});
    Tensor g = host_tensor(random_values(K * 33, 84), dt, {K, 33}), u = host_tensor(random_values(K * 33, 85), dt, {K, 33});
    struct Case { std::vector<kernels::WeightColumns> parts; int64_t N; };
    for (const Case& c : {Case{{{&q, 0, 1}, {&k, 40, 1}, {&v, 49, 1}}, 58}, Case{{{&g, 0, 2}, {&u, 1, 2}}, 66}}) {
      auto w = kernels::upload_matmul_weight_parts(ctx(), "fused", c.parts, c.N);
      Tensor got = ctx().transfers().download_tensor(w.data.view(dt, {c.N, K}));
      size_t es = dtype_size(dt);
      int64_t bad = 0;
      for (const auto& p : c.parts)
        for (int64_t kk = 0; kk < K; kk++)
          for (int64_t col = 0; col < p.w->dim(1); col++)
            bad += std::memcmp(static_cast<const char*>(p.w->raw()) + (kk * p.w->dim(1) + col) * es,
                               static_cast<const char*>(got.raw()) + ((p.offset + col * p.stride) * K + kk) * es, es) != 0;
      EXPECT_EQ(bad, 0) << "N " << c.N << " " << dtype_name(dt);
    }
  }
  Tensor a = host_tensor(random_values(8 * 4, 86), DType::f32, {8, 4});
  EXPECT_THROW(kernels::upload_matmul_weight_parts(ctx(), "gap", {{&a, 0, 1}}, 5), Error);  // a column uncovered
  EXPECT_THROW(kernels::upload_matmul_weight_parts(ctx(), "over", {{&a, 2, 1}}, 5), Error);  // past the end
}

// c[i] = a[i] [M, K] x b[i or 0] [K, N] in float64 (b broadcast when it has one batch).
std::vector<double> batched_reference(const std::vector<float>& a, const std::vector<float>& b, int64_t B, int64_t M,
                                      int64_t K, int64_t N, bool broadcast) {
  std::vector<double> want(B * M * N);
  for (int64_t i = 0; i < B; i++)
    for (int64_t m = 0; m < M; m++)
      for (int64_t n = 0; n < N; n++) {
        double s = 0;
        for (int64_t k = 0; k < K; k++) s += (double)a[(i * M + m) * K + k] * b[((broadcast ? 0 : i) * K + k) * N + n];
        want[(i * M + m) * N + n] = s;
      }
  return want;
}

TEST_F(VulkanTest, BatchedMatMulBroadcastsB) {
  int64_t B = 3, M = 5, K = 19, N = 7;
  auto a = random_values(B * M * K, 5), b = random_values(K * N, 6);
  TensorView av = upload(a, DType::f32, {B, M, K}), bv = upload(b, DType::f32, {1, K, N});
  TensorView c = empty(DType::f32, {B, M, N});
  CommandRecorder rec(ctx());
  rec.begin();
  kernels::matmul_batched(rec, av, bv, c);
  rec.end();
  rec.run();
  expect_close(download(c), batched_reference(a, b, B, M, K, N, true), 1e-4, 1e-5, "batched matmul");
}

// Batched MatMul of activations: B [batch or 1, K, N] read along N (element loads), A in vectors where K allows.
struct BatchedCase {
  int64_t batch, M, K, N;
  bool broadcast;
  DType dtype;
};
class VulkanBatchedMatMulTest : public VulkanTest, public ::testing::WithParamInterface<BatchedCase> {};

TEST_P(VulkanBatchedMatMulTest, MatchesReference) {
  auto [B, M, K, N, broadcast, dt] = GetParam();
  int64_t bb = broadcast ? 1 : B;
  uint32_t seed = (uint32_t)(B * 7 + M * 11 + K * 13 + N);
  auto a = round_to(random_values(B * M * K, seed), dt), b = round_to(random_values(bb * K * N, seed + 1), dt);
  TensorView av = upload(a, dt, {B, M, K}), bv = upload(b, dt, {bb, K, N}), c = empty(dt, {B, M, N});
  CommandRecorder rec(ctx());
  rec.begin();
  kernels::matmul_batched(rec, av, bv, c);
  rec.end();
  rec.run();
  expect_close(download(c), batched_reference(a, b, B, M, K, N, broadcast), rel_tol(dt), abs_tol(dt, K),
               "batched matmul");
}

INSTANTIATE_TEST_SUITE_P(Shapes, VulkanBatchedMatMulTest,
                         ::testing::Values(BatchedCase{3, 130, 64, 200, false, DType::f16},  // 64x128 tiles
                                           BatchedCase{2, 300, 48, 300, true, DType::f32},   // 128x128 tiles
                                           BatchedCase{4, 130, 48, 50, false, DType::f32},   // 128x64 tiles
                                           BatchedCase{2, 70, 33, 150, true, DType::f16},    // K odd
                                           BatchedCase{5, 17, 19, 23, false, DType::f32}));  // 64x64, one tile

// A, B and C at addresses that are not 16-byte aligned (K a vector multiple): the kernel takes element loads.
TEST_F(VulkanTest, TiledMatMulTakesElementLoadsWhenUnaligned) {
  for (DType dt : {DType::f16, DType::f32}) {
    int64_t M = 70, K = 64, N = 72, es = (int64_t)dtype_size(dt);
    auto a = round_to(random_values(M * K, 71), dt), b = round_to(random_values(K * N, 72), dt);
    TensorView ap = upload(std::vector<float>(M * K + 1, 0.0f), dt, {M * K + 1});
    TensorView av{ap.mem.sub(es, M * K * es), dt, {M, K}};  // one element in
    ctx().transfers().upload_tensor(av, host_tensor(a, dt, {M, K}));
    TensorView bp = upload(std::vector<float>(K * N + 1, 0.0f), dt, {K * N + 1});
    TensorView bv{bp.mem.sub(es, K * N * es), dt, {1, K, N}};
    ctx().transfers().upload_tensor(bv, host_tensor(b, dt, {1, K, N}));
    MatMulWeight w = kernels::upload_matmul_weight(ctx(), "w", host_tensor(b, dt, {K, N}));
    TensorView cp = empty(dt, {2 * M * N + 1});
    TensorView c1{cp.mem.sub(es, M * N * es), dt, {M, N}}, c2{cp.mem.sub((M * N + 1) * es, M * N * es), dt, {1, M, N}};
    CommandRecorder rec(ctx());
    rec.begin();
    kernels::matmul(rec, av, w, nullptr, c1);
    kernels::matmul_batched(rec, TensorView{av.mem, dt, {1, M, K}}, bv, c2);
    rec.end();
    rec.run();
    std::vector<double> want(M * N);
    for (int64_t m = 0; m < M; m++)
      for (int64_t n = 0; n < N; n++)
        for (int64_t k = 0; k < K; k++) want[m * N + n] += (double)a[m * K + k] * b[k * N + n];
    expect_close(download(c1), want, rel_tol(dt), abs_tol(dt, K), "matmul, unaligned A");
    expect_close(download(c2), want, rel_tol(dt), abs_tol(dt, K), "batched matmul, unaligned A and B");
  }
}

}  // namespace
}  // namespace ogx::vk::test

namespace ogx::vk::test {
namespace {

// MatMulNBits accuracy_level 4 activation quantization against the rule written out on the host (same fp32
// operations, round half to even): the device must give the same values bit for bit — its divisions 127 / amax and
// amax / 127 are correctly rounded (exact_math.glsl) whatever the driver's division and fma do.
TEST_F(VulkanTest, QuantizeInt8BlocksMatchesHostRule) {
  for (auto [M, K, bs] : {std::tuple<int64_t, int64_t, int64_t>{1, 64, 32}, {3, 100, 16}, {2, 256, 128}, {1, 96, 64}}) {
    auto x = random_values(M * K, (uint32_t)(M * 31 + K + bs), -3.0f, 3.0f);
    if (K >= 64) x[5] = 0.0f;
    TensorView xv = upload(x, DType::f32, {M, K}), yv = empty(DType::f32, {M, K});
    CommandRecorder rec(ctx());
    rec.begin();
    kernels::quantize_int8_blocks(rec, xv, bs, yv);
    rec.end();
    rec.run();
    std::vector<float> got = download(yv);
    int off_by_one = 0;
    for (int64_t m = 0; m < M; m++)
      for (int64_t k0 = 0; k0 < K; k0 += bs) {
        int64_t len = std::min(bs, K - k0);
        float amax = 0.f;
        for (int64_t i = 0; i < len; i++) amax = std::max(amax, std::fabs(x[m * K + k0 + i]));
        float scale = amax / 127.f, inv = amax != 0.f ? 127.f / amax : 0.f;
        for (int64_t i = 0; i < len; i++) {
          float q = std::min(127.f, std::max(-128.f, std::nearbyint(x[m * K + k0 + i] * inv)));
          float want = q * scale, g = got[m * K + k0 + i];
          if (g == want) continue;
          EXPECT_NEAR(g, want, scale * 1.001f) << "m " << m << " k " << k0 + i;
          off_by_one++;
        }
      }
    EXPECT_EQ(off_by_one, 0) << "values one level off (division rounding) for M " << M << " K " << K;
  }
}

}  // namespace
}  // namespace ogx::vk::test

namespace ogx::vk::test {
namespace {

// The decode gate/up projection with the SiLU·Mul epilogue against the plain matvec (interleaved output) followed
// by silu_mul_interleaved, and that against a float64 reference of silu(g) * u over the rounded projections.
struct GateUpCase {
  int64_t M, K, I;
  DType dtype;
  bool int4;
};
class VulkanGateUpSiluTest : public VulkanTest, public ::testing::WithParamInterface<GateUpCase> {};

TEST_P(VulkanGateUpSiluTest, EpilogueMatchesSeparateOps) {
  auto [M, K, I, dt, int4] = GetParam();
  if (M > kernels::decode_rows_max(ctx()) && !(dt == DType::f16 && ctx().coopmat_f16()))
    GTEST_SKIP() << M << " rows: the fused epilogue serves them only on the matrix units (matvec_coop)";
  uint32_t seed = (uint32_t)(M * 3 + K * 5 + I * 7 + int4);
  kernels::MatMulWeight w;
  if (int4) {
    int64_t bs = 32, nb = (K + bs - 1) / bs;
    std::mt19937 rng(seed);
    Tensor packed(DType::u8, {2 * I, nb, bs / 2});
    for (int64_t i = 0; i < packed.numel(); i++) packed.data<uint8_t>()[i] = (uint8_t)(rng() & 0xff);
    auto scales = round_to(random_values(2 * I * nb, seed + 1, 0.01f, 0.1f), dt);
    w = kernels::upload_matmul_nbits(ctx(), "gu", packed, host_tensor(scales, dt, {2 * I * nb}), nullptr, K, 2 * I, bs);
  } else {
    w = kernels::upload_matmul_weight(ctx(), "gu", host_tensor(round_to(random_values(K * 2 * I, seed), dt), dt, {K, 2 * I}));
  }
  TensorView x = upload(random_values(M * K, seed + 2), dt, {M, K});
  TensorView gu = empty(dt, {M, 2 * I}), h1 = empty(dt, {M, I}), h2 = empty(dt, {M, I});
  CommandRecorder rec(ctx());
  rec.begin();
  kernels::matmul(rec, x, w, nullptr, gu);
  kernels::silu_mul_interleaved(rec, gu, h1);
  kernels::matvec_gate_up_silu(rec, x, w, h2);
  rec.end();
  rec.run();
  std::vector<float> g = download(gu), a = download(h1), b = download(h2);
  std::vector<double> want(M * I);
  for (int64_t m = 0; m < M; m++)
    for (int64_t j = 0; j < I; j++) {
      double gv = g[m * 2 * I + 2 * j], uv = g[m * 2 * I + 2 * j + 1];
      want[m * I + j] = gv / (1 + std::exp(-gv)) * uv;
    }
  double rel = dt == DType::f16 ? 2e-3 : 1e-5;
  expect_close(a, want, rel, 1e-5, "silu_mul_interleaved");
  expect_close(b, std::vector<double>(a.begin(), a.end()), dt == DType::f16 ? 2e-3 : 1e-4, 1e-4, "epilogue");
}

INSTANTIATE_TEST_SUITE_P(Shapes, VulkanGateUpSiluTest,
                         ::testing::Values(GateUpCase{1, 64, 24, DType::f32, false}, GateUpCase{2, 128, 37, DType::f16, false},
                                           GateUpCase{1, 96, 50, DType::f32, true}, GateUpCase{2, 256, 33, DType::f16, true},
                                           GateUpCase{16, 264, 40, DType::f16, false},
                                           GateUpCase{5, 128, 21, DType::f16, true},
                                           GateUpCase{13, 256, 20, DType::f16, true},  // two groups of rows
                                           GateUpCase{40, 264, 40, DType::f16, false},  // 3 row tiles
                                           GateUpCase{64, 520, 24, DType::f16, true}));

}  // namespace
}  // namespace ogx::vk::test
