// GroupQueryAttention for one new token with packed QKV, in one dispatch: workgroup (split, kv head, b) serves all
// G = Hq / Hkv query heads that share the KV head, over its share of the valid keys.
//   - rotation of the group's queries and of the new key, the new key/value written into the caches (split 0);
//   - keys in passes of KP = T / (D / 8) keys: every thread loads 8 elements (16 bytes) of one key row and of the
//     matching value row at once, so a pass costs one memory round trip; scores reduced over the D / 8 lanes of
//     a key, softmax online across passes (running max per head), outputs accumulated from the value rows staged
//     in shared memory;
//   - the splits' partial results (out[D], max, sum) merged by the last workgroup of the (b, kv head) to finish,
//     found with an atomic counter (reset by that workgroup for the next replay) — no second dispatch.
//   - SUBGROUP_LOOP (the _sg pipelines; devices with subgroup shuffles): instead of the passes above, every subgroup
//     walks its own keys with no barrier: L = D / 8 lanes per key, SG / L keys per subgroup and step, two steps per
//     iteration with the next iteration's loads in flight; each lane keeps an online softmax (max, sum, outputs of
//     its 8 dimensions) per head over the keys it saw, the L lanes' partial dots summed by shuffles; at the end the
//     lanes of a subgroup merge by shuffles and the subgroups through shared memory. The host takes it when
//     L <= SG, SG % L == 0 and (T / SG) * G * D <= 4096 (the shared merge buffer).
// - PREPARED (the _rows pipelines): S query rows of each sequence (a speculative verify pass, a short chunk) after
//   gqa_prepare.comp has rotated the queries into fp32 [B, Hq, S, D] (read through `qkv`) and written the rows'
//   keys and values into the caches: workgroup (split, kv head, b * S + s) attends row s, whose position is
//   past + s, to the cached keys up to it; no rotation, no cache write, no new key from shared memory. The push
//   constants' flags carry S and q_row is (Hq + 2 Hkv) D.
// Semantics as gqa_decode.comp (attention_common.glsl: positions, window, softcap). fp32 arithmetic.
// Limits (checked by the host): D % 8 == 0, 32 <= D <= 256, G <= min(8, D / 8), G * D <= min(1024, 4 T),
// T <= 256 a multiple of D / 8.
#version 460
#ifndef PREPARED
#define PREPARED 0
#endif
#extension GL_EXT_control_flow_attributes : require
#if SUBGROUP_LOOP
#extension GL_KHR_shader_subgroup_shuffle : require
#endif
#include "common.glsl"
#include "attention_common.glsl"

layout(local_size_x_id = 0) in;  // T
layout(constant_id = 1) const uint GQ = 4;  // G, the query heads per KV head (register arrays of SUBGROUP_LOOP)

layout(buffer_reference, std430, buffer_reference_align = 4) coherent buffer CoherentF32 { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) coherent buffer CoherentU32 { uint v[]; };

layout(push_constant) uniform Push {
  ActBuf qkv;             // [B, 1, q_row]: Hq query heads, Hkv keys, Hkv values
  KvTable kv_table;       // uint64 [B, Hkv, max_seq / KV_BLOCK]: the rows' KV blocks (attention_common.glsl)
  I32Buf seqlens;         // int32 [B]
  I32Buf total;           // int32 [1]
  CoherentF32 partial;    // [B, Hq, nsplit, D + 2]: out[D], max, sum
  CoherentU32 counters;   // [B, Hkv]: finished splits, 0 between steps
  ActBuf out_;            // [B, 1, Hq * D]
  ActBuf cos_c;           // when flags & 1: [max_pos, D / 2]
  ActBuf sin_c;
  U32Buf pos_ids;         // when flags & 4: int64 [B, 1]
  uint Hkv, D, max_seq, q_row, flags, max_pos;  // flags: 1 rotary, 2 interleaved, 4 position_ids
  uint k_off, v_off;      // elements into a block of this layer's keys / values
  float scale, softcap;
  int window;
  uint split_cap;         // most splits with work (batched steps: fewer, longer workgroups; 1: no merge)
} p;

#include "gqa_rotary.glsl"

