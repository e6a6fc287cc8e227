// Weight-bound ops: MatMul, MatMulNBits, Gather (embedding rows, and any other Gather), GatherBlockQuantized
// (dequantized at load).
#include "common/mapped_file.h"
#include "providers/vulkan/graph/device_op.h"
#include "providers/vulkan/graph/linear_core.h"
#include "providers/vulkan/graph/host_eval.h"
#include "providers/vulkan/kernels/elementwise.h"
#include "providers/vulkan/kernels/layout.h"
#include "providers/vulkan/kernels/matmul.h"
#include "providers/vulkan/kernels/matmul_coop.h"
#include "providers/vulkan/transfer.h"

namespace ogx::vk::graph {
namespace {

Shape with_last(Shape s, int64_t last) {
  s.back() = last;
  return s;
}

// MatMul with a constant B [K, N] (uploaded transposed for the matvec/matmul kernels), or two device tensors.
class MatMulOp : public DeviceOp {
 public:
  explicit MatMulOp(OpBuildContext& b) : node_(b.node) {
    if (auto parts = b.weight_parts ? b.weight_parts(1) : std::vector<kernels::WeightColumns>{}; !parts.empty()) {
      int64_t N = 0;
      for (auto& p : parts) N += p.w->dim(1);
      weight_ = kernels::upload_matmul_weight_parts(b.ctx, b.graph.values[node_.inputs[1]].name, parts, N);
      has_weight_ = true;
    } else if (const Tensor* w = b.constant(1)) {
      OGX_CHECK(w->rank() == 2, node_.describe(), ": constant B must be 2-D, got ", shape_str(w->shape()));
      weight_ = b.matmul_weight ? b.matmul_weight(1)
                                : kernels::upload_matmul_weight(b.ctx, b.graph.values[node_.inputs[1]].name, *w);
      has_weight_ = true;
    }
  }
  bool prepares_input(int i) const override { return i == 1 && has_weight_; }
  void infer(const OpArgs& a) override {
    OGX_CHECK(node_.inputs.size() <= 2 || has_weight_, node_.describe(), ": a bias needs a constant B");
    const TensorView& x = need_in(a, 0, node_);
    OGX_CHECK(x.shape.size() >= 2, node_.describe(), ": A must be at least 2-D, got ", shape_str(x.shape));
    TensorView& y = need_out(a, 0, node_);
    y.dtype = x.dtype;
    if (has_weight_) {
      OGX_CHECK(x.shape.back() == weight_.K, node_.describe(), ": A ", shape_str(x.shape), " does not match B [",
                weight_.K, ", ", weight_.N, "]");
      y.shape = with_last(x.shape, weight_.N);
      return;
    }
    const TensorView& w = need_in(a, 1, node_);
    OGX_CHECK(w.shape.size() >= 2 && w.shape[w.shape.size() - 2] == x.shape.back(), node_.describe(), ": A ",
              shape_str(x.shape), " and B ", shape_str(w.shape), " do not multiply");
    y.shape = with_last(x.shape, w.shape.back());
  }
  void record(CommandRecorder& rec, const OpArgs& a, StepScratch&) override {
    // Input 5: a bias [N] (only the packed q/k/v projection fusion.h makes has one; ONNX MatMul has two inputs).
    const TensorView* bias = a.in.size() > 5 ? a.in[5] : nullptr;
    if (has_weight_) kernels::matmul(rec, *a.in[0], weight_, bias, *a.out[0]);
    else kernels::matmul_batched(rec, *a.in[0], *a.in[1], *a.out[0]);
  }

 private:
  const Node& node_;
  kernels::MatMulWeight weight_;
  bool has_weight_ = false;
};

// com.microsoft MatMulNBits, 4-bit, constant B/scales/zero points; dequantized inside the kernels.
class MatMulNBitsOp : public DeviceOp {
 public:
  explicit MatMulNBitsOp(OpBuildContext& b) : node_(b.node), core_(b, true, 1) {}
  bool prepares_input(int i) const override { return core_.prepares(i); }
  void infer(const OpArgs& a) override { infer_projection(a, node_, core_.K(), core_.N()); }
  void record(CommandRecorder& rec, const OpArgs& a, StepScratch& scratch) override {
    int bi = core_.bias_input();
    core_.record(rec, *a.in[0], bi >= 0 ? a.in[bi] : nullptr, *a.out[0], scratch);
  }

