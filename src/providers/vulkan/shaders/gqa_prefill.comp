// GroupQueryAttention for prompts, causal and tiled: workgroup (query tile, head, b) keeps BQ = 16 query rows in
// shared memory and walks the keys in tiles of BK = 32 through shared memory (K, then V in the same space),
// with an online softmax per row. 128 threads; each owns BQ * D / 128 output accumulators. D <= 128.
// Masking and positions as in attention_common.glsl. fp32 throughout.
#version 460
#include "common.glsl"
#include "attention_common.glsl"

layout(local_size_x = 128) in;
const uint BQ = 16, BK = 32, T = 128, MAXD = 128;

layout(push_constant) uniform Push {
  F32Buf q;         // [B, Hq, S, D] (rotated)
  KvTable kv_table; // uint64 [B, Hkv, max_seq / KV_BLOCK]: the rows' KV blocks (attention_common.glsl)
  I32Buf seqlens;   // int32 [B]
  I32Buf total;     // int32 [1]
  ActBuf out_;      // [B, S, Hq * D]
  uint B, S, Hq, Hkv, D, max_seq;
  uint k_off, v_off; // elements into a block of this layer's keys / values
  float scale, softcap;
  int window;
} p;

shared float q_s[BQ * MAXD];
shared float kv_s[BK * (MAXD + 1)];  // rows padded to D + 1: the score loop reads a column
shared float p_s[BQ * BK];
shared float row_m[BQ], row_l[BQ], row_alpha[BQ];

void main() {
  uint tile = gl_WorkGroupID.x, h = gl_WorkGroupID.y, b = gl_WorkGroupID.z;
  uint tid = gl_LocalInvocationID.x;
  uint kvh = h / (p.Hq / p.Hkv);
  int kv_len = min(kv_len_of(p.seqlens, b), int(p.max_seq));
  int past = past_of(p.seqlens, p.total, b, p.S);
  uint s0 = tile * BQ;
  uint rows = min(BQ, p.S - s0);
  for (uint e = tid; e < BQ * p.D; e += T) {
    uint r = e / p.D, d = e % p.D;
    q_s[e] = r < rows ? p.q.v[((b * p.Hq + h) * p.S + s0 + r) * p.D + d] : 0.0;
  }
  if (tid < BQ) { row_m[tid] = -1.0 / 0.0; row_l[tid] = 0.0; }
  float acc[16];
  for (uint i = 0; i < 16; i++) acc[i] = 0.0;
  int first_pos = past + int(s0), last_pos = past + int(s0 + rows) - 1;
  int j_lo = p.window > 0 ? max(0, first_pos - p.window + 1) : 0;
  int j_hi = min(kv_len, last_pos + 1);
  barrier();
  for (int k0 = j_lo; k0 < j_hi; k0 += int(BK)) {
    for (uint e = tid; e < BK * p.D; e += T) {
      int j = k0 + int(e / p.D);
      kv_s[(e / p.D) * (p.D + 1) + e % p.D] = j < j_hi ? float(ActBuf(kv_row(p.kv_table, p.max_seq / KV_BLOCK, p.Hkv, b, kvh, uint(j), p.k_off, p.D, ACT_BYTES)).v[e % p.D]) : 0.0;
    }
    barrier();
    for (uint e = tid; e < BQ * BK; e += T) {
      uint r = e / BK;
      int j = k0 + int(e % BK);
      int position = past + int(s0 + r);
      bool ok = r < rows && j < j_hi && j <= position && (p.window <= 0 || position - j < p.window);
      float sc = -1.0 / 0.0;
      if (ok) {
        float dotv = 0.0;
        for (uint d = 0; d < p.D; d++) dotv += q_s[r * p.D + d] * kv_s[(e % BK) * (p.D + 1) + d];
        sc = softcapped(dotv * p.scale, p.softcap);
      }
      p_s[e] = sc;
    }
    barrier();
    if (tid < BQ) {
      float cmax = -1.0 / 0.0;
      for (uint c = 0; c < BK; c++) cmax = max(cmax, p_s[tid * BK + c]);
      float m_old = row_m[tid], m_new = max(m_old, cmax);
      float alpha = m_new == -1.0 / 0.0 ? 1.0 : exp(m_old - m_new);
      float sum = 0.0;
      for (uint c = 0; c < BK; c++) {
        float v = m_new == -1.0 / 0.0 ? 0.0 : exp(p_s[tid * BK + c] - m_new);
        p_s[tid * BK + c] = v;
        sum += v;
      }
      row_m[tid] = m_new;
      row_l[tid] = row_l[tid] * alpha + sum;
      row_alpha[tid] = alpha;
    }
    for (uint e = tid; e < BK * p.D; e += T) {  // V tile replaces K (scores are done)
      int j = k0 + int(e / p.D);
      kv_s[(e / p.D) * (p.D + 1) + e % p.D] = j < j_hi ? float(ActBuf(kv_row(p.kv_table, p.max_seq / KV_BLOCK, p.Hkv, b, kvh, uint(j), p.v_off, p.D, ACT_BYTES)).v[e % p.D]) : 0.0;
    }
    barrier();
    for (uint i = 0; i < 16; i++) {
      uint e = tid + T * i;
      if (e >= BQ * p.D) break;
      uint r = e / p.D, d = e % p.D;
      float a = acc[i] * row_alpha[r];
      for (uint c = 0; c < BK; c++) a += p_s[r * BK + c] * kv_s[c * (p.D + 1) + d];
      acc[i] = a;
    }
    barrier();
  }
  for (uint i = 0; i < 16; i++) {
    uint e = tid + T * i;
    if (e >= BQ * p.D) break;
    uint r = e / p.D, d = e % p.D;
    if (r < rows) {
      float l = row_l[r];
      p.out_.v[((b * p.S + s0 + r) * p.Hq + h) * p.D + d] = TO_STORE(l > 0.0 ? acc[i] / l : 0.0);
    }
  }
}