shared float q_sh[1024];   // [G, D] rotated queries
shared float kv_new[512];  // [0, D): the new key (rotated, rounded to the cache type); [D, 2D): the new value
// The passes: dot partials [G, KP, L], then value rows [KP, D] at 0; per-head reductions over a pass's keys [G, KP]
// at RED; softmax weights of the pass [G, KP] at PSH. SUBGROUP_LOOP: the subgroups' outputs [T / SG, G, D].
shared float scratch[4096];
#define RED 2048u
#define PSH 2560u
shared float sub_ml[512];  // SUBGROUP_LOOP: the subgroups' max [T / SG, 8] at 0 and sum at 256
shared float m_sh[8], alpha_sh[8], l_sh[8];
shared uint last_sh;

// In-place reduction of the per-head values at RED (g * KP .. + KP for head g < G; KP a power of two): max or sum
// into RED + g * KP.
void reduce_heads(uint G, uint KP, bool take_max) {
  uint tid = gl_LocalInvocationID.x;
  for (uint s = KP / 2; s > 0; s /= 2) {
    if (tid < G * KP && (tid % KP) < s) {
      float a = scratch[RED + tid], c = scratch[RED + tid + s];
      scratch[RED + tid] = take_max ? max(a, c) : a + c;
    }
    barrier();
  }
}

// Key j's elements [lane8, + 8) (raw) when it is a valid past key, else zeros.
void fetch_raw(uint b, uint kvh, uint lane8, int j, int j1, int position, out RawKv k, out RawKv v) {
  k = kRawZero;
  v = kRawZero;
  if (j < j1 && j != position) {
    uint mb = p.max_seq / KV_BLOCK;
    k = load_raw(kv_row(p.kv_table, mb, p.Hkv, b, kvh, uint(j), p.k_off, p.D, ACT_BYTES), lane8);
    v = load_raw(kv_row(p.kv_table, mb, p.Hkv, b, kvh, uint(j), p.v_off, p.D, ACT_BYTES), lane8);
  }
}

// The passes' form: key j's elements [lane8, + 8) as floats when it is a valid past key, else zeros (the new token's
// are taken from shared memory by the caller).
void fetch_kv(uint b, uint kvh, uint lane8, int j, int j1, int position, out float kf[8], out float vf[8]) {
  RawKv kr, vr;
  fetch_raw(b, kvh, lane8, j, j1, position, kr, vr);
  unpack8(kr, kf);
  unpack8(vr, vf);
}

