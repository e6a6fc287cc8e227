// out[r, c] = silu(gate[r, c]) * up[r, c] with row and column strides, so gate and up may be halves of one fused
// gate_up tensor [rows, 2 * cols] (gate first), interleaved pairs of one (col_stride 2), or two separate tensors.
#version 460
#include "common.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
  ActBuf gate;  // [rows, gate_stride]
  ActBuf up;    // [rows, up_stride]
  ActBuf out_;  // [rows, cols]
  uint rows, cols, gate_stride, up_stride, col_stride;
} p;

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (i >= p.rows * p.cols) return;
  uint r = i / p.cols, c = i % p.cols;
  float g = float(p.gate.v[r * p.gate_stride + c * p.col_stride]);
  float u = float(p.up.v[r * p.up_stride + c * p.col_stride]);
  p.out_.v[i] = TO_STORE(g / (1.0 + exp(-g)) * u);
}
