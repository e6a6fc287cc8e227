#include "providers/vulkan/kernels/elementwise.h"

#include "providers/vulkan/kernels/kernel_util.h"

namespace ogx::vk::kernels {

namespace {

const ElementwiseRow kRows[] = {
#include "elementwise_registry.inc"
};

constexpr int kMaxRank = 5;

struct ElementwisePush {
  uint64_t a, b, c, out;
  uint32_t n, rank;
  float pa, pb;
  uint32_t dims[kMaxRank], strides[3][kMaxRank];
};
static_assert(sizeof(ElementwisePush) == 128, "push constants are limited to 128 bytes");

const char* type_class(DType t) {
  switch (t) {
    case DType::f32: case DType::f16: return "float";
    case DType::i32: case DType::i64: return "int";
    case DType::boolean: return "bool";
    default: return nullptr;
  }
}

// Storage suffix of an elementwise shader variant.
const char* ew_storage(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::boolean: return "u8";
    default: throw_error("elementwise op: the Vulkan provider has no kernels for ", dtype_name(t), " tensors");
  }
}

// Strides (elements) of `in` read at positions of `out` (0 along broadcast axes), right-aligned to out's rank.
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  OGX_CHECK(in.size() <= out.size(), "elementwise op: input ", shape_str(in), " has a higher rank than the output ",
            shape_str(out));
  size_t r = out.size(), off = r - in.size();
  std::vector<int64_t> strides(r);
  int64_t stride = 1;
  for (size_t d = r; d-- > 0;) {
    int64_t dim = d >= off ? in[d - off] : 1;
    OGX_CHECK(dim == out[d] || dim == 1, "elementwise op: input ", shape_str(in), " does not broadcast to ",
              shape_str(out));
    strides[d] = dim == 1 ? 0 : stride;
    stride *= dim;
  }
  return strides;
}

}  // namespace

bool ElementwiseRow::allows(DType t) const {
  const char* c = type_class(t);
  if (!c) return false;
  std::string padded = " " + types + " ";
  return padded.find(" " + std::string(c) + " ") != std::string::npos;
}

const std::vector<ElementwiseRow>& elementwise_rows() {
  static const std::vector<ElementwiseRow> rows = [] {
    std::vector<ElementwiseRow> r(std::begin(kRows), std::end(kRows));
    for (size_t i = 0; i < r.size(); i++) r[i].code = (uint32_t)i;
    return r;
  }();
  return rows;
}

const ElementwiseRow& elementwise_row(const std::string& domain, const std::string& op_type) {
  for (const ElementwiseRow& r : elementwise_rows())
    if (r.domain == domain && r.op_type == op_type) return r;
  throw_error("no elementwise row for ", domain.empty() ? "" : domain + ".", op_type);
}

void elementwise(CommandRecorder& rec, const ElementwiseRow& row, const std::vector<const TensorView*>& ins,
                 const TensorView& out, float a, float b) {
  size_t want = row.kind == "unary" ? 1 : row.kind == "select" ? 3 : 2;
  OGX_CHECK(ins.size() == want, row.op_type, ": ", want, " input(s) expected, got ", ins.size());
  for (const TensorView* t : ins) OGX_CHECK(t, row.op_type, ": an input is missing");
  bool select = row.kind == "select", compare = row.kind == "compare";
  const TensorView& data = *ins[select ? 1 : 0];
  OGX_CHECK(row.allows(data.dtype), row.op_type, " does not take ", dtype_name(data.dtype), " tensors (", row.types,
            ")");
  for (size_t k = select ? 1 : 0; k < ins.size(); k++) check_same_dtype(*ins[k], data, row.op_type.c_str());
  if (select)
    OGX_CHECK(ins[0]->dtype == DType::boolean, row.op_type, ": the condition must be bool, got ",
              dtype_name(ins[0]->dtype));
  OGX_CHECK(out.dtype == (compare ? DType::boolean : data.dtype), row.op_type, ": output dtype ",
            dtype_name(out.dtype), " is wrong");
  if (data.dtype == DType::i64)
    OGX_CHECK(rec.context().info().features.int64, row.op_type, ": int64 tensors need shaderInt64, which ",
              rec.context().info().name, " lacks");
  for (const TensorView* t : ins) check_byte_storage(rec.context(), t->dtype, row.op_type.c_str());
  check_byte_storage(rec.context(), out.dtype, row.op_type.c_str());
  // Merge dims that every operand walks contiguously, and drop size-1 dims.
  std::vector<std::vector<int64_t>> st;
  for (const TensorView* t : ins) st.push_back(broadcast_strides(t->shape, out.shape));
  if (out.numel() == 0) return;
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> mst(ins.size());
  for (size_t d = 0; d < out.shape.size(); d++) {
    if (out.shape[d] == 1) continue;
    bool merge = !dims.empty();
    for (size_t k = 0; k < ins.size() && merge; k++) merge = mst[k].back() == st[k][d] * out.shape[d];
    if (merge) {
      dims.back() *= out.shape[d];
      for (size_t k = 0; k < ins.size(); k++) mst[k].back() = st[k][d];
    } else {
      dims.push_back(out.shape[d]);
      for (size_t k = 0; k < ins.size(); k++) mst[k].push_back(st[k][d]);
    }
  }
  OGX_CHECK(dims.size() <= (size_t)kMaxRank, row.op_type, ": output ", shape_str(out.shape), " has more than ",
            kMaxRank, " dims that do not merge");
  OGX_CHECK(out.numel() < (int64_t{1} << 32), row.op_type, ": ", out.numel(), " elements exceed 2^32");
  ElementwisePush p{};
  p.a = addr(*ins[0]);
  p.b = addr(*ins[ins.size() > 1 ? 1 : 0]);  // unary ops read a as b (unused)
  p.c = addr(*ins.back());
  p.out = addr(out);
  p.n = (uint32_t)out.numel();
  p.rank = (uint32_t)dims.size();
  p.pa = a;
  p.pb = b;
  for (size_t d = 0; d < dims.size(); d++) {
    p.dims[d] = (uint32_t)dims[d];
    for (size_t k = 0; k < 3; k++) p.strides[k][d] = (uint32_t)mst[std::min(k, ins.size() - 1)][d];
  }
  std::string name = std::string("elementwise_") + ew_storage(data.dtype) + (compare ? "_cmp" : select ? "_sel" : "");
  const Pipeline& pl = rec.context().pipelines().get(name, {row.code});
  uint32_t gx, gy;
  grid_2d(div_up(p.n, 256), &gx, &gy);
  std::vector<BufferSlice> reads;
  for (const TensorView* t : ins) reads.push_back(t->mem);
  rec.dispatch(pl, &p, sizeof(p), gx, gy, 1, reads, {out.mem});
}

