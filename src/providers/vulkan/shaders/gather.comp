// Embedding gather: out[i, :] = table[ids[i], :]; ids int64 (negative ids count from the end; out-of-range rows
// are written as zeros).
#version 460
#include "common.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
  ActBuf table;  // [V, D]
  U32Buf ids;    // int64 [n]
  ActBuf out_;   // [n, D]
  uint n, V, D;
} p;

void main() {
  uint row = gl_WorkGroupID.y;
  uint col = gl_GlobalInvocationID.x;
  if (row >= p.n || col >= p.D) return;
  int id = load_i64(p.ids, row);
  if (id < 0) id += int(p.V);
  bool ok = id >= 0 && id < int(p.V);
  p.out_.v[row * p.D + col] = ok ? p.table.v[uint(id) * p.D + col] : TO_STORE(0.0);
}
