// GroupQueryAttention step 1: optional rotary on q and k (position = position_ids[b, s] when given, else past + s),
// q to the fp32 scratch
// [B, Hq, S, D], new k and v into the paged caches (attention_common.glsl) at past + s.
// q/k/v are read through row strides so a packed QKV tensor [B, S, (Hq + 2 Hkv) * D] works too.
#version 460
#include "common.glsl"
#include "attention_common.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
  ActBuf q;          // [B, S, q_row] (row = q_row elements)
  ActBuf k;          // [B, S, kv_row]
  ActBuf v;          // [B, S, kv_row]
  I32Buf seqlens;    // int32 [B]
  I32Buf total;      // int32 [1]
  ActBuf cos_c;      // when rotary: [max_pos, D / 2]
  ActBuf sin_c;
  F32Buf q_out;      // [B, Hq, S, D]
  KvTable kv_table;  // uint64 [B, Hkv, max_seq / KV_BLOCK]: the rows' KV blocks (attention_common.glsl)
  U32Buf pos_ids;    // when flags & 4: int64 [B, S] rotary positions
  uint B, S, Hq, Hkv, D, max_seq;
  uint q_row, kv_row;
  uint flags;        // 1: rotary, 2: interleaved, 4: position_ids given
  uint max_pos;
  uint k_off, v_off; // elements into a block of this layer's keys / values
} p;

#include "gqa_rotary.glsl"

void main() {
  uint heads = p.Hq + 2 * p.Hkv;
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (i >= p.B * p.S * heads * p.D) return;
  uint j = i % p.D, h = (i / p.D) % heads, s = (i / (p.D * heads)) % p.S, b = i / (p.D * heads * p.S);
  int past = past_of(p.seqlens, p.total, b, p.S);
  int position = past + int(s);
  int rot_pos = (p.flags & 4u) != 0 ? load_i64(p.pos_ids, b * p.S + s) : position;
  if (h < p.Hq) {
    float r = rotate(p.q, (b * p.S + s) * p.q_row + h * p.D, j, rot_pos);
    p.q_out.v[((b * p.Hq + h) * p.S + s) * p.D + j] = r;
    return;
  }
  if (position < 0 || position >= int(p.max_seq)) return;
  uint kvh = h < p.Hq + p.Hkv ? h - p.Hq : h - p.Hq - p.Hkv;
  uint src = (b * p.S + s) * p.kv_row + kvh * p.D;
  uint max_blocks = p.max_seq / KV_BLOCK;
  if (h < p.Hq + p.Hkv)
    ActBuf(kv_row(p.kv_table, max_blocks, p.Hkv, b, kvh, uint(position), p.k_off, p.D, ACT_BYTES)).v[j] =
        TO_STORE(rotate(p.k, src, j, rot_pos));
  else
    ActBuf(kv_row(p.kv_table, max_blocks, p.Hkv, b, kvh, uint(position), p.v_off, p.D, ACT_BYTES)).v[j] = p.v.v[src + j];
}
