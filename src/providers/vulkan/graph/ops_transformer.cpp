// Transformer-block ops: (Skip)SimplifiedLayerNormalization, (Skip)LayerNormalization, RotaryEmbedding,
// GroupQueryAttention.
#include <optional>

#include "providers/vulkan/graph/device_op.h"
#include "providers/vulkan/kernels/attention.h"
#include "providers/vulkan/kernels/norm.h"
#include "providers/vulkan/kernels/rotary.h"

namespace ogx::vk::graph {
namespace {

bool wants(const Node& n, int i) { return i < (int)n.outputs.size() && n.outputs[i] >= 0; }

void check_last_axis(const Node& n, size_t rank) {
  int64_t axis = n.attr_int("axis", -1);
  OGX_CHECK(axis == -1 || axis == (int64_t)rank - 1, n.describe(), ": only normalization over the last axis runs on "
            "the Vulkan provider (axis ", axis, ")");
}

class RmsNormOp : public DeviceOp {
 public:
  explicit RmsNormOp(OpBuildContext& b) : node_(b.node), eps_(b.node.attr_float("epsilon", 1e-5f)) {
    OGX_CHECK(!wants(node_, 1), node_.describe(), ": the inv_std_var output is not supported on the Vulkan provider");
  }
  void infer(const OpArgs& a) override {
    const TensorView& x = need_in(a, 0, node_);
    check_last_axis(node_, x.shape.size());
    TensorView& y = need_out(a, 0, node_);
    y.dtype = x.dtype;
    y.shape = x.shape;
  }
  void record(CommandRecorder& rec, const OpArgs& a, StepScratch&) override {
    kernels::rms_norm(rec, *a.in[0], need_in(a, 1, node_), eps_, *a.out[0]);
  }

 private:
  const Node& node_;
  float eps_;
};

// Outputs: 0 normalized, 3 input + skip (+ bias) (the residual stream); 1 and 2 (mean, inv_std_var) unsupported.
class SkipRmsNormOp : public DeviceOp {
 public:
  explicit SkipRmsNormOp(OpBuildContext& b) : node_(b.node), eps_(b.node.attr_float("epsilon", 1e-5f)) {
    OGX_CHECK(!wants(node_, 1) && !wants(node_, 2), node_.describe(),
              ": the mean / inv_std_var outputs are not supported on the Vulkan provider");
  }
  void infer(const OpArgs& a) override {
    const TensorView& x = need_in(a, 0, node_);
    const TensorView& skip = need_in(a, 1, node_);
    OGX_CHECK(skip.shape == x.shape, node_.describe(), ": skip ", shape_str(skip.shape), " must match input ",
              shape_str(x.shape), " on the Vulkan provider");
    for (int i : {0, 3})
      if (i < (int)a.out.size() && a.out[i]) {
        a.out[i]->dtype = x.dtype;
        a.out[i]->shape = x.shape;
      }
    need_out(a, 0, node_);
  }
  void record(CommandRecorder& rec, const OpArgs& a, StepScratch&) override {
    const TensorView* bias = a.in.size() > 3 ? a.in[3] : nullptr;
    const TensorView* residual = a.out.size() > 3 ? a.out[3] : nullptr;
    kernels::skip_rms_norm(rec, *a.in[0], *a.in[1], bias, need_in(a, 2, node_), eps_, *a.out[0], residual);
  }

