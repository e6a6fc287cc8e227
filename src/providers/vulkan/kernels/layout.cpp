#include "providers/vulkan/kernels/layout.h"

#include "providers/vulkan/kernels/kernel_util.h"

namespace ogx::vk::kernels {

namespace {

constexpr size_t kCopyRank = 5;

std::string elem_suffix(DType t, const char* what) {
  size_t es = dtype_size(t);
  OGX_CHECK(es == 1 || es == 2 || es == 4 || es == 8, what, ": no Vulkan kernel for ", dtype_name(t), " elements");
  return "_b" + std::to_string(es);
}

void dispatch_1d(CommandRecorder& rec, const Pipeline& pl, const void* push, uint32_t bytes, uint64_t n,
                 const std::vector<BufferSlice>& reads, const std::vector<BufferSlice>& writes) {
  OGX_CHECK(n < (1ull << 32), "a kernel over ", n, " elements exceeds 2^32");
  uint32_t gx, gy;
  grid_2d(div_up((uint32_t)n, 256), &gx, &gy);
  rec.dispatch(pl, push, bytes, gx, gy, 1, reads, writes);
}

}  // namespace

std::vector<int64_t> contiguous_strides(const Shape& s) {
  std::vector<int64_t> st(s.size());
  int64_t stride = 1;
  for (size_t d = s.size(); d-- > 0;) {
    st[d] = stride;
    stride *= s[d];
  }
  return st;
}

void copy_strided(CommandRecorder& rec, const TensorView& src, const TensorView& dst, const CopyPlan& plan) {
  OGX_CHECK(src.dtype == dst.dtype || dtype_size(src.dtype) == dtype_size(dst.dtype), "copy: element sizes differ");
  std::string suffix = elem_suffix(dst.dtype, "copy");
  check_byte_storage(rec.context(), dst.dtype, "copy");
  bool pad = plan.mode != PadMode::none;
  size_t r = plan.dims.size();
  std::vector<int64_t> dst_strides = plan.dst_strides.empty() || pad ? contiguous_strides(plan.dims) : plan.dst_strides;
  OGX_CHECK(plan.src_strides.size() == r && dst_strides.size() == r && (!pad || (plan.begin.size() == r &&
            plan.src_dims.size() == r)), "copy: plan ranks differ");
  int64_t n = shape_numel(plan.dims);
  if (n == 0) return;
  // Merge dims (mode none: where both sides are contiguous across them); drop size-1 dims.
  std::vector<int64_t> dims, ss, aux, sd;
  for (size_t d = 0; d < r; d++) {
    if (plan.dims[d] == 1 && !pad) continue;
    if (!pad && !dims.empty() && ss.back() == plan.src_strides[d] * plan.dims[d] &&
        aux.back() == dst_strides[d] * plan.dims[d]) {
      dims.back() *= plan.dims[d];
      ss.back() = plan.src_strides[d];
      aux.back() = dst_strides[d];
      continue;
    }
    dims.push_back(plan.dims[d]);
    ss.push_back(plan.src_strides[d]);
    aux.push_back(pad ? plan.begin[d] : dst_strides[d]);
    sd.push_back(pad ? plan.src_dims[d] : 0);
  }
  OGX_CHECK(dims.size() <= kCopyRank, "copy: ", shape_str(plan.dims), " has more than ", kCopyRank,
            " dims that do not merge");
  struct {
    uint64_t src, dst;
    uint32_t n, rank, mode, pad_lo, pad_hi;
    uint32_t dims[kCopyRank];
    int32_t src_stride[kCopyRank], aux[kCopyRank], src_dims[kCopyRank];
  } p{};
  size_t es = dtype_size(dst.dtype);
  p.src = addr(src) + (uint64_t)plan.src_offset * es;
  p.dst = addr(dst) + (uint64_t)plan.dst_offset * es;
  p.n = (uint32_t)n;
  p.rank = (uint32_t)dims.size();
  p.mode = (uint32_t)plan.mode;
  p.pad_lo = (uint32_t)plan.pad_bits;
  p.pad_hi = (uint32_t)(plan.pad_bits >> 32);
  for (size_t d = 0; d < dims.size(); d++) {
    p.dims[d] = (uint32_t)dims[d];
    p.src_stride[d] = (int32_t)ss[d];
    p.aux[d] = (int32_t)aux[d];
    p.src_dims[d] = (int32_t)sd[d];
  }
  dispatch_1d(rec, rec.context().pipelines().get("copy" + suffix), &p, sizeof(p), (uint64_t)n, {src.mem}, {dst.mem});
}

void gather_axis(CommandRecorder& rec, const TensorView& data, const TensorView& idx, int64_t axis,
                 const TensorView& out) {
  OGX_CHECK(idx.dtype == DType::i64 || idx.dtype == DType::i32, "Gather: indices must be int64 or int32, got ",
            dtype_name(idx.dtype));
  check_same_dtype(data, out, "Gather");
  OGX_CHECK(axis >= 0 && axis < (int64_t)data.shape.size(), "Gather: axis ", axis, " out of range");
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; d++) outer *= data.shape[d];
  for (size_t d = axis + 1; d < data.shape.size(); d++) inner *= data.shape[d];
  OGX_CHECK(out.numel() == outer * idx.numel() * inner, "Gather: output ", shape_str(out.shape), " does not fit");
  if (out.numel() == 0) return;
  struct {
    uint64_t data, idx, out;
    uint32_t n, J, axis_len, inner;
  } p{addr(data), addr(idx), addr(out), (uint32_t)out.numel(), (uint32_t)idx.numel(), (uint32_t)data.shape[axis],
      (uint32_t)inner};
  check_byte_storage(rec.context(), data.dtype, "Gather");
  std::string name = "gather_axis" + elem_suffix(data.dtype, "Gather") + (idx.dtype == DType::i32 ? "_i32" : "");
  dispatch_1d(rec, rec.context().pipelines().get(name), &p, sizeof(p), (uint64_t)out.numel(), {data.mem, idx.mem},
              {out.mem});
}

