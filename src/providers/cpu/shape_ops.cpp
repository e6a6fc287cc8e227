// Ops that move or describe data without arithmetic: Shape, Size, Reshape, Flatten, Transpose, Squeeze,
// Unsqueeze, Concat, Slice, Expand, Tile, Split, ConstantOfShape, Range, Trilu.
#include <cmath>
#include <cstring>

#include "providers/cpu/broadcast.h"
#include "providers/cpu/cpu_ops.h"
#include "providers/cpu/type_dispatch.h"

namespace ogx::cpu {
namespace {

int64_t norm_axis(int64_t a, int64_t rank, const Node& n) {
  OGX_CHECK(a >= -rank && a < rank, n.describe(), ": axis ", a, " out of range for rank ", rank);
  return a < 0 ? a + rank : a;
}

void copy_out(KernelContext& ctx, const Tensor& x, const Shape& s) {
  Tensor& y = ctx.output(0, x.dtype(), s);
  if (y.raw() != x.raw() && x.bytes()) std::memcpy(y.raw(), x.raw(), x.bytes());
}

// Axes from the attribute (old opsets) or the optional input (newer opsets).
std::vector<int64_t> axes_of(KernelContext& ctx, int input_index) {
  if (ctx.node().has_attr("axes")) return ctx.node().attr_ints("axes");
  if (ctx.has_input(input_index)) return ctx.input(input_index).to_i64_vector();
  return {};
}

void shape_kernel(KernelContext& ctx) {
  const Shape& s = ctx.input(0).shape();
  int64_t r = (int64_t)s.size();
  int64_t start = ctx.node().attr_int("start", 0), end = ctx.node().attr_int("end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, start, r);
  Tensor& y = ctx.output(0, DType::i64, {end - start});
  for (int64_t i = start; i < end; i++) y.data<int64_t>()[i - start] = s[i];
}

void reshape_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  auto spec = ctx.input(1).to_i64_vector();
  bool allowzero = ctx.node().attr_int("allowzero", 0) != 0;
  Shape s(spec.size());
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < spec.size(); i++) {
    int64_t d = spec[i];
    if (d == 0 && !allowzero) {
      OGX_CHECK(i < x.shape().size(), ctx.node().describe(), ": 0 in shape refers to a missing input dim");
      d = x.shape()[i];
    }
    if (d == -1) {
      OGX_CHECK(infer < 0, ctx.node().describe(), ": more than one -1 in shape");
      infer = (int)i;
      s[i] = 1;
      continue;
    }
    OGX_CHECK(d >= 0, ctx.node().describe(), ": invalid dim ", d);
    s[i] = d;
    known *= d;
  }
  if (infer >= 0) {
    OGX_CHECK(known > 0 && x.numel() % known == 0, ctx.node().describe(), ": cannot reshape ", shape_str(x.shape()));
    s[infer] = x.numel() / known;
  }
  OGX_CHECK(shape_numel(s) == x.numel(), ctx.node().describe(), ": cannot reshape ", shape_str(x.shape()), " to ",
            shape_str(s));
  copy_out(ctx, x, s);
}

void flatten_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  int64_t r = x.rank();
  int64_t axis = ctx.node().attr_int("axis", 1);
  if (axis < 0) axis += r;
  OGX_CHECK(axis >= 0 && axis <= r, ctx.node().describe(), ": bad axis");
  int64_t a = 1;
  for (int64_t i = 0; i < axis; i++) a *= x.shape()[i];
  copy_out(ctx, x, {a, a ? x.numel() / a : 0});
}

