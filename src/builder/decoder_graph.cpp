#include "builder/decoder_graph.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "builder/rope.h"
#include "builder/tensor_fill.h"
#include "common/error.h"
#include "common/log.h"

namespace ogx::builder {

int GraphSettings::io_dtype() const {
  if (precision == Precision::fp32) return onnx::TensorProto::FLOAT;
  if (precision == Precision::int4 && provider == Provider::cpu) return onnx::TensorProto::FLOAT;
  return onnx::TensorProto::FLOAT16;
}

namespace {

const std::string kMS = "com.microsoft";
const std::string kSeqlensK = "/model/attn_mask_reformat/attn_mask_subgraph/Sub/Cast/output_0";
const std::string kTotalSeq = "/model/attn_mask_reformat/attn_mask_subgraph/Gather/Cast/output_0";
const std::string kTotalSeqI64 = "/model/attn_mask_reformat/attn_mask_subgraph/Gather/output_0";

class Decoder {
 public:
  Decoder(const HfConfig& c, const GraphSettings& s, WeightProvider& w, GraphWriter& g)
      : c_(c), s_(s), w_(w), g_(g), T_(s.io_dtype()) {}

  void build() {
    io();
    mask_subgraph();
    std::string h = embedding();
    std::string skip;  // residual stream input of the next Skip norm
    std::string pending;  // output to add to the residual (previous layer's MLP)
    for (int64_t i = 0; i < c_.layers; i++) layer(i, h, skip, pending);
    final_norm_and_head(skip, pending);
  }

 private:
  const HfConfig& c_;
  const GraphSettings& s_;
  WeightProvider& w_;
  GraphWriter& g_;
  int T_;
  bool rope_made_ = false;
  std::string pos_ids_;  // long_rope_position_ids() once made

  std::string L(int64_t i) const { return "/model/layers." + std::to_string(i); }
  std::string W(int64_t i) const { return "model.layers." + std::to_string(i); }
  std::string hf(int64_t i) const { return "model.layers." + std::to_string(i); }

  void io() {
    const int64_t kv = c_.kv_heads;
    g_.input("input_ids", onnx::TensorProto::INT64, {"batch_size", "sequence_length"});
    g_.input("attention_mask", onnx::TensorProto::INT64, {"batch_size", "total_sequence_length"});
    if (!s_.fused_rope()) g_.input("position_ids", onnx::TensorProto::INT64, {"batch_size", "sequence_length"});
    for (const char* kind : {"key", "value"})
      for (int64_t i = 0; i < c_.layers; i++)
        g_.input("past_key_values." + std::to_string(i) + "." + kind, T_,
                 {"batch_size", kv, "past_sequence_length", "kv_cache_dim"});
    g_.output("logits", T_, {"batch_size", "sequence_length", c_.vocab});
    if (s_.include_hidden_states) g_.output("hidden_states", T_, {"batch_size", "sequence_length", c_.hidden});
    for (const char* kind : {"key", "value"})
      for (int64_t i = 0; i < c_.layers; i++)
        g_.output("present." + std::to_string(i) + "." + kind, T_,
                  {"batch_size", kv, "total_sequence_length", "kv_cache_dim"});
  }

  void mask_subgraph() {
    const std::string p = "/model/attn_mask_reformat/attn_mask_subgraph";
    std::string one = g_.const_i64({1}, false);
    g_.node("ReduceSum", "", p + "/ReduceSum", {"attention_mask", one}, {p + "/ReduceSum/output_0"},
            {Attr::i("keepdims", 0)});
    g_.node("Sub", "", p + "/Sub", {p + "/ReduceSum/output_0", one}, {p + "/Sub/output_0"});
    g_.node("Cast", "", p + "/Sub/Cast", {p + "/Sub/output_0"}, {kSeqlensK}, {Attr::i("to", onnx::TensorProto::INT32)});
    g_.node("Shape", "", p + "/Shape", {"attention_mask"}, {p + "/Shape/output_0"});
    std::string idx = g_.const_i64({1}, true);
    g_.node("Gather", "", p + "/Gather", {p + "/Shape/output_0", idx}, {p + "/Gather/output_0"}, {Attr::i("axis", 0)});
    g_.node("Cast", "", p + "/Gather/Cast", {p + "/Gather/output_0"}, {kTotalSeq}, {Attr::i("to", onnx::TensorProto::INT32)});
  }