 private:
  const Node& node_;
  LinearCore core_;
};

// ogx.GateUpSiLU (fusion.h): x [.., K] -> silu(x Wg) * (x Wu) [.., I] with the gate/up weight rows interleaved
// (N = 2I). Decode: one matvec with the SiLU·Mul epilogue; prompts: the projection, then SiLU·Mul of the pairs.
class GateUpSiluOp : public DeviceOp {
 public:
  explicit GateUpSiluOp(OpBuildContext& b)
      : node_(b.node), core_(b, b.node.attr_string("linear", "MatMul") == "MatMulNBits", 1) {}
  bool prepares_input(int i) const override { return core_.prepares(i); }
  void infer(const OpArgs& a) override { infer_projection(a, node_, core_.K(), core_.N() / 2); }
  void record(CommandRecorder& rec, const OpArgs& a, StepScratch& scratch) override {
    record_gate_up_silu(rec, core_, *a.in[0], *a.out[0], scratch);
  }

 private:
  const Node& node_;
  LinearCore core_;
};

// ai.onnx Gather: embedding lookups (a 2-D float table, axis 0) take the row kernel; any other rank, axis or
// dtype the general one. ids that the host supplies each step arrive as int64.
class GatherOp : public DeviceOp {
 public:
  explicit GatherOp(OpBuildContext& b) : node_(b.node) {
    if (node_.attr_int("axis", 0) == 0)
      if (b.constant_shape) {
        if (auto table = b.constant_shape(0); table && !table->empty()) rows_ = (*table)[0];
      } else if (const Tensor* table = b.constant(0); table && table->rank() >= 1) {
        rows_ = table->dim(0);
      }
  }
  DType step_input_dtype(int i, DType given) const override { return i == 1 ? DType::i64 : given; }
  // Host ids outside [-rows, rows) are refused with the CPU kernel's message (the shader would embed zeros).
  void check_step_input(int i, const Tensor& ids) const override {
    if (i != 1 || rows_ < 0) return;
    for (int64_t j = 0; j < ids.numel(); j++) {
      const int64_t id = ids.get_i64(j);
      OGX_CHECK(id >= -rows_ && id < rows_, node_.describe(), ": index ", id, " out of range [", -rows_, ", ", rows_,
                ")");
    }
  }
  void infer(const OpArgs& a) override {
    const TensorView& data = need_in(a, 0, node_);
    const TensorView& ids = need_in(a, 1, node_);
    OGX_CHECK(ids.dtype == DType::i64 || ids.dtype == DType::i32, node_.describe(), ": indices must be int64 or int32");
    int64_t r = (int64_t)data.shape.size(), axis = node_.attr_int("axis", 0);
    OGX_CHECK(axis >= -r && axis < r, node_.describe(), ": axis ", axis, " is out of range for ",
              shape_str(data.shape));
    axis_ = axis < 0 ? axis + r : axis;
    TensorView& y = need_out(a, 0, node_);
    y.dtype = data.dtype;
    y.shape.assign(data.shape.begin(), data.shape.begin() + axis_);
    y.shape.insert(y.shape.end(), ids.shape.begin(), ids.shape.end());
    y.shape.insert(y.shape.end(), data.shape.begin() + axis_ + 1, data.shape.end());
  }
  void record(CommandRecorder& rec, const OpArgs& a, StepScratch&) override {
    const TensorView& data = *a.in[0];
    bool rows = axis_ == 0 && data.shape.size() == 2 && a.in[1]->dtype == DType::i64 &&
                (data.dtype == DType::f32 || data.dtype == DType::f16);
    if (rows) kernels::gather_rows(rec, data, *a.in[1], *a.out[0]);
    else kernels::gather_axis(rec, data, *a.in[1], axis_, *a.out[0]);
  }

 private:
  const Node& node_;
  int64_t axis_ = 0;
  int64_t rows_ = -1;  // the constant table's rows along axis 0 (host ids are checked against it), -1: unknown
};

// com.microsoft GatherBlockQuantized over a constant table: the CPU kernel dequantizes every row once at load
// (exactly the values it would gather), then rows are gathered on the device. Costs device memory at the scales'
// precision instead of 4 bits; the host holds one chunk of kRowsPerChunk rows at a time (a tied int4 table of the
// 8B shape, 128k x 4096, is 1 GB in fp16: materialized whole, it was most of a load's peak host memory).
class GatherBlockQuantizedOp : public DeviceOp {
  static constexpr int64_t kRowsPerChunk = 4096;  // rows dequantized on the host at a time (16 MB of a 1B's table)

