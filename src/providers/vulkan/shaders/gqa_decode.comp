// GroupQueryAttention, flash-decoding: workgroup (split, head, b * S + s) attends one query row to its share of the
// valid keys (kv_len split into `nsplit` equal ranges at run time) with an online softmax over chunks of
// THREADS keys, and writes (max, sum, unnormalised output[D]) to the partials for gqa_combine.comp.
// Query head h reads kv head h / (Hq / Hkv). Scores: scale * q.k, then softcap. fp32 throughout.
#version 460
#include "common.glsl"
#include "attention_common.glsl"

layout(local_size_x_id = 0) in;  // THREADS (<= 256)

layout(push_constant) uniform Push {
  F32Buf q;         // [B, Hq, S, D] (rotated)
  ActBuf k_cache;   // [B, Hkv, max_seq, D]
  ActBuf v_cache;   // [B, Hkv, max_seq, D]
  I32Buf seqlens;   // int32 [B]
  I32Buf total;     // int32 [1]
  F32Buf partial;   // [B * S, Hq, nsplit, D + 2]: out[D], max, sum
  uint B, S, Hq, Hkv, D, max_seq, nsplit;
  float scale, softcap;
  int window;
} p;

shared float q_s[256];
shared float scores[256];
shared float red[64];

float workgroup_max(float v) {
  v = subgroupMax(v);
  if (gl_SubgroupInvocationID == 0) red[gl_SubgroupID] = v;
  barrier();
  float r = -1.0 / 0.0;
  for (uint i = 0; i < gl_NumSubgroups; i++) r = max(r, red[i]);
  barrier();
  return r;
}

void main() {
  uint split = gl_WorkGroupID.x, h = gl_WorkGroupID.y, bs = gl_WorkGroupID.z;
  uint b = bs / p.S, s = bs % p.S;
  uint tid = gl_LocalInvocationID.x, T = gl_WorkGroupSize.x;
  uint kvh = h / (p.Hq / p.Hkv);
  int kv_len = min(kv_len_of(p.seqlens, b), int(p.max_seq));
  int position = past_of(p.seqlens, p.total, b, p.S) + int(s);
  int hi = min(kv_len, position + 1);
  int lo = p.window > 0 ? max(0, position - p.window + 1) : 0;
  int per = (max(hi - lo, 0) + int(p.nsplit) - 1) / int(p.nsplit);
  int j0 = lo + int(split) * per, j1 = min(hi, j0 + per);

  for (uint d = tid; d < p.D; d += T) q_s[d] = p.q.v[((b * p.Hq + h) * p.S + s) * p.D + d];
  barrier();
  uint kv_base = (b * p.Hkv + kvh) * p.max_seq * p.D;
  float m = -1.0 / 0.0, l = 0.0;
  float acc[4] = float[4](0, 0, 0, 0);  // output elements d = tid + T * i
  for (int c0 = j0; c0 < j1; c0 += int(T)) {
    int j = c0 + int(tid);
    float sc = -1.0 / 0.0;
    if (j < j1) {
      float dotv = 0.0;
      for (uint d = 0; d < p.D; d++) dotv += q_s[d] * float(p.k_cache.v[kv_base + uint(j) * p.D + d]);
      sc = softcapped(dotv * p.scale, p.softcap);
    }
    float cmax = workgroup_max(sc);
    float m_new = max(m, cmax);
    float alpha = exp(m - m_new);
    float pj = j < j1 ? exp(sc - m_new) : 0.0;
    scores[tid] = pj;
    float psum = subgroupAdd(pj);
    if (gl_SubgroupInvocationID == 0) red[gl_SubgroupID] = psum;
    barrier();
    float chunk_sum = 0.0;
    for (uint i = 0; i < gl_NumSubgroups; i++) chunk_sum += red[i];
    l = l * alpha + chunk_sum;
    int n = min(int(T), j1 - c0);
    for (uint i = 0; i < 4; i++) {
      uint d = tid + T * i;
      if (d >= p.D) break;
      float a = acc[i] * alpha;
      for (int t = 0; t < n; t++) a += scores[t] * float(p.v_cache.v[kv_base + uint(c0 + t) * p.D + d]);
      acc[i] = a;
    }
    m = m_new;
    barrier();
  }
  uint out_base = ((bs * p.Hq + h) * p.nsplit + split) * (p.D + 2);
  for (uint i = 0; i < 4; i++) {
    uint d = tid + T * i;
    if (d < p.D) p.partial.v[out_base + d] = acc[i];
  }
  if (tid == 0) {
    p.partial.v[out_base + p.D] = m;
    p.partial.v[out_base + p.D + 1] = l;
  }
}
