// GroupQueryAttention for prompts on the GPU's matrix units (VK_NV_cooperative_matrix), causal, flash-attention
// style: a workgroup (query tile of BQ = 64 rows, head h, batch b) of 4 subgroups, each owning 16 query rows, walks
// the keys in tiles of BKV = PREFILL_BKV (32, or 64: the _bkv64 pipeline, where the shared memory holds it). The
// next tile's K and V rows are loaded into registers while the current tile is processed. Per tile: S = Q K^T (fp16
// inputs, fp32 accumulation) goes to shared memory, two lanes per row apply scale / softcap / the mask and the online
// softmax, P (fp16) comes back as a matrix and O += P V accumulates in fp32 matrices, rescaled per row by a broadcast
// matrix of the softmax correction.
// Semantics as gqa_prefill.comp (positions and masking from attention_common.glsl); fp16 KV cache, D % 16 == 0,
// D <= 128, subgroup size 32 (host: kernels/attention.cpp).
#version 460
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_shuffle : require
#include "common.glsl"
#include "attention_common.glsl"

layout(constant_id = 0) const uint D = 64;  // head size, multiple of 16, <= 128
#ifndef PREFILL_BKV
#define PREFILL_BKV 32  // keys per tile: 32 or 64 (kernels/attention.cpp prefill_coop_shared sizes the shared memory)
#endif
const uint BQ = 64, BKV = PREFILL_BKV, NT = 128;
const uint HK = BKV / 2;                    // keys per lane in the softmax (two lanes per query row)
const uint DV = D / 8;                      // uvec4 (8 halves) per row of D
const uint KROW = DV + 1;                   // shared row stride of Q/K/V tiles in uvec4 (padded by 8 halves)
const uint SROW = BKV + 4;                  // fp32 score row stride (floats)
const uint PROW = BKV / 8 + 1;              // fp16 probability row stride in uvec4

layout(local_size_x = NT) in;

layout(push_constant) uniform Push {
  F32Buf q;            // [B, Hq, S, D] (rotated)
  KvTable kv_table;    // uint64 [B, Hkv, max_seq / KV_BLOCK]: the rows' fp16 KV blocks (attention_common.glsl)
  I32Buf seqlens;      // int32 [B]
  I32Buf total;        // int32 [1]
  F16Buf out_;         // [B, S, Hq * D]
  uint B, S, Hq, Hkv;
  uint D_;             // = D (the specialization constant): the push layout of gqa_prefill.comp
  uint max_seq;
  uint k_off, v_off;   // elements into a block of this layer's keys / values
  float scale, softcap;
  int window;
} p;

shared uvec4 kq_s[BQ * KROW];            // the Q tile at the start, then K of the current key tile ([key][d])
shared uvec4 v_s[BKV * KROW];            // V of the current key tile ([key][d])
shared float s_s[4][16 * SROW];          // per subgroup: scores of its 16 rows; reused for the output
shared uvec4 p_s[4][16 * PROW];          // per subgroup: fp16 probabilities
shared float r_s[4][16 * 16];            // per subgroup: a per-row factor broadcast over 16 columns

// 16-byte pieces of K (and of V) per thread and key tile, rounded up (D 64: 2, D 128: 4, D 48: 2 of which the
// second only for some threads).
const uint PER = (BKV * DV + NT - 1) / NT;

// This thread's pieces of key tile k0's K and V rows (zero past j_hi).
void load_tile(uint b, uint kvh, int k0, int j_hi, uint tid, out uvec4 kr[PER], out uvec4 vr[PER]) {
  uint mb = p.max_seq / KV_BLOCK;
  [[unroll]] for (uint i = 0; i < PER; i++) {
    uint e = min(tid + i * NT, BKV * DV - 1);  // past the tile: re-reads its last piece (not stored)
    int j = k0 + int(e / DV);
    bool live = j < j_hi;
    uint jj = uint(live ? j : k0);
    uvec4 kq = U32x4Buf(kv_row(p.kv_table, mb, p.Hkv, b, kvh, jj, p.k_off, D, 2u)).v[e % DV];
    uvec4 vq = U32x4Buf(kv_row(p.kv_table, mb, p.Hkv, b, kvh, jj, p.v_off, D, 2u)).v[e % DV];
    kr[i] = live ? kq : uvec4(0);
    vr[i] = live ? vq : uvec4(0);
  }
}

