// Rotary embedding of element j of a head starting at src[base], at `position`, as GroupQueryAttention's do_rotary
// applies it (flags & 1: rotary on, flags & 2: interleaved pairs; cos/sin caches [max_pos, D / 2]). Included after
// the push-constant block `p` of a shader that declares flags, D, max_pos, cos_c and sin_c.
// The partner index of element j and whether j is the first of its pair; idx: its row in the caches.
void rotary_pair(uint j, out uint idx, out uint pair, out bool first) {
  uint half_dim = p.D / 2;
  if ((p.flags & 2u) != 0) {
    idx = j / 2; first = (j % 2) == 0; pair = first ? j + 1 : j - 1;
  } else {
    first = j < half_dim; idx = first ? j : j - half_dim; pair = first ? j + half_dim : j - half_dim;
  }
}

// cos and sin for element j at `position` (1 and 0 without rotary): loadable before the element itself.
vec2 rotary_cos_sin(uint j, int position) {
  if ((p.flags & 1u) == 0) return vec2(1.0, 0.0);
  uint idx, pair;
  bool first;
  rotary_pair(j, idx, pair, first);
  uint pc = uint(clamp(position, 0, int(p.max_pos) - 1));
  return vec2(float(p.cos_c.v[pc * (p.D / 2) + idx]), float(p.sin_c.v[pc * (p.D / 2) + idx]));
}

// Element j of the head at src[base] rotated with cs = rotary_cos_sin(j, position).
float rotate_with(ActBuf src, uint base, uint j, vec2 cs) {
  float xj = float(src.v[base + j]);
  if ((p.flags & 1u) == 0) return xj;
  uint idx, pair;
  bool first;
  rotary_pair(j, idx, pair, first);
  float xp = float(src.v[base + pair]);
  return first ? xj * cs.x - xp * cs.y : xj * cs.x + xp * cs.y;
}

float rotate(ActBuf src, uint base, uint j, int position) {
  return rotate_with(src, base, j, rotary_cos_sin(j, position));
}