// The keys [j0, j1) of (b, kvh) in passes of KP keys (the workgroup in step, shared memory between the phases):
// acc[i] = the unnormalized output idx = tid + T * i < G * D; m_sh[g] / l_sh[g] = head g's max and sum. kf, vf: this
// thread's key/value elements of the first pass, already loaded.
void pass_loop(uint b, uint kvh, uint G, int j0, int j1, int position, inout float kf[8], inout float vf[8],
               out float acc[4]) {
  uint T = gl_WorkGroupSize.x, tid = gl_LocalInvocationID.x, D = p.D, L = D / 8, KP = T / L;
  uint jl = tid / L, lane = tid % L;
  acc = float[4](0, 0, 0, 0);
  float l_part = 0.0;  // threads tid < G * KP: sum of the weights of head tid / KP
  // When a subgroup holds exactly one head's KP scores (the usual D = 64, T = 256 on 32-wide subgroups), the per-head
  // max and sum are subgroup reductions instead of shared-memory trees (10 fewer barriers per pass and at the end).
  // (Assumes subgroups are consecutive runs of invocation indices, as every driver lays out compute workgroups.)
  bool head_per_subgroup = gl_SubgroupSize == KP;
  for (int c0 = j0; c0 < j1; c0 += int(KP)) {
    if (c0 + int(jl) == position)  // the new token's key/value come from shared memory, not the cache
      for (uint i = 0; i < 8; i++) {
        kf[i] = kv_new[lane * 8 + i];
        vf[i] = kv_new[D + lane * 8 + i];
      }
    for (uint g = 0; g < G; g++) {
      float s = 0.0;
      for (uint i = 0; i < 8; i++) s += q_sh[g * D + lane * 8 + i] * kf[i];
      scratch[(g * KP + jl) * L + lane] = s;
    }
    barrier();
    float sc = -1.0 / 0.0;
    if (tid < G * KP) {
      uint g = tid / KP, jj = tid % KP;
      if (c0 + int(jj) < j1) {
        float dotv = 0.0;
        for (uint l = 0; l < L; l++) dotv += scratch[(g * KP + jj) * L + l];
        sc = softcapped(dotv * p.scale, p.softcap);
      }
      scratch[RED + tid] = sc;
    }
    if (head_per_subgroup) {  // whole subgroups: tid < G * KP is uniform in each
      if (tid < G * KP) {
        float mx = subgroupMax(sc);
        if (gl_SubgroupInvocationID == 0) {
          uint g = tid / KP;
          float mo = m_sh[g], mn = max(mo, mx);
          alpha_sh[g] = mn == -1.0 / 0.0 ? 1.0 : exp(mo - mn);
          m_sh[g] = mn;
        }
      }
      barrier();  // the dot partials are read, m_sh / alpha_sh are set
      for (uint i = 0; i < 8; i++) scratch[jl * D + lane * 8 + i] = vf[i];
      fetch_kv(b, kvh, lane * 8, c0 + int(KP) + int(jl), j1, position, kf, vf);  // the next pass's, in flight
    } else {
      barrier();  // the dot partials are read: stage takes the value rows
      for (uint i = 0; i < 8; i++) scratch[jl * D + lane * 8 + i] = vf[i];
      fetch_kv(b, kvh, lane * 8, c0 + int(KP) + int(jl), j1, position, kf, vf);  // the next pass's, in flight
      reduce_heads(G, KP, true);
      if (tid < G) {
        float mo = m_sh[tid], mn = max(mo, scratch[RED + tid * KP]);
        alpha_sh[tid] = mn == -1.0 / 0.0 ? 1.0 : exp(mo - mn);
        m_sh[tid] = mn;
      }
      barrier();
    }
    if (tid < G * KP) {
      uint g = tid / KP;
      float pj = sc == -1.0 / 0.0 ? 0.0 : exp(sc - m_sh[g]);
      scratch[PSH + tid] = pj;
      l_part = l_part * alpha_sh[g] + pj;
    }
    barrier();
    int n = min(int(KP), j1 - c0);
    [[unroll]] for (uint i = 0; i < 4; i++) {  // unrolled, no break: acc stays in registers
      uint idx = tid + T * i;
      if (idx < G * D) {
        uint g = idx / D, d = idx % D;
        float a = acc[i] * alpha_sh[g];
        for (int jj = 0; jj < n; jj++) a += scratch[PSH + g * KP + uint(jj)] * scratch[uint(jj) * D + d];
        acc[i] = a;
      }
    }
    barrier();  // stage, p_sh and red are reused by the next pass
  }
  if (head_per_subgroup) {
    if (tid < G * KP) {
      float l = subgroupAdd(l_part);
      if (gl_SubgroupInvocationID == 0) scratch[RED + tid] = l;  // tid = g * KP
    }
    barrier();
  } else {
    if (tid < G * KP) scratch[RED + tid] = l_part;
    barrier();
    reduce_heads(G, KP, false);  // scratch[RED + g * KP]: this split's softmax sum of head g
  }
  if (tid < G) l_sh[tid] = scratch[RED + tid * KP];
  barrier();
}


#if SUBGROUP_LOOP
// Key j's elements as floats: the new token's from shared memory, else the raw load's.
void key_value(int j, int position, uint lane8, RawKv kr, RawKv vr, out float kf[8], out float vf[8]) {
  unpack8(kr, kf);
  unpack8(vr, vf);
  if (j == position)
    for (uint i = 0; i < 8; i++) {
      kf[i] = kv_new[lane8 + i];
      vf[i] = kv_new[p.D + lane8 + i];
    }
}

// Folds (m2, l2, o2) into the online-softmax state (m, l, o) of one head.
void merge_state(inout float m, inout float l, inout float o[8], float m2, float l2, float o2[8]) {
  float mn = max(m, m2);
  float a = m == -1.0 / 0.0 ? 0.0 : exp(m - mn), c = m2 == -1.0 / 0.0 ? 0.0 : exp(m2 - mn);
  l = l * a + l2 * c;
  for (uint i = 0; i < 8; i++) o[i] = o[i] * a + o2[i] * c;
  m = mn;
}