 public:
  // 4-bit values a row along the last axis with float16 / float32 scales: the table stays quantized on the device
  // (views of the session's uploads of data, scales and zero points) and rows are dequantized as they are gathered
  // (a 1B's tied 128k x 2048 table: 131 MB instead of 525 MB in fp16, and no host dequantization at load).
  bool quantized_on_device(OpBuildContext& b, const Tensor& data) {
    const Tensor* scales = b.constant(2);
    const bool zp_input = node_.inputs.size() > 3 && node_.inputs[3] >= 0;
    const Tensor* zp = zp_input ? b.constant(3) : nullptr;
    const int64_t rank = data.rank(), block = node_.attr_int("block_size", 128);
    int64_t qaxis = node_.attr_int("quantize_axis", 1);
    if (qaxis < 0) qaxis += rank;
    if (!b.device_constant || node_.attr_int("bits", 4) != 4 || data.dtype() != DType::u8 || rank < 2 ||
        qaxis != rank - 1 || (scales->dtype() != DType::f16 && scales->dtype() != DType::f32) || block < 16 ||
        (block & (block - 1)) != 0 || (zp_input && (!zp || zp->dtype() != DType::u8)))
      return false;
    const int64_t rows = data.dim(0), K = data.numel() / std::max<int64_t>(rows, 1) * 2, qdim = data.dim(-1) * 2;
    if (rows == 0 || qdim % block != 0 || K % qdim != 0) return false;  // (whole blocks along every quantized row)
    const int64_t nblocks = K / block;
    if (scales->numel() != rows * nblocks || (zp && zp->numel() != rows * (K / qdim) * ((qdim / block + 1) / 2)))
      return false;
    if (zp && (qdim / block) % 2 != 0 && K != qdim) return false;  // (packed zero points per quantized row)
    q4_data_ = b.device_constant(0);
    q4_data_.shape = {rows, K / 2};
    q4_scales_ = b.device_constant(2);
    q4_scales_.shape = {rows, nblocks};
    if (zp) {
      q4_zp_ = b.device_constant(3);
      q4_zp_.shape = {rows, (nblocks + 1) / 2};
      q4_has_zp_ = true;
    }
    q4_block_ = block;
    q4_ = true;
    Shape row(data.shape().begin() + 1, data.shape().end());
    row.back() *= 2;
    row_shape_ = row;
    table_ = TensorView{{}, scales->dtype(), {rows, K}};  // (the output's row width and dtype)
    return true;
  }

