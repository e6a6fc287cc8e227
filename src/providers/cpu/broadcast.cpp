#include "providers/cpu/broadcast.h"

#include <cstring>

namespace ogx::cpu {

Shape broadcast_shapes(const std::vector<const Shape*>& shapes, const std::string& what) {
  size_t r = 0;
  for (auto* s : shapes) r = std::max(r, s->size());
  Shape out(r, 1);
  for (auto* s : shapes) {
    size_t off = r - s->size();
    for (size_t i = 0; i < s->size(); i++) {
      int64_t d = (*s)[i];
      int64_t& o = out[off + i];
      if (d == o || d == 1) continue;
      if (o == 1) {
        o = d;
        continue;
      }
      std::string all;
      for (auto* t : shapes) all += shape_str(*t) + " ";
      throw_error(what, ": shapes ", all, "cannot be broadcast together");
    }
  }
  return out;
}

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<int64_t> st(out.size(), 0);
  int64_t s = 1;
  for (int i = (int)in.size() - 1; i >= 0; i--) {
    size_t o = out.size() - in.size() + i;
    st[o] = in[i] == 1 ? 0 : s;
    s *= in[i];
  }
  return st;
}

std::vector<int64_t> contiguous_strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int i = (int)s.size() - 2; i >= 0; i--) st[i] = st[i + 1] * s[i + 1];
  return st;
}

void copy_strided(const char* src, char* dst, size_t es, const Shape& out, std::vector<int64_t> strides) {
  std::array<std::vector<int64_t>, 1> st{std::move(strides)};
  for_each_broadcast<1>(out, st, [&](int64_t i, const std::array<int64_t, 1>& o) {
    std::memcpy(dst + i * (int64_t)es, src + o[0] * (int64_t)es, es);
  });
}

}  // namespace ogx::cpu