void transpose_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  int r = x.rank();
  auto perm = ctx.node().attr_ints("perm");
  if (perm.empty())
    for (int i = r - 1; i >= 0; i--) perm.push_back(i);
  OGX_CHECK((int)perm.size() == r, ctx.node().describe(), ": perm has ", perm.size(), " entries for rank ", r);
  std::vector<bool> seen(r, false);
  Shape s(r);
  for (int i = 0; i < r; i++) {
    int64_t p = norm_axis(perm[i], r, ctx.node());
    OGX_CHECK(!seen[p], ctx.node().describe(), ": perm repeats axis ", p);
    seen[p] = true;
    s[i] = x.shape()[p];
  }
  Tensor& y = ctx.output(0, x.dtype(), s);
  // input strides permuted into output order
  std::vector<int64_t> in_st = contiguous_strides(x.shape()), st(r);
  for (int i = 0; i < r; i++) st[i] = in_st[perm[i] < 0 ? perm[i] + r : perm[i]];
  copy_strided((const char*)x.raw(), (char*)y.raw(), dtype_size(x.dtype()), s, std::move(st));
}

void squeeze_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  auto axes = axes_of(ctx, 1);
  int64_t r = x.rank();
  std::vector<bool> drop(r, false);
  if (axes.empty()) {
    for (int64_t i = 0; i < r; i++) drop[i] = x.shape()[i] == 1;
  } else {
    for (auto a : axes) {
      a = norm_axis(a, r, ctx.node());
      OGX_CHECK(x.shape()[a] == 1, ctx.node().describe(), ": cannot squeeze axis ", a, " of ", shape_str(x.shape()));
      drop[a] = true;
    }
  }
  Shape s;
  for (int64_t i = 0; i < r; i++)
    if (!drop[i]) s.push_back(x.shape()[i]);
  copy_out(ctx, x, s);
}

void unsqueeze_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  auto axes = axes_of(ctx, 1);
  int64_t r = x.rank() + (int64_t)axes.size();
  std::vector<bool> ins(r, false);
  for (auto a : axes) {
    a = norm_axis(a, r, ctx.node());
    OGX_CHECK(!ins[a], ctx.node().describe(), ": repeated axis");
    ins[a] = true;
  }
  Shape s;
  size_t k = 0;
  for (int64_t i = 0; i < r; i++) s.push_back(ins[i] ? 1 : x.shape()[k++]);
  copy_out(ctx, x, s);
}

void concat_kernel(KernelContext& ctx) {
  const Tensor& first = ctx.input(0);
  int64_t r = first.rank();
  int64_t axis = norm_axis(ctx.node().attr_int("axis", 0), std::max<int64_t>(r, 1), ctx.node());
  Shape s = first.shape();
  s[axis] = 0;
  for (int i = 0; i < ctx.num_inputs(); i++) {
    const Tensor& t = ctx.input(i);
    OGX_CHECK(t.dtype() == first.dtype() && t.rank() == r, ctx.node().describe(), ": input ", i, " mismatches");
    for (int64_t d = 0; d < r; d++)
      OGX_CHECK(d == axis || t.shape()[d] == first.shape()[d], ctx.node().describe(), ": input ", i, " shape ",
                shape_str(t.shape()), " mismatches ", shape_str(first.shape()));
    s[axis] += t.shape()[axis];
  }
  Tensor& y = ctx.output(0, first.dtype(), s);
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; d++) outer *= s[d];
  size_t es = dtype_size(first.dtype());
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < r; d++) inner *= s[d];
  char* py = (char*)y.raw();
  size_t out_row = (size_t)(s[axis] * inner) * es;
  size_t off = 0;
  for (int i = 0; i < ctx.num_inputs(); i++) {
    const Tensor& t = ctx.input(i);
    size_t row = (size_t)(t.shape()[axis] * inner) * es;
    for (int64_t o = 0; o < outer; o++) std::memcpy(py + o * out_row + off, (const char*)t.raw() + o * row, row);
    off += row;
  }
}