// Fills this subgroup's r_s with factor f of row `row` (two lanes per row, 8 columns each) and loads it as an
// accumulator-shaped matrix, whose elements then line up with those of the O accumulators.
fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> row_factor(uint warp, uint row, uint half_, float f) {
  [[unroll]] for (uint c = 0; c < 8; c++) r_s[warp][row * 16 + half_ * 8 + c] = f;
  subgroupMemoryBarrierShared();
  subgroupBarrier();
  fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> r;
  coopMatLoadNV(r, r_s[warp], 0, 16, false);
  return r;
}

void main() {
  uint tile = gl_WorkGroupID.x, h = gl_WorkGroupID.y, b = gl_WorkGroupID.z;
  uint tid = gl_LocalInvocationIndex, warp = tid / 32, lane = tid % 32;
  uint kvh = h / (p.Hq / p.Hkv);
  int kv_len = min(kv_len_of(p.seqlens, b), int(p.max_seq));
  int past = past_of(p.seqlens, p.total, b, p.S);
  uint s0 = tile * BQ;
  uint rows = min(BQ, p.S - s0);

  // Q tile -> fp16 in shared -> this subgroup's D / 16 A matrices.
  for (uint e = tid; e < BQ * DV; e += NT) {
    uint r = e / DV, c = (e % DV) * 8;
    uvec4 v = uvec4(0);
    if (r < rows) {
      uint base = ((b * p.Hq + h) * p.S + s0 + r) * D + c;
      [[unroll]] for (uint j = 0; j < 4; j++) v[j] = packHalf2x16(vec2(p.q.v[base + 2 * j], p.q.v[base + 2 * j + 1]));
    }
    kq_s[r * KROW + e % DV] = v;
  }
  barrier();
  fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> qf[D / 16];
  [[unroll]] for (uint d = 0; d < D / 16; d++) coopMatLoadNV(qf[d], kq_s, warp * 16 * KROW + d * 2, KROW, false);
  fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> o[D / 16];
  [[unroll]] for (uint d = 0; d < D / 16; d++) o[d] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
  barrier();  // every subgroup has its Q before K overwrites it

  // Two lanes per query row: lane / 2 is the row within the subgroup, lane % 2 the half of the key tile.
  uint row = lane / 2, half_ = lane % 2;
  uint qr = warp * 16 + row;  // row within the workgroup tile
  int position = past + int(s0 + qr);
  bool row_valid = qr < rows;
  float m = -1.0 / 0.0, l = 0.0;

  int first_pos = past + int(s0), last_pos = past + int(s0 + rows) - 1;
  int j_lo = p.window > 0 ? max(0, first_pos - p.window + 1) : 0;
  int j_hi = min(kv_len, last_pos + 1);
  // Each thread's share of a key tile's K and V rows (PER 16-byte pieces each), loaded into registers one tile ahead:
  // the next tile's loads are in flight while this tile's products and softmax run.
  uvec4 kr[PER], vr[PER];
  load_tile(b, kvh, j_lo, j_hi, tid, kr, vr);
  for (int k0 = j_lo; k0 < j_hi; k0 += int(BKV)) {
    [[unroll]] for (uint i = 0; i < PER; i++) {
      uint e = tid + i * NT;
      if (e >= BKV * DV) break;
      kq_s[(e / DV) * KROW + e % DV] = kr[i];
      v_s[(e / DV) * KROW + e % DV] = vr[i];
    }
    barrier();
    if (k0 + int(BKV) < j_hi) load_tile(b, kvh, k0 + int(BKV), j_hi, tid, kr, vr);
    // S (16 x BKV) = Q K^T: K^T(d, key) = K[key][d] is a column-major D x BKV matrix.
    [[unroll]] for (uint n = 0; n < BKV / 16; n++) {
      fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> s = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
      [[unroll]] for (uint d = 0; d < D / 16; d++) {
        fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> kf;
        coopMatLoadNV(kf, kq_s, n * 16 * KROW + d * 2, KROW, true);
        s = coopMatMulAddNV(qf[d], kf, s);
      }
      coopMatStoreNV(s, s_s[warp], n * 16, SROW, false);
    }
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    // Online softmax over this lane's HK scores of its row.
    float sc[HK];
    float tmax = -1.0 / 0.0;
    [[unroll]] for (uint c = 0; c < HK; c++) {
      int j = k0 + int(half_ * HK + c);
      bool ok = row_valid && j < j_hi && j <= position && (p.window <= 0 || position - j < p.window);
      sc[c] = ok ? softcapped(s_s[warp][row * SROW + half_ * HK + c] * p.scale, p.softcap) : -1.0 / 0.0;
      tmax = max(tmax, sc[c]);
    }
    tmax = max(tmax, subgroupShuffleXor(tmax, 1));
    float m_new = max(m, tmax);
    float alpha = m_new == -1.0 / 0.0 ? 1.0 : exp(m - m_new);
    float sum = 0.0;
    uvec4 packed[HK / 8];
    [[unroll]] for (uint c = 0; c < HK; c += 2) {
      float p0 = m_new == -1.0 / 0.0 ? 0.0 : exp(sc[c] - m_new);
      float p1 = m_new == -1.0 / 0.0 ? 0.0 : exp(sc[c + 1] - m_new);
      sum += p0 + p1;
      packed[c / 8][(c % 8) / 2] = packHalf2x16(vec2(p0, p1));
    }
    sum += subgroupShuffleXor(sum, 1);
    m = m_new;
    l = l * alpha + sum;
    [[unroll]] for (uint i = 0; i < HK / 8; i++) p_s[warp][row * PROW + half_ * (HK / 8) + i] = packed[i];
    // O = diag(alpha) O + P V.
    fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> ra = row_factor(warp, row, half_, alpha);
    [[unroll]] for (uint d = 0; d < D / 16; d++)
      for (int i = 0; i < o[d].length(); i++) o[d][i] *= ra[i];
    [[unroll]] for (uint kk = 0; kk < BKV / 16; kk++) {
      fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> pf;
      coopMatLoadNV(pf, p_s[warp], kk * 2, PROW, false);
      [[unroll]] for (uint d = 0; d < D / 16; d++) {
        fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> vf;
        coopMatLoadNV(vf, v_s, kk * 16 * KROW + d * 2, KROW, false);
        o[d] = coopMatMulAddNV(pf, vf, o[d]);
      }
    }
    barrier();  // K / V of this tile are read by every subgroup before the next tile overwrites them
  }

  // O / l, through this subgroup's score space, 16 columns at a time; rows past S are not written.
  subgroupBarrier();
  fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> rl = row_factor(warp, row, half_, l > 0.0 ? 1.0 / l : 0.0);
  [[unroll]] for (uint d = 0; d < D / 16; d++) {
    for (int i = 0; i < o[d].length(); i++) o[d][i] *= rl[i];
    coopMatStoreNV(o[d], s_s[warp], 0, SROW, false);
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    if (row_valid) {
      uint dst = ((b * p.S + s0 + qr) * p.Hq + h) * D + d * 16 + half_ * 8;
      [[unroll]] for (uint c = 0; c < 8; c++) p.out_.v[dst + c] = float16_t(s_s[warp][row * SROW + half_ * 8 + c]);
    }
    subgroupBarrier();
  }
}
