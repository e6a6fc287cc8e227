// com.microsoft GatherBlockQuantized with 4-bit data on the device: out[i, k] = float(q - zp) * scale for the rows
// ids[i] of a table of uint8 [V, K / 2] (two values a byte, low nibble first), scales [V, nblocks] (the output's
// dtype), optional zero points uint8 [V, ceil(nblocks / 2)] (packed alike; 8 without). The product of a small
// integer and the scale is exact in fp32 and rounded once to the output's type, as the CPU kernel's float product.
// Ids the host supplies are range-checked before the step; an out-of-range id on the device writes zeros.
#version 460
#include "common.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
  U32Buf data;    // uint8 [V, K / 2]
  ActBuf scales;  // [V, nblocks]
  U32Buf zp;      // uint8 [V, zp_row] (has_zp)
  U32Buf ids;     // int64 [n]
  ActBuf out_;    // [n, K]
  uint n, V, K, block_size, nblocks, zp_row, has_zp;
} p;

uint byte_at(U32Buf b, uint i) { return (b.v[i / 4] >> ((i % 4) * 8)) & 0xffu; }

void main() {
  uint row = gl_WorkGroupID.y;
  uint k = gl_GlobalInvocationID.x;
  if (row >= p.n || k >= p.K) return;
  int id = load_i64(p.ids, row);
  if (id < 0) id += int(p.V);
  if (id < 0 || id >= int(p.V)) {
    p.out_.v[row * p.K + k] = TO_STORE(0.0);
    return;
  }
  uint r = uint(id), b = k / p.block_size;
  uint q = (byte_at(p.data, r * (p.K / 2) + k / 2) >> ((k % 2) * 4)) & 0xfu;
  uint z = p.has_zp != 0 ? (byte_at(p.zp, r * p.zp_row + b / 2) >> ((b % 2) * 4)) & 0xfu : 8u;
  p.out_.v[row * p.K + k] = TO_STORE(float(int(q) - int(z)) * float(p.scales.v[r * p.nblocks + b]));
}