  Int4Layout int4_layout(int64_t K) const {
    Int4Layout l;
    l.K = K;
    l.block = s_.block_size;
    l.symmetric = s_.symmetric;
    l.fp16_scales = T_ == onnx::TensorProto::FLOAT16;
    return l;
  }

  std::string embedding() {
    const std::vector<int64_t> shape{c_.vocab, c_.hidden};
    std::string out;
    if (!c_.tie_embeddings) {
      g_.initializer("model.embed_tokens.weight", T_, shape, fill_float(w_.get("model.embed_tokens.weight", shape), T_, false));
      out = "/model/embed_tokens/Gather/output_0";
      g_.node("Gather", "", "/model/embed_tokens/Gather", {"model.embed_tokens.weight", "input_ids"}, {out});
    } else if (s_.precision != Precision::int4) {
      g_.node("Transpose", "", "/model/embed_tokens/Transpose", {"lm_head.MatMul.weight"},
              {"/model/embed_tokens/Transpose/output_0"}, {Attr::ints("perm", {1, 0})});
      out = "/model/embed_tokens/Gather/output_0";
      g_.node("Gather", "", "/model/embed_tokens/Gather", {"/model/embed_tokens/Transpose/output_0", "input_ids"}, {out});
    } else {  // shares the quantized lm_head
      Int4Layout l = int4_layout(c_.hidden);
      std::string shp = g_.const_i64({c_.vocab, l.q_row_bytes()}, false);
      g_.node("Reshape", "", "/model/embed_tokens/Reshape", {"lm_head.MatMul.weight_Q4", shp},
              {"/model/embed_tokens/Reshape/output_0"});
      std::vector<std::string> in{"/model/embed_tokens/Reshape/output_0", "input_ids", "lm_head.MatMul.weight_scales"};
      if (!s_.symmetric) in.push_back("lm_head.MatMul.weight_zero_points");
      out = "/model/embed_tokens/GatherBlockQuantized/output_0";
      g_.node("GatherBlockQuantized", kMS, "/model/embed_tokens/GatherBlockQuantized", in, {out},
              {Attr::i("bits", 4), Attr::i("block_size", s_.block_size), Attr::i("gather_axis", 0),
               Attr::i("quantize_axis", 1)});
    }
    // Gemma2 scales embeddings by HF's normalizer, sqrt(hidden) in the activation dtype (the reference builder
    // rounds it to 2 decimals, which differs for hidden sizes without an exact root, e.g. 3584).
    if (c_.arch == Arch::gemma2) {
      std::string k = g_.const_float(std::sqrt((float)c_.hidden), T_);
      g_.node("Mul", "", "/model/embed_tokens/Mul", {out, k}, {"/model/embed_tokens/Mul/output_0"});
      out = "/model/embed_tokens/Mul/output_0";
    }
    return out;
  }

  // Norm weight initializer; gemma2 stores w and computes x * (1 + w).
  std::string norm_weight(const std::string& hf_name, const std::string& onnx_name, int64_t n) {
    Source src = w_.get(hf_name, {n});
    if (c_.arch == Arch::gemma2) src = add_constant(src, 1.0f);
    g_.initializer(onnx_name, T_, {n}, fill_float(src, T_, false));
    return onnx_name;
  }

  std::string simple_norm(const std::string& name, const std::string& in, const std::string& weight,
                          const std::string& out) {
    g_.node("SimplifiedLayerNormalization", "", name, {in, weight}, {out},
            {Attr::f("epsilon", (float)c_.rms_eps), Attr::i("axis", -1), Attr::i("stash_type", 1)});
    return out;
  }

