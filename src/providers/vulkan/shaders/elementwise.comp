// Elementwise ops with ONNX (numpy) broadcasting, up to rank 6. OP (specialization constant):
//   0 add, 1 sub, 2 mul, 3 div (binary: out = a OP b);  10 sigmoid, 11 silu, 12 neg, 13 tanh, 14 gelu with the
//   tanh approximation (com.microsoft FastGelu) (unary: out = f(a)).
// Input strides are 0 along broadcast axes. fp32 arithmetic.
#version 460
#include "common.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint OP = 0;

layout(push_constant) uniform Push {
  ActBuf a;    // broadcastable to out
  ActBuf b;    // broadcastable to out (binary ops)
  ActBuf out_; // [dims]
  uint n, rank;
  uint dims[6];       // output dims, innermost last
  uint a_strides[6];  // elements
  uint b_strides[6];  // elements
} p;

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (i >= p.n) return;
  uint rem = i, ia = 0, ib = 0;
  for (int d = int(p.rank) - 1; d >= 0; d--) {
    uint c = rem % p.dims[d];
    rem /= p.dims[d];
    ia += c * p.a_strides[d];
    ib += c * p.b_strides[d];
  }
  float x = float(p.a.v[ia]);
  float r;
  if (OP < 10) {
    float y = float(p.b.v[ib]);
    r = OP == 0 ? x + y : OP == 1 ? x - y : OP == 2 ? x * y : x / y;
  } else {
    if (OP == 10) r = 1.0 / (1.0 + exp(-x));
    else if (OP == 11) r = x / (1.0 + exp(-x));
    else if (OP == 12) r = -x;
    else if (OP == 13) r = tanh(x);
    else r = 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
  }
  p.out_.v[i] = TO_STORE(r);
}
