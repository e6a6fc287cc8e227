// y[m, k] = q * s with q = round_half_even(x[m, k] * (127 / amax)) clamped to [-128, 127] and s = amax / 127, amax
// the largest |x| of the block of block_size values along K holding k: the activation quantization of
// MatMulNBits accuracy_level 4 (ONNX Runtime's CPU int8 path), so int4 models exported for the CPU give the
// CPU's tokens. fp32 activations. One workgroup per (block, row).
#version 460
#include "common.glsl"

layout(local_size_x = 64) in;

layout(push_constant) uniform Push {
  F32Buf x;  // [M, K]
  F32Buf y;  // [M, K]
  uint M, K, block_size;
} p;

shared float red[64];

#include "exact_math.glsl"

void main() {
  uint blk = gl_WorkGroupID.x, m = gl_WorkGroupID.y, tid = gl_LocalInvocationID.x;
  uint k0 = blk * p.block_size;
  uint len = min(p.block_size, p.K - k0);
  uint base = m * p.K + k0;
  float amax = 0.0;
  for (uint i = tid; i < len; i += 64) amax = max(amax, abs(p.x.v[base + i]));
  red[tid] = amax;
  barrier();
  for (uint s = 32; s > 0; s >>= 1) {
    if (tid < s) red[tid] = max(red[tid], red[tid + s]);
    barrier();
  }
  amax = red[0];
  precise float scale = div_rn(amax, 127.0);
  precise float inv = amax != 0.0 ? div_rn(127.0, amax) : 0.0;
  for (uint i = tid; i < len; i += 64) {
    precise float v = clamp(roundEven(p.x.v[base + i] * inv), -128.0, 127.0);
    p.y.v[base + i] = v * scale;
  }
}