  // The adapter's LoRA of HF linear `module` of layer i (rows [row0, row0 + nrows) of a fused one), if any.
  std::optional<LoraWeights> lora(int64_t i, const std::string& module, int64_t out, int64_t in, int64_t row0 = 0,
                                  int64_t nrows = -1) {
    if (!s_.lora) return std::nullopt;
    return s_.lora->find(hf(i) + "." + module, out, in, row0, nrows);
  }

  // The projection plus, with a LoRA, the reference builder's branch: "<node_base>/lora_A/MatMul" (x A'),
  // "<node_base>/lora_B/MatMul" (. B'), "<node_base>/lora/Add"; A' and B' are graph inputs named as ONNX Runtime
  // adapter files name them, defaulting to zero-rank tensors (the base model when no adapter is active). The LoRA
  // matmuls stay in the activation dtype on int4 bases (Olive's rule: only float LoRA inputs take a dynamic rank).
  std::string matmul(const std::string& node_base, const std::string& init_base, const Source& src,
                     const std::string& in, const std::optional<LoraWeights>& lora = std::nullopt) {
    std::string out = base_matmul(node_base, init_base, src, in);
    if (!lora) return out;
    const int64_t N = src.rows, K = src.cols;
    std::string w = node_base.substr(1);  // "/model/layers.0/attn/q_proj" -> "model.layers.0.attn.q_proj"
    for (char& ch : w)
      if (ch == '/') ch = '.';
    const std::string a = w + ".lora_A.weight", b = w + ".lora_B.weight";
    g_.input(a, T_, {K, std::string("lora_r")});
    g_.input(b, T_, {std::string("lora_r"), N});
    g_.initializer(a, T_, {K, 0}, [](uint8_t*, ThreadPool&) {});
    g_.initializer(b, T_, {0, N}, [](uint8_t*, ThreadPool&) {});
    g_.node("MatMul", "", node_base + "/lora_A/MatMul", {in, a}, {node_base + "/lora_A/MatMul/output_0"});
    g_.node("MatMul", "", node_base + "/lora_B/MatMul", {node_base + "/lora_A/MatMul/output_0", b},
            {node_base + "/lora_B/MatMul/output_0"});
    g_.node("Add", "", node_base + "/lora/Add", {out, node_base + "/lora_B/MatMul/output_0"},
            {node_base + "/lora/Add/output_0"});
    if (s_.lora_inputs) s_.lora_inputs->push_back({a, b, *lora});
    return node_base + "/lora/Add/output_0";
  }

  // MatMul (or MatMulNBits) of `in` with source [N, K]; names follow "<node_base>/MatMul".
  std::string base_matmul(const std::string& node_base, const std::string& init_base, const Source& src,
                          const std::string& in) {
    const std::string out = node_base + "/MatMul/output_0";
    const int64_t N = src.rows, K = src.cols;
    if (s_.precision != Precision::int4) {
      const std::string wn = init_base + ".MatMul.weight";
      g_.initializer(wn, T_, {K, N}, fill_float(src, T_, true));
      g_.node("MatMul", "", node_base + "/MatMul", {in, wn}, {out});
      return out;
    }
    Int4Layout l = int4_layout(K);
    const std::string q = init_base + ".MatMul.weight_Q4", sc = init_base + ".MatMul.weight_scales",
                      zp = init_base + ".MatMul.weight_zero_points";
    std::vector<std::string> names{q, sc};
    std::vector<int> types{onnx::TensorProto::UINT8, T_};
    std::vector<std::vector<int64_t>> dims{{N, l.blocks(), l.block / 2}, {N, l.blocks()}};
    if (!s_.symmetric) {
      names.push_back(zp);
      types.push_back(onnx::TensorProto::UINT8);
      dims.push_back({N * l.zp_row_bytes()});
    }
    g_.joint_initializers(names, types, dims, fill_int4(src, l), 1);
    std::vector<std::string> inputs{in, q, sc};
    if (!s_.symmetric) inputs.push_back(zp);
    std::vector<Attr> attrs{Attr::i("K", K), Attr::i("N", N)};
    if (s_.provider == Provider::cpu) attrs.push_back(Attr::i("accuracy_level", 4));
    attrs.push_back(Attr::i("bits", 4));
    attrs.push_back(Attr::i("block_size", l.block));
    g_.node("MatMulNBits", kMS, node_base + "/MatMul_Q4", inputs, {out}, attrs);
    return out;
  }

