// GroupQueryAttention in key chunks, step 3 of 3 (after gqa_decode_chunk.comp): merges the chunks' softmax states
// of each (query row, head): out = sum_c exp(m_c - M) o_c / sum_c exp(m_c - M) l_c with M = max_c m_c, over the
// chunks that hold keys (chunk_split, as the chunk kernel split them). Workgroup (head, z = b * S + s): its threads
// first take the chunks' maxima and weights (subgroups, then shared memory), then read the chunks' outputs as
// vec4 columns — D / 4 threads a chunk, T / (D / 4) chunks side by side, 8 chunks' loads in flight per thread —
// and sum the column groups through shared memory.
// Limits (checked by the host): D % 8 == 0, D / 4 <= T, nchunk <= MAX_CHUNKS.
#version 460
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "attention_common.glsl"

layout(local_size_x = 256) in;
const uint T = 256, MAX_CHUNKS = T;  // a thread per chunk for the maxima and weights

layout(push_constant) uniform Push {
  F32Buf part_o;   // [B * S, Hq, nchunk, D]
  F32Buf part_ml;  // [B * S, Hq, nchunk, 2]
  I32Buf seqlens;  // int32 [B]
  I32Buf total;    // int32 [1]
  ActBuf out_;     // [B, S, Hq * D]
  uint Hq, D, S, max_seq, nchunk;
  int window;
} p;

shared float w_sh[MAX_CHUNKS];  // the chunks' weights exp(m_c - M)
shared float max_sh[T], sum_sh[T];  // per subgroup (T of them at most: subgroups of any size)
shared vec4 col_sh[T];          // [column groups, D / 4] partial sums

void main() {
  uint h = gl_WorkGroupID.x, z = gl_WorkGroupID.y, tid = gl_LocalInvocationID.x;
  uint sg = gl_SubgroupID, nsg = gl_NumSubgroups;
  uint b = z / p.S, s = z % p.S, D = p.D;
  int lo, hi, per, used;
  query_keys(p.seqlens, p.total, b, s, p.S, p.max_seq, p.window, lo, hi);
  chunk_split(max(hi - lo, 0), p.nchunk, per, used);
  uint row = z * p.Hq + h, first = row * p.nchunk;  // chunk c's entry: first + c
  // Chunk tid's max and sum (nchunk <= MAX_CHUNKS = T: one chunk a thread at most), loaded once.
  bool mine = int(tid) < used;
  float mc = mine ? p.part_ml.v[(first + tid) * 2] : -1.0 / 0.0;
  float lc = mine ? p.part_ml.v[(first + tid) * 2 + 1] : 0.0;
  float mx = subgroupMax(mc);
  if (subgroupElect()) max_sh[sg] = mx;
  barrier();
  float M = -1.0 / 0.0;
  for (uint k = 0; k < nsg; k++) M = max(M, max_sh[k]);
  float w = mine ? exp(mc - M) : 0.0;
  if (mine) w_sh[tid] = w;
  float den = subgroupAdd(w * lc);
  if (subgroupElect()) sum_sh[sg] = den;
  barrier();
  den = 0.0;
  for (uint k = 0; k < nsg; k++) den += sum_sh[k];
  uint C4 = D / 4, groups = T / C4, col = tid % C4, grp = tid / C4;
  vec4 acc = vec4(0.0);
  if (grp < groups) {
    F32x4Buf o4 = F32x4Buf(uvec2(p.part_o));
    for (int c0 = int(grp); c0 < used; c0 += int(8 * groups)) {
      vec4 v[8];
      [[unroll]] for (uint k = 0; k < 8; k++) {
        int c = c0 + int(k * groups);
        v[k] = c < used ? o4.v[(first + uint(c)) * C4 + col] : vec4(0.0);
      }
      [[unroll]] for (uint k = 0; k < 8; k++) {
        int c = c0 + int(k * groups);
        if (c < used) acc += w_sh[c] * v[k];
      }
    }
  }
  col_sh[tid] = acc;
  barrier();
  if (tid < C4) {
    vec4 t = vec4(0.0);
    for (uint k = 0; k < groups; k++) t += col_sh[k * C4 + tid];
    t = den > 0.0 ? t / den : vec4(0.0);
    uint at = row * D + tid * 4;
    [[unroll]] for (uint i = 0; i < 4; i++) p.out_.v[at + i] = TO_STORE(t[i]);
  }
}
