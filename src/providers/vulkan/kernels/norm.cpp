#include "providers/vulkan/kernels/norm.h"

#include "providers/vulkan/kernels/kernel_util.h"

namespace ogx::vk::kernels {

namespace {

struct NormPush {
  uint64_t x, skip, bias, gamma, y, residual, beta;
  uint32_t D, rows;
  float epsilon;
  uint32_t has_skip, has_bias, has_residual, layer_norm, has_beta;
};

void launch(CommandRecorder& rec, const TensorView& x, const TensorView* skip, const TensorView* bias,
            const TensorView& gamma, float epsilon, const TensorView& y, const TensorView* residual,
            bool layer_norm = false, const TensorView* beta = nullptr) {
  const char* t = storage_suffix(x.dtype, "SimplifiedLayerNormalization");
  check_same_dtype(x, y, "SimplifiedLayerNormalization");
  check_same_dtype(x, gamma, "SimplifiedLayerNormalization gamma");
  int64_t D = x.shape.back();
  OGX_CHECK(gamma.numel() == D && y.numel() == x.numel(), "SimplifiedLayerNormalization: gamma ",
            shape_str(gamma.shape), " / output ", shape_str(y.shape), " do not fit input ", shape_str(x.shape));
  if (skip) OGX_CHECK(skip->numel() == x.numel() && skip->dtype == x.dtype, "SkipSimplifiedLayerNormalization: skip ",
                      shape_str(skip->shape), " does not match input ", shape_str(x.shape));
  if (bias) OGX_CHECK(bias->numel() == D, "SkipSimplifiedLayerNormalization: bias must have ", D, " elements");
  if (residual) OGX_CHECK(residual->numel() == x.numel(), "SkipSimplifiedLayerNormalization: residual output size");
  if (beta) OGX_CHECK(beta->numel() == D && beta->dtype == x.dtype, "LayerNormalization: beta must have ", D,
                      " elements of the input's dtype");
  if (x.numel() == 0) return;
  Context& ctx = rec.context();
  const Pipeline& pl = ctx.pipelines().get(std::string("rms_norm_") + t, {ctx.tuning().reduce_threads});
  NormPush p{addr(x), addr_or_zero(skip), addr_or_zero(bias), addr(gamma), addr(y), addr_or_zero(residual),
             addr_or_zero(beta), (uint32_t)D, (uint32_t)(x.numel() / D), epsilon, skip != nullptr, bias != nullptr,
             residual != nullptr, layer_norm, beta != nullptr};
  uint32_t gx, gy;
  grid_2d((uint32_t)(x.numel() / D), &gx, &gy);
  rec.dispatch(pl, &p, sizeof(p), gx, gy, 1,
               {x.mem, gamma.mem, skip ? skip->mem : x.mem, bias ? bias->mem : x.mem, beta ? beta->mem : x.mem},
               {y.mem, residual ? residual->mem : y.mem});
}

}  // namespace

void rms_norm(CommandRecorder& rec, const TensorView& x, const TensorView& gamma, float epsilon, const TensorView& y) {
  launch(rec, x, nullptr, nullptr, gamma, epsilon, y, nullptr);
}

void skip_rms_norm(CommandRecorder& rec, const TensorView& x, const TensorView& skip, const TensorView* bias,
                   const TensorView& gamma, float epsilon, const TensorView& y, const TensorView* residual) {
  launch(rec, x, &skip, bias, gamma, epsilon, y, residual);
}

void layer_norm(CommandRecorder& rec, const TensorView& x, const TensorView* skip, const TensorView* bias,
                const TensorView& gamma, const TensorView* beta, float epsilon, const TensorView& y,
                const TensorView* residual) {
  launch(rec, x, skip, bias, gamma, epsilon, y, residual, true, beta);
}

}  // namespace ogx::vk::kernels
