// SimplifiedLayerNormalization and SkipSimplifiedLayerNormalization over the last axis, one workgroup per row:
//   s = x (+ skip (+ bias)); y = s / sqrt(mean(s^2) + epsilon) * gamma; residual = s when has_residual.
// With layer_norm (LayerNormalization, SkipLayerNormalization): y = (s - mean) / sqrt(var + epsilon) * gamma
// (+ beta), the variance taken around the mean in a second pass.
// fp32 accumulation; s is recomputed from the inputs in the second pass (no rounding through fp16 storage).
#version 460
#include "common.glsl"

layout(local_size_x_id = 0) in;

layout(push_constant) uniform Push {
  ActBuf x;         // [rows, D]
  ActBuf skip;      // when has_skip: [rows, D]
  ActBuf bias;      // when has_bias: [D]
  ActBuf gamma;     // [D]
  ActBuf y;         // [rows, D]
  ActBuf residual;  // when has_residual: [rows, D]
  ActBuf beta;      // when has_beta: [D]
  uint D, rows;
  float epsilon;
  uint has_skip, has_bias, has_residual, layer_norm, has_beta;
} p;

shared float partial[256];

float sum_input(uint row, uint i) {
  float s = float(p.x.v[row * p.D + i]);
  if (p.has_skip != 0) s += float(p.skip.v[row * p.D + i]);
  if (p.has_bias != 0) s += float(p.bias.v[i]);
  return s;
}

// Sum of v over the workgroup (every invocation gets it).
float workgroup_sum(float v) {
  v = subgroupAdd(v);
  barrier();  // partial[] may still be read from the previous sum
  if (gl_SubgroupInvocationID == 0) partial[gl_SubgroupID] = v;
  barrier();
  float total = 0.0;
  for (uint i = 0; i < gl_NumSubgroups; i++) total += partial[i];
  return total;
}

void main() {
  uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (row >= p.rows) return;  // whole workgroup: the grid is folded into 2-D
  uint tid = gl_LocalInvocationID.x;
  float mean = 0.0;
  if (p.layer_norm != 0) {
    float sum = 0.0;
    for (uint i = tid; i < p.D; i += gl_WorkGroupSize.x) sum += sum_input(row, i);
    mean = workgroup_sum(sum) / float(p.D);
  }
  float ss = 0.0;
  for (uint i = tid; i < p.D; i += gl_WorkGroupSize.x) {
    float s = sum_input(row, i) - mean;
    ss += s * s;
  }
  float inv = inversesqrt(workgroup_sum(ss) / float(p.D) + p.epsilon);
  for (uint i = tid; i < p.D; i += gl_WorkGroupSize.x) {
    float s = sum_input(row, i);
    float y = (s - mean) * inv * float(p.gamma.v[i]);
    if (p.has_beta != 0) y += float(p.beta.v[i]);
    p.y.v[row * p.D + i] = TO_STORE(y);
    if (p.has_residual != 0) p.residual.v[row * p.D + i] = TO_STORE(s);
  }
}
