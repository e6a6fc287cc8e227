// Softmax / LogSoftmax (LOG) along one axis: x viewed as [outer, n, inner]; one workgroup per (outer, inner)
// row, reading with stride inner. y = exp(x - max) / sum (log: x - max - log(sum)). fp32 arithmetic.
#version 460
#include "common.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint LOG = 0;

layout(push_constant) uniform Push {
  ActBuf x;    // [outer, n, inner]
  ActBuf y;    // same
  uint rows, n, inner;
} p;

shared float partial[256];

float reduce_wg(float v, bool is_max) {
  v = is_max ? subgroupMax(v) : subgroupAdd(v);
  barrier();
  if (gl_SubgroupInvocationID == 0) partial[gl_SubgroupID] = v;
  barrier();
  float r = partial[0];
  for (uint s = 1; s < gl_NumSubgroups; s++) r = is_max ? max(r, partial[s]) : r + partial[s];
  return r;
}

void main() {
  uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (row >= p.rows) return;
  uint base = (row / p.inner) * p.n * p.inner + row % p.inner;
  uint tid = gl_LocalInvocationID.x;
  float m = -1.0 / 0.0;
  for (uint k = tid; k < p.n; k += 256) m = max(m, float(p.x.v[base + k * p.inner]));
  m = reduce_wg(m, true);
  float s = 0.0;
  for (uint k = tid; k < p.n; k += 256) s += exp(float(p.x.v[base + k * p.inner]) - m);
  s = reduce_wg(s, false);
  float ls = log(s);
  for (uint k = tid; k < p.n; k += 256) {
    float v = float(p.x.v[base + k * p.inner]) - m;
    p.y.v[base + k * p.inner] = TO_STORE(LOG != 0 ? v - ls : exp(v) / s);
  }
}