 private:
  const Node& node_;
  float eps_;
};

// A [.., D] view of t as [numel / D, D].
TensorView rows_of(const TensorView& t, int64_t D) {
  TensorView v = t;
  v.shape = {D ? t.numel() / D : 0, D};
  return v;
}

// ai.onnx LayerNormalization (inputs X, Scale, B; over the axes from `axis` on) and com.microsoft
// SkipLayerNormalization (inputs input, skip, gamma, beta, bias; output 3 = input + skip + bias). The mean /
// inv_std_var outputs are not supported.
class LayerNormOp : public DeviceOp {
 public:
  explicit LayerNormOp(OpBuildContext& b)
      : node_(b.node), eps_(b.node.attr_float("epsilon", 1e-5f)), skip_(b.node.op_type == "SkipLayerNormalization") {
    OGX_CHECK(!wants(node_, 1) && !wants(node_, 2), node_.describe(),
              ": the mean / inv_std_var outputs are not supported on the Vulkan provider");
  }
  void infer(const OpArgs& a) override {
    const TensorView& x = need_in(a, 0, node_);
    int64_t rank = (int64_t)x.shape.size();
    int64_t axis = skip_ ? -1 : node_.attr_int("axis", -1);
    if (axis < 0) axis += rank;
    OGX_CHECK(axis >= 0 && axis < rank, node_.describe(), ": axis ", node_.attr_int("axis", -1), " is out of range");
    D_ = 1;
    for (int64_t d = axis; d < rank; d++) D_ *= x.shape[d];
    if (skip_)
      OGX_CHECK(need_in(a, 1, node_).shape == x.shape, node_.describe(), ": skip ", shape_str(a.in[1]->shape),
                " must match input ", shape_str(x.shape), " on the Vulkan provider");
    for (int i : {0, 3})
      if (i < (int)a.out.size() && a.out[i]) {
        a.out[i]->dtype = x.dtype;
        a.out[i]->shape = x.shape;
      }
    need_out(a, 0, node_);
  }
  void record(CommandRecorder& rec, const OpArgs& a, StepScratch&) override {
    auto in = [&](int k) { return k < (int)a.in.size() && a.in[k] ? a.in[k] : nullptr; };
    TensorView x = rows_of(*a.in[0], D_), y = rows_of(*a.out[0], D_);
    TensorView gamma = rows_of(need_in(a, skip_ ? 2 : 1, node_), D_);
    std::optional<TensorView> skip, beta, bias, residual;
    if (skip_) skip = rows_of(*a.in[1], D_);
    if (const TensorView* t = in(skip_ ? 3 : 2)) beta = rows_of(*t, D_);
    if (const TensorView* t = skip_ ? in(4) : nullptr) bias = rows_of(*t, D_);
    if (a.out.size() > 3 && a.out[3]) residual = rows_of(*a.out[3], D_);
    kernels::layer_norm(rec, x, skip ? &*skip : nullptr, bias ? &*bias : nullptr, gamma, beta ? &*beta : nullptr,
                        eps_, y, residual ? &*residual : nullptr);
  }

 private:
  const Node& node_;
  float eps_;
  bool skip_;
  int64_t D_ = 0;  // elements normalized together
};

class RotaryOp : public DeviceOp {
 public:
  explicit RotaryOp(OpBuildContext& b) : node_(b.node) {
    params_.interleaved = node_.attr_int("interleaved", 0) != 0;
    params_.num_heads = node_.attr_int("num_heads", 0);
    params_.rotary_dim = node_.attr_int("rotary_embedding_dim", 0);
    OGX_CHECK(node_.attr_int("is_packed_batching", 0) == 0, node_.describe(), ": packed batching is not supported");
    OGX_CHECK(node_.attr_float("scale", 1.0f) == 1.0f, node_.describe(), ": scale != 1 is not supported");
  }
  DType step_input_dtype(int i, DType given) const override { return i == 1 ? DType::i64 : given; }
  void infer(const OpArgs& a) override {
    const TensorView& x = need_in(a, 0, node_);
    TensorView& y = need_out(a, 0, node_);
    y.dtype = x.dtype;
    y.shape = x.shape;
  }
  void record(CommandRecorder& rec, const OpArgs& a, StepScratch&) override {
    kernels::rotary_embedding(rec, params_, *a.in[0], need_in(a, 1, node_), need_in(a, 2, node_),
                              need_in(a, 3, node_), *a.out[0]);
  }

