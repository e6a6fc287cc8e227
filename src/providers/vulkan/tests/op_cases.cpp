// Case generators of the one-node op test, per op the Vulkan provider registers. Each op gets odd sizes, a
// broadcast or an empty dim where it has them, and every dtype it allows.
#include "providers/vulkan/tests/op_cases.h"

#include <cstring>

#include "providers/vulkan/kernels/elementwise.h"

namespace ogx::vk::test {
namespace {

struct In {
  Tensor t;
  bool constant = false;
};

// A one-node case: inputs (omitted: empty Tensor with constant=false and numel 0 marked by `skip`), n outputs.
OpCase one(const std::string& label, const std::string& domain, const std::string& op, const std::vector<In>& ins,
           std::map<std::string, AttrValue> attrs = {}, int outputs = 1, const std::vector<bool>& omit_out = {}) {
  CaseBuilder b(label);
  std::vector<std::string> names;
  for (const In& i : ins) names.push_back(i.t.dtype() == DType::undefined ? "" : b.input(i.t, i.constant));
  for (auto& o : b.node(domain, op, names, outputs, std::move(attrs), omit_out)) b.output(o);
  return b.done();
}
In none() { return In{}; }

const DType kFloats[] = {DType::f32, DType::f16};

std::vector<DType> dtypes_of(const kernels::ElementwiseRow& row) {
  std::vector<DType> r;
  for (DType t : {DType::f32, DType::f16, DType::i32, DType::i64, DType::boolean})
    if (row.allows(t)) r.push_back(t);
  return r;
}

// Values suited to the op: positive for logs and roots, nonzero divisors, small integers for comparisons.
Tensor operand(Rng& rng, const std::string& op, DType dt, const Shape& s, int which) {
  bool positive = op == "Log" || op == "Sqrt" || (op == "Pow" && which == 0);
  bool nonzero = which == 1 && (op == "Div" || op == "Mod");
  if (dt == DType::boolean) return rng.ints(dt, s, 0, 1);
  if (dt == DType::i32 || dt == DType::i64) {
    if (op == "Pow") return rng.ints(dt, s, which ? 0 : -3, which ? 3 : 3);
    return rng.ints(dt, s, -20, 20, nonzero);
  }
  if (positive) return rng.floats(dt, s, 0.2f, 2.0f);
  if (op == "Reciprocal" || nonzero) {
    Tensor t = rng.floats(DType::f32, s, 0.5f, 2.0f);
    for (int64_t i = 0; i < t.numel(); i += 2) t.data<float>()[i] = -t.data<float>()[i];
    return Rng::convert(t, dt);
  }
  if (op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" || op == "GreaterOrEqual")
    return Rng::convert(rng.ints(DType::f32, s, -2, 2), dt);
  if (op == "Pow") return rng.floats(dt, s, -2.0f, 2.0f);
  return rng.floats(dt, s, -3.0f, 3.0f);
}

std::vector<OpCase> elementwise_cases(Rng& rng, const std::string& domain, const std::string& op) {
  std::vector<OpCase> cases;
  for (const kernels::ElementwiseRow& row : kernels::elementwise_rows()) {
    if (row.domain != domain || row.op_type != op) continue;
    std::map<std::string, AttrValue> attrs;
    std::string spec = row.spec;
    if (auto p = spec.find("if="); p != std::string::npos) {  // if=ATTR:DEFAULT==VALUE
      std::string tok = spec.substr(p + 3, spec.find(' ', p) - p - 3);
      attrs[tok.substr(0, tok.find(':'))] = tok.substr(tok.find("==") + 2);
    }
    if (op == "Mod") attrs["fmod"] = (int64_t)1;
    if (op == "LeakyRelu") attrs["alpha"] = 0.3f;
    for (DType dt : dtypes_of(row)) {
      std::string tag = std::string(dtype_name(dt)) + (attrs.empty() ? "" : " (attributes)");
      if (row.kind == "unary") {
        for (Shape s : {Shape{7, 13}, Shape{1, 3, 5}, Shape{0, 4}}) {
          std::vector<In> ins{{operand(rng, op, dt, s, 0)}};
          if (op == "Clip") {
            ins.push_back({scalar_of(dt, -0.5), true});
            ins.push_back({scalar_of(dt, 0.75), true});
          }
          cases.push_back(one(tag + " " + shape_str(s), domain, op, ins, attrs));
        }
        if (spec.find("bias@1") != std::string::npos)
          cases.push_back(one(tag + " with bias", domain, op,
                              {{operand(rng, op, dt, {3, 2, 9}, 0)}, {operand(rng, op, dt, {9}, 1), true}}, attrs));
      } else if (row.kind == "select") {
        cases.push_back(one(tag + " broadcast", domain, op,
                            {{rng.ints(DType::boolean, {3, 1, 5}, 0, 1)}, {operand(rng, op, dt, {1, 4, 5}, 0)},
                             {operand(rng, op, dt, {5}, 1)}}));
        cases.push_back(one(tag + " empty", domain, op,
                            {{rng.ints(DType::boolean, {0, 3}, 0, 1)}, {operand(rng, op, dt, {1, 3}, 0)},
                             {operand(rng, op, dt, {0, 1}, 1)}}));
      } else {
        for (auto [sa, sb] : {std::pair<Shape, Shape>{{2, 3, 1, 5}, {4, 1}}, {{7}, {3, 7}}, {{11, 13}, {11, 13}},
                              {{0, 3}, {1, 3}}, {{2, 1, 3, 1, 2, 3}, {3, 1, 1, 3}}}) {
          if (op == "Mod" && (dt == DType::i32 || dt == DType::i64)) attrs["fmod"] = (int64_t)(sa.size() % 2);
          cases.push_back(one(tag + " " + shape_str(sa) + " " + shape_str(sb), domain, op,
                              {{operand(rng, op, dt, sa, 0)}, {operand(rng, op, dt, sb, 1)}}, attrs));
        }
        if (spec.find("variadic") != std::string::npos) {
          cases.push_back(one(tag + " three inputs", domain, op,
                              {{operand(rng, op, dt, {3, 1}, 0)}, {operand(rng, op, dt, {4}, 1)},
                               {operand(rng, op, dt, {2, 1, 4}, 1)}}));
          cases.push_back(one(tag + " one input", domain, op, {{operand(rng, op, dt, {5, 3}, 0)}}));
        }
      }
    }
  }
  return cases;
}

// Types the layout ops move (raw bits of 1, 2, 4 and 8 bytes).
const DType kAll[] = {DType::f32, DType::f16, DType::i64, DType::boolean};
Tensor any(Rng& rng, DType dt, const Shape& s) {
  return dt == DType::f32 || dt == DType::f16 ? rng.floats(dt, s) : rng.ints(dt, s, -50, 50);
}

std::vector<OpCase> layout_cases(Rng& rng, const std::string& op) {
  std::vector<OpCase> c;
  for (DType dt : kAll) {
    std::string t = dtype_name(dt);
    if (op == "Transpose") {
      c.push_back(one(t + " perm 2,0,1", "", op, {{any(rng, dt, {3, 4, 5})}},
                      {{"perm", std::vector<int64_t>{2, 0, 1}}}));
      c.push_back(one(t + " default perm", "", op, {{any(rng, dt, {2, 3, 1, 5})}}));
      c.push_back(one(t + " empty", "", op, {{any(rng, dt, {0, 3})}}));
    } else if (op == "Slice") {
      c.push_back(one(t + " steps", "", op, {{any(rng, dt, {5, 7, 3})}, {i64s({1, -1}), true}, {i64s({9, -8}), true},
                                             {i64s({0, 1}), true}, {i64s({2, -2}), true}}));
      c.push_back(one(t + " end clamp", "", op, {{any(rng, dt, {4, 9})}, {i64s({-3}), true},
                                                 {i64s({INT64_MAX}), true}, {i64s({1}), true}}));
      c.push_back(one(t + " empty", "", op, {{any(rng, dt, {4, 9})}, {i64s({3}), true}, {i64s({3}), true}}));
    } else if (op == "Split") {
      c.push_back(one(t + " sizes", "", op, {{any(rng, dt, {3, 9, 2})}, {i64s({2, 3, 4}), true}},
                      {{"axis", (int64_t)1}}, 3));
      c.push_back(one(t + " num_outputs", "", op, {{any(rng, dt, {7, 3})}}, {{"num_outputs", (int64_t)3}}, 3));
      c.push_back(one(t + " equal last axis", "", op, {{any(rng, dt, {2, 12})}}, {{"axis", (int64_t)-1}}, 2));
    } else if (op == "Concat") {
      c.push_back(one(t + " axis 1", "", op, {{any(rng, dt, {3, 2, 5})}, {any(rng, dt, {3, 0, 5})},
                                              {any(rng, dt, {3, 4, 5})}}, {{"axis", (int64_t)1}}));
      c.push_back(one(t + " last axis", "", op, {{any(rng, dt, {2, 3})}, {any(rng, dt, {2, 5})}},
                      {{"axis", (int64_t)-1}}));
    } else if (op == "Expand") {
      c.push_back(one(t, "", op, {{any(rng, dt, {3, 1})}, {i64s({2, 1, 4}), true}}));
    } else if (op == "Tile") {
      c.push_back(one(t, "", op, {{any(rng, dt, {2, 3})}, {i64s({3, 2}), true}}));
    } else if (op == "Pad") {
      for (const char* mode : {"constant", "edge", "reflect", "wrap"}) {
        std::vector<In> ins{{any(rng, dt, {3, 4, 5})}, {i64s({1, 0, 2, 2, 1, -1}), true}};
        if (std::string(mode) == "constant") ins.push_back({Rng::convert(scalar_of(DType::f32, 1.0), dt), true});
        c.push_back(one(t + " " + mode, "", op, ins, {{"mode", std::string(mode)}}));
      }
      c.push_back(one(t + " axes", "", op, {{any(rng, dt, {3, 4})}, {i64s({3, 2}), true}, none(), {i64s({-1}), true}},
                      {{"mode", std::string("reflect")}}));
    } else if (op == "ConstantOfShape") {
      Tensor v = Rng::convert(scalar_of(DType::f32, 3.0), dt);
      v = Tensor(v.dtype(), {1}, v.storage(), 0);
      c.push_back(one(t, "", op, {{i64s({2, 3, 5}), true}}, {{"value", v}}));
    } else if (op == "GatherND") {
      c.push_back(one(t + " k=2", "", op, {{any(rng, dt, {3, 4, 5})}, {rng.ints(DType::i64, {2, 3, 2}, -3, 2)}}));
      c.push_back(one(t + " batch_dims 1", "", op, {{any(rng, dt, {2, 4, 3})}, {rng.ints(DType::i64, {2, 5, 1}, 0, 3)}},
                      {{"batch_dims", (int64_t)1}}));
    } else if (op == "ScatterND") {
      Tensor idx = i64s({0, 2, -1, 2});
      idx = Tensor(DType::i64, {4, 1}, idx.storage(), 0);
      for (const char* red : {"none", "add", "mul", "max", "min"}) {
        if (dt == DType::boolean && std::string(red) != "none") continue;
        Tensor in = std::string(red) == "none" ? i64s({0, 2, 3, 1}) : idx;
        in = Tensor(DType::i64, {4, 1}, in.storage(), 0);
        c.push_back(one(t + " " + red, "", op, {{any(rng, dt, {5, 3})}, {in}, {any(rng, dt, {4, 3})}},
                        {{"reduction", std::string(red)}}));
      }
    } else if (op == "Gather") {
      c.push_back(one(t + " axis 1, int32 ids", "", op,
                      {{any(rng, dt, {3, 5, 2})}, {rng.ints(DType::i32, {2, 2}, -5, 4)}},
                      {{"axis", (int64_t)1}}));
      if (dt == DType::f32 || dt == DType::f16)
        c.push_back(one(t + " rows", "", op, {{any(rng, dt, {11, 7}), true}, {rng.ints(DType::i64, {1, 3}, -11, 10)}}));
    } else if (op == "Cast") {
      for (DType to : {DType::f32, DType::f16, DType::i32, DType::i64, DType::boolean})
        c.push_back(one(t + " to " + dtype_name(to), "", op, {{any(rng, dt, {3, 7})}}, {{"to", (int64_t)to}}));
    } else if (op == "Reshape") {
      c.push_back(one(t, "", op, {{any(rng, dt, {2, 3, 4})}, {i64s({0, -1}), true}}));
    } else if (op == "Identity") {
      c.push_back(one(t, "", op, {{any(rng, dt, {2, 3})}}));
    } else if (op == "Squeeze") {
      c.push_back(one(t, "", op, {{any(rng, dt, {2, 1, 3, 1})}, {i64s({1}), true}}));
    } else if (op == "Unsqueeze") {
      c.push_back(one(t, "", op, {{any(rng, dt, {2, 3})}, {i64s({0, -1}), true}}));
    } else if (op == "Flatten") {
      c.push_back(one(t, "", op, {{any(rng, dt, {2, 3, 4})}}, {{"axis", (int64_t)2}}));
    }
  }
  return c;
}

std::vector<OpCase> softmax_cases(Rng& rng, const std::string& op) {
  std::vector<OpCase> c;
  for (DType dt : kFloats) {
    c.push_back(one(std::string(dtype_name(dt)) + " last axis", "", op, {{rng.floats(dt, {3, 301}, -4, 4)}}));
    c.push_back(one(std::string(dtype_name(dt)) + " axis 1", "", op, {{rng.floats(dt, {2, 7, 3}, -4, 4)}},
                    {{"axis", (int64_t)1}}));
  }
  return c;
}

std::vector<OpCase> norm_cases(Rng& rng, const std::string& domain, const std::string& op) {
  std::vector<OpCase> c;
  for (DType dt : kFloats) {
    std::string t = dtype_name(dt);
    auto x = [&](Shape s) { return In{rng.floats(dt, s, -2, 2)}; };
    auto w = [&](Shape s) { return In{rng.floats(dt, s, 0.5f, 1.5f), true}; };
    if (op == "LayerNormalization") {
      c.push_back(one(t + " with bias", domain, op, {x({3, 67}), w({67}), w({67})}, {{"epsilon", 1e-5f}}));
      c.push_back(one(t + " axis 1", domain, op, {x({2, 3, 5}), w({3, 5}), none()}, {{"axis", (int64_t)1}}, 3,
                      {false, true, true}));
    } else if (op == "SkipLayerNormalization") {
      c.push_back(one(t, domain, op, {x({2, 3, 33}), x({2, 3, 33}), w({33}), w({33}), w({33})}, {}, 4,
                      {false, true, true, false}));
    } else if (op == "SimplifiedLayerNormalization" || op == "RMSNormalization") {
      c.push_back(one(t, domain, op, {x({5, 300}), w({300})}, {{"epsilon", 1e-6f}}));
      if (op == "RMSNormalization") {  // the CPU runs it as SimplifiedLayerNormalization (the same function)
        c.back().cpu_graph = std::make_shared<Graph>(c.back().g);
        c.back().cpu_graph->nodes[0].op_type = "SimplifiedLayerNormalization";
      }
    } else if (op == "SkipSimplifiedLayerNormalization") {
      c.push_back(one(t, domain, op, {x({3, 64}), x({3, 64}), w({64}), none(), w({64})}, {}, 4,
                      {false, true, true, false}));
    }
  }
  return c;
}

// Random 4-bit MatMulNBits weights: B uint8 [N, K/bs, bs/2], scales [N * K/bs], zero points [N, ceil(K/bs/2)].
std::vector<In> nbits_inputs(Rng& rng, DType dt, int64_t K, int64_t N, int64_t bs, bool zp) {
  int64_t blocks = K / bs;
  std::vector<In> r{{rng.ints(DType::u8, {N, blocks, bs / 2}, 0, 255), true},
                    {rng.floats(dt, {N * blocks}, 0.01f, 0.1f), true}};
  if (zp) r.push_back({rng.ints(DType::u8, {N, (blocks + 1) / 2}, 0, 255), true});
  return r;
}

std::vector<OpCase> linear_cases(Rng& rng, const std::string& op) {
  std::vector<OpCase> c;
  for (DType dt : kFloats) {
    std::string t = dtype_name(dt);
    if (op == "MatMul") {
      for (int64_t M : {1, 5})
        c.push_back(one(t + " constant B, M=" + std::to_string(M), "", op,
                        {{rng.floats(dt, {1, M, 96})}, {rng.floats(dt, {96, 37}), true}}));
      c.push_back(one(t + " batched", "", op, {{rng.floats(dt, {2, 3, 16})}, {rng.floats(dt, {2, 16, 5})}}));
    } else if (op == "MatMulNBits") {
      for (int64_t M : {1, 3})
        for (bool zp : {false, true}) {
          std::vector<In> ins{{rng.floats(dt, {1, M, 64})}};
          for (In& i : nbits_inputs(rng, dt, 64, 24, 32, zp)) ins.push_back(i);
          c.push_back(one(t + " M=" + std::to_string(M) + (zp ? " zero points" : ""), "com.microsoft", op, ins,
                          {{"K", (int64_t)64}, {"N", (int64_t)24}, {"bits", (int64_t)4}, {"block_size", (int64_t)32}}));
        }
    } else if (op == "GatherBlockQuantized") {
      c.push_back(one(t, "com.microsoft", op, {{rng.ints(DType::u8, {10, 32}, 0, 255), true},
                                               {rng.ints(DType::i64, {2, 3}, -10, 9)},
                                               {rng.floats(dt, {10, 2}, 0.01f, 0.2f), true}},
                      {{"block_size", (int64_t)32}, {"bits", (int64_t)4}, {"quantize_axis", (int64_t)1}}));
      // more rows than one load-time dequantization chunk (4,096 rows): ids on both sides of the chunk edge
      Tensor edge(DType::i64, {2, 3});
      const int64_t picks[6] = {0, 4095, 4096, 4099, 17, -1};
      for (int k = 0; k < 6; k++) edge.data<int64_t>()[k] = picks[k];
      c.push_back(one(t + " 4100 rows", "com.microsoft", op, {{rng.ints(DType::u8, {4100, 16}, 0, 255), true},
                                                               {edge},
                                                               {rng.floats(dt, {4100, 1}, 0.01f, 0.2f), true}},
                      {{"block_size", (int64_t)32}, {"bits", (int64_t)4}, {"quantize_axis", (int64_t)1}}));
      // zero points (3 blocks a row: the last byte's high nibble unused), and a [rows, blocks, block / 2] table
      c.push_back(one(t + " zero points", "com.microsoft", op, {{rng.ints(DType::u8, {12, 24}, 0, 255), true},
                                                                {rng.ints(DType::i64, {5}, -12, 11)},
                                                                {rng.floats(dt, {12, 3}, -0.2f, 0.2f), true},
                                                                {rng.ints(DType::u8, {12, 2}, 0, 255), true}},
                      {{"block_size", (int64_t)16}, {"bits", (int64_t)4}, {"quantize_axis", (int64_t)1}}));
      c.push_back(one(t + " 3-D table", "com.microsoft", op, {{rng.ints(DType::u8, {9, 4, 8}, 0, 255), true},
                                                             {rng.ints(DType::i64, {1, 4}, 0, 8)},
                                                             {rng.floats(dt, {9, 4, 1}, 0.01f, 0.2f), true}},
                      {{"block_size", (int64_t)16}, {"bits", (int64_t)4}, {"quantize_axis", (int64_t)2}}));
    }
  }
  return c;
}

std::vector<OpCase> rotary_cases(Rng& rng) {
  std::vector<OpCase> c;
  for (DType dt : kFloats)
    for (int64_t inter : {0, 1}) {
      Tensor pos = rng.ints(DType::i64, {2, 3}, 0, 15);
      c.push_back(one(std::string(dtype_name(dt)) + (inter ? " interleaved" : ""), "com.microsoft", "RotaryEmbedding",
                      {{rng.floats(dt, {2, 3, 4 * 16})}, {pos}, {rng.floats(dt, {16, 8}), true},
                       {rng.floats(dt, {16, 8}), true}},
                      {{"interleaved", inter}, {"num_heads", (int64_t)4}}));
    }
  return c;
}

// Separate q/k/v projections and a RotaryEmbedding pair before GroupQueryAttention; the device side fuses them into
// one packed-QKV projection with the rotary folded into the attention (position_ids input), 6 nodes -> 2. `bias`:
// each projection followed by an Add of a constant bias (Qwen2), folded into the packed projection (9 nodes -> 2);
// `nbits`: MatMulNBits projections; `norm`: after a SimplifiedLayerNormalization (-> NormProjection).
OpCase qkv_rotary_case(Rng& rng, DType dt, bool decode, bool bias = false, bool nbits = false, bool norm = false) {
  const int64_t Hq = 4, Hkv = 2, D = 16, cap = 16, K = nbits ? 64 : 48, S = decode ? 1 : 5, past = decode ? 4 : 0;
  CaseBuilder b(std::string(dtype_name(dt)) + (nbits ? " int4" : "") + (norm ? " norm +" : "") + " packed QKV" +
                (bias ? " + bias" : "") + " + rotary fusion" + (decode ? ", decode" : ", prompt"));
  std::string x = b.input(rng.floats(dt, {1, S, K}));
  if (norm) x = b.node("", "SimplifiedLayerNormalization", {x, b.input(rng.floats(dt, {K}, 0.5f, 1.5f), true)})[0];
  Tensor pos(DType::i64, {1, S});
  for (int64_t i = 0; i < S; i++) pos.data<int64_t>()[i] = past + i;
  std::string p = b.input(pos), cos = b.input(rng.floats(dt, {32, D / 2}), true);
  std::string sin = b.input(rng.floats(dt, {32, D / 2}), true);
  auto proj = [&](int64_t heads) {
    std::string y;
    if (!nbits) {
      y = b.node("", "MatMul", {x, b.input(rng.floats(dt, {K, heads * D}, -0.3f, 0.3f), true)})[0];
    } else {
      std::vector<std::string> names{x};
      for (In& i : nbits_inputs(rng, dt, K, heads * D, 32, false)) names.push_back(b.input(i.t, true));
      y = b.node("com.microsoft", "MatMulNBits", names, 1,
                 {{"K", K}, {"N", heads * D}, {"bits", (int64_t)4}, {"block_size", (int64_t)32}})[0];
    }
    if (bias) y = b.node("", "Add", {y, b.input(rng.floats(dt, {heads * D}), true)})[0];
    return y;
  };
  std::string q = proj(Hq), k = proj(Hkv), v = proj(Hkv);
  q = b.node("com.microsoft", "RotaryEmbedding", {q, p, cos, sin}, 1, {{"num_heads", Hq}})[0];
  k = b.node("com.microsoft", "RotaryEmbedding", {k, p, cos, sin}, 1, {{"num_heads", Hkv}})[0];
  Tensor kc = Tensor::zeros(dt, {1, Hkv, cap, D}), vc = Tensor::zeros(dt, {1, Hkv, cap, D});
  if (decode) {  // positions < past filled
    Tensor rk = rng.floats(dt, {1, Hkv, cap, D}), rv = rng.floats(dt, {1, Hkv, cap, D});
    size_t es = dtype_size(dt);
    for (int64_t h = 0; h < Hkv; h++) {
      std::memcpy((char*)kc.raw() + h * cap * D * es, (char*)rk.raw() + h * cap * D * es, past * D * es);
      std::memcpy((char*)vc.raw() + h * cap * D * es, (char*)rv.raw() + h * cap * D * es, past * D * es);
    }
  }
  Tensor seqlens(DType::i32, {1}), total(DType::i32, {1});
  seqlens.data<int32_t>()[0] = (int32_t)(past + S - 1);
  total.data<int32_t>()[0] = (int32_t)(past + S);
  auto outs = b.node("com.microsoft", "GroupQueryAttention",
                     {q, k, v, b.input(kc), b.input(vc), b.input(seqlens), b.input(total)}, 3,
                     {{"num_heads", Hq}, {"kv_num_heads", Hkv}});
  for (auto& o : outs) b.output(o);
  OpCase c = b.done();
  c.fused_op = norm ? "NormProjection" : "GroupQueryAttention";
  c.fused_nodes = 2;
  if (nbits && dt == DType::f16) c.f16_atol = 1.5e-2;  // packed-fp16 int4 products, as mlp_case's
  return c;
}

// GroupQueryAttention: a prompt into an empty cache and a decode step over a filled one, separate and packed QKV,
// with softcap + a sliding window, and with rotary. The cache is past = present (capacity 16), as the session binds it.
std::vector<OpCase> gqa_cases(Rng& rng) {
  std::vector<OpCase> c;
  const int64_t Hq = 4, Hkv = 2, D = 16, cap = 16;
  for (DType dt : kFloats)
    for (int variant = 0; variant < 5; variant++) {  // 0 prompt, 1 decode, 2/3 packed, 4 prompt with softcap window
      bool decode = variant & 1, packed = variant == 2 || variant == 3;
      bool capped = variant == 1 || variant == 4;
      int64_t S = decode ? 1 : 5, past = decode ? 6 : 0;
      Tensor kc = Tensor::zeros(dt, {1, Hkv, cap, D}), vc = Tensor::zeros(dt, {1, Hkv, cap, D});
      if (decode) {  // past positions filled, the rest zero (what lies beyond the total is not compared)
        Tensor rk = rng.floats(dt, {1, Hkv, cap, D}), rv = rng.floats(dt, {1, Hkv, cap, D});
        size_t es = dtype_size(dt);
        for (int64_t h = 0; h < Hkv; h++) {
          std::memcpy((char*)kc.raw() + h * cap * D * es, (char*)rk.raw() + h * cap * D * es, past * D * es);
          std::memcpy((char*)vc.raw() + h * cap * D * es, (char*)rv.raw() + h * cap * D * es, past * D * es);
        }
      }
      Tensor seqlens(DType::i32, {1}), total(DType::i32, {1});
      seqlens.data<int32_t>()[0] = (int32_t)(past + S - 1);
      total.data<int32_t>()[0] = (int32_t)(past + S);
      std::vector<In> ins;
      if (packed) ins = {{rng.floats(dt, {1, S, (Hq + 2 * Hkv) * D})}, none(), none()};
      else
        ins = {{rng.floats(dt, {1, S, Hq * D})}, {rng.floats(dt, {1, S, Hkv * D})}, {rng.floats(dt, {1, S, Hkv * D})}};
      ins.push_back({kc});
      ins.push_back({vc});
      ins.push_back({seqlens});
      ins.push_back({total});
      std::map<std::string, AttrValue> attrs{{"num_heads", Hq}, {"kv_num_heads", Hkv}};
      if (capped) attrs["softcap"] = 2.0f, attrs["local_window_size"] = (int64_t)3;
      if (packed) {
        attrs["do_rotary"] = (int64_t)1;
        ins.push_back({rng.floats(dt, {32, D / 2}), true});
        ins.push_back({rng.floats(dt, {32, D / 2}), true});
      }
      std::string label = std::string(dtype_name(dt)) + (decode ? " decode" : " prompt") +
                          (packed ? " packed rotary" : "") + (capped ? " softcap window" : "");
      c.push_back(one(label, "com.microsoft", "GroupQueryAttention", ins, attrs, 3));
    }
  for (DType dt : kFloats)  // q/k/v projections + RotaryEmbedding pair: fusion.cpp packs them into one projection
    for (bool decode : {false, true}) {
      c.push_back(qkv_rotary_case(rng, dt, decode));
      c.push_back(qkv_rotary_case(rng, dt, decode, /*bias=*/true));
      c.push_back(qkv_rotary_case(rng, dt, decode, /*bias=*/true, /*nbits=*/true));
      c.push_back(qkv_rotary_case(rng, dt, decode, /*bias=*/true, /*nbits=*/false, /*norm=*/true));
      c.push_back(qkv_rotary_case(rng, dt, decode, /*bias=*/true, /*nbits=*/true, /*norm=*/true));
    }
  return c;
}

// The unfused MLP (gate/up projections, SiLU(gate) * up), optionally after a SimplifiedLayerNormalization: the
// device side fuses it into ogx.GateUpSiLU (and ogx.NormProjection).
OpCase mlp_case(Rng& rng, DType dt, bool norm, bool nbits, int64_t M) {
  std::string label = std::string(dtype_name(dt)) + (nbits ? " int4" : "") + " M=" + std::to_string(M);
  CaseBuilder b(label);
  const int64_t K = 64, I = 40;
  std::string x = b.input(rng.floats(dt, {1, M, K}));
  if (norm) x = b.node("", "SimplifiedLayerNormalization", {x, b.input(rng.floats(dt, {K}, 0.5f, 1.5f), true)})[0];
  auto proj = [&](const std::string& in) {
    if (!nbits) return b.node("", "MatMul", {in, b.input(rng.floats(dt, {K, I}, -0.3f, 0.3f), true)})[0];
    std::vector<std::string> names{in};
    for (In& i : nbits_inputs(rng, dt, K, I, 32, false)) names.push_back(b.input(i.t, true));
    return b.node("com.microsoft", "MatMulNBits", names, 1,
                  {{"K", K}, {"N", I}, {"bits", (int64_t)4}, {"block_size", (int64_t)32}})[0];
  };
  std::string gate = proj(x), up = proj(x);
  std::string sig = b.node("", "Sigmoid", {gate})[0];
  std::string silu = b.node("", "Mul", {gate, sig})[0];
  b.output(b.node("", "Mul", {silu, up})[0]);
  OpCase c = b.done();
  c.fused_op = norm ? "NormProjection" : "GateUpSiLU";
  // int4 fp16: the device multiplies in packed fp16 (matvec_q4_wide.comp HALF_DOT; the CPU in fp32): each product
  // and each word's sum of 4 rounds to fp16 (2^-11 relative), so gate and up (K = 64, |value| up to ~8) carry
  // ~16 roundings of ~1e-3 (~4e-3), and silu(gate) * up (|up| up to ~4) up to ~1.5e-2: a random draw of this case
  // reached 5e-3 on an output of 0.24 (the fp32-product kernel: within the default tolerance).
  if (nbits && dt == DType::f16) c.f16_atol = 1.5e-2;
  return c;
}

std::vector<OpCase> fused_cases(Rng& rng, bool norm) {
  std::vector<OpCase> c;
  for (DType dt : kFloats)
    for (bool nbits : {false, true})
      for (int64_t M : {1, 4}) c.push_back(mlp_case(rng, dt, norm, nbits, M));
  if (norm)
    for (DType dt : kFloats) {  // a plain projection after a norm
      CaseBuilder b(std::string(dtype_name(dt)) + " norm + MatMul");
      std::string x = b.input(rng.floats(dt, {1, 3, 32}));
      std::string gamma = b.input(rng.floats(dt, {32}, 0.5f, 1.5f), true);
      std::string n = b.node("", "SimplifiedLayerNormalization", {x, gamma})[0];
      b.output(b.node("", "MatMul", {n, b.input(rng.floats(dt, {32, 21}), true)})[0]);
      c.push_back(b.done());
      c.back().fused_op = "NormProjection";
    }
  return c;
}

}  // namespace

const std::map<std::pair<std::string, std::string>, Gen>& generators() {
  static const auto table = [] {
    std::map<std::pair<std::string, std::string>, Gen> t;
    for (const kernels::ElementwiseRow& row : kernels::elementwise_rows()) {
      std::string d = row.domain, op = row.op_type;
      t[{d, op}] = [d, op](Rng& r) { return elementwise_cases(r, d, op); };
    }
    for (const char* op : {"Transpose", "Slice", "Split", "Concat", "Expand", "Tile", "Pad", "ConstantOfShape",
                           "GatherND", "ScatterND", "Gather", "Cast", "Reshape", "Identity", "Squeeze", "Unsqueeze",
                           "Flatten"}) {
      std::string o = op;
      t[{"", o}] = [o](Rng& r) { return layout_cases(r, o); };
    }
    for (const char* op : {"Softmax", "LogSoftmax"}) {
      std::string o = op;
      t[{"", o}] = [o](Rng& r) { return softmax_cases(r, o); };
    }
    for (auto [d, op] : std::vector<std::pair<std::string, std::string>>{
             {"", "LayerNormalization"}, {"com.microsoft", "SkipLayerNormalization"},
             {"", "SimplifiedLayerNormalization"}, {"com.microsoft", "SimplifiedLayerNormalization"},
             {"", "RMSNormalization"}, {"com.microsoft", "SkipSimplifiedLayerNormalization"}})
      t[{d, op}] = [d, op](Rng& r) { return norm_cases(r, d, op); };
    t[{"", "MatMul"}] = [](Rng& r) { return linear_cases(r, "MatMul"); };
    t[{"com.microsoft", "MatMulNBits"}] = [](Rng& r) { return linear_cases(r, "MatMulNBits"); };
    t[{"com.microsoft", "GatherBlockQuantized"}] = [](Rng& r) { return linear_cases(r, "GatherBlockQuantized"); };
    t[{"com.microsoft", "RotaryEmbedding"}] = [](Rng& r) { return rotary_cases(r); };
    t[{"com.microsoft", "GroupQueryAttention"}] = [](Rng& r) { return gqa_cases(r); };
    t[{"ogx", "GateUpSiLU"}] = [](Rng& r) { return fused_cases(r, false); };
    t[{"ogx", "NormProjection"}] = [](Rng& r) { return fused_cases(r, true); };
    return t;
  }();
  return table;
}

}  // namespace ogx::vk::test
