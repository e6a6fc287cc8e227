#include "providers/vulkan/kernels/elementwise.h"

#include "providers/vulkan/kernels/kernel_util.h"

namespace ogx::vk::kernels {

namespace {

struct ElementwisePush {
  uint64_t a, b, out;
  uint32_t n, rank;
  uint32_t dims[6], a_strides[6], b_strides[6];
};

// Strides (elements) of `in` read at positions of `out` (0 along broadcast axes), right-aligned to rank 6 slots.
void broadcast_strides(const Shape& in, const Shape& out, uint32_t* strides) {
  size_t r = out.size(), off = r - in.size();
  uint64_t stride = 1;
  for (size_t d = r; d-- > 0;) {
    int64_t dim = d >= off ? in[d - off] : 1;
    strides[d] = dim == 1 ? 0 : (uint32_t)stride;
    stride *= (uint64_t)dim;
  }
}

void launch(CommandRecorder& rec, uint32_t op, const TensorView& a, const TensorView* b, const TensorView& out) {
  const char* t = storage_suffix(out.dtype, "elementwise op");
  check_same_dtype(a, out, "elementwise op");
  if (b) check_same_dtype(*b, out, "elementwise op");
  OGX_CHECK(out.shape.size() <= 6, "elementwise op: rank ", out.shape.size(), " > 6 is not supported");
  Shape expect = b ? broadcast_shapes(a.shape, b->shape) : a.shape;
  OGX_CHECK(expect == out.shape, "elementwise op: output ", shape_str(out.shape), " must be ", shape_str(expect));
  ElementwisePush p{};
  p.a = addr(a);
  p.b = b ? addr(*b) : 0;
  p.out = addr(out);
  p.n = (uint32_t)out.numel();
  p.rank = (uint32_t)out.shape.size();
  for (size_t d = 0; d < out.shape.size(); d++) p.dims[d] = (uint32_t)out.shape[d];
  broadcast_strides(a.shape, out.shape, p.a_strides);
  if (b) broadcast_strides(b->shape, out.shape, p.b_strides);
  const Pipeline& pl = rec.context().pipelines().get(std::string("elementwise_") + t, {op});
  uint32_t gx, gy;
  grid_2d(div_up(p.n, 256), &gx, &gy);
  rec.dispatch(pl, &p, sizeof(p), gx, gy, 1, {a.mem, b ? b->mem : a.mem}, {out.mem});
}

}  // namespace

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; i++) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    OGX_CHECK(da == db || da == 1 || db == 1, "shapes ", shape_str(a), " and ", shape_str(b), " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

void binary(CommandRecorder& rec, BinaryOp op, const TensorView& a, const TensorView& b, const TensorView& out) {
  launch(rec, (uint32_t)op, a, &b, out);
}

void unary(CommandRecorder& rec, UnaryOp op, const TensorView& a, const TensorView& out) {
  launch(rec, (uint32_t)op, a, nullptr, out);
}

namespace {
// silu_mul.comp over rows x cols outputs; gate/up element (r, c) at addr + (r * row_stride + c * col_stride).
void launch_silu_mul(CommandRecorder& rec, uint64_t gate, uint64_t up, const TensorView& out, uint32_t row_stride,
                     uint32_t col_stride, std::initializer_list<BufferSlice> reads) {
  int64_t cols = out.shape.back(), rows = out.numel() / cols;
  struct {
    uint64_t gate, up, out;
    uint32_t rows, cols, gate_stride, up_stride, col_stride;
  } p{gate, up, addr(out), (uint32_t)rows, (uint32_t)cols, row_stride, row_stride, col_stride};
  const Pipeline& pl = rec.context().pipelines().get(std::string("silu_mul_") + storage_suffix(out.dtype, "SiLU*Mul"));
  uint32_t gx, gy;
  grid_2d(div_up(rows * cols, 256), &gx, &gy);
  rec.dispatch(pl, &p, sizeof(p), gx, gy, 1, reads, {out.mem});
}
}  // namespace

void silu_mul(CommandRecorder& rec, const TensorView& gate, const TensorView& up, const TensorView& out, bool fused) {
  storage_suffix(out.dtype, "SiLU*Mul");
  check_same_dtype(gate, out, "SiLU*Mul");
  check_same_dtype(up, out, "SiLU*Mul");
  int64_t cols = out.shape.back();
  OGX_CHECK(gate.numel() == (fused ? 2 : 1) * out.numel() && up.numel() == gate.numel(),
            "SiLU*Mul: gate ", shape_str(gate.shape), " / up ", shape_str(up.shape), " do not fit output ",
            shape_str(out.shape));
  launch_silu_mul(rec, addr(gate), addr(up) + (fused ? (uint64_t)cols * dtype_size(out.dtype) : 0), out,
                  (uint32_t)(fused ? 2 * cols : cols), 1, {gate.mem, up.mem});
}

void silu_mul_interleaved(CommandRecorder& rec, const TensorView& gate_up, const TensorView& out) {
  storage_suffix(out.dtype, "SiLU*Mul");
  check_same_dtype(gate_up, out, "SiLU*Mul");
  OGX_CHECK(gate_up.numel() == 2 * out.numel(), "SiLU*Mul: interleaved gate/up ", shape_str(gate_up.shape),
            " does not fit output ", shape_str(out.shape));
  launch_silu_mul(rec, addr(gate_up), addr(gate_up) + dtype_size(out.dtype), out,
                  (uint32_t)(2 * out.shape.back()), 2, {gate_up.mem});
}

void cast(CommandRecorder& rec, const TensorView& in, const TensorView& out) {
  storage_suffix(in.dtype, "Cast");
  storage_suffix(out.dtype, "Cast");
  OGX_CHECK(in.dtype != out.dtype, "Cast: a same-type cast is a copy, not a kernel");
  OGX_CHECK(in.numel() == out.numel(), "Cast: ", shape_str(in.shape), " -> ", shape_str(out.shape), " sizes differ");
  struct {
    uint64_t in, out;
    uint32_t n;
  } p{addr(in), addr(out), (uint32_t)in.numel()};
  const Pipeline& pl = rec.context().pipelines().get(in.dtype == DType::f32 ? "cast_f32_f16" : "cast_f16_f32");
  uint32_t gx, gy;
  grid_2d(div_up(p.n, 256), &gx, &gy);
  rec.dispatch(pl, &p, sizeof(p), gx, gy, 1, {in.mem}, {out.mem});
}

void gather_rows(CommandRecorder& rec, const TensorView& table, const TensorView& ids, const TensorView& out) {
  const char* t = storage_suffix(table.dtype, "Gather");
  check_same_dtype(table, out, "Gather");
  OGX_CHECK(ids.dtype == DType::i64, "Gather: indices must be int64, got ", dtype_name(ids.dtype));
  OGX_CHECK(table.shape.size() == 2, "Gather: table must be 2-D, got ", shape_str(table.shape));
  int64_t D = table.shape[1];
  OGX_CHECK(out.numel() == ids.numel() * D, "Gather: output ", shape_str(out.shape), " must hold ", ids.numel(),
            " rows of ", D);
  struct {
    uint64_t table, ids, out;
    uint32_t n, V, D;
  } p{addr(table), addr(ids), addr(out), (uint32_t)ids.numel(), (uint32_t)table.shape[0], (uint32_t)D};
  const Pipeline& pl = rec.context().pipelines().get(std::string("gather_") + t);
  rec.dispatch(pl, &p, sizeof(p), div_up(D, 256), (uint32_t)ids.numel(), 1, {table.mem, ids.mem}, {out.mem});
}

}  // namespace ogx::vk::kernels