  std::string add_bias(const std::string& node_base, const std::string& init_base, const Source& b,
                       const std::string& in) {
    const std::string bn = init_base + ".Add.bias", out = node_base + "/Add/output_0";
    g_.initializer(bn, T_, {b.cols}, fill_float(b, T_, false));
    g_.node("Add", "", node_base + "/Add", {in, bn}, {out});
    return out;
  }

  void cache_initializer(const std::string& name, std::shared_ptr<const std::vector<RopeCache>> caches, bool sin) {
    int64_t rows = 0;
    for (const RopeCache& c : *caches) rows += c.rows;
    const int64_t half = (int64_t)caches->front().inv.size();
    Source s;
    s.name = name;
    s.rows = rows;
    s.cols = half;
    // Rows of the caches one after another (longrope for dml: short rows, then long rows).
    s.read = [caches, sin](int64_t r0, int64_t n, float* out) {
      int64_t start = 0;
      for (const RopeCache& c : *caches) {
        const int64_t lo = std::max(r0, start), hi = std::min(r0 + n, start + c.rows);
        if (lo < hi) rope_rows(c, sin, lo - start, hi - lo, out + (lo - r0) * (int64_t)c.inv.size());
        start += c.rows;
      }
    };
    g_.initializer(name, T_, {rows, half}, fill_float(s, T_, false));
  }

  // cos_cache / sin_cache. Longrope (two caches) as the reference builder makes it: on the CPU an If picks the long
  // caches once the total sequence length exceeds original_max_position_embeddings; for dml (no If) one table of
  // the short rows then the long rows, with position ids shifted past the short rows (long_rope_position_ids()).
  void rope_caches() {
    if (rope_made_) return;
    rope_made_ = true;
    if (s_.fused_rope() && (c_.rotary_dim() / 2) % 8 != 0)
      log_warning("ogx build: the rotary caches are [*, " + std::to_string(c_.rotary_dim() / 2) + "]: ogx runs this "
                  "folder, but ONNX Runtime's GroupQueryAttention (do_rotary) requires a multiple of 8 there");
    auto all = std::make_shared<const std::vector<RopeCache>>(builder::rope_caches(c_));
    if (all->size() == 1 || !s_.fused_rope()) {
      cache_initializer("cos_cache", all, false);
      cache_initializer("sin_cache", all, true);
      return;
    }
    for (int k = 0; k < 2; k++) {
      auto one = std::make_shared<const std::vector<RopeCache>>(1, (*all)[k]);
      const std::string tag = k ? "_large" : "_small";
      cache_initializer("cos_cache" + tag, one, false);
      cache_initializer("sin_cache" + tag, one, true);
    }
    const std::string p = "/model/rope_caches_subgraph";
    std::string orig = g_.const_i64({c_.rope.original_max_position}, true);
    g_.node("Greater", "", p + "/Greater", {kTotalSeqI64, orig}, {p + "/Greater/output_0"});
    g_.if_select(p + "/If", p + "/Greater/output_0", {"cos_cache", "sin_cache"}, T_,
                 {"cos_cache_large", "sin_cache_large"}, {"cos_cache_small", "sin_cache_small"});
  }

