// RMSNorm / SkipRMSNorm, broadcasting elementwise ops, SiLU*Mul and Gather against float64 references.
#include "providers/vulkan/kernels/elementwise.h"
#include "providers/vulkan/kernels/norm.h"
#include "providers/vulkan/tests/vk_test_util.h"

namespace ogx::vk::test {
namespace {

// fp16 storage: output rounding to fp16 dominates (2^-11 relative); 2e-3 leaves room for fp32 reductions.
double tol(DType t) { return t == DType::f16 ? 2e-3 : 1e-4; }

class VulkanNormTest : public VulkanTest, public ::testing::WithParamInterface<DType> {};

TEST_P(VulkanNormTest, SkipRmsNormWithResidual) {
  DType dt = GetParam();
  for (auto [rows, D] : {std::pair<int64_t, int64_t>{1, 64}, {5, 300}, {3, 2048}}) {
    auto x = round_to(random_values(rows * D, 11 + D), dt), skip = round_to(random_values(rows * D, 12 + D), dt);
    auto bias = round_to(random_values(D, 13), dt), gamma = round_to(random_values(D, 14, 0.5f, 1.5f), dt);
    TensorView xv = upload(x, dt, {rows, D}), sv = upload(skip, dt, {rows, D}), bv = upload(bias, dt, {D});
    TensorView gv = upload(gamma, dt, {D});
    TensorView y = empty(dt, {rows, D}), res = empty(dt, {rows, D}), y_plain = empty(dt, {rows, D});
    float eps = 1e-5f;
    CommandRecorder rec(ctx());
    rec.begin();
    kernels::skip_rms_norm(rec, xv, sv, &bv, gv, eps, y, &res);
    kernels::rms_norm(rec, xv, gv, eps, y_plain);
    rec.end();
    rec.run();
    std::vector<double> want(rows * D), want_res(rows * D), want_plain(rows * D);
    for (int64_t r = 0; r < rows; r++) {
      double ss = 0, ssp = 0;
      for (int64_t i = 0; i < D; i++) {
        double s = (double)x[r * D + i] + skip[r * D + i] + bias[i];
        want_res[r * D + i] = s;
        ss += s * s;
        ssp += (double)x[r * D + i] * x[r * D + i];
      }
      double inv = 1.0 / std::sqrt(ss / D + eps), invp = 1.0 / std::sqrt(ssp / D + eps);
      for (int64_t i = 0; i < D; i++) {
        want[r * D + i] = want_res[r * D + i] * inv * gamma[i];
        want_plain[r * D + i] = x[r * D + i] * invp * gamma[i];
      }
    }
    expect_close(download(y), want, tol(dt), 1e-6, "skip rms norm");
    expect_close(download(res), want_res, tol(dt), 1e-6, "residual sum");
    expect_close(download(y_plain), want_plain, tol(dt), 1e-6, "rms norm");
  }
}

TEST_P(VulkanNormTest, BroadcastBinaryAndUnary) {
  DType dt = GetParam();
  Shape sa{2, 3, 1, 5}, sb{4, 1};  // -> [2, 3, 4, 5]
  auto a = round_to(random_values(30, 21), dt), b = round_to(random_values(4, 22, 0.5f, 2.0f), dt);
  TensorView av = upload(a, dt, sa), bv = upload(b, dt, sb);
  Shape so = kernels::broadcast_shapes(sa, sb);
  ASSERT_EQ(so, (Shape{2, 3, 4, 5}));
  std::vector<TensorView> outs;
  for (int i = 0; i < 8; i++) outs.push_back(empty(dt, i < 4 ? so : sa));
  CommandRecorder rec(ctx());
  rec.begin();
  kernels::binary(rec, kernels::BinaryOp::add, av, bv, outs[0]);
  kernels::binary(rec, kernels::BinaryOp::sub, av, bv, outs[1]);
  kernels::binary(rec, kernels::BinaryOp::mul, av, bv, outs[2]);
  kernels::binary(rec, kernels::BinaryOp::div, av, bv, outs[3]);
  kernels::unary(rec, kernels::UnaryOp::sigmoid, av, outs[4]);
  kernels::unary(rec, kernels::UnaryOp::silu, av, outs[5]);
  kernels::unary(rec, kernels::UnaryOp::tanh, av, outs[6]);
  kernels::unary(rec, kernels::UnaryOp::gelu_tanh, av, outs[7]);
  rec.end();
  EXPECT_EQ(rec.stats().barriers, 2u);  // leading + trailing: the eight dispatches are independent
  rec.run();
  for (int op = 0; op < 4; op++) {
    std::vector<double> want(120);
    for (int i = 0; i < 120; i++) {
      int d0 = i / 60, d1 = (i / 20) % 3, d2 = (i / 5) % 4, d3 = i % 5;
      double x = a[(d0 * 3 + d1) * 5 + d3], y = b[d2];
      want[i] = op == 0 ? x + y : op == 1 ? x - y : op == 2 ? x * y : x / y;
    }
    expect_close(download(outs[op]), want, tol(dt), 1e-6, "binary");
  }
  std::vector<double> sig(30), silu(30);
  for (int i = 0; i < 30; i++) sig[i] = 1 / (1 + std::exp(-(double)a[i])), silu[i] = a[i] * sig[i];
  expect_close(download(outs[4]), sig, tol(dt), 1e-6, "sigmoid");
  expect_close(download(outs[5]), silu, tol(dt), 1e-6, "silu");
  std::vector<double> th(30), gelu(30);
  for (int i = 0; i < 30; i++) {
    double x = a[i];
    th[i] = std::tanh(x);
    gelu[i] = 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  }
  expect_close(download(outs[6]), th, tol(dt), 1e-6, "tanh");
  expect_close(download(outs[7]), gelu, tol(dt), 1e-6, "gelu (tanh approximation)");
}

TEST_P(VulkanNormTest, SiluMulSeparateAndFused) {
  DType dt = GetParam();
  int64_t rows = 3, cols = 37;
  auto gu = round_to(random_values(rows * 2 * cols, 31, -4, 4), dt);
  std::vector<float> g(rows * cols), u(rows * cols);
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++) g[r * cols + c] = gu[r * 2 * cols + c], u[r * cols + c] = gu[r * 2 * cols + cols + c];
  TensorView fused = upload(gu, dt, {rows, 2 * cols}), gv = upload(g, dt, {rows, cols}), uv = upload(u, dt, {rows, cols});
  TensorView o1 = empty(dt, {rows, cols}), o2 = empty(dt, {rows, cols});
  CommandRecorder rec(ctx());
  rec.begin();
  kernels::silu_mul(rec, gv, uv, o1, false);
  kernels::silu_mul(rec, fused, fused, o2, true);
  rec.end();
  rec.run();
  std::vector<double> want(rows * cols);
  for (size_t i = 0; i < want.size(); i++) want[i] = g[i] / (1 + std::exp(-(double)g[i])) * u[i];
  expect_close(download(o1), want, tol(dt), 1e-6, "silu*mul");
  expect_close(download(o2), want, tol(dt), 1e-6, "silu*mul fused");
}

TEST_P(VulkanNormTest, GatherEmbedding) {
  DType dt = GetParam();
  int64_t V = 50, D = 70;
  auto table = round_to(random_values(V * D, 41), dt);
  std::vector<int64_t> ids{3, 0, 49, -1, 17};
  TensorView tv = upload(table, dt, {V, D}), iv = upload_i64(ids, {1, 5}), out = empty(dt, {1, 5, D});
  CommandRecorder rec(ctx());
  rec.begin();
  kernels::gather_rows(rec, tv, iv, out);
  rec.end();
  rec.run();
  std::vector<double> want;
  for (int64_t id : ids)
    for (int64_t d = 0; d < D; d++) want.push_back(table[(id < 0 ? id + V : id) * D + d]);
  expect_close(download(out), want, 0, 0, "gather");
}

TEST_F(VulkanTest, CastFloat32Float16BothWays) {
  auto x = random_values(1000, 51, -70000, 70000);  // beyond fp16's range at the ends: inf
  for (size_t i = 0; i < 20; i++) x[i] = random_values(20, 52, -1e-6f, 1e-6f)[i];  // subnormals
  TensorView a = upload(x, DType::f32, {10, 100}), h = empty(DType::f16, {10, 100}), back = empty(DType::f32, {1000});
  CommandRecorder rec(ctx());
  rec.begin();
  kernels::cast(rec, a, h);
  kernels::cast(rec, h, back);
  rec.end();
  rec.run();
  // Vulkan leaves the fp32 -> fp16 rounding mode to the device (nearest-even on lavapipe, possibly toward zero
  // elsewhere): allow one fp16 ulp against the host's nearest-even; fp16 -> fp32 is exact.
  auto want16 = round_to(x, DType::f16);
  auto got16 = download(h), got32 = download(back);
  for (size_t i = 0; i < x.size(); i++) {
    if (std::isinf(want16[i]) && std::fabs(x[i]) > 65520.0f) {
      ASSERT_TRUE(std::isinf(got16[i]) || std::fabs(got16[i]) == 65504.0f) << "element " << i << " = " << x[i];
    } else {
      double ulp = std::max(std::ldexp(std::fabs((double)want16[i]), -10), std::ldexp(1.0, -24));
      ASSERT_NEAR(got16[i], want16[i], ulp) << "element " << i << " = " << x[i];
    }
    ASSERT_EQ(got32[i], got16[i]) << "element " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(DTypes, VulkanNormTest, ::testing::Values(DType::f32, DType::f16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

}  // namespace
}  // namespace ogx::vk::test