  explicit GatherBlockQuantizedOp(OpBuildContext& b) : node_(b.node) {
    OGX_CHECK(node_.attr_int("gather_axis", 0) == 0, node_.describe(), ": only gather_axis 0 is supported");
    const Tensor* data = b.constant(0);
    OGX_CHECK(data && b.constant(2), node_.describe(), ": data and scales must be constants");
    if (quantized_on_device(b, *data)) return;
    int64_t rows = data->dim(0);
    Graph g;
    g.values = b.graph.values;
    g.value_index = b.graph.value_index;
    Node n = node_;
    for (size_t k = 0; k < n.inputs.size(); k++)  // constants folded at load (e.g. a reshaped initializer)
      if (const Tensor* t = n.inputs[k] >= 0 ? b.constant((int)k) : nullptr) {
        g.values[n.inputs[k]].is_constant = true;
        g.values[n.inputs[k]].constant = *t;
      }
    int ids = g.add_value("__ogx_all_rows");
    n.inputs[1] = ids;
    ValueInfo in{"__ogx_all_rows", DType::i64, {}, false};
    g.inputs.push_back(in);
    g.input_ids.push_back(ids);
    g.nodes.push_back(n);
    std::vector<int> node_ids{0};
    HostSubgraph host(g, node_ids, {n.outputs[0]}, {}, {}, 0);  // all cores: a 128k-row table took 3.6 s on one
    for (int64_t r0 = 0; r0 < rows; r0 += kRowsPerChunk) {
      const int64_t count = std::min(kRowsPerChunk, rows - r0);
      Tensor ids(DType::i64, {count});
      for (int64_t r = 0; r < count; r++) ids.data<int64_t>()[r] = r0 + r;
      Tensor part = host.run({{"__ogx_all_rows", ids}})[0];
      OGX_CHECK(part.rank() >= 2 && part.dim(0) == count, node_.describe(), ": unexpected dequantized rows ",
                shape_str(part.shape()));
      if (r0 == 0) {
        row_shape_.assign(part.shape().begin() + 1, part.shape().end());
        const int64_t row_elems = part.numel() / count;
        buf_ = b.ctx.memory().allocate(b.graph.values[node_.inputs[0]].name + " (dequantized)",
                                       (VkDeviceSize)(rows * row_elems) * dtype_size(part.dtype()));
        table_ = buf_.view(part.dtype(), {rows, row_elems});
      }
      OGX_CHECK(part.dtype() == table_.dtype && part.numel() == count * table_.shape[1], node_.describe(),
                ": dequantized rows of another type or size");
      const VkDeviceSize row_bytes = (VkDeviceSize)table_.shape[1] * dtype_size(table_.dtype);
      b.ctx.transfers().upload(table_.mem, (VkDeviceSize)r0 * row_bytes, part.raw(), part.bytes());
    }
    // The quantized table's file pages: the device holds its rows now.
    MappedFile::release_if_mapped(data->raw(), data->bytes());
    MappedFile::release_if_mapped(b.constant(2)->raw(), b.constant(2)->bytes());
  }
  bool prepares_input(int i) const override { return i != 1; }
  DType step_input_dtype(int i, DType given) const override { return i == 1 ? DType::i64 : given; }
  void infer(const OpArgs& a) override {
    const TensorView& ids = need_in(a, 1, node_);
    TensorView& y = need_out(a, 0, node_);
    y.dtype = table_.dtype;
    y.shape = ids.shape;
    y.shape.insert(y.shape.end(), row_shape_.begin(), row_shape_.end());
  }
  void record(CommandRecorder& rec, const OpArgs& a, StepScratch&) override {
    TensorView flat = *a.out[0];
    flat.shape = a.in[1]->shape;
    flat.shape.push_back(table_.shape[1]);
    if (q4_) kernels::gather_block_quantized(rec, q4_data_, q4_scales_, q4_has_zp_ ? &q4_zp_ : nullptr, q4_block_,
                                             *a.in[1], flat);
    else kernels::gather_rows(rec, table_, *a.in[1], flat);
  }