  // Longrope for dml: position_ids + original_max_position when any position reaches it (the reference builder's
  // /model/pos_ids_reformat subgraph), so RotaryEmbedding reads the long rows of the concatenated caches.
  std::string long_rope_position_ids() {
    if (c_.rope.type != "longrope" || s_.fused_rope()) return "position_ids";
    if (!pos_ids_.empty()) return pos_ids_;
    const std::string p = "/model/pos_ids_reformat";
    std::string orig = g_.const_i64({c_.rope.original_max_position}, true);
    g_.node("ReduceMax", "", p + "/ReduceMax", {"position_ids"}, {p + "/ReduceMax/output_0"});
    g_.node("GreaterOrEqual", "", p + "/GreaterOrEqual", {p + "/ReduceMax/output_0", orig},
            {p + "/GreaterOrEqual/output_0"});
    g_.node("Cast", "", p + "/Cast", {p + "/GreaterOrEqual/output_0"}, {p + "/Cast/output_0"},
            {Attr::i("to", onnx::TensorProto::INT64)});
    g_.node("Mul", "", p + "/Mul", {p + "/Cast/output_0", orig}, {p + "/Mul/output_0"});
    g_.node("Add", "", p + "/Add_1", {p + "/Mul/output_0", "position_ids"}, {p + "/Add_1/output_0"});
    return pos_ids_ = p + "/Add_1/output_0";
  }

  // Per-head RMS norm (qwen3 q_norm / k_norm): Reshape to [.., heads, head_dim], normalize, reshape back.
  std::string head_norm(int64_t i, const char* which, const std::string& in) {
    const std::string base = L(i) + "/attn/" + which + "_norm";
    std::string w = norm_weight(hf(i) + ".self_attn." + which + "_norm.weight",
                                W(i) + ".attn." + which + "_norm.layernorm.weight", c_.head_dim);
    std::string s1 = g_.const_i64({0, 0, -1, c_.head_dim}, false);
    g_.node("Reshape", "", base + "/Reshape_1", {in, s1}, {base + "/Reshape_1/output_0"});
    simple_norm(base + "/SimplifiedLayerNormalization", base + "/Reshape_1/output_0", w, base + "/output_0");
    std::string s2 = g_.const_i64({0, 0, -1}, false);
    g_.node("Reshape", "", base + "/Reshape_2", {base + "/output_0", s2}, {base + "/Reshape_2/output_0"});
    return base + "/Reshape_2/output_0";
  }

  std::vector<Source> qkv_sources(int64_t i) {
    const int64_t qn = c_.heads * c_.head_dim, kn = c_.kv_heads * c_.head_dim;
    if (c_.arch == Arch::phi3) {
      Source f = w_.get(hf(i) + ".self_attn.qkv_proj.weight", {qn + 2 * kn, c_.hidden});
      return {slice_rows(f, 0, qn, f.name + "[q]"), slice_rows(f, qn, kn, f.name + "[k]"),
              slice_rows(f, qn + kn, kn, f.name + "[v]")};
    }
    return {w_.get(hf(i) + ".self_attn.q_proj.weight", {qn, c_.hidden}),
            w_.get(hf(i) + ".self_attn.k_proj.weight", {kn, c_.hidden}),
            w_.get(hf(i) + ".self_attn.v_proj.weight", {kn, c_.hidden})};
  }

  // Optional q/k/v biases (qwen2); empty when absent or all zero.
  std::vector<Source> qkv_biases(int64_t i) {
    const int64_t qn = c_.heads * c_.head_dim, kn = c_.kv_heads * c_.head_dim;
    std::vector<Source> b;
    const char* names[] = {"q_proj", "k_proj", "v_proj"};
    const int64_t sizes[] = {qn, kn, kn};
    bool any = false;
    for (int j = 0; j < 3; j++) any |= w_.has_nonzero(hf(i) + ".self_attn." + names[j] + ".bias", {sizes[j]});
    if (!any) return b;
    for (int j = 0; j < 3; j++) b.push_back(w_.get(hf(i) + ".self_attn." + names[j] + ".bias", {sizes[j]}));
    return b;
  }