void slice_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  int64_t r = x.rank();
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.node().has_attr("starts")) {
    starts = ctx.node().attr_ints("starts");
    ends = ctx.node().attr_ints("ends");
    axes = ctx.node().attr_ints("axes");
  } else {
    starts = ctx.input(1).to_i64_vector();
    ends = ctx.input(2).to_i64_vector();
    if (ctx.has_input(3)) axes = ctx.input(3).to_i64_vector();
    if (ctx.has_input(4)) steps = ctx.input(4).to_i64_vector();
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); i++) axes.push_back((int64_t)i);
  if (steps.empty()) steps.assign(starts.size(), 1);
  OGX_CHECK(ends.size() == starts.size() && axes.size() == starts.size() && steps.size() == starts.size(),
            ctx.node().describe(), ": starts/ends/axes/steps lengths differ");
  std::vector<int64_t> st(r, 0), step(r, 1);
  Shape s = x.shape();
  for (size_t i = 0; i < starts.size(); i++) {
    int64_t a = norm_axis(axes[i], r, ctx.node());
    int64_t d = x.shape()[a], k = steps[i];
    OGX_CHECK(k != 0, ctx.node().describe(), ": step 0");
    int64_t b = starts[i], e = ends[i];
    if (b < 0) b += d;
    if (e < 0) e += d;
    if (k > 0) {
      b = std::clamp<int64_t>(b, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
      s[a] = e > b ? (e - b + k - 1) / k : 0;
    } else {
      b = std::clamp<int64_t>(b, 0, d - 1);
      e = std::clamp<int64_t>(e, -1, d - 1);
      s[a] = b > e ? (b - e + (-k) - 1) / (-k) : 0;
    }
    st[a] = b;
    step[a] = k;
  }
  Tensor& y = ctx.output(0, x.dtype(), s);
  std::vector<int64_t> in_st = contiguous_strides(x.shape()), strides(r);
  int64_t base = 0;
  for (int64_t i = 0; i < r; i++) {
    base += st[i] * in_st[i];
    strides[i] = step[i] * in_st[i];
  }
  size_t es = dtype_size(x.dtype());
  copy_strided((const char*)x.raw() + base * (int64_t)es, (char*)y.raw(), es, s, std::move(strides));
}

void expand_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Shape target = ctx.input(1).to_i64_vector();
  Shape s = broadcast_shapes({&x.shape(), &target}, ctx.node().describe());
  Tensor& y = ctx.output(0, x.dtype(), s);
  copy_strided((const char*)x.raw(), (char*)y.raw(), dtype_size(x.dtype()), s, broadcast_strides(x.shape(), s));
}

void tile_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  auto reps = ctx.input(1).to_i64_vector();
  int64_t r = x.rank();
  OGX_CHECK((int64_t)reps.size() == r, ctx.node().describe(), ": repeats length must equal rank");
  Shape s(r);
  for (int64_t i = 0; i < r; i++) {
    OGX_CHECK(reps[i] >= 0, ctx.node().describe(), ": negative repeat");
    s[i] = x.shape()[i] * reps[i];
  }
  Tensor& y = ctx.output(0, x.dtype(), s);
  size_t es = dtype_size(x.dtype());
  std::vector<int64_t> in_st = contiguous_strides(x.shape());
  for (int64_t i = 0; i < y.numel(); i++) {
    int64_t rem = i, off = 0;
    for (int64_t d = r - 1; d >= 0; d--) {
      off += (rem % s[d]) % x.shape()[d] * in_st[d];
      rem /= s[d];
    }
    std::memcpy((char*)y.raw() + i * es, (const char*)x.raw() + off * es, es);
  }
}

void split_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  int64_t r = x.rank();
  int64_t axis = norm_axis(ctx.node().attr_int("axis", 0), r, ctx.node());
  int n = ctx.num_outputs();
  std::vector<int64_t> sizes = ctx.node().attr_ints("split");
  if (sizes.empty() && ctx.has_input(1)) sizes = ctx.input(1).to_i64_vector();
  int64_t d = x.shape()[axis];
  if (sizes.empty()) {
    int64_t k = (d + n - 1) / n;
    for (int i = 0; i < n; i++) sizes.push_back(std::max<int64_t>(0, std::min(k, d - k * i)));
  }
  OGX_CHECK((int)sizes.size() == n, ctx.node().describe(), ": ", sizes.size(), " split sizes for ", n, " outputs");
  int64_t total = 0;
  for (auto v : sizes) total += v;
  OGX_CHECK(total == d, ctx.node().describe(), ": split sizes sum to ", total, ", axis has ", d);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; i++) outer *= x.shape()[i];
  for (int64_t i = axis + 1; i < r; i++) inner *= x.shape()[i];
  size_t es = dtype_size(x.dtype());
  int64_t off = 0;
  for (int k = 0; k < n; k++) {
    Shape s = x.shape();
    s[axis] = sizes[k];
    if (ctx.wants_output(k)) {
      Tensor& y = ctx.output(k, x.dtype(), s);
      size_t row = (size_t)(sizes[k] * inner) * es;
      for (int64_t o = 0; o < outer; o++)
        std::memcpy((char*)y.raw() + o * row, (const char*)x.raw() + ((o * d + off) * inner) * (int64_t)es, row);
    }
    off += sizes[k];
  }
}

