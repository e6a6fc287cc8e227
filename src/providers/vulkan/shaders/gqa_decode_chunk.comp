// GroupQueryAttention of a few query rows per sequence over long caches, in key chunks (flash decoding), step 2 of 3
// (gqa_prepare.comp before it has rotated the queries into fp32 [B, Hq, S, D] and written the rows' keys and values
// into the cache; gqa_merge_chunks.comp after it merges the chunks):
//   workgroup (c, y, z = b * S + s) attends query row s of sequence b — G query heads of KV head kvh = y / parts,
//   part y % parts of the KV head's Hq / Hkv heads (parts = Hq / Hkv / G: groups larger than 8 in parts) — to chunk
//   c of the row's keys (chunk_split in attention_common.glsl: nchunk = gl_NumWorkGroups.x chunks of
//   `per` keys; chunks past the row's keys return at once) and writes the chunk's softmax state: the output
//   relative to the chunk's max, the max and the sum.
// Inside a chunk, sub-chunks of up to SUBK keys, each in three phases whose loads go out U rows per thread at a time
// (L = D / 8 lanes per key row, 16 bytes each; KG = T / L key rows side by side), the next round's loads issued
// before the current round is used (and the first value rows' before the softmax):
//   1. scores: key rows against the group's queries (registers), the L lanes' partial dots summed by shuffles
//      (a reduce-scatter over the heads where G is a power of two), into shared memory [G, SUBK];
//   2. softmax: each head's max over the sub-chunk (subgroups, then shared memory), weights exp(score - max) in
//      place, their sums; the running state (max, sum, outputs) rescaled when the max rises;
//   3. values: each thread accumulates outputs o[G][8] of its 8 dimensions over its key rows.
// At the end the key rows' outputs are summed by shuffles (within a subgroup) and through shared memory.
// Semantics as gqa_decode.comp (positions, window, softcap: attention_common.glsl). fp32 arithmetic.
// Limits (checked by the host, kernels/attention.cpp chunk_decode_fits): D % 8 == 0, D <= 256, G <= 8, L divides
// the subgroup size, the subgroup size divides T, (T / subgroup size) * G * D <= 4096.
#version 460
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_shuffle : require
#include "common.glsl"
#include "attention_common.glsl"

layout(local_size_x_id = 0) in;            // T
layout(constant_id = 1) const uint D = 128;  // head size
layout(constant_id = 2) const uint G = 4;    // query heads per workgroup (all of a KV head's, or a part)
layout(constant_id = 3) const uint U = 8;    // key rows a thread loads at once (twice: the next U in flight)
const uint L = D / 8;                        // lanes per key row
const uint KG = gl_WorkGroupSize.x / L;      // key rows side by side
const uint STEP = KG * U;                    // key rows of a load round
const bool SCATTER = (G & (G - 1u)) == 0 && G <= L;  // the heads' dots reduced in a reduce-scatter (reduce_dots)
const uint SHARED_F = 4096;                  // floats of sh: scores [G, SUBK], then the subgroups' outputs
const uint SUBK = SHARED_F / G;              // keys per sub-chunk

layout(push_constant) uniform Push {
  F32Buf q;          // [B, Hq, S, D] rotated queries (gqa_prepare.comp)
  KvTable kv_table;  // uint64 [B, Hkv, max_seq / KV_BLOCK]: the rows' KV blocks (attention_common.glsl)
  I32Buf seqlens;    // int32 [B]
  I32Buf total;      // int32 [1]
  F32Buf part_o;     // [B * S, Hq, nchunk, D]: a chunk's output relative to its max (unnormalized)
  F32Buf part_ml;    // [B * S, Hq, nchunk, 2]: its max and sum
  uint Hq, Hkv, S, max_seq;
  uint k_off, v_off;  // elements into a block of this layer's keys / values
  uint parts;         // workgroups per KV head's query group (G heads each)
  float scale, softcap;
  int window;
} p;

shared float sh[SHARED_F];
shared uvec2 blk_sh[SHARED_F / KV_BLOCK + 2];  // the sub-chunk's block addresses (SUBK <= SHARED_F keys)
shared float max_sh[256], sum_sh[256];         // [subgroups, G] per-subgroup maxima and sums (T / SG * G <= 256)

// Element 0 of key row j (in the sub-chunk whose first block is blk0) of the layer's keys or values at `off`.
uvec2 row_at(int j, int blk0, uint off) {
  uvec2 base = blk_sh[j / int(KV_BLOCK) - blk0];
  uint carry;
  uint lo = uaddCarry(base.x, (off + uint(j) % KV_BLOCK * D) * ACT_BYTES, carry);
  return uvec2(lo, base.y + carry);
}