  std::vector<Attr> gqa_attrs(int64_t i, bool do_rotary) const {
    float scale = c_.arch == Arch::gemma2 && c_.query_pre_attn_scalar > 0
                      ? (float)(1.0 / std::sqrt(c_.query_pre_attn_scalar))
                      : (float)(1.0 / std::sqrt((double)c_.head_dim));
    std::vector<Attr> a{Attr::i("num_heads", c_.heads), Attr::i("kv_num_heads", c_.kv_heads), Attr::f("scale", scale)};
    // local_window_size = sliding_window on sliding layers: since ONNX Runtime PR #25927 (in 1.30, the version
    // ONNX Runtime GenAI 0.15.2 runs on) the window includes the current token, as Hugging Face's does (a
    // window of N covers keys q - N < k <= q); tools/ortgenai_check confirms it on random Mistral/Phi3/Qwen3/Gemma2.
    if (!c_.has_window_key) a.push_back(Attr::i("local_window_size", -1));
    else if (c_.sliding_window) a.push_back(Attr::i("local_window_size", c_.sliding_layers[i] ? *c_.sliding_window : -1));
    a.push_back(Attr::f("softcap", (float)c_.attn_softcap));
    a.push_back(Attr::i("do_rotary", do_rotary ? 1 : 0));
    a.push_back(Attr::i("rotary_interleaved", 0));
    return a;
  }

  std::string attention(int64_t i, const std::string& in) {
    const std::string A = L(i) + "/attn", AW = W(i) + ".attn";
    std::vector<Source> qkv = qkv_sources(i);
    std::vector<Source> bias = qkv_biases(i);
    std::vector<std::optional<LoraWeights>> qkv_lora(3);
    const char* proj[] = {"q_proj", "k_proj", "v_proj"};
    for (int j = 0, row = 0; j < 3; row += (int)qkv[j].rows, j++)
      qkv_lora[j] = c_.arch == Arch::phi3
                        ? lora(i, "self_attn.qkv_proj", qkv[0].rows + 2 * qkv[1].rows, c_.hidden, row, qkv[j].rows)
                        : lora(i, std::string("self_attn.") + proj[j], qkv[j].rows, c_.hidden);
    const bool any_lora = qkv_lora[0] || qkv_lora[1] || qkv_lora[2];
    // With LoRA the projections stay separate, as the reference builder's make_attention_unpacked_lora does.
    const bool packed = s_.fused_rope() && c_.arch != Arch::qwen3 && !any_lora;
    std::string q, k, v;
    if (packed) {
      q = matmul(A + "/qkv_proj", AW + ".qkv_proj", concat_rows(qkv, AW + ".qkv_proj"), in);
      if (!bias.empty()) q = add_bias(A + "/qkv_proj", AW + ".qkv_proj", concat_vectors(bias, AW + ".qkv_proj bias"), q);
    } else {
      const char* n[] = {"q_proj", "k_proj", "v_proj"};
      std::string* outs[] = {&q, &k, &v};
      for (int j = 0; j < 3; j++) *outs[j] = matmul(A + "/" + n[j], AW + "." + n[j], qkv[j], in, qkv_lora[j]);
      for (size_t j = 0; j < bias.size(); j++) *outs[j] = add_bias(A + "/" + n[j], AW + "." + n[j], bias[j], *outs[j]);
      if (c_.arch == Arch::qwen3) {
        q = head_norm(i, "q", q);
        k = head_norm(i, "k", k);
      }
    }
    rope_caches();
    if (!s_.fused_rope()) {
      const std::string pos = long_rope_position_ids();
      // Partial rotary (the reference builder's attributes): rotary_embedding_dim and, for the 3-D input, the heads.
      const bool partial = c_.rotary_dim() != c_.head_dim;
      for (auto [name, t] : {std::pair<const char*, std::string*>{"q_rotary", &q}, {"k_rotary", &k}}) {
        const std::string out = A + "/" + name + "/RotaryEmbedding/output_0";
        const int64_t heads = std::string(name) == "k_rotary" ? c_.kv_heads : c_.heads;
        g_.node("RotaryEmbedding", kMS, A + "/" + name + "/RotaryEmbedding", {*t, pos, "cos_cache", "sin_cache"},
                {out}, {Attr::i("interleaved", 0), Attr::i("num_heads", partial ? heads : 0),
                        Attr::i("rotary_embedding_dim", partial ? c_.rotary_dim() : 0)});
        *t = out;
      }
    }
    const std::string ii = std::to_string(i);
    std::string cos = s_.fused_rope() ? "cos_cache" : "", sin = s_.fused_rope() ? "sin_cache" : "";
    const std::string out = A + "/GroupQueryAttention/output_0";
    g_.node("GroupQueryAttention", kMS, A + "/GroupQueryAttention",
            {q, k, v, "past_key_values." + ii + ".key", "past_key_values." + ii + ".value", kSeqlensK, kTotalSeq, cos,
             sin, "", "", ""},
            {out, "present." + ii + ".key", "present." + ii + ".value"}, gqa_attrs(i, s_.fused_rope()));
    const int64_t qn = c_.heads * c_.head_dim;
    return matmul(A + "/o_proj", AW + ".o_proj", w_.get(hf(i) + ".self_attn.o_proj.weight", {c_.hidden, qn}), out,
                  lora(i, "self_attn.o_proj", c_.hidden, qn));
  }

