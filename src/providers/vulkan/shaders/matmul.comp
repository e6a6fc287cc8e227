// C[b, m, n] = sum_k A[b, m, k] * B[b](k, n) (+ bias[n]): tiled matmul for prefill and batched activations.
// B(k, n) is read through strides, so it may be an ONNX [K, N] tensor (sbk = N, sbn = 1) or a pre-transposed
// weight [N, K] (sbk = 1, sbn = K); WEIGHT_INT4 reads MatMulNBits blocks (see matvec.comp) and dequantizes.
// 256 threads (16 x 16); each computes a (TILE/16)^2 block of outputs; K advances 16 at a time through shared
// memory; fp32 accumulation.
#version 460
#include "common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;
layout(constant_id = 0) const uint TILE = 32;  // 16, 32 or 64

layout(push_constant) uniform Push {
  ActBuf a;       // [batch, M, K]
  ActBuf b;       // fp: B elements; int4: [N, nblocks * bs / 2] bytes
  ActBuf scales;  // int4: [N, nblocks]
  U32Buf zp;      // int4, when has_zp: [N, zp_stride] bytes
  ActBuf bias;    // when has_bias: [N]
  ActBuf c;       // [batch, M, N]
  uint M, N, K;
  uint sbk, sbn, batch_stride_b;  // element strides of B; batch stride 0 for shared weights
  uint block_size, nblocks, zp_stride;
  uint has_zp, has_bias;
} p;

shared float As[16 * 64];  // [k][m] of the current K slice
shared float Bs[16 * 64];  // [k][n]

float load_b(uint batch, uint k, uint n) {
  if (k >= p.K || n >= p.N) return 0.0;
#if WEIGHT_INT4
  uint row_bytes = p.nblocks * p.block_size / 2;
  uint byte_index = n * row_bytes + k / 2;
  uint byte = (U32Buf(p.b).v[byte_index / 4] >> ((byte_index % 4) * 8)) & 0xffu;
  uint q = (k % 2) == 0 ? (byte & 0xfu) : (byte >> 4);
  uint blk = k / p.block_size;
  float zero = 8.0;
  if (p.has_zp != 0) {
    uint zi = n * p.zp_stride + blk / 2;
    uint zb = (p.zp.v[zi / 4] >> ((zi % 4) * 8)) & 0xffu;
    zero = float((blk % 2) == 0 ? (zb & 0xfu) : (zb >> 4));
  }
  return (float(q) - zero) * float(p.scales.v[n * p.nblocks + blk]);
#else
  return float(p.b.v[batch * p.batch_stride_b + k * p.sbk + n * p.sbn]);
#endif
}

void main() {
  const uint PER = TILE / 16;  // outputs per thread along each axis
  uint batch = gl_WorkGroupID.z;
  uint m0 = gl_WorkGroupID.y * TILE, n0 = gl_WorkGroupID.x * TILE;
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  uint tid = ty * 16 + tx;
  float acc[16];
  for (uint i = 0; i < 16; i++) acc[i] = 0.0;
  uint a_base = batch * p.M * p.K;
  for (uint k0 = 0; k0 < p.K; k0 += 16) {
    for (uint e = tid; e < 16 * TILE; e += 256) {
      uint kk = e % 16, mm = e / 16;  // A: consecutive threads walk k (contiguous in memory)
      uint m = m0 + mm, k = k0 + kk;
      As[kk * 64 + mm] = (m < p.M && k < p.K) ? float(p.a.v[a_base + m * p.K + k]) : 0.0;
      uint bk, bn;
      if (p.sbn == 1) { bn = e % TILE; bk = e / TILE; } else { bk = e % 16; bn = e / 16; }
      Bs[bk * 64 + bn] = load_b(batch, k0 + bk, n0 + bn);
    }
    barrier();
    for (uint kk = 0; kk < 16; kk++) {
      for (uint i = 0; i < PER; i++) {
        float av = As[kk * 64 + ty + 16 * i];
        for (uint j = 0; j < PER; j++) acc[i * 4 + j] += av * Bs[kk * 64 + tx + 16 * j];
      }
    }
    barrier();
  }
  for (uint i = 0; i < PER; i++) {
    uint m = m0 + ty + 16 * i;
    for (uint j = 0; j < PER; j++) {
      uint n = n0 + tx + 16 * j;
      if (m < p.M && n < p.N) {
        float v = acc[i * 4 + j];
        if (p.has_bias != 0) v += float(p.bias.v[n]);
        p.c.v[batch * p.M * p.N + m * p.N + n] = TO_STORE(v);
      }
    }
  }
}