// The keys [j0, j1) with every subgroup on its own keys (see the header); the results as pass_loop's. kr, vr: this
// lane's raw key/value of the first step (key j0 + tid / L), already loaded.
void subgroup_loop(uint b, uint kvh, int j0, int j1, int position, RawKv kr, RawKv vr, out float acc4[4]) {
  uint T = gl_WorkGroupSize.x, tid = gl_LocalInvocationID.x, D = p.D, L = D / 8, KP = T / L;
  uint SG = gl_SubgroupSize, jl = tid / L, lane8 = (tid % L) * 8;
  float m[GQ], l[GQ], o[GQ][8];  // the queries stay in shared memory (registers: occupancy)
  for (uint g = 0; g < GQ; g++) {
    m[g] = -1.0 / 0.0;
    l[g] = 0.0;
    for (uint i = 0; i < 8; i++) o[g][i] = 0.0;
  }
  RawKv kr2, vr2;  // the second step's key of this lane
  fetch_raw(b, kvh, lane8, j0 + int(KP + jl), j1, position, kr2, vr2);
  for (int c0 = j0; c0 < j1; c0 += 2 * int(KP)) {  // uniform: every lane runs every iteration
    int ja = c0 + int(jl), jb = ja + int(KP);
    float ka[8], va[8], kb[8], vb[8];
    key_value(ja, position, lane8, kr, vr, ka, va);
    key_value(jb, position, lane8, kr2, vr2, kb, vb);
    fetch_raw(b, kvh, lane8, ja + 2 * int(KP), j1, position, kr, vr);  // the next iteration's, in flight
    fetch_raw(b, kvh, lane8, jb + 2 * int(KP), j1, position, kr2, vr2);
    for (uint g = 0; g < GQ; g++) {
      float sa = 0.0, sb = 0.0;
      for (uint i = 0; i < 8; i++) {
        float qi = q_sh[g * D + lane8 + i];
        sa += qi * ka[i];
        sb += qi * kb[i];
      }
      for (uint x = 1; x < L; x <<= 1) {  // the key's L lanes: sum of their partial dots
        sa += subgroupShuffleXor(sa, x);
        sb += subgroupShuffleXor(sb, x);
      }
      sa = ja < j1 ? softcapped(sa * p.scale, p.softcap) : -1.0 / 0.0;
      sb = jb < j1 ? softcapped(sb * p.scale, p.softcap) : -1.0 / 0.0;
      float mn = max(m[g], max(sa, sb));
      if (mn == -1.0 / 0.0) continue;  // no key yet
      float alpha = m[g] == -1.0 / 0.0 ? 0.0 : exp(m[g] - mn);
      float pa = sa == -1.0 / 0.0 ? 0.0 : exp(sa - mn), pb = sb == -1.0 / 0.0 ? 0.0 : exp(sb - mn);
      l[g] = l[g] * alpha + pa + pb;
      for (uint i = 0; i < 8; i++) o[g][i] = o[g][i] * alpha + pa * va[i] + pb * vb[i];
      m[g] = mn;
    }
  }
  // The SG / L keys of a step: lanes with the same dimensions merge by shuffles (every lane ends with the result).
  for (uint x = L; x < SG; x <<= 1)
    for (uint g = 0; g < GQ; g++) {
      float o2[8];
      for (uint i = 0; i < 8; i++) o2[i] = subgroupShuffleXor(o[g][i], x);
      merge_state(m[g], l[g], o[g], subgroupShuffleXor(m[g], x), subgroupShuffleXor(l[g], x), o2);
    }
  uint sg = gl_SubgroupID, nsg = gl_NumSubgroups, GD = GQ * D;
  if (gl_SubgroupInvocationID < L) {
    for (uint g = 0; g < GQ; g++)
      for (uint i = 0; i < 8; i++) scratch[sg * GD + g * D + lane8 + i] = o[g][i];
    if (lane8 == 0)
      for (uint g = 0; g < GQ; g++) {
        sub_ml[sg * 8 + g] = m[g];
        sub_ml[256 + sg * 8 + g] = l[g];
      }
  }
  barrier();
  // The subgroups: output idx = tid + T * i of head g = idx / D merges their (max, sum, output).
  for (uint i = 0; i < 4; i++) {
    uint idx = tid + T * i;
    acc4[i] = 0.0;
    if (idx >= GD) continue;
    uint g = idx / D;
    float M = -1.0 / 0.0, num = 0.0, den = 0.0;
    for (uint s = 0; s < nsg; s++) M = max(M, sub_ml[s * 8 + g]);
    if (M != -1.0 / 0.0)
      for (uint s = 0; s < nsg; s++) {
        float ms = sub_ml[s * 8 + g], w = ms == -1.0 / 0.0 ? 0.0 : exp(ms - M);
        num += w * scratch[s * GD + idx];
        den += w * sub_ml[256 + s * 8 + g];
      }
    acc4[i] = num;
    if (idx % D == 0) {
      m_sh[g] = M;
      l_sh[g] = den;
    }
  }
  barrier();
}
#endif