  std::string mlp(int64_t i, const std::string& in) {
    const std::string M = L(i) + "/mlp", MW = W(i) + ".mlp";
    Source gate, up;
    if (c_.arch == Arch::phi3) {
      Source gu = w_.get(hf(i) + ".mlp.gate_up_proj.weight", {2 * c_.intermediate, c_.hidden});
      gate = slice_rows(gu, 0, c_.intermediate, gu.name + "[gate]");
      up = slice_rows(gu, c_.intermediate, c_.intermediate, gu.name + "[up]");
    } else {
      gate = w_.get(hf(i) + ".mlp.gate_proj.weight", {c_.intermediate, c_.hidden});
      up = w_.get(hf(i) + ".mlp.up_proj.weight", {c_.intermediate, c_.hidden});
    }
    std::optional<LoraWeights> gate_lora, up_lora;
    if (c_.arch == Arch::phi3) {
      gate_lora = lora(i, "mlp.gate_up_proj", 2 * c_.intermediate, c_.hidden, 0, c_.intermediate);
      up_lora = lora(i, "mlp.gate_up_proj", 2 * c_.intermediate, c_.hidden, c_.intermediate, c_.intermediate);
    } else {
      gate_lora = lora(i, "mlp.gate_proj", c_.intermediate, c_.hidden);
      up_lora = lora(i, "mlp.up_proj", c_.intermediate, c_.hidden);
    }
    std::string g = matmul(M + "/gate_proj", MW + ".gate_proj", gate, in, gate_lora);
    std::string u = matmul(M + "/up_proj", MW + ".up_proj", up, in, up_lora);
    std::string act;
    if (c_.hidden_act == "silu") {
      g_.node("Sigmoid", "", M + "/act_fn/Sigmoid", {g}, {M + "/act_fn/Sigmoid/output_0"});
      act = M + "/act_fn/Mul/output_0";
      g_.node("Mul", "", M + "/act_fn/Mul", {g, M + "/act_fn/Sigmoid/output_0"}, {act});
    } else {  // gelu_pytorch_tanh: com.microsoft FastGelu, as the reference builder does
      act = M + "/act_fn/FastGelu/output_0";
      g_.node("FastGelu", kMS, M + "/act_fn/FastGelu", {g}, {act});
    }
    g_.node("Mul", "", M + "/Mul", {act, u}, {M + "/Mul/output_0"});
    return matmul(M + "/down_proj", MW + ".down_proj",
                  w_.get(hf(i) + ".mlp.down_proj.weight", {c_.hidden, c_.intermediate}), M + "/Mul/output_0",
                  lora(i, "mlp.down_proj", c_.hidden, c_.intermediate));
  }