void binary(CommandRecorder& rec, BinaryOp op, const TensorView& a, const TensorView& b, const TensorView& out) {
  static const char* names[] = {"Add", "Sub", "Mul", "Div"};
  elementwise(rec, elementwise_row("", names[(int)op]), {&a, &b}, out);
}

void unary(CommandRecorder& rec, UnaryOp op, const TensorView& a, const TensorView& out) {
  static const std::pair<const char*, const char*> names[] = {
      {"", "Sigmoid"}, {"", "Silu"}, {"", "Neg"}, {"", "Tanh"}, {"com.microsoft", "FastGelu"}};
  elementwise(rec, elementwise_row(names[(int)op].first, names[(int)op].second), {&a}, out);
}

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
  OGX_CHECK(in.dtype != out.dtype, "Cast: a same-type cast is a copy, not a kernel");
  OGX_CHECK(in.numel() == out.numel(), "Cast: ", shape_str(in.shape), " -> ", shape_str(out.shape), " sizes differ");
  if (in.dtype == DType::i64 || out.dtype == DType::i64)
    OGX_CHECK(rec.context().info().features.int64, "Cast: int64 tensors need shaderInt64, which ",
              rec.context().info().name, " lacks");
  check_byte_storage(rec.context(), in.dtype, "Cast");
  check_byte_storage(rec.context(), out.dtype, "Cast");
  std::string name = std::string("cast_") + ew_storage(in.dtype) + "_" + ew_storage(out.dtype);
  if (in.numel() == 0) return;
  OGX_CHECK(in.numel() < (int64_t{1} << 32), "Cast: ", in.numel(), " elements exceed 2^32");
  struct {
    uint64_t in, out;
    uint32_t n;
  } p{addr(in), addr(out), (uint32_t)in.numel()};
  const Pipeline& pl = rec.context().pipelines().get(name);
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

void gather_block_quantized(CommandRecorder& rec, const TensorView& data, const TensorView& scales,
                            const TensorView* zero_points, int64_t block_size, const TensorView& ids,
                            const TensorView& out) {
  const char* t = storage_suffix(scales.dtype, "GatherBlockQuantized");
  check_same_dtype(scales, out, "GatherBlockQuantized");
  OGX_CHECK(ids.dtype == DType::i64, "GatherBlockQuantized: indices must be int64, got ", dtype_name(ids.dtype));
  OGX_CHECK(data.dtype == DType::u8 && data.shape.size() == 2, "GatherBlockQuantized: data must be uint8 [V, K / 2]");
  const int64_t V = data.shape[0], K = data.shape[1] * 2;
  OGX_CHECK(block_size >= 2 && K % block_size == 0, "GatherBlockQuantized: ", K, " values a row in blocks of ",
            block_size);
  const int64_t nblocks = K / block_size, zp_row = (nblocks + 1) / 2;
  OGX_CHECK(scales.numel() == V * nblocks, "GatherBlockQuantized: scales must hold ", V * nblocks, " values");
  OGX_CHECK(!zero_points || (zero_points->dtype == DType::u8 && zero_points->numel() == V * zp_row),
            "GatherBlockQuantized: zero points must be uint8 [", V, ", ", zp_row, "]");
  OGX_CHECK(out.numel() == ids.numel() * K, "GatherBlockQuantized: output ", shape_str(out.shape), " must hold ",
            ids.numel(), " rows of ", K);
  struct {
    uint64_t data, scales, zp, ids, out;
    uint32_t n, V, K, block_size, nblocks, zp_row, has_zp;
  } p{addr(data), addr(scales), zero_points ? addr(*zero_points) : addr(data), addr(ids), addr(out),
      (uint32_t)ids.numel(), (uint32_t)V, (uint32_t)K, (uint32_t)block_size, (uint32_t)nblocks, (uint32_t)zp_row,
      zero_points ? 1u : 0u};
  std::vector<BufferSlice> reads{data.mem, scales.mem, ids.mem};
  if (zero_points) reads.push_back(zero_points->mem);
  const Pipeline& pl = rec.context().pipelines().get(std::string("gather_q4_") + t);
  rec.dispatch(pl, &p, sizeof(p), div_up(K, 256), (uint32_t)ids.numel(), 1, reads, {out.mem});
}

}  // namespace ogx::vk::kernels