// The L lanes of a key row hold partial dots d[g] of the G heads. SCATTER (G a power of two <= L): each step
// halves the heads a lane holds — the lane keeps one half, its partner x lanes away the other, each adding the
// partner's share of its half (G - 1 shuffles in all instead of G per step) — then sums its one head over the
// remaining lanes; afterwards d[0] is head lane / (L / G)'s dot in every lane. Otherwise every lane sums every
// head (d[g] complete for all g).
void reduce_dots(inout float d[G], uint lane) {
  uint held = G;
  [[unroll]] for (uint x = L / 2; x >= 1; x >>= 1) {
    if (SCATTER && held > 1) {
      bool upper = (lane & x) != 0;
      uint half_ = held / 2;
      [[unroll]] for (uint i = 0; i < G / 2; i++)
        if (i < half_) {
          float keep = upper ? d[i + half_] : d[i], give = upper ? d[i] : d[i + half_];
          d[i] = keep + subgroupShuffleXor(give, x);
        }
      held = half_;
    } else if (SCATTER) {
      d[0] += subgroupShuffleXor(d[0], x);
    } else {
      [[unroll]] for (uint g = 0; g < G; g++) d[g] += subgroupShuffleXor(d[g], x);
    }
  }
}

// The sub-chunk's key rows base + jl + KG * u (u < U) at `off` (keys or values): raw 16-byte pieces of this
// thread's dimensions, zeros past n (no load).
void load_rows(int c0, int n, int blk0, uint off, int base, uint jl, uint lane8, out RawKv r[U]) {
  [[unroll]] for (uint u = 0; u < U; u++) {
    int j = base + int(jl + KG * u);
    r[u] = j < n ? load_raw(row_at(c0 + j, blk0, off), lane8) : kRawZero;
  }
}

