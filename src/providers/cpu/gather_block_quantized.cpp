// com.microsoft GatherBlockQuantized (ONNX Runtime contrib semantics) for uint8 data packing 8/bits values per byte
// (low bits first): gathers rows of `data` along gather_axis (must be 0) and dequantizes them blockwise along the
// last axis as float(q - zp) * scale, in the scales' type. Zero points are uint8, packed like the data; absent ones
// default to 2^(bits-1) (8 for 4 bits). Unlike ONNX Runtime (which writes zeros), an out-of-range index is an
// error naming the node. ORT's attribute defaults: gather_axis 0, quantize_axis 1, block_size 128, bits 4.
#include <algorithm>
#include <cstring>
#include <vector>

#include "common/half.h"
#include "providers/cpu/cpu_ops.h"

namespace ogx::cpu {

namespace {

int64_t norm_axis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

class GatherBlockQuantizedKernel : public Kernel {
 public:
  explicit GatherBlockQuantizedKernel(const KernelInfo& info) : node_(info.node) {
    const Node& n = info.node;
    gather_axis_ = n.attr_int("gather_axis", 0);
    quantize_axis_ = n.attr_int("quantize_axis", 1);
    block_size_ = n.attr_int("block_size", 128);
    bits_ = n.attr_int("bits", 4);
    OGX_CHECK(block_size_ >= 16 && (block_size_ & (block_size_ - 1)) == 0, n.describe(),
              ": block_size must be a power of 2 and not less than 16, got ", block_size_);
    OGX_CHECK(bits_ == 2 || bits_ == 4 || bits_ == 8, n.describe(), ": bits must be 2, 4 or 8 for uint8 data, got ",
              bits_);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& data = ctx.input(0);
    const Tensor& indices = ctx.input(1);
    const Tensor& scales = ctx.input(2);
    const Tensor* zp = ctx.input_or_null(3);
    const std::string who = node_.describe();
    OGX_CHECK(data.dtype() == DType::u8, who, ": data must be uint8 (packed), got ", dtype_name(data.dtype()));
    OGX_CHECK(indices.dtype() == DType::i32 || indices.dtype() == DType::i64, who,
              ": indices must be int32 or int64, got ", dtype_name(indices.dtype()));
    OGX_CHECK(scales.dtype() == DType::f32 || scales.dtype() == DType::f16 || scales.dtype() == DType::bf16, who,
              ": scales must be float32 or float16, got ", dtype_name(scales.dtype()));
    const int64_t rank = data.rank();
    OGX_CHECK(rank >= 1, who, ": data must have rank >= 1");
    const int64_t gaxis = norm_axis(gather_axis_, rank), qaxis = norm_axis(quantize_axis_, rank);
    OGX_CHECK(gaxis == 0, who, ": for uint8 data, gather_axis must be 0 (got ", gather_axis_, ")");
    OGX_CHECK(qaxis == rank - 1, who, ": for uint8 data, quantize_axis must be the last dimension (got ",
              quantize_axis_, ")");
    OGX_CHECK(gaxis != qaxis, who, ": gather_axis and quantize_axis must differ (data ", shape_str(data.shape()), ")");

    const int64_t comp = 8 / bits_;
    const int64_t qdim = data.dim(-1) * comp;  // values along the quantize axis
    const int64_t nblk = (qdim + block_size_ - 1) / block_size_;
    OGX_CHECK(scales.rank() == rank, who, ": data and scales must have the same rank");
    for (int64_t i = 0; i < rank; i++) {
      const int64_t want = i == qaxis ? nblk : data.dim((int)i);
      OGX_CHECK(scales.dim((int)i) == want, who, ": scales ", shape_str(scales.shape()), " do not match data ",
                shape_str(data.shape()), " with block_size ", block_size_);
    }
    const int64_t zp_row = (nblk + comp - 1) / comp;
    if (zp) {
      OGX_CHECK(zp->dtype() == DType::u8, who, ": zero_points must be uint8 like data, got ", dtype_name(zp->dtype()));
      OGX_CHECK(zp->rank() == rank, who, ": scales and zero_points must have the same rank");
      for (int64_t i = 0; i < rank; i++) {
        const int64_t want = i == qaxis ? zp_row : scales.dim((int)i);
        OGX_CHECK(zp->dim((int)i) == want, who, ": zero_points ", shape_str(zp->shape()), " do not match scales ",
                  shape_str(scales.shape()));
      }
    }

    Shape out_shape;
    for (auto d : indices.shape()) out_shape.push_back(d);
    for (int64_t i = 1; i < rank; i++) out_shape.push_back(data.dim((int)i));
    out_shape.back() *= comp;  // rank >= 2 here: gather and quantize axes differ
    Tensor& out = ctx.output(0, scales.dtype(), out_shape);

    const int64_t rows = data.dim(0);
    const int64_t row_vals = rows ? data.numel() / rows * comp : 0;  // values per gathered slice
    const int64_t qrows_per_row = qdim ? row_vals / qdim : 0;  // quantize-axis rows per slice
    const int64_t nidx = indices.numel();
    std::vector<int64_t> idx((size_t)nidx);
    for (int64_t i = 0; i < nidx; i++) {
      int64_t v = indices.dtype() == DType::i32 ? indices.data<int32_t>()[i] : indices.data<int64_t>()[i];
      OGX_CHECK(v >= -rows && v < rows, who, ": index ", v, " at position ", i, " is out of range for ", rows,
                " rows");
      idx[(size_t)i] = v < 0 ? v + rows : v;
    }

    const uint8_t* d = data.data<uint8_t>();
    const uint8_t* z = zp ? zp->data<uint8_t>() : nullptr;
    const int dflt_zp = 1 << (bits_ - 1);
    const unsigned mask = (1u << bits_) - 1;
    auto scale_at = [&](int64_t i) -> float {
      switch (scales.dtype()) {
        case DType::f32: return scales.data<float>()[i];
        case DType::f16: return f16_to_f32(scales.data<uint16_t>()[i]);
        default: return bf16_to_f32(scales.data<uint16_t>()[i]);
      }
    };
    auto put = [&](int64_t o, float v) {
      switch (scales.dtype()) {
        case DType::f32: out.data<float>()[o] = v; break;
        case DType::f16: out.data<uint16_t>()[o] = f32_to_f16(v); break;
        default: out.data<uint16_t>()[o] = f32_to_bf16(v); break;
      }
    };
    ctx.pool().parallel_for_cost(nidx, (double)(qrows_per_row * qdim * 4), [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; i++) {
        const int64_t row = idx[(size_t)i];
        for (int64_t qr = 0; qr < qrows_per_row; qr++) {
          const int64_t srow = row * qrows_per_row + qr;  // row index of the [*, qdim] view
          const uint8_t* dr = d + srow * data.dim(-1);
          const int64_t obase = (i * qrows_per_row + qr) * qdim;
          for (int64_t b = 0; b < nblk; b++) {
            const float s = scale_at(srow * nblk + b);
            int zv = dflt_zp;
            if (z) zv = (int)((z[srow * zp_row + b / comp] >> ((b % comp) * bits_)) & mask);
            const int64_t j1 = std::min(qdim, (b + 1) * block_size_);
            for (int64_t j = b * block_size_; j < j1; j++) {
              const int q = (int)((dr[j / comp] >> ((j % comp) * bits_)) & mask);
              put(obase + j, (float)(q - zv) * s);
            }
          }
        }
      }
    });
  }

 private:
  const Node& node_;
  int64_t gather_axis_, quantize_axis_, block_size_, bits_;
};

}  // namespace

void register_gather_block_quantized(KernelRegistry& r) {
  r.add("com.microsoft", "GatherBlockQuantized",
        [](const KernelInfo& info) { return std::make_unique<GatherBlockQuantizedKernel>(info); });
}

}  // namespace ogx::cpu
