// Normalizations over the last axis: SimplifiedLayerNormalization (RMSNorm), SkipSimplifiedLayerNormalization
// (residual add + RMSNorm, with the sum as output 3), LayerNormalization and SkipLayerNormalization.
// Statistics and the residual sum are computed in fp32 whatever the storage type, as ONNX Runtime does.
#include <cmath>
#include <vector>

#include "providers/cpu/cpu_ops.h"
#include "providers/cpu/type_dispatch.h"

namespace ogx::cpu {
namespace {

struct NormArgs {
  bool simplified;  // RMSNorm: no mean subtraction, no bias
  float eps;
  bool scalar_order = false;  // Skip*: ONNX Runtime's scalar loop (skip_layer_norm.cc), not MLAS's 8-lane kernel
};

// One row: x (fp32, already residual-summed) -> y with gamma/beta, in ONNX Runtime 1.30's CPU arithmetic bit for
// bit (checked node by node with tools/ortgenai_check/graph_diff.sh).
// Skip(Simplified)LayerNormalization (scalar_order, contrib_ops/cpu/skip_layer_norm.cc's own loop): the sum and the
// sum of squares in index order, mean = sum / H, dev = sqrt(sumsq / H [- mean^2] + eps), each output
// (x [- mean]) / dev * gamma [+ beta] — a division.
// (Simplified)LayerNormalization (MLAS's AVX2 kernel, core/mlas/lib/layernorm_kernel_avx2.cpp, which
// layer_norm_impl.cc calls for fp32 rows): the sum and the sum of squares run in 8 lanes (lane j takes the elements
// j, j+8, ...; the squares fused-multiply-added), the lanes are reduced as ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)),
// then the tail of H mod 8 elements is added in order; mean = sum / H, dev = sqrt(sumsq / H [- mean^2] + eps),
// inv = 1 / dev, and each output is (x [- mean]) * inv * gamma [fused + beta].
// Compiled with -ffp-contract=off (CMakeLists.txt): every * and + here rounds unless written as std::fma.
template <typename S>
inline __attribute__((always_inline)) void norm_row_body(const float* x, int64_t H, const S* gamma, const S* beta,
                                                         S* y, const NormArgs& a, float* mean_out, float* inv_out) {
  if (a.scalar_order) {
    float sum = 0.0f, sumsq = 0.0f;
    for (int64_t h = 0; h < H; h++) {
      sum += x[h];
      sumsq += x[h] * x[h];
    }
    const float n = (float)H;
    const float mean = sum / n;
    const float dev = a.simplified ? std::sqrt(sumsq / n + a.eps) : std::sqrt(sumsq / n - mean * mean + a.eps);
    for (int64_t h = 0; h < H; h++) {
      float v = (a.simplified ? x[h] : x[h] - mean) / dev * (float)load(gamma[h]);
      if (beta) v += (float)load(beta[h]);
      y[h] = store<S>(v);
    }
    if (mean_out) *mean_out = mean;
    if (inv_out) *inv_out = 1.0f / dev;
    return;
  }
  float lsum[8] = {0, 0, 0, 0, 0, 0, 0, 0}, lsq[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= H; i += 8)
    for (int j = 0; j < 8; j++) {
      lsum[j] += x[i + j];
      lsq[j] = std::fma(x[i + j], x[i + j], lsq[j]);
    }
  auto reduce = [](const float* l) {
    float r0 = l[0] + l[4], r1 = l[1] + l[5], r2 = l[2] + l[6], r3 = l[3] + l[7];
    return (r0 + r2) + (r1 + r3);
  };
  float sum = reduce(lsum), sumsq = reduce(lsq);
  for (; i < H; i++) {
    sum += x[i];
    sumsq = std::fma(x[i], x[i], sumsq);
  }
  const float n = (float)H;
  const float mean = sum / n;
  const float dev = a.simplified ? std::sqrt(sumsq / n + a.eps) : std::sqrt(sumsq / n - mean * mean + a.eps);
  const float inv = 1.0f / dev;
  if (a.simplified) {
    for (int64_t h = 0; h < H; h++) y[h] = store<S>(x[h] * inv * (float)load(gamma[h]));
  } else if (!beta) {
    for (int64_t h = 0; h < H; h++) y[h] = store<S>((x[h] - mean) * inv * (float)load(gamma[h]));
  } else {
    for (int64_t h = 0; h < H; h++)
      y[h] = store<S>(std::fma((x[h] - mean) * inv, (float)load(gamma[h]), (float)load(beta[h])));
  }
  if (mean_out) *mean_out = mean;
  if (inv_out) *inv_out = inv;
}

// The same arithmetic with the fused operations as instructions where the CPU has FMA (else libm's fmaf).
template <typename S>
__attribute__((target("avx2,fma"))) void norm_row_fma(const float* x, int64_t H, const S* gamma, const S* beta, S* y,
                                                      const NormArgs& a, float* mean_out, float* inv_out) {
  norm_row_body<S>(x, H, gamma, beta, y, a, mean_out, inv_out);
}
template <typename S>
void norm_row_plain(const float* x, int64_t H, const S* gamma, const S* beta, S* y, const NormArgs& a,
                    float* mean_out, float* inv_out) {
  norm_row_body<S>(x, H, gamma, beta, y, a, mean_out, inv_out);
}
template <typename S>
void norm_row(const float* x, int64_t H, const S* gamma, const S* beta, S* y, const NormArgs& a, float* mean_out,
              float* inv_out) {
  static const bool has_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (has_fma) norm_row_fma<S>(x, H, gamma, beta, y, a, mean_out, inv_out);
  else norm_row_plain<S>(x, H, gamma, beta, y, a, mean_out, inv_out);
}

// Normalized size H (product of dims from `axis` on) and the shape of the per-row statistics outputs.
int64_t norm_extent(KernelContext& ctx, const Tensor& x, Shape& stat_shape) {
  int64_t axis = ctx.node().attr_int("axis", -1);
  if (axis < 0) axis += x.rank();
  OGX_CHECK(axis >= 0 && axis < x.rank(), ctx.node().describe(), ": bad axis");
  int64_t H = 1;
  stat_shape = x.shape();
  for (int64_t d = axis; d < x.rank(); d++) {
    H *= x.shape()[d];
    stat_shape[d] = 1;
  }
  return H;
}

// LayerNormalization / SimplifiedLayerNormalization: inputs X, scale[, bias]; outputs Y[, mean][, inv_std_var].
void layer_norm_kernel(KernelContext& ctx, bool simplified) {
  const Tensor& x = ctx.input(0);
  const Tensor& gamma = ctx.input(1);
  const Tensor* beta = simplified ? nullptr : ctx.input_or_null(2);
  Shape stat_shape;
  int64_t H = norm_extent(ctx, x, stat_shape);
  OGX_CHECK(gamma.numel() == H && gamma.dtype() == x.dtype(), ctx.node().describe(), ": scale must be ",
            dtype_name(x.dtype()), " with ", H, " elements, got ", shape_str(gamma.shape()));
  NormArgs a{simplified, ctx.node().attr_float("epsilon", 1e-5f)};
  int64_t rows = H ? x.numel() / H : 0;
  Tensor& y = ctx.output(0, x.dtype(), x.shape());
  int inv_index = simplified ? 1 : 2;
  float* mean_p = !simplified && ctx.wants_output(1) ? ctx.output(1, DType::f32, stat_shape).data<float>() : nullptr;
  float* inv_p = ctx.wants_output(inv_index) ? ctx.output(inv_index, DType::f32, stat_shape).data<float>() : nullptr;
  dispatch_float(x.dtype(), "LayerNorm", [&](auto tag) {
    using S = typename decltype(tag)::type;
    ctx.pool().parallel_for_cost(rows, (double)(H * 8), [&](int64_t r0, int64_t r1) {
      std::vector<float> row(H);
      for (int64_t r = r0; r < r1; r++) {
        const S* px = x.data<S>() + r * H;
        for (int64_t h = 0; h < H; h++) row[h] = (float)load(px[h]);
        norm_row<S>(row.data(), H, gamma.data<S>(), beta ? beta->data<S>() : nullptr, y.data<S>() + r * H, a,
                    mean_p ? mean_p + r : nullptr, inv_p ? inv_p + r : nullptr);
      }
    });
  });
}

// Skip(Simplified)LayerNormalization: inputs input, skip, gamma[, beta][, bias] (simplified: input, skip, gamma[,
// bias]); outputs output, mean, inv_std_var, input_skip_bias_sum.
void skip_norm_kernel(KernelContext& ctx, bool simplified) {
  const Tensor& x = ctx.input(0);
  const Tensor& skip = ctx.input(1);
  const Tensor& gamma = ctx.input(2);
  const Tensor* beta = simplified ? nullptr : ctx.input_or_null(3);
  const Tensor* bias = ctx.input_or_null(simplified ? 3 : 4);
  int64_t H = x.dim(-1);
  OGX_CHECK(skip.dtype() == x.dtype() && gamma.dtype() == x.dtype(), ctx.node().describe(), ": input types differ");
  OGX_CHECK(gamma.numel() == H, ctx.node().describe(), ": gamma has ", gamma.numel(), " elements, hidden size is ", H);
  OGX_CHECK(skip.numel() == x.numel() || skip.numel() == H * (x.rank() >= 2 ? x.dim(-2) : 1) || skip.numel() == H,
            ctx.node().describe(), ": skip shape ", shape_str(skip.shape()), " does not fit input ", shape_str(x.shape()));
  NormArgs a{simplified, ctx.node().attr_float("epsilon", 1e-5f), true};
  int64_t rows = H ? x.numel() / H : 0;
  int64_t skip_rows = H ? skip.numel() / H : 1;
  Tensor& y = ctx.output(0, x.dtype(), x.shape());
  Tensor* sum_out = ctx.wants_output(3) ? &ctx.output(3, x.dtype(), x.shape()) : nullptr;
  Shape stat_shape = x.shape();
  stat_shape.back() = 1;
  float* mean_p = ctx.wants_output(1) ? ctx.output(1, DType::f32, stat_shape).data<float>() : nullptr;
  float* inv_p = ctx.wants_output(2) ? ctx.output(2, DType::f32, stat_shape).data<float>() : nullptr;
  dispatch_float(x.dtype(), "SkipLayerNorm", [&](auto tag) {
    using S = typename decltype(tag)::type;
    ctx.pool().parallel_for_cost(rows, (double)(H * 8), [&](int64_t r0, int64_t r1) {
      std::vector<float> row(H);
      for (int64_t r = r0; r < r1; r++) {
        const S* px = x.data<S>() + r * H;
        const S* ps = skip.data<S>() + (r % skip_rows) * H;
        for (int64_t h = 0; h < H; h++) {
          float v = (float)load(px[h]) + (float)load(ps[h]);
          if (bias) v += (float)load(bias->data<S>()[h]);
          row[h] = v;
          if (sum_out) sum_out->data<S>()[r * H + h] = store<S>(v);
        }
        norm_row<S>(row.data(), H, gamma.data<S>(), beta ? beta->data<S>() : nullptr, y.data<S>() + r * H, a,
                    mean_p ? mean_p + r : nullptr, inv_p ? inv_p + r : nullptr);
      }
    });
  });
}

}  // namespace

void register_norm(KernelRegistry& r) {
  // The reference builder registers SimplifiedLayerNormalization in the default domain; accept both.
  for (const char* dom : {"", "com.microsoft"}) {
    r.add_fn(dom, "SimplifiedLayerNormalization", [](KernelContext& c) { layer_norm_kernel(c, true); });
    r.add_fn(dom, "SkipSimplifiedLayerNormalization", [](KernelContext& c) { skip_norm_kernel(c, true); });
  }
  r.add_fn("", "LayerNormalization", [](KernelContext& c) { layer_norm_kernel(c, false); });
  r.add_fn("com.microsoft", "SkipLayerNormalization", [](KernelContext& c) { skip_norm_kernel(c, false); });
}

}  // namespace ogx::cpu