void main() {
  const uint T = gl_WorkGroupSize.x;
  uint c = gl_WorkGroupID.x, kvh = gl_WorkGroupID.y / p.parts, z = gl_WorkGroupID.z, nchunk = gl_NumWorkGroups.x;
  uint h0 = gl_WorkGroupID.y * G;  // the first of its query heads: kvh * (Hq / Hkv) + part * G
  uint tid = gl_LocalInvocationID.x, jl = tid / L, lane8 = (tid % L) * 8;
  uint sg = gl_SubgroupID, nsg = gl_NumSubgroups;
  uint b = z / p.S, s = z % p.S;
  int lo, hi, per, used;
  query_keys(p.seqlens, p.total, b, s, p.S, p.max_seq, p.window, lo, hi);
  chunk_split(max(hi - lo, 0), nchunk, per, used);
  if (int(c) >= used) return;
  int j0 = lo + int(c) * per, j1 = min(hi, j0 + per);

  float qr[G][8];  // the group's queries, this thread's 8 dimensions
  uint qbase = ((b * p.Hq + h0) * p.S + s) * D + lane8;
  [[unroll]] for (uint g = 0; g < G; g++)
    [[unroll]] for (uint i = 0; i < 8; i++) qr[g][i] = p.q.v[qbase + g * p.S * D + i];
  float m[G], l[G], o[G][8];  // running max, sum and outputs (m, l the same in every thread)
  [[unroll]] for (uint g = 0; g < G; g++) {
    m[g] = -1.0 / 0.0;
    l[g] = 0.0;
    [[unroll]] for (uint i = 0; i < 8; i++) o[g][i] = 0.0;
  }
  uint table_row = (b * p.Hkv + kvh) * (p.max_seq / KV_BLOCK);

  for (int c0 = j0; c0 < j1; c0 += int(SUBK)) {
    int n = min(int(SUBK), j1 - c0);
    int blk0 = c0 / int(KV_BLOCK), nblk = (c0 + n - 1) / int(KV_BLOCK) - blk0 + 1;
    for (int i = int(tid); i < nblk; i += int(T)) blk_sh[i] = p.kv_table.v[table_row + uint(blk0 + i)];
    barrier();
    // 1. Scores of the key rows base + jl + KG * u.
    RawKv cur[U], nxt[U];
    load_rows(c0, n, blk0, p.k_off, 0, jl, lane8, cur);
    for (int base = 0; base < n; base += int(STEP)) {
      load_rows(c0, n, blk0, p.k_off, base + int(STEP), jl, lane8, nxt);
      [[unroll]] for (uint u = 0; u < U; u++) {
        float kf[8], sc[G];
        unpack8(cur[u], kf);
        [[unroll]] for (uint g = 0; g < G; g++) {
          float a = 0.0;
          [[unroll]] for (uint i = 0; i < 8; i++) a += qr[g][i] * kf[i];
          sc[g] = a;
        }
        reduce_dots(sc, lane8 / 8);
        int j = base + int(jl + KG * u);
        if (SCATTER) {
          const uint per_head = L / G;  // lanes that end with the same head
          if (lane8 / 8 % per_head == 0 && j < n)
            sh[lane8 / 8 / per_head * SUBK + uint(j)] = softcapped(sc[0] * p.scale, p.softcap);
        } else if (lane8 == 0 && j < n) {
          [[unroll]] for (uint g = 0; g < G; g++) sh[g * SUBK + uint(j)] = softcapped(sc[g] * p.scale, p.softcap);
        }
      }
      [[unroll]] for (uint u = 0; u < U; u++) cur[u] = nxt[u];
    }
    load_rows(c0, n, blk0, p.v_off, 0, jl, lane8, cur);  // the first value rows, in flight during the softmax
    barrier();
    // 2. Softmax of the sub-chunk: maxima, weights in place, sums; the running state rescaled.
    float part[G];
    [[unroll]] for (uint g = 0; g < G; g++) part[g] = -1.0 / 0.0;
    for (int j = int(tid); j < n; j += int(T))
      [[unroll]] for (uint g = 0; g < G; g++) part[g] = max(part[g], sh[g * SUBK + uint(j)]);
    [[unroll]] for (uint g = 0; g < G; g++) part[g] = subgroupMax(part[g]);
    if (subgroupElect())
      [[unroll]] for (uint g = 0; g < G; g++) max_sh[sg * G + g] = part[g];
    barrier();
    float alpha[G];
    [[unroll]] for (uint g = 0; g < G; g++) {
      float mx = m[g];
      for (uint k = 0; k < nsg; k++) mx = max(mx, max_sh[k * G + g]);
      alpha[g] = m[g] == -1.0 / 0.0 ? 0.0 : exp(m[g] - mx);
      m[g] = mx;
      part[g] = 0.0;
    }
    for (int j = int(tid); j < n; j += int(T))
      [[unroll]] for (uint g = 0; g < G; g++) {
        float w = exp(sh[g * SUBK + uint(j)] - m[g]);
        sh[g * SUBK + uint(j)] = w;
        part[g] += w;
      }
    [[unroll]] for (uint g = 0; g < G; g++) part[g] = subgroupAdd(part[g]);
    if (subgroupElect())
      [[unroll]] for (uint g = 0; g < G; g++) sum_sh[sg * G + g] = part[g];
    barrier();
    [[unroll]] for (uint g = 0; g < G; g++) {
      float t = 0.0;
      for (uint k = 0; k < nsg; k++) t += sum_sh[k * G + g];
      l[g] = l[g] * alpha[g] + t;
      [[unroll]] for (uint i = 0; i < 8; i++) o[g][i] *= alpha[g];
    }
    // 3. Values of the same key rows, weighted.
    for (int base = 0; base < n; base += int(STEP)) {
      load_rows(c0, n, blk0, p.v_off, base + int(STEP), jl, lane8, nxt);
      [[unroll]] for (uint u = 0; u < U; u++) {
        int j = base + int(jl + KG * u);
        if (j < n) {
          float vf[8];
          unpack8(cur[u], vf);
          [[unroll]] for (uint g = 0; g < G; g++) {
            float w = sh[g * SUBK + uint(j)];
            [[unroll]] for (uint i = 0; i < 8; i++) o[g][i] += w * vf[i];
          }
        }
      }
      [[unroll]] for (uint u = 0; u < U; u++) cur[u] = nxt[u];
    }
    barrier();  // sh, blk_sh, max_sh and sum_sh are reused
  }

  // The key rows' outputs: lanes of the same dimensions within a subgroup by shuffles, then the subgroups.
  for (uint x = L; x < gl_SubgroupSize; x <<= 1)
    [[unroll]] for (uint g = 0; g < G; g++)
      [[unroll]] for (uint i = 0; i < 8; i++) o[g][i] += subgroupShuffleXor(o[g][i], x);
  if (gl_SubgroupInvocationID < L)
    [[unroll]] for (uint g = 0; g < G; g++)
      [[unroll]] for (uint i = 0; i < 8; i++) sh[(sg * G + g) * D + lane8 + i] = o[g][i];
  barrier();
  uint out_row = (z * p.Hq + h0) * nchunk + c;  // head g's entry: out_row + g * nchunk
  for (uint idx = tid; idx < G * D; idx += T) {
    float a = 0.0;
    for (uint k = 0; k < nsg; k++) a += sh[k * G * D + idx];
    p.part_o.v[(out_row + idx / D * nchunk) * D + idx % D] = a;
  }
  [[unroll]] for (uint g = 0; g < G; g++)
    if (tid == g) {
      p.part_ml.v[(out_row + g * nchunk) * 2] = m[g];
      p.part_ml.v[(out_row + g * nchunk) * 2 + 1] = l[g];
    }
}
