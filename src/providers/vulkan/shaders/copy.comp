// Strided copy with padding, the kernel of the layout ops (Transpose, Slice, Split, Concat, Expand, Tile, Pad,
// ConstantOfShape). For each output coordinate c (rank <= 5, innermost last):
//   MODE 0: out[sum c_d * dst_stride_d] = src[sum c_d * src_stride_d]   (signed strides: slices with negative
//           steps; 0: broadcast)
//   MODE 1..4: s_d = c_d - begin_d; outside [0, src_dim_d): 1 constant (the pad value), 2 edge, 3 reflect, 4 wrap;
//           out[i] = src[sum s_d * src_stride_d] (contiguous output).
// Elements are copied as raw bits of ELEM_BYTES bytes.
#version 460
#extension GL_EXT_shader_8bit_storage : require
#include "common.glsl"
#include "element_types.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
  ElemBuf src;
  ElemBuf dst;
  uint n, rank, mode, pad_lo, pad_hi;  // pad value bits (MODE 1)
  uint dims[5];        // output iteration dims
  int src_stride[5];   // elements
  int aux[5];          // MODE 0: dst strides; else begin (pads before)
  int src_dims[5];     // MODE 1..4
} p;

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (i >= p.n) return;
  uint rem = i;
  int s_idx = 0;
  uint d_idx = 0;
  bool inside = true;
  for (int d = int(p.rank) - 1; d >= 0; d--) {
    int c = int(rem % p.dims[d]);
    rem /= p.dims[d];
    if (p.mode == 0) {
      s_idx += c * p.src_stride[d];
      d_idx += uint(c * p.aux[d]);
      continue;
    }
    int s = c - p.aux[d], len = p.src_dims[d];
    if (s < 0 || s >= len) {
      if (p.mode == 1 || len == 0) {
        inside = false;
      } else if (p.mode == 2) {
        s = clamp(s, 0, len - 1);
      } else if (p.mode == 3) {
        int period = 2 * (len - 1);
        s = period == 0 ? 0 : ((s % period) + period) % period;
        if (s >= len) s = period - s;
      } else {
        s = ((s % len) + len) % len;
      }
    }
    s_idx += s * p.src_stride[d];
  }
  if (p.mode != 0) d_idx = i;
  // (if / else, not ?: — a select on 8- or 16-bit values would need shaderInt8 / shaderInt16)
  if (inside) p.dst.v[d_idx] = p.src.v[s_idx];
  else p.dst.v[d_idx] = ELEM_FROM_BITS(p.pad_lo, p.pad_hi);
}