void main() {
  uint split = gl_WorkGroupID.x, kvh = gl_WorkGroupID.y, z = gl_WorkGroupID.z;  // z: the (sequence, row)
  uint nsplit = gl_NumWorkGroups.x, T = gl_WorkGroupSize.x, tid = gl_LocalInvocationID.x;
  uint D = p.D, L = D / 8, KP = T / L;
  uint Hq = p.q_row / D - 2 * p.Hkv, G = Hq / p.Hkv;
#if PREPARED
  uint S = p.flags, b = z / S, s = z % S;
  int kv_len = min(kv_len_of(p.seqlens, b), int(p.max_seq));
  int position = past_of(p.seqlens, p.total, b, S) + int(s);
  const int new_key = -1;  // every key is in the cache
#else
  uint b = z;
  int kv_len = min(kv_len_of(p.seqlens, b), int(p.max_seq));
  int position = past_of(p.seqlens, p.total, b, 1);
  const int new_key = position;  // the new token's key and value come from shared memory
#endif
  int hi = min(kv_len, position + 1);
  int lo = p.window > 0 ? max(0, position - p.window + 1) : 0;
  int range = max(hi - lo, 0);
  // Splits with work, the same in every workgroup: a pass of keys each, at most nsplit and split_cap.
  int used = clamp((range + int(KP) - 1) / int(KP), 1, int(min(nsplit, p.split_cap)));
  if (int(split) >= used) return;
  int per = (range + used - 1) / used;
  int j0 = lo + int(split) * per, j1 = min(hi, j0 + per);
  uint jl = tid / L, lane = tid % L;

  // This thread's key/value elements of the first pass, loaded before anything else so the rotation below overlaps
  // their latency; each pass then loads the next one's while it finishes.
#if SUBGROUP_LOOP
  RawKv kr, vr;
  fetch_raw(b, kvh, lane * 8, j0 + int(jl), j1, new_key, kr, vr);
#else
  float kf[8], vf[8];
  fetch_kv(b, kvh, lane * 8, j0 + int(jl), j1, new_key, kf, vf);
#endif

#if PREPARED
  // The group's queries, rotated by gqa_prepare.comp.
  for (uint i = tid; i < G * D; i += T)
    q_sh[i] = F32Buf(uvec2(p.qkv)).v[((b * Hq + kvh * G + i / D) * S + s) * D + i % D];
  if (tid < G) m_sh[tid] = -1.0 / 0.0;
  barrier();
#else
  // The group's rotated queries and the new key/value.
  int rot_pos = (p.flags & 4u) != 0 ? load_i64(p.pos_ids, b) : position;
  uint row = b * p.q_row;
  for (uint i = tid; i < G * D; i += T) q_sh[i] = rotate(p.qkv, row + (kvh * G + i / D) * D, i % D, rot_pos);
  for (uint d = tid; d < D; d += T) {
    kv_new[d] = float(TO_STORE(rotate(p.qkv, row + (Hq + kvh) * D, d, rot_pos)));
    kv_new[D + d] = float(p.qkv.v[row + (Hq + p.Hkv + kvh) * D + d]);
  }
  if (tid < G) m_sh[tid] = -1.0 / 0.0;
  barrier();
  if (split == 0 && position >= 0 && position < int(p.max_seq))
    for (uint d = tid; d < D; d += T) {
      uint mb = p.max_seq / KV_BLOCK;
      ActBuf(kv_row(p.kv_table, mb, p.Hkv, b, kvh, uint(position), p.k_off, D, ACT_BYTES)).v[d] = TO_STORE(kv_new[d]);
      ActBuf(kv_row(p.kv_table, mb, p.Hkv, b, kvh, uint(position), p.v_off, D, ACT_BYTES)).v[d] = TO_STORE(kv_new[D + d]);
    }
#endif

  float acc[4];  // outputs (g, d) = idx / D, idx % D for idx = tid + T * i < G * D
#if SUBGROUP_LOOP
  subgroup_loop(b, kvh, j0, j1, new_key, kr, vr, acc);
#else
  pass_loop(b, kvh, G, j0, j1, new_key, kf, vf, acc);
#endif

  if (used == 1) {  // the only split: normalize and write the output
    for (uint i = 0; i < 4; i++) {
      uint idx = tid + T * i;
      if (idx >= G * D) break;
      float l = l_sh[idx / D];
      p.out_.v[z * Hq * D + kvh * G * D + idx] = TO_STORE(l > 0.0 ? acc[i] / l : 0.0);
    }
    return;
  }
  for (uint i = 0; i < 4; i++) {
    uint idx = tid + T * i;
    if (idx >= G * D) break;
    uint g = idx / D;
    p.partial.v[((z * Hq + kvh * G + g) * nsplit + split) * (D + 2) + idx % D] = acc[i];
  }
  if (tid < G) {
    uint base = ((z * Hq + kvh * G + tid) * nsplit + split) * (D + 2);
    p.partial.v[base + D] = m_sh[tid];
    p.partial.v[base + D + 1] = l_sh[tid];
  }
  memoryBarrierBuffer();
  barrier();
  if (tid == 0) last_sh = atomicAdd(p.counters.v[z * p.Hkv + kvh], 1u) == uint(used - 1) ? 1u : 0u;
  barrier();
  if (last_sh == 0) return;
  memoryBarrierBuffer();
  // The last split to finish merges all: out = sum_s exp(m_s - M) o_s / sum_s exp(m_s - M) l_s, M = max_s m_s.
  // Each output's thread loads 8 splits' (output, max, sum) at once — one memory round trip for up to 8 splits, no
  // barrier — and merges them online (rescaled when a later group of 8 raises the max).
  uint nsp = uint(used);
  for (uint idx = tid; idx < G * D; idx += T) {
    uint g = idx / D, d = idx % D;
    uint base = (z * Hq + kvh * G + g) * nsplit * (D + 2);
    float M = -1.0 / 0.0, num = 0.0, den = 0.0;
    for (uint s0 = 0; s0 < nsp; s0 += 8) {
      float o[8], ms[8], ls[8];
      for (uint k = 0; k < 8; k++) {
        bool valid = s0 + k < nsp;
        uint at = base + (s0 + k) * (D + 2);
        o[k] = valid ? p.partial.v[at + d] : 0.0;
        ms[k] = valid ? p.partial.v[at + D] : -1.0 / 0.0;
        ls[k] = valid ? p.partial.v[at + D + 1] : 0.0;
      }
      float Mn = M;
      for (uint k = 0; k < 8; k++) Mn = max(Mn, ms[k]);
      if (Mn == -1.0 / 0.0) continue;  // no keys in these splits (nor before)
      float r = M == -1.0 / 0.0 ? 0.0 : exp(M - Mn);
      num *= r;
      den *= r;
      for (uint k = 0; k < 8; k++) {
        float w = ms[k] == -1.0 / 0.0 ? 0.0 : exp(ms[k] - Mn);
        num += w * o[k];
        den += w * ls[k];
      }
      M = Mn;
    }
    p.out_.v[z * Hq * D + kvh * G * D + idx] = TO_STORE(den > 0.0 ? num / den : 0.0);
  }
  if (tid == 0) p.counters.v[z * p.Hkv + kvh] = 0u;
}