 private:
  const Node& node_;
  DeviceBuffer buf_;
  TensorView table_;  // [rows, D] of the scales' dtype (q4_: only its shape and dtype)
  bool q4_ = false, q4_has_zp_ = false;  // quantized_on_device
  TensorView q4_data_, q4_scales_, q4_zp_;
  int64_t q4_block_ = 0;
  Shape row_shape_;   // the CPU kernel's shape of one gathered row (D, or e.g. [blocks, block])
};

}  // namespace

LinearCore::LinearCore(OpBuildContext& b, bool nbits, int b0) : nbits_(nbits), b0_(b0) {
  const Node& n = b.node;
  auto input = [&](int k) { return k < (int)n.inputs.size() ? n.inputs[k] : -1; };
  has_bias_ = input(b0 + 4) >= 0;  // MatMulNBits' bias; a MatMul's only from the packed q/k/v fusion (fusion.h)
  if (!nbits && b.weight_parts) {
    if (auto parts = b.weight_parts(b0); !parts.empty()) {  // a fused weight, placed from its parts on the device
      int64_t N = 0;
      for (auto& p : parts) N += p.w->dim(1);
      w_ = kernels::upload_matmul_weight_parts(b.ctx, b.graph.values[input(b0)].name, parts, N);
      return;
    }
  }
  const Tensor* w = b.constant(b0);
  OGX_CHECK(w, n.describe(), ": the weight must be a constant (initializer)");
  std::string name = b.graph.values[input(b0)].name;
  if (!nbits) {
    OGX_CHECK(w->rank() == 2, n.describe(), ": constant B must be 2-D, got ", shape_str(w->shape()));
    w_ = b.matmul_weight ? b.matmul_weight(b0) : kernels::upload_matmul_weight(b.ctx, name, *w);
    return;
  }
  int64_t bits = n.attr_int("bits", 4);
  OGX_CHECK(bits == 4, n.describe(), ": only bits=4 runs on the Vulkan provider, got ", bits);
  const Tensor* scales = b.constant(b0 + 1);
  OGX_CHECK(scales, n.describe(), ": scales must be a constant (initializer)");
  const Tensor* zp = nullptr;
  if (input(b0 + 2) >= 0) {
    zp = b.constant(b0 + 2);
    OGX_CHECK(zp, n.describe(), ": zero_points must be a constant");
  }
  OGX_CHECK(input(b0 + 3) < 0, n.describe(), ": g_idx is not supported");
  // accuracy_level 4 with integer (or no) zero points: ONNX Runtime's CPU quantizes A to int8 per block; doing
  // the same keeps int4 models exported for the CPU on the CPU's tokens.
  int8_ = n.attr_int("accuracy_level", 0) == 4 && (!zp || zp->dtype() == DType::u8);
  // The session's uploads (device_constant): shared with other nodes reading them, such as a tied int4 table's
  // GatherBlockQuantized.
  std::function<TensorView(int)> uploaded;
  if (b.device_constant) uploaded = [&](int i) { return b.device_constant(b0 + i); };
  w_ = kernels::upload_matmul_nbits(b.ctx, name, *w, *scales, zp, n.attr_int("K", 0), n.attr_int("N", 0),
                                    n.attr_int("block_size", 0), uploaded);
}

void LinearCore::record(CommandRecorder& rec, const TensorView& x, const TensorView* bias, const TensorView& y,
                        StepScratch& scratch) const {
  if (int8_activations(x.dtype)) {
    TensorView xq = x;
    xq.mem = scratch.buffer(rec.context(), "int8 activations", std::max<VkDeviceSize>(x.mem.size, 256))
                 .slice()
                 .sub(0, x.mem.size);
    kernels::quantize_int8_blocks(rec, x, w_.block_size, xq);
    kernels::matmul(rec, xq, w_, bias, y);
    return;
  }
  kernels::matmul(rec, x, w_, bias, y);
}

TensorView& infer_projection(const OpArgs& a, const Node& n, int64_t K, int64_t N) {
  const TensorView& x = need_in(a, 0, n);
  OGX_CHECK(!x.shape.empty() && x.shape.back() == K, n.describe(), ": input ", shape_str(x.shape),
            " must end in K = ", K);
  TensorView& y = need_out(a, 0, n);
  y.dtype = x.dtype;
  y.shape = with_last(x.shape, N);
  return y;
}

void record_gate_up_silu(CommandRecorder& rec, const LinearCore& core, const TensorView& x, const TensorView& y,
                         StepScratch& scratch) {
  int64_t rows = x.numel() / core.K();
  const bool fused = kernels::matvec_fused_applies(rec.context(), rows, true) ||  // <= 16 rows, or up to 64 on
                     kernels::matvec_coop_applies(rec.context(), x, core.weight(), rows);  // the matrix units
  if (fused && !core.int8_activations(x.dtype)) {
    kernels::matvec_gate_up_silu(rec, x, core.weight(), y);
    return;
  }
  TensorView gu{{}, x.dtype, with_last(x.shape, core.N())};
  VkDeviceSize bytes = (VkDeviceSize)gu.numel() * dtype_size(gu.dtype);
  gu.mem = scratch.buffer(rec.context(), "gate_up", std::max<VkDeviceSize>(bytes, 256)).slice().sub(0, bytes);
  core.record(rec, x, nullptr, gu, scratch);
  kernels::silu_mul_interleaved(rec, gu, y);
}

namespace {

template <typename T>
OpFactory make() {
  return [](OpBuildContext& b) { return std::make_unique<T>(b); };
}

}  // namespace

void register_linear_ops(std::map<std::pair<std::string, std::string>, OpFactory>& t) {
  t[{"", "MatMul"}] = make<MatMulOp>();
  t[{"com.microsoft", "MatMulNBits"}] = make<MatMulNBitsOp>();
  t[{"ogx", "GateUpSiLU"}] = make<GateUpSiluOp>();
  t[{"", "Gather"}] = make<GatherOp>();
  t[{"com.microsoft", "GatherBlockQuantized"}] = make<GatherBlockQuantizedOp>();
}

}  // namespace ogx::vk::graph
