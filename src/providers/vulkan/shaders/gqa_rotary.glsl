// Rotary embedding of element j of a head starting at src[base], at `position`, as GroupQueryAttention's do_rotary
// applies it (flags & 1: rotary on, flags & 2: interleaved pairs; cos/sin caches [max_pos, R / 2]; flags >> 8: R / 2
// when R < D — partial rotary, as Phi-4-mini: the first R elements rotate, the others pass through — else 0).
// Included after the push-constant block `p` of a shader that declares flags, D, max_pos, cos_c and sin_c.
float rotate(ActBuf src, uint base, uint j, int position) {
  float xj = float(src.v[base + j]);
  if ((p.flags & 1u) == 0) return xj;
  uint half_dim = (p.flags >> 8) != 0 ? (p.flags >> 8) : p.D / 2;
  if (j >= 2 * half_dim) return xj;
  bool first;
  uint idx, pair;
  if ((p.flags & 2u) != 0) {
    idx = j / 2; first = (j % 2) == 0; pair = first ? j + 1 : j - 1;
  } else {
    first = j < half_dim; idx = first ? j : j - half_dim; pair = first ? j + half_dim : j - half_dim;
  }
  uint pc = uint(clamp(position, 0, int(p.max_pos) - 1));
  float c = float(p.cos_c.v[pc * half_dim + idx]), sn = float(p.sin_c.v[pc * half_dim + idx]);
  float xp = float(src.v[base + pair]);
  return first ? xj * c - xp * sn : xj * c + xp * sn;
}
