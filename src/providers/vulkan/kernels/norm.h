// SimplifiedLayerNormalization (RMSNorm), SkipSimplifiedLayerNormalization, LayerNormalization and
// SkipLayerNormalization over the last axis.
#pragma once
#include "providers/vulkan/command_recorder.h"
#include "providers/vulkan/context.h"

namespace ogx::vk::kernels {

// y = x / sqrt(mean(x^2) + epsilon) * gamma.   x, y: [.., D]; gamma: [D].
void rms_norm(CommandRecorder& rec, const TensorView& x, const TensorView& gamma, float epsilon, const TensorView& y);

// s = x + skip (+ bias); y = rms_norm(s) * gamma; residual (optional) = s.   x, skip, y, residual: [.., D].
void skip_rms_norm(CommandRecorder& rec, const TensorView& x, const TensorView& skip, const TensorView* bias,
                   const TensorView& gamma, float epsilon, const TensorView& y, const TensorView* residual);

// LayerNormalization / SkipLayerNormalization over the last axis: s = x (+ skip (+ bias));
// y = (s - mean(s)) / sqrt(var(s) + epsilon) * gamma (+ beta); residual (optional) = s.
void layer_norm(CommandRecorder& rec, const TensorView& x, const TensorView* skip, const TensorView* bias,
                const TensorView& gamma, const TensorView* beta, float epsilon, const TensorView& y,
                const TensorView* residual);

}  // namespace ogx::vk::kernels
