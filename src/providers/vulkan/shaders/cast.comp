// Cast between float storage types: out[i] = (OUT) in[i]. IN_F16 / OUT_F16 select fp16 (else fp32) at compile time.
#version 460
#include "common.glsl"

layout(local_size_x = 256) in;

#if IN_F16
#define InBuf F16Buf
#else
#define InBuf F32Buf
#endif
#if OUT_F16
#define OutBuf F16Buf
#define OUT_T float16_t
#else
#define OutBuf F32Buf
#define OUT_T float
#endif

layout(push_constant) uniform Push {
  InBuf in_;    // [n]
  OutBuf out_;  // [n]
  uint n;
} p;

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (i < p.n) p.out_.v[i] = OUT_T(float(p.in_.v[i]));
}