void constant_of_shape_kernel(KernelContext& ctx) {
  Shape s = ctx.input(0).to_i64_vector();
  const Tensor* v = ctx.node().attr_tensor("value");
  DType dt = v ? v->dtype() : DType::f32;
  Tensor& y = ctx.output(0, dt, s);
  size_t es = dtype_size(dt);
  std::vector<char> val(es, 0);
  if (v) std::memcpy(val.data(), v->raw(), es);
  for (int64_t i = 0; i < y.numel(); i++) std::memcpy((char*)y.raw() + i * es, val.data(), es);
}

void range_kernel(KernelContext& ctx) {
  const Tensor& start = ctx.input(0);
  DType dt = start.dtype();
  double b = start.get_f64(0), e = ctx.input(1).get_f64(0), d = ctx.input(2).get_f64(0);
  OGX_CHECK(d != 0, ctx.node().describe(), ": delta is 0");
  int64_t n = std::max<int64_t>(0, (int64_t)std::ceil((e - b) / d));
  OGX_CHECK(n < (int64_t)1 << 32, ctx.node().describe(), ": range too large");
  Tensor& y = ctx.output(0, dt, {n});
  dispatch_numeric(dt, "Range", [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = typename Compute<S>::type;
    for (int64_t i = 0; i < n; i++) y.data<S>()[i] = store<S>((C)(b + d * (double)i));
  });
}

void trilu_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  OGX_CHECK(x.rank() >= 2, ctx.node().describe(), ": needs rank >= 2");
  int64_t k = ctx.has_input(1) ? ctx.input(1).get_i64(0) : 0;
  bool upper = ctx.node().attr_int("upper", 1) != 0;
  Tensor& y = ctx.output(0, x.dtype(), x.shape());
  int64_t rows = x.dim(-2), cols = x.dim(-1);
  size_t es = dtype_size(x.dtype());
  for (int64_t i = 0; i < x.numel(); i++) {
    int64_t c = i % cols, rr = (i / cols) % rows;
    bool keep = upper ? (c - rr >= k) : (c - rr <= k);
    if (keep) std::memcpy((char*)y.raw() + i * es, (const char*)x.raw() + i * es, es);
    else std::memset((char*)y.raw() + i * es, 0, es);
  }
}

}  // namespace

void register_shape_ops(KernelRegistry& r) {
  r.add_fn("", "Shape", shape_kernel);
  r.add_fn("", "Size", [](KernelContext& ctx) {
    Tensor& y = ctx.output(0, DType::i64, {});
    *y.data<int64_t>() = ctx.input(0).numel();
  });
  r.add_fn("", "Reshape", reshape_kernel);
  r.add_fn("", "Flatten", flatten_kernel);
  r.add_fn("", "Transpose", transpose_kernel);
  r.add_fn("", "Squeeze", squeeze_kernel);
  r.add_fn("", "Unsqueeze", unsqueeze_kernel);
  r.add_fn("", "Concat", concat_kernel);
  r.add_fn("", "Slice", slice_kernel);
  r.add_fn("", "Expand", expand_kernel);
  r.add_fn("", "Tile", tile_kernel);
  r.add_fn("", "Split", split_kernel);
  r.add_fn("", "ConstantOfShape", constant_of_shape_kernel);
  r.add_fn("", "Range", range_kernel);
  r.add_fn("", "Trilu", trilu_kernel);
}

}  // namespace ogx::cpu
