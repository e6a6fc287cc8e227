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
};

// One row: x (fp32, already residual-summed) -> y with gamma/beta.
template <typename S>
void norm_row(const float* x, int64_t H, const S* gamma, const S* beta, S* y, const NormArgs& a, float* mean_out,
              float* inv_out) {
  double mean = 0;
  if (!a.simplified) {
    for (int64_t h = 0; h < H; h++) mean += x[h];
    mean /= (double)H;
  }
  double var = 0;
  for (int64_t h = 0; h < H; h++) {
    double d = x[h] - mean;
    var += d * d;
  }
  var /= (double)H;
  float inv = 1.0f / std::sqrt((float)var + a.eps);
  for (int64_t h = 0; h < H; h++) {
    float v = ((float)(x[h] - mean)) * inv * (float)load(gamma[h]);
    if (beta) v += (float)load(beta[h]);
    y[h] = store<S>(v);
  }
  if (mean_out) *mean_out = (float)mean;
  if (inv_out) *inv_out = inv;
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
  NormArgs a{simplified, ctx.node().attr_float("epsilon", 1e-5f)};
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
