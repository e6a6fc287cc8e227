#include "providers/cpu/broadcast.h"

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

}  // namespace ogx::cpu
