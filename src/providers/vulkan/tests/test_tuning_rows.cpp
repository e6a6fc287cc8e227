// Every row of the tuning table must compute the same results: the vendor rows (e.g. 256-thread matvec, 64-wide
// tiles) run here on the test device through a context with that row forced. Checks matvec (fp16, int4), the
// skinny matmul of batched decode (9 rows; the tiled matmul for a row whose skinny_max_m is below 9), tiled
// matmul, RMSNorm and attention (decode with splits, prompt) against the default context's results. And every
// variant of the matrix-unit skinny matmul (threads, staged steps, column tiles, direct weight loads) against float64.
#include <cmath>
#include <string>

#include "providers/vulkan/kernels/attention.h"
#include "providers/vulkan/kernels/matmul.h"
#include "providers/vulkan/kernels/matmul_coop.h"
#include "providers/vulkan/kernels/norm.h"
#include "providers/vulkan/tests/vk_test_util.h"
#include "providers/vulkan/tuning.h"

namespace ogx::vk::test {
namespace {

// The table's values lie in the ranges their fields document, and the nvidia row keeps what was measured for it (the
// rows were positional until a field inserted in the middle shifted the nvidia row's int4 decode and attention
// settings unnoticed: every row still computed the same results, only slower).
TEST(TuningTable, RowsHoldValuesInTheirDocumentedRanges) {
  DeviceInfo d;
  d.vendor_id = 4318;
  d.max_workgroup_invocations = 1024;
  d.max_shared_memory = 48 * 1024;
  for (const Tuning& t : tuning_rows(d)) {
    SCOPED_TRACE(t.row);
    EXPECT_TRUE(t.q4_wide_unroll == 1 || t.q4_wide_unroll == 2 || t.q4_wide_unroll == 4);
    EXPECT_LE(t.q4_wide_rows, 8u);
    EXPECT_GE(t.decode_group_fill, 16u);
    EXPECT_GE(t.decode_group_max_splits, 1u);
    EXPECT_LE(t.decode_group_subgroup_loop, 2u);
    EXPECT_LE(t.q4_wide_half, 1u);
    EXPECT_TRUE(t.q4_wide_half_acc == 1 || t.q4_wide_half_acc == 2 || t.q4_wide_half_acc == 4);
    EXPECT_TRUE(t.coop_skinny_unroll >= 1 && t.coop_skinny_unroll <= 8);
    EXPECT_TRUE(t.coop_skinny_cols >= 1 && t.coop_skinny_cols <= 8);
    EXPECT_TRUE(t.skinny_unroll == 1 || t.skinny_unroll == 2 || t.skinny_unroll == 4);
    EXPECT_TRUE(t.matmul_tile == 64 || t.matmul_tile == 128);
    for (const Tuning::CoopTile& c : {t.coop_big_tile, t.coop_big_tile_q4, t.coop_small_tile}) {
      EXPECT_TRUE(c.k_step == 32 || c.k_step == 64);
      EXPECT_TRUE(c.stages == 1 || c.stages == 2);
      EXPECT_LE(c.warps_m * c.warps_n * 32, 1024u);
    }
  }
  const Tuning nv = tuning_for(d, false);
  EXPECT_EQ(nv.row, "nvidia");
  EXPECT_EQ(nv.q4_wide_rows, 4u);
  EXPECT_EQ(nv.q4_wide_unroll, 1u);
  EXPECT_EQ(nv.decode_group_fill, 128u);
  EXPECT_EQ(nv.decode_group_subgroup_loop, 2u);
  EXPECT_EQ(nv.decode_group_max_splits, 32u);
  EXPECT_EQ(nv.decode_group_max_splits_d128, 16u);
  EXPECT_EQ(nv.q4_wide_half, 1u);
  EXPECT_EQ(nv.q4_wide_half_acc, 4u);
  EXPECT_EQ(nv.q4_wide_max_m, 8u);
  EXPECT_EQ(nv.coop_skinny_cols, 2u);
}

// The provider option `tuning`: named fields set over a row; unknown fields and bad values are errors that name them.
TEST(TuningTable, OverridesSetNamedFieldsAndRefuseOthers) {
  Tuning t;
  t.row = "nvidia";
  apply_tuning_overrides(t, "q4_wide_half=1,decode_group_subgroup_loop=0,skinny_max_m=8");
  EXPECT_EQ(t.q4_wide_half, 1u);
  EXPECT_EQ(t.decode_group_subgroup_loop, 0u);
  EXPECT_EQ(t.skinny_max_m, 8u);
  EXPECT_EQ(t.row, "nvidia + q4_wide_half=1,decode_group_subgroup_loop=0,skinny_max_m=8");
  apply_tuning_overrides(t, "");  // nothing
  EXPECT_EQ(t.skinny_max_m, 8u);
  auto message = [](const std::string& o) {
    Tuning u;
    try {
      apply_tuning_overrides(u, o);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("no_such_field=1").find("'no_such_field' is not a tuning field (fields: matvec_threads"),
            std::string::npos);
  EXPECT_NE(message("q4_wide_half=yes").find("'yes' for q4_wide_half is not a number"), std::string::npos);
  EXPECT_NE(message("q4_wide_half").find("'' for q4_wide_half"), std::string::npos);
  EXPECT_NE(message("q4_wide_half=1,").find("'' is not a tuning field"), std::string::npos);
}

struct Outputs {
  std::vector<float> matvec, matvec_q4, skinny, skinny_q4, matmul, norm, attn_decode, attn_prompt;
};

Outputs run_all(Context& ctx) {
  const DType dt = DType::f16;
  std::vector<DeviceBuffer> keep;
  auto up = [&](const std::vector<float>& v, Shape s) { return upload_to(ctx, keep, v, dt, s); };
  auto out = [&](DType d, Shape s) {
    keep.push_back(ctx.memory().allocate("o", shape_numel(s) * dtype_size(d)));
    ctx.transfers().fill_zero(keep.back().slice());
    return keep.back().view(d, s);
  };
  auto up_i32 = [&](std::vector<int32_t> v) {
    keep.push_back(ctx.memory().allocate("i", v.size() * 4));
    ctx.transfers().upload(keep.back().slice(), 0, v.data(), v.size() * 4);
    return keep.back().view(DType::i32, {(int64_t)v.size()});
  };
  int64_t K = 320, N = 200, M = 70, D = 64, Hq = 8, Hkv = 2, max_seq = 600;
  auto w = kernels::upload_matmul_weight(ctx, "w", host_tensor(random_values(K * N, 1), dt, {K, N}));
  int64_t nb = K / 32;
  Tensor packed(DType::u8, {N, nb, 16});
  for (int64_t i = 0; i < packed.numel(); i++) packed.data<uint8_t>()[i] = (uint8_t)(i * 37 + 11);
  auto wq = kernels::upload_matmul_nbits(ctx, "q", packed, host_tensor(random_values(N * nb, 2, 0.01f, 0.1f), dt, {N * nb}),
                                         nullptr, K, N, 32);
  TensorView x1 = up(random_values(K, 3), {1, K}), xm = up(random_values(M * K, 4), {M, K});
  TensorView xs = up(random_values(9 * K, 10), {9, K}), os = out(dt, {9, N}), osq = out(dt, {9, N});
  TensorView gamma = up(random_values(K, 5), {K});
  TensorView o1 = out(dt, {1, N}), oq = out(dt, {1, N}), om = out(dt, {M, N}), on = out(dt, {M, K});
  TensorView kc = up(random_values(Hkv * max_seq * D, 6), {1, Hkv, max_seq, D});
  TensorView vc = up(random_values(Hkv * max_seq * D, 7), {1, Hkv, max_seq, D});
  TensorView q1 = up(random_values((Hq + 2 * Hkv) * D, 8), {1, 1, (Hq + 2 * Hkv) * D});
  TensorView qp = up(random_values(40 * (Hq + 2 * Hkv) * D, 9), {1, 40, (Hq + 2 * Hkv) * D});
  TensorView od = out(dt, {1, 1, Hq * D}), op = out(dt, {1, 40, Hq * D});
  kernels::GqaParams gp;
  gp.num_heads = Hq, gp.kv_num_heads = Hkv;
  auto ws = kernels::make_gqa_workspace(ctx, 1, 40, Hq, D, max_seq);
  CommandRecorder rec(ctx);
  rec.begin();
  kernels::matmul(rec, x1, w, nullptr, o1);
  kernels::matmul(rec, x1, wq, nullptr, oq);
  kernels::matmul(rec, xs, w, nullptr, os);  // 9 rows: the skinny matmul where the row enables it
  kernels::matmul(rec, xs, wq, nullptr, osq);
  kernels::matmul(rec, xm, w, nullptr, om);
  kernels::rms_norm(rec, xm, gamma, 1e-5f, on);
  kernels::GqaTensors t;
  t.k_cache = kc, t.v_cache = vc;
  DeviceBuffer kv_table;
  t.pages = kernels::contiguous_kv_pages(ctx, kc, vc, kv_table);
  t.query = qp, t.output = op, t.seqlens_k = up_i32({39}), t.total_sequence_length = up_i32({40});
  kernels::group_query_attention(rec, gp, t, ws);  // prompt of 40 writes positions 0..39
  rec.end();
  rec.run();
  rec.begin();
  t.query = q1, t.output = od, t.seqlens_k = up_i32({550}), t.total_sequence_length = up_i32({551});
  kernels::group_query_attention(rec, gp, t, ws);  // decode at position 550 over 551 keys
  rec.end();
  rec.run();
  auto got = [&](const TensorView& t) { return download_from(ctx, t); };
  return {got(o1), got(oq), got(os), got(osq), got(om), got(on), got(od), got(op)};
}

void expect_same(const std::vector<float>& a, const std::vector<float>& b, const std::string& what,
                 double rel = 2e-3, double abs = 2e-3) {
  // Different workgroup shapes sum in different orders (fp32), then round to fp16: allow 2 fp16 ulps relative.
  std::vector<double> want(b.begin(), b.end());
  expect_close(a, want, rel, abs, what.c_str());
}

// int4 with fp16 activations: rows with q4_wide_half multiply in packed fp16 (each product and each word's 4-term sum
// rounds to fp16, ~2^-11 of a word's sum x 256 x its scale, over K / 8 words), the others in fp32. Outputs here are
// ~2.6 in size; measured worst 3.1e-3 absolute (H200, an output near 0) and 2.3e-3 relative (lavapipe, 9 rows),
// 4.9e-3 relative through the fused norm (test_norm_projection.cpp): 1e-2 both.
constexpr double kInt4HalfTol = 1e-2;

class VulkanTuningRowsTest : public VulkanTest {};

TEST_F(VulkanTuningRowsTest, EveryRowComputesTheSameResults) {
  Outputs base = run_all(ctx());
  for (const Tuning& row : tuning_rows(ctx().info())) {
    ContextOptions o = options_like(ctx());
    o.tuning = row;
    o.staging_bytes = 4 << 20;
    o.readback_bytes = 1 << 20;
    Context other(o);
    Outputs got = run_all(other);
    expect_same(got.matvec, base.matvec, "matvec, row " + row.row);
    expect_same(got.matvec_q4, base.matvec_q4, "matvec int4, row " + row.row, kInt4HalfTol, kInt4HalfTol);
    expect_same(got.skinny, base.skinny, "skinny matmul, row " + row.row);
    expect_same(got.skinny_q4, base.skinny_q4, "skinny matmul int4, row " + row.row, kInt4HalfTol, kInt4HalfTol);
    expect_same(got.matmul, base.matmul, "matmul, row " + row.row);
    expect_same(got.norm, base.norm, "rms norm, row " + row.row);
    expect_same(got.attn_decode, base.attn_decode, "attention decode, row " + row.row);
    expect_same(got.attn_prompt, base.attn_prompt, "attention prompt, row " + row.row);
  }
}

// matvec_coop.comp's specializations (tuning coop_skinny_*), each through a context with it forced, at 1..4 row tiles:
// N = 96 puts workgroups of 4 column tiles both inside N (direct weight loads where asked) and across its end
// (staged); K = 1032 is not a multiple of 16 (staged everywhere). Tolerance: fp16 outputs of fp32 sums (2 ulps).
TEST_F(VulkanTuningRowsTest, MatrixUnitSkinnyVariantsMatchTheReference) {
  if (!ctx().coopmat_f16()) GTEST_SKIP() << "device has no fp16 cooperative-matrix kernels: " << ctx().info().name;
  struct Variant {
    uint32_t threads, unroll, cols, direct;
  };
  const Variant variants[] = {{256, 4, 1, 0}, {256, 4, 2, 0}, {256, 4, 2, 1}, {128, 2, 4, 1}, {256, 8, 1, 1},
                              {64, 4, 2, 1}};
  for (const Variant& v : variants)
    for (int64_t K : {1024, 1032})
      for (int64_t M : {5, 16, 33, 64}) {
        ContextOptions o = options_like(ctx());
        o.tuning->coop_skinny_threads = v.threads;
        o.tuning->coop_skinny_unroll = v.unroll;
        o.tuning->coop_skinny_cols = v.cols;
        o.tuning->coop_skinny_direct_w = v.direct;
        o.tuning->coop_tiled_min_groups = 1u << 30;  // the skinny kernel at every M here
        Context c(o);
        const int64_t N = 96;
        const uint32_t seed = (uint32_t)(M * 31 + K + v.cols * 7 + v.direct);
        std::vector<float> a = round_to(random_values(M * K, seed), DType::f16);
        std::vector<float> b = round_to(random_values(K * N, seed + 1), DType::f16);
        kernels::MatMulWeight w = kernels::upload_matmul_weight(c, "w", host_tensor(b, DType::f16, {K, N}));
        DeviceBuffer xb = c.memory().allocate("x", M * K * 2), yb = c.memory().allocate("y", M * N * 2);
        TensorView x = xb.view(DType::f16, {M, K}), y = yb.view(DType::f16, {M, N});
        c.transfers().upload_tensor(x, host_tensor(a, DType::f16, {M, K}));
        ASSERT_TRUE(kernels::matvec_coop_applies(c, x, w, M));
        CommandRecorder rec(c);
        rec.begin();
        kernels::matmul(rec, x, w, nullptr, y);
        rec.end();
        rec.run();
        std::vector<double> want(M * N);
        for (int64_t m = 0; m < M; m++)
          for (int64_t n = 0; n < N; n++) {
            double s = 0;
            for (int64_t k = 0; k < K; k++) s += (double)a[m * K + k] * b[k * N + n];
            want[m * N + n] = s;
          }
        std::string what = "threads " + std::to_string(v.threads) + " unroll " + std::to_string(v.unroll) + " cols " +
                           std::to_string(v.cols) + " direct " + std::to_string(v.direct) + " M " + std::to_string(M) +
                           " K " + std::to_string(K);
        expect_close(download_from(c, y), want, 2e-3, 2e-3 * std::sqrt((double)K), what.c_str());
      }
}

}  // namespace
}  // namespace ogx::vk::test