namespace {
// The dims / strides of data's indexed axes [first, first + k).
void indexed_axes(const Shape& data, int64_t first, int64_t k, uint32_t* dims, uint32_t* strides) {
  std::vector<int64_t> st = contiguous_strides(data);
  for (int64_t q = 0; q < k; q++) {
    dims[q] = (uint32_t)data[first + q];
    strides[q] = (uint32_t)st[first + q];
  }
}
}  // namespace

void gather_nd(CommandRecorder& rec, const TensorView& data, const TensorView& idx, int64_t batch_dims,
               const TensorView& out) {
  OGX_CHECK(idx.dtype == DType::i64, "GatherND: indices must be int64");
  check_same_dtype(data, out, "GatherND");
  check_byte_storage(rec.context(), data.dtype, "GatherND");
  int64_t k = idx.shape.back(), b = batch_dims;
  OGX_CHECK(k >= 1 && k <= 6 && b + k <= (int64_t)data.shape.size(), "GatherND: index tuples of ", k,
            " do not fit data ", shape_str(data.shape));
  int64_t batches = 1, inner = 1;
  for (int64_t d = 0; d < b; d++) batches *= data.shape[d];
  for (size_t d = b + k; d < data.shape.size(); d++) inner *= data.shape[d];
  int64_t tuples = idx.numel() / k;
  OGX_CHECK(out.numel() == tuples * inner, "GatherND: output ", shape_str(out.shape), " does not fit");
  if (out.numel() == 0) return;
  struct {
    uint64_t data, idx, out;
    uint32_t n, J, k, inner, batch_stride;
    uint32_t dims[6], strides[6];
  } p{};
  p.data = addr(data), p.idx = addr(idx), p.out = addr(out);
  p.n = (uint32_t)out.numel();
  p.J = (uint32_t)(tuples / std::max<int64_t>(batches, 1));
  p.k = (uint32_t)k;
  p.inner = (uint32_t)inner;
  p.batch_stride = (uint32_t)(data.numel() / std::max<int64_t>(batches, 1));
  indexed_axes(data.shape, b, k, p.dims, p.strides);
  dispatch_1d(rec, rec.context().pipelines().get("gather_nd" + elem_suffix(data.dtype, "GatherND")), &p, sizeof(p),
              (uint64_t)out.numel(), {data.mem, idx.mem}, {out.mem});
}

