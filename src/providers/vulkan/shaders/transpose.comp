// Load-time layout of a MatMul weight: rows [k0, k0 + kc) of a row-major [K, N] matrix (as an ONNX file stores it)
// become columns [k0, k0 + kc) of the row-major [N, K] matrix the matvec / matmul kernels read:
//   out[(n * row_stride + row_offset) * K + k0 + j] = in[j * N + n]   for j < kc, n < N.
// row_stride / row_offset place a part of a fused weight (packed QKV: its row range; gate/up: every other row).
// The host streams the weight's bytes unchanged; this kernel does the transposition (32 x 32 tiles through shared
// memory, so both the loads and the stores are coalesced). ELEM_F16 selects 2-byte elements (else 4-byte, moved as
// raw bits); an fp16 value passes through fp32 exactly.
#version 460
#include "common.glsl"

layout(local_size_x = 32, local_size_y = 8) in;

#if ELEM_F16
#define Buf F16Buf
#define LOAD(x) float(x)
#define STORE(x) float16_t(x)
shared float tile[32][33];
#else
#define Buf U32Buf
#define LOAD(x) (x)
#define STORE(x) (x)
shared uint tile[32][33];
#endif

layout(push_constant) uniform Push {
  Buf in_;   // [kc, N]: source rows k0 .. k0 + kc
  Buf out_;  // [rows, K], rows >= N * row_stride
  uint kc, N, K, k0, row_stride, row_offset;
} p;

void main() {
  uint n0 = gl_WorkGroupID.x * 32, j0 = gl_WorkGroupID.y * 32;
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  for (uint r = ty; r < 32; r += 8) {
    uint j = j0 + r, n = n0 + tx;
    if (j < p.kc && n < p.N) tile[r][tx] = LOAD(p.in_.v[j * p.N + n]);
  }
  barrier();
  for (uint r = ty; r < 32; r += 8) {
    uint n = n0 + r, j = j0 + tx;
    if (n < p.N && j < p.kc) p.out_.v[(n * p.row_stride + p.row_offset) * p.K + p.k0 + j] = STORE(tile[tx][r]);
  }
}