  // Skip norm: out_0 = norm(skip + x), out_3 = skip + x (the new residual).
  void skip_norm(const std::string& name_base, std::string skip, std::string x, const std::string& w,
                 std::string& out0, std::string& out3, bool last = false) {
    out0 = name_base + "/output_0";
    out3 = last ? "" : name_base + "/output_3";
    std::vector<std::string> outs{out0};
    if (!last) outs = {out0, "", "", out3};
    g_.node("SkipSimplifiedLayerNormalization", kMS, name_base + "/SkipLayerNorm", {skip, x, w}, outs,
            {Attr::f("epsilon", (float)c_.rms_eps)});
  }

  // Gemma2's extra norm applied to a sublayer output before the residual add.
  std::string post_norm(int64_t i, const char* which, const std::string& in) {
    std::string w = norm_weight(hf(i) + "." + which + ".weight", W(i) + "." + which + ".weight", c_.hidden);
    return simple_norm(L(i) + "/" + which + "/LayerNorm", in, w, L(i) + "/" + which + "/output_0");
  }

  void layer(int64_t i, const std::string& embed, std::string& skip, std::string& pending) {
    std::string w = norm_weight(hf(i) + ".input_layernorm.weight", W(i) + ".input_layernorm.weight", c_.hidden);
    std::string x;
    if (i == 0) {
      x = simple_norm(L(i) + "/input_layernorm/LayerNorm", embed, w, L(i) + "/input_layernorm/output_0");
      skip = embed;
    } else {
      skip_norm(L(i) + "/input_layernorm", skip, pending, w, x, skip);
    }
    std::string a = attention(i, x);
    const bool gemma = c_.arch == Arch::gemma2;
    if (gemma) a = post_norm(i, "post_attention_layernorm", a);
    const char* ffn_norm = gemma ? "pre_feedforward_layernorm" : "post_attention_layernorm";
    std::string w2 = norm_weight(hf(i) + "." + ffn_norm + ".weight", W(i) + "." + ffn_norm + ".weight", c_.hidden);
    std::string y;
    skip_norm(L(i) + "/" + ffn_norm, skip, a, w2, y, skip);
    pending = mlp(i, y);
    if (gemma) pending = post_norm(i, "post_feedforward_layernorm", pending);
  }

  void final_norm_and_head(const std::string& skip, const std::string& pending) {
    const std::string F = "/model/layers." + std::to_string(c_.layers) + "/final_norm_layernorm";
    std::string w = norm_weight("model.norm.weight", "model.layers." + std::to_string(c_.layers) + ".final_norm_layernorm.weight", c_.hidden);
    std::string x, unused;
    skip_norm(F, skip, pending, w, x, unused, true);
    if (s_.include_hidden_states) g_.node("Identity", "", "/model/hidden_states/Identity", {x}, {"hidden_states"});
    const std::string head_name = c_.tie_embeddings ? "model.embed_tokens.weight" : "lm_head.weight";
    Source head = w_.get(head_name, {c_.vocab, c_.hidden});
    std::string logits = matmul("/lm_head", "lm_head", head, x);
    if (c_.final_softcap > 0) {  // logits = tanh(x / cap) * cap
      std::string cap = g_.const_float((float)c_.final_softcap, T_);
      g_.node("Div", "", "/lm_head/softcap/Div", {logits, cap}, {"/lm_head/softcap/Div/output_0"});
      g_.node("Tanh", "", "/lm_head/softcap/Tanh", {"/lm_head/softcap/Div/output_0"}, {"/lm_head/softcap/Tanh/output_0"});
      g_.node("Mul", "", "/lm_head/softcap/Mul", {"/lm_head/softcap/Tanh/output_0", cap}, {"logits"});
    } else {
      rename_last_output(logits, "logits");
    }
  }

  void rename_last_output(const std::string&, const std::string& name) { g_.rename_last_node_output(name); }
};

}  // namespace

void build_decoder_graph(const HfConfig& c, const GraphSettings& s, WeightProvider& w, GraphWriter& g) {
  Decoder(c, s, w, g).build();
}

}  // namespace ogx::builder
