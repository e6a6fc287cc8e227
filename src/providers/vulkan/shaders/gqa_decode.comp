// GroupQueryAttention, flash-decoding: workgroup (split, head, b * S + s) attends one query row to its share of the
// valid keys (kv_len split into `nsplit` equal ranges at run time) with an online softmax over chunks of
// THREADS keys, and writes (max, sum, unnormalised output[D]) to the partials for gqa_combine.comp.
// Query head h reads kv head h / (Hq / Hkv). Scores: scale * q.k, then softcap. fp32 throughout.
// FUSED (compile time; one new token, packed QKV): gqa_prepare.comp's work is done here — each workgroup rotates its
// query head and the new key itself (position_ids when given), uses the new key/value from the input instead of
// the cache, and the first query head of each KV group (split 0) writes them into the caches for later steps.
#version 460
#include "common.glsl"
#include "attention_common.glsl"

layout(local_size_x_id = 0) in;  // THREADS (<= 256)

#ifndef FUSED
#define FUSED 0
#endif

layout(push_constant) uniform Push {
#if FUSED
  ActBuf qkv;       // [B, 1, q_row] packed: Hq query heads, Hkv keys, Hkv values
#else
  F32Buf q;         // [B, Hq, S, D] (rotated)
#endif
  KvTable kv_table; // uint64 [B, Hkv, max_seq / KV_BLOCK]: the rows' KV blocks (attention_common.glsl)
  I32Buf seqlens;   // int32 [B]
  I32Buf total;     // int32 [1]
  F32Buf partial;   // [B * S, Hq, nsplit, D + 2]: out[D], max, sum
#if FUSED
  ActBuf cos_c;     // when flags & 1: [max_pos, D / 2]
  ActBuf sin_c;
  U32Buf pos_ids;   // when flags & 4: int64 [B, 1]
#endif
  uint B, S, Hq, Hkv, D, max_seq, nsplit;
#if FUSED
  uint q_row, flags, max_pos;  // flags: 1 rotary, 2 interleaved, 4 position_ids
#endif
  uint k_off, v_off; // elements into a block of this layer's keys / values
  float scale, softcap;
  int window;
} p;

#define K_ROW(j) ActBuf(kv_row(p.kv_table, p.max_seq / KV_BLOCK, p.Hkv, b, kvh, uint(j), p.k_off, p.D, ACT_BYTES))
#define V_ROW(j) ActBuf(kv_row(p.kv_table, p.max_seq / KV_BLOCK, p.Hkv, b, kvh, uint(j), p.v_off, p.D, ACT_BYTES))

shared float q_s[256];
shared float scores[256];
shared float red[64];
#if FUSED
shared float k_new[256];  // the new token's rotated key, rounded to the cache's storage type
shared float v_new[256];

#include "gqa_rotary.glsl"
#endif

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

#if FUSED
  int rot_pos = (p.flags & 4u) != 0 ? load_i64(p.pos_ids, b) : position;
  uint row = b * p.q_row;
  for (uint d = tid; d < p.D; d += T) {
    q_s[d] = rotate(p.qkv, row + h * p.D, d, rot_pos);
    k_new[d] = float(TO_STORE(rotate(p.qkv, row + (p.Hq + kvh) * p.D, d, rot_pos)));
    v_new[d] = float(p.qkv.v[row + (p.Hq + p.Hkv + kvh) * p.D + d]);
  }
  barrier();
  if (split == 0 && h % (p.Hq / p.Hkv) == 0 && position >= 0 && position < int(p.max_seq))
    for (uint d = tid; d < p.D; d += T) {
      K_ROW(position).v[d] = TO_STORE(k_new[d]);
      V_ROW(position).v[d] = TO_STORE(v_new[d]);
    }
#else
  for (uint d = tid; d < p.D; d += T) q_s[d] = p.q.v[((b * p.Hq + h) * p.S + s) * p.D + d];
  barrier();
#endif
  float m = -1.0 / 0.0, l = 0.0;
  float acc[4] = float[4](0, 0, 0, 0);  // output elements d = tid + T * i
  for (int c0 = j0; c0 < j1; c0 += int(T)) {
    int j = c0 + int(tid);
    float sc = -1.0 / 0.0;
    if (j < j1) {
      float dotv = 0.0;
#if FUSED
      if (j == position)
        for (uint d = 0; d < p.D; d++) dotv += q_s[d] * k_new[d];
      else
#endif
      {
        ActBuf krow = K_ROW(j);
        for (uint d = 0; d < p.D; d++) dotv += q_s[d] * float(krow.v[d]);
      }
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
      for (int t = 0; t < n; t++) {
#if FUSED
        if (c0 + t == position) {
          a += scores[t] * v_new[d];
          continue;
        }
#endif
        a += scores[t] * float(V_ROW(c0 + t).v[d]);
      }
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