 private:
  const Node& node_;
  kernels::RotaryParams params_;
};

// Inputs: 0 query, 1 key, 2 value, 3 past_key, 4 past_value (the session's paged KV cache, [B, Hkv, capacity, D],
// reached through OpArgs::kv; also bound as outputs 1 and 2), 5 seqlens_k, 6 total_sequence_length, 7 cos_cache,
// 8 sin_cache, 9 position_ids (rotary positions; int64 [B, S]). Without OpArgs::kv (an op run alone), past_key and
// past_value are contiguous device caches, addressed in place.
class GqaOp : public DeviceOp {
 public:
  DType step_input_dtype(int i, DType given) const override { return i == 9 ? DType::i64 : given; }
  explicit GqaOp(OpBuildContext& b) : node_(b.node) {
    p_.num_heads = node_.attr_int("num_heads", 0);
    p_.kv_num_heads = node_.attr_int("kv_num_heads", 0);
    p_.scale = node_.attr_float("scale", 0.0f);
    p_.softcap = node_.attr_float("softcap", 0.0f);
    p_.local_window_size = node_.attr_int("local_window_size", -1);
    p_.do_rotary = node_.attr_int("do_rotary", 0) != 0;
    p_.rotary_interleaved = node_.attr_int("rotary_interleaved", 0) != 0;
    OGX_CHECK(node_.attr_int("smooth_softmax", 0) == 0, node_.describe(), ": smooth_softmax is not supported on the "
              "Vulkan provider");
    for (int i = 10; i < (int)node_.inputs.size(); i++)
      OGX_CHECK(node_.inputs[i] < 0, node_.describe(), ": input ", i, " (attention_bias / head_sink) "
                "is not supported on the Vulkan provider");
  }
  void infer(const OpArgs& a) override {
    const TensorView& q = need_in(a, 0, node_);
    OGX_CHECK(q.shape.size() == 3, node_.describe(), ": query must be [B, S, hidden], got ", shape_str(q.shape));
    const TensorView& kc = need_in(a, 3, node_);
    bool packed = !(a.in.size() > 1 && a.in[1]);
    int64_t heads = packed ? p_.num_heads + 2 * p_.kv_num_heads : p_.num_heads;
    OGX_CHECK(heads > 0 && q.shape[2] % heads == 0, node_.describe(), ": query width ", q.shape[2],
              " is not a multiple of ", heads, " heads");
    int64_t D = q.shape[2] / heads;
    TensorView& y = need_out(a, 0, node_);
    y.dtype = q.dtype;
    y.shape = {q.shape[0], q.shape[1], p_.num_heads * D};
    for (int i : {1, 2})
      if (i < (int)a.out.size() && a.out[i]) {  // present key/value: the cache itself
        a.out[i]->dtype = kc.dtype;
        a.out[i]->shape = kc.shape;
      }
  }
  void record(CommandRecorder& rec, const OpArgs& a, StepScratch& scratch) override {
    kernels::GqaTensors t;
    t.query = *a.in[0];
    t.key = a.in[1];
    t.value = a.in[2];
    t.k_cache = need_in(a, 3, node_);
    t.v_cache = need_in(a, 4, node_);
    t.seqlens_k = need_in(a, 5, node_);
    t.total_sequence_length = need_in(a, 6, node_);
    if (p_.do_rotary) {
      t.cos_cache = &need_in(a, 7, node_);
      t.sin_cache = &need_in(a, 8, node_);
      if (a.in.size() > 9) t.position_ids = a.in[9];
    }
    t.output = *a.out[0];
    t.pages = a.kv ? *a.kv : kernels::contiguous_kv_pages(rec.context(), t.k_cache, t.v_cache, contiguous_table_);
    const Shape& kc = t.k_cache.shape;
    kernels::GqaWorkspace& ws = scratch.gqa_workspace(rec.context(), kc[0], t.query.shape[1], p_.num_heads, kc[3], kc[2]);
    kernels::group_query_attention(rec, p_, t, ws);
  }

 private:
  const Node& node_;
  kernels::GqaParams p_;
  DeviceBuffer contiguous_table_;  // the block table over contiguous caches (no OpArgs::kv)
};

template <typename T>
OpFactory make() {
  return [](OpBuildContext& b) { return std::make_unique<T>(b); };
}

}  // namespace

void register_transformer_ops(std::map<std::pair<std::string, std::string>, OpFactory>& t) {
  t[{"", "SimplifiedLayerNormalization"}] = make<RmsNormOp>();
  t[{"com.microsoft", "SimplifiedLayerNormalization"}] = make<RmsNormOp>();
  t[{"", "RMSNormalization"}] = make<RmsNormOp>();
  t[{"com.microsoft", "SkipSimplifiedLayerNormalization"}] = make<SkipRmsNormOp>();
  t[{"", "LayerNormalization"}] = make<LayerNormOp>();
  t[{"com.microsoft", "SkipLayerNormalization"}] = make<LayerNormOp>();
  t[{"com.microsoft", "RotaryEmbedding"}] = make<RotaryOp>();
  t[{"com.microsoft", "GroupQueryAttention"}] = make<GqaOp>();
}

}  // namespace ogx::vk::graph
