// Embedding gather: out[i, :] = table[ids[i], :]; ids int64 (negative ids count from the end). Ids the host supplies
// are range-checked before the step (GatherOp::check_step_input, the CPU's error); an out-of-range id that reaches
// the kernel anyway (computed on the device) writes a row of zeros rather than reading out of bounds.
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