void scatter_nd(CommandRecorder& rec, const TensorView& data, const TensorView& idx, const TensorView& updates,
                int reduction, const TensorView& out) {
  OGX_CHECK(idx.dtype == DType::i64, "ScatterND: indices must be int64");
  check_same_dtype(data, out, "ScatterND");
  check_same_dtype(data, updates, "ScatterND updates");
  const char* t = data.dtype == DType::f32 ? "f32" : data.dtype == DType::f16 ? "f16" : data.dtype == DType::i32 ? "i32"
                  : data.dtype == DType::i64 ? "i64" : data.dtype == DType::boolean ? "u8" : nullptr;
  OGX_CHECK(t, "ScatterND: no Vulkan kernel for ", dtype_name(data.dtype));
  check_byte_storage(rec.context(), data.dtype, "ScatterND");
  OGX_CHECK(reduction == 0 || data.dtype != DType::boolean, "ScatterND: reductions over bool are not defined");
  if (data.dtype == DType::i64)
    OGX_CHECK(rec.context().info().features.int64, "ScatterND: int64 tensors need shaderInt64");
  int64_t k = idx.shape.back();
  OGX_CHECK(k >= 1 && k <= 6 && k <= (int64_t)data.shape.size(), "ScatterND: index tuples of ", k,
            " do not fit data ", shape_str(data.shape));
  int64_t inner = 1;
  for (size_t d = k; d < data.shape.size(); d++) inner *= data.shape[d];
  int64_t tuples = idx.numel() / k;
  OGX_CHECK(updates.numel() == tuples * inner, "ScatterND: updates ", shape_str(updates.shape), " do not fit");
  if (data.numel() == 0) return;
  VkDeviceSize bytes = (VkDeviceSize)data.numel() * dtype_size(data.dtype);
  rec.copy(data.mem.sub(0, bytes), out.mem.sub(0, bytes));
  if (tuples == 0 || inner == 0) return;
  struct {
    uint64_t out, idx, upd;
    uint32_t T, k, inner;
    uint32_t dims[6], strides[6];
  } p{};
  p.out = addr(out), p.idx = addr(idx), p.upd = addr(updates);
  p.T = (uint32_t)tuples, p.k = (uint32_t)k, p.inner = (uint32_t)inner;
  indexed_axes(data.shape, 0, k, p.dims, p.strides);
  const Pipeline& pl = rec.context().pipelines().get(std::string("scatter_nd_") + t, {(uint32_t)reduction});
  dispatch_1d(rec, pl, &p, sizeof(p), (uint64_t)(reduction ? inner : tuples * inner), {idx.mem, updates.mem, out.mem},
              {out.mem});
}

void softmax(CommandRecorder& rec, const TensorView& x, int64_t axis, bool log_softmax, const TensorView& y) {
  const char* t = storage_suffix(x.dtype, "Softmax");
  check_same_dtype(x, y, "Softmax");
  OGX_CHECK(axis >= 0 && axis < (int64_t)x.shape.size(), "Softmax: axis ", axis, " out of range");
  int64_t n = x.shape[axis], inner = 1;
  for (size_t d = axis + 1; d < x.shape.size(); d++) inner *= x.shape[d];
  if (x.numel() == 0) return;
  struct {
    uint64_t x, y;
    uint32_t rows, n, inner;
  } p{addr(x), addr(y), (uint32_t)(x.numel() / n), (uint32_t)n, (uint32_t)inner};
  uint32_t gx, gy;
  grid_2d(p.rows, &gx, &gy);
  rec.dispatch(rec.context().pipelines().get(std::string("softmax_") + t, {log_softmax ? 1u : 0u}), &p, sizeof(p), gx,
               gy, 1, {x.mem}, {y.mem});
}

void last_rows(CommandRecorder& rec, const TensorView& x, const TensorView& seqlens_k,
               const TensorView& total_sequence_length, const TensorView& y) {
  const char* t = storage_suffix(x.dtype, "last rows");
  OGX_CHECK(x.shape.size() == 3 && y.dtype == x.dtype && y.numel() == x.shape[0] * x.shape[2], "last rows: x ",
            shape_str(x.shape), " -> y ", shape_str(y.shape), " (", dtype_name(y.dtype), ") must be [B, S, D] -> [B, 1, D]");
  OGX_CHECK(seqlens_k.dtype == DType::i32 && seqlens_k.numel() == x.shape[0] &&
                total_sequence_length.dtype == DType::i32 && total_sequence_length.numel() == 1,
            "last rows: seqlens_k must be int32 [", x.shape[0], "] and total_sequence_length int32 [1]");
  struct {
    uint64_t x, seqlens, total, y;
    uint32_t B, S, D;
  } p{addr(x), addr(seqlens_k), addr(total_sequence_length), addr(y), (uint32_t)x.shape[0], (uint32_t)x.shape[1],
      (uint32_t)x.shape[2]};
  const Pipeline& pl = rec.context().pipelines().get(std::string("last_rows_") + t);
  rec.dispatch(pl, &p, sizeof(p), div_up((uint32_t)p.D, 256), p.B, 1,
               {x.mem, seqlens_k.mem, total_sequence_length.mem}, {y.mem});
}

}  // namespace ogx::vk::kernels
