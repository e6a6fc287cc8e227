#include "providers/vulkan/graph/fusion.h"

#include "common/mapped_file.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <set>

namespace ogx::vk::graph {
namespace {

bool is_op(const Node& n, const char* domain, const char* op) { return n.domain == domain && n.op_type == op; }
bool is_linear(const Node& n) { return is_op(n, "", "MatMul") || is_op(n, "com.microsoft", "MatMulNBits"); }
int in(const Node& n, size_t k) { return k < n.inputs.size() ? n.inputs[k] : -1; }

class Rewriter {
 public:
  Rewriter(Graph& g, LazyConstants* lazy, WeightLayouts* layouts) : g_(g), lazy_(lazy), layouts_(layouts) {
    producer_.assign(g.values.size(), -1);
    users_.resize(g.values.size());
    for (size_t i = 0; i < g.nodes.size(); i++) {
      for (int v : g.nodes[i].outputs)
        if (v >= 0) producer_[v] = (int)i;
      for (int v : g.nodes[i].inputs)
        if (v >= 0) users_[v].push_back((int)i);
    }
    for (int v : g.output_ids) outputs_.insert(v);
    dead_.assign(g.nodes.size(), 0);
  }

  // The node producing v when v feeds exactly the nodes `only` (and is no graph output), else -1.
  int producer_used_only_by(int v, std::vector<int> only) const {
    if (v < 0 || outputs_.count(v)) return -1;
    std::vector<int> users = users_[v];
    std::sort(users.begin(), users.end());
    std::sort(only.begin(), only.end());
    if (users != only) return -1;
    int p = producer_[v];
    return p >= 0 && !dead_[p] ? p : -1;
  }
  int sole_producer(int v, int only) const { return producer_used_only_by(v, {only}); }
  const Tensor* constant(int v) const { return v >= 0 && g_.values[v].is_constant ? &g_.values[v].constant : nullptr; }
  // A constant now or one an earlier rewrite registered to be built on demand.
  bool is_constant(int v) const { return constant(v) || (v >= 0 && lazy_ && lazy_->count(v)); }
  // v has no users and is no graph output.
  bool unused(int v) const { return v < 0 || (users_[v].empty() && !outputs_.count(v)); }
  const std::vector<int>& users(int v) const { return users_[v]; }
  bool is_output(int v) const { return outputs_.count(v) != 0; }

  // Projections of one input with constant weights and the same attributes, so their weights can be concatenated.
  bool compatible(const std::vector<int>& ns) const {
    const Node& a = g_.nodes[ns[0]];
    for (int i : ns) {
      const Node& n = g_.nodes[i];
      if (!is_linear(n) || n.op_type != a.op_type || in(n, 0) != in(a, 0) || !constant(in(n, 1))) return false;
      if (n.op_type == "MatMul") {
        const Tensor* w = constant(in(n, 1));
        if (w->rank() != 2 || w->dim(0) != constant(in(a, 1))->dim(0) || w->dtype() != constant(in(a, 1))->dtype())
          return false;
        continue;
      }
      for (const char* k : {"K", "bits", "block_size", "accuracy_level"})
        if (n.attr_int(k, -1) != a.attr_int(k, -1)) return false;
      if (!constant(in(n, 2)) || in(n, 4) >= 0 || in(n, 5) >= 0) return false;
      if ((in(n, 3) >= 0) != (in(a, 3) >= 0) || (in(n, 3) >= 0 && !constant(in(n, 3)))) return false;
      if (constant(in(n, 2))->dtype() != constant(in(a, 2))->dtype()) return false;
    }
    return true;
  }

  // One projection with the weights of `ns` concatenated along N (outputs in that order); returns its output.
  // `biases` (empty, or one constant [N_i] per node): concatenated into the projection's bias, input 5 (MatMulNBits'
  // own bias input; for MatMul the same slot, which only the Vulkan session's MatMul reads).
  int fuse_linear(const std::vector<int>& ns, const std::string& name, const std::vector<int>& biases = {}) {
    Node f = g_.nodes[ns[0]];
    f.name = name;
    int out = g_.add_value(name + "/output_0");
    f.outputs = {out};
    if (f.op_type == "MatMul") {
      auto ws = inputs_of(ns, 1);
      int w = add_constant(name + ".weight", [ws] { return releasing(concat_columns(ws), ws); });
      f.inputs = {in(f, 0), w};
      if (layouts_) {
        int64_t offset = 0;
        for (size_t i = 0; i < ns.size(); i++) {
          (*layouts_)[w].push_back({in(g_.nodes[ns[i]], 1), offset, 1});
          offset += ws[i].dim(1);
        }
      }
    } else {
      int64_t N = 0;
      for (int i : ns) N += g_.nodes[i].attr_int("N", 0);
      f.attrs["N"] = N;
      int zp = -1;
      auto rows = [&](int k) -> std::function<Tensor()> {
        return [t = inputs_of(ns, k)] { return releasing(concat_rows(t), t); };
      };
      if (in(f, 3) >= 0) zp = add_constant(name + ".zero_points", rows(3));
      f.inputs = {in(f, 0), add_constant(name + ".weight", rows(1)), add_constant(name + ".scales", rows(2))};
      if (zp >= 0) f.inputs.push_back(zp);
    }
    if (!biases.empty()) {
      std::vector<Tensor> bs;
      for (int v : biases) bs.push_back(*constant(v));
      f.inputs.resize(6, -1);
      f.inputs[5] = add_constant(name + ".bias", [bs] { return concat_rows(bs); });
    }
    int at = *std::min_element(ns.begin(), ns.end());
    inserts_.push_back({at, std::move(f)});
    for (int i : ns) dead_[i] = 1;
    return out;
  }

  // One projection whose weight rows alternate between the two nodes' (gate j, up j, gate j+1, ...), as the
  // interleaved gate/up SiLU kernels read them. Both must have the same N.
  Node interleaved_linear(int a, int b, const std::string& name) {
    Node f = g_.nodes[a];
    f.name = name;
    std::vector<int> ns{a, b};
    if (f.op_type == "MatMul") {
      auto ws = inputs_of(ns, 1);
      OGX_CHECK(ws[0].shape() == ws[1].shape(), "gate/up weights differ in shape");
      int w = add_constant(name + ".weight", [ws] { return releasing(interleave_columns(ws[0], ws[1]), ws); });
      f.inputs = {in(f, 0), w};
      if (layouts_) (*layouts_)[w] = {{in(g_.nodes[a], 1), 0, 2}, {in(g_.nodes[b], 1), 1, 2}};
    } else {
      int64_t N = f.attr_int("N", 0);
      f.attrs["N"] = 2 * N;
      auto rows = [this, &ns, N](int k) -> std::function<Tensor()> {
        auto t = inputs_of(ns, k);
        OGX_CHECK(t[0].bytes() == t[1].bytes() && N > 0 && t[0].bytes() % (size_t)N == 0,
                  "gate/up quantized inputs differ");
        return [t, N] { return releasing(interleave_rows(t[0], t[1], N), t); };
      };
      int zp = in(f, 3) >= 0 ? add_constant(name + ".zero_points", rows(3)) : -1;
      f.inputs = {in(f, 0), add_constant(name + ".weight", rows(1)), add_constant(name + ".scales", rows(2))};
      if (zp >= 0) f.inputs.push_back(zp);
    }
    f.attrs["linear"] = f.op_type;
    f.op_type = "GateUpSiLU";
    f.domain = "ogx";
    dead_[a] = dead_[b] = 1;
    return f;
  }

  void replace(int node, Node n) {
    dead_[node] = 1;
    inserts_.push_back({node, std::move(n)});
  }
  void kill(int node) { dead_[node] = 1; }
  Graph& graph() { return g_; }

  // Rebuilds the node list: new nodes at the position of the first node they replace, dead ones dropped.
  void commit() {
    std::vector<Node> nodes;
    std::stable_sort(inserts_.begin(), inserts_.end(), [](auto& a, auto& b) { return a.first < b.first; });
    size_t k = 0;
    for (size_t i = 0; i < g_.nodes.size(); i++) {
      for (; k < inserts_.size() && inserts_[k].first == (int)i; k++) nodes.push_back(std::move(inserts_[k].second));
      if (!dead_[i]) nodes.push_back(std::move(g_.nodes[i]));
    }
    g_.nodes = std::move(nodes);
  }

 private:
  // A new constant made by `make`: deferred when the caller keeps lazy constants (built when an op needs it, so
  // the concatenated copies never all exist at once), else built now.
  int add_constant(const std::string& name, std::function<Tensor()> make) {
    int v = g_.add_value(name);
    if (lazy_) {
      (*lazy_)[v] = std::move(make);
    } else {
      g_.values[v].is_constant = true;
      g_.values[v].constant = make();
    }
    return v;
  }
  // The parts' file pages, once copied into a fused constant (which the device then holds): dropped from the mapped
  // model file, so a load's host memory does not keep both (a later read re-faults them).
  static Tensor releasing(Tensor fused, const std::vector<Tensor>& parts) {
    for (const Tensor& t : parts) MappedFile::release_if_mapped(t.raw(), t.bytes());
    return fused;
  }
  // Input k of each node (copies share the weights' storage).
  std::vector<Tensor> inputs_of(const std::vector<int>& ns, int k) const {
    std::vector<Tensor> ts;
    for (int i : ns) ts.push_back(*constant(in(g_.nodes[i], k)));
    return ts;
  }
  // MatMul weights [K, N_i] -> [K, sum N_i].
  static Tensor concat_columns(const std::vector<Tensor>& ws) {
    int64_t N = 0;
    for (const Tensor& w : ws) N += w.dim(1);
    int64_t K = ws[0].dim(0);
    size_t es = dtype_size(ws[0].dtype());
    Tensor out(ws[0].dtype(), {K, N});
    char* dst = static_cast<char*>(out.raw());
    for (int64_t k = 0; k < K; k++)
      for (const Tensor& w : ws) {
        size_t row = (size_t)w.dim(1) * es;
        std::memcpy(dst, static_cast<const char*>(w.raw()) + k * row, row);
        dst += row;
      }
    return out;
  }
  // MatMulNBits B, scales or zero points (N-major) stacked along N.
  static Tensor concat_rows(const std::vector<Tensor>& ts) {
    int64_t lead = 0;
    for (const Tensor& t : ts) lead += t.rank() ? t.dim(0) : 1;
    Shape s = ts[0].shape();
    if (s.empty()) s = {1};
    s[0] = lead;
    Tensor out(ts[0].dtype(), s);
    char* dst = static_cast<char*>(out.raw());
    for (const Tensor& t : ts) {
      std::memcpy(dst, t.raw(), t.bytes());
      dst += t.bytes();
    }
    return out;
  }
  // MatMul weights [K, N] of two nodes -> [K, 2N] with their columns alternating.
  static Tensor interleave_columns(const Tensor& a, const Tensor& b) {
    int64_t K = a.dim(0), N = a.dim(1);
    size_t es = dtype_size(a.dtype());
    Tensor out(a.dtype(), {K, 2 * N});
    char* dst = static_cast<char*>(out.raw());
    for (int64_t k = 0; k < K; k++)
      for (int64_t n = 0; n < N; n++)
        for (const Tensor* t : {&a, &b}) {
          std::memcpy(dst, static_cast<const char*>(t->raw()) + (k * N + n) * es, es);
          dst += es;
        }
    return out;
  }
  // MatMulNBits inputs of two nodes with N rows each, rows alternating.
  static Tensor interleave_rows(const Tensor& a, const Tensor& b, int64_t N) {
    size_t row = a.bytes() / (size_t)N;
    Shape s = a.shape();
    if (s.empty()) s = {1};
    s[0] *= 2;
    Tensor out(a.dtype(), s);
    char* dst = static_cast<char*>(out.raw());
    for (int64_t n = 0; n < N; n++)
      for (const Tensor* t : {&a, &b}) {
        std::memcpy(dst, static_cast<const char*>(t->raw()) + n * row, row);
        dst += row;
      }
    return out;
  }

  Graph& g_;
  LazyConstants* lazy_;
  WeightLayouts* layouts_;
  std::vector<int> producer_;
  std::vector<std::vector<int>> users_;
  std::set<int> outputs_;
  std::vector<char> dead_;
  std::vector<std::pair<int, Node>> inserts_;
};

// Two RotaryEmbedding nodes GroupQueryAttention's do_rotary can stand for: the same caches and positions, and the
// whole head rotating or — partial rotary (Phi-4-mini) — rotary_embedding_dim R matching constant caches [*, R/2]
// (GroupQueryAttention rotates the first 2 x cache width dims).
bool same_rotary(const Graph& g, const Node& a, const Node& b) {
  for (size_t k = 1; k < 4; k++)
    if (in(a, k) != in(b, k)) return false;
  for (const char* at : {"interleaved", "rotary_embedding_dim", "is_packed_batching"})
    if (a.attr_int(at, 0) != b.attr_int(at, 0)) return false;
  if (const int64_t R = a.attr_int("rotary_embedding_dim", 0); R != 0) {
    const int cos = in(a, 2);
    if (cos < 0 || !g.values[cos].is_constant || g.values[cos].constant.rank() != 2 ||
        g.values[cos].constant.dim(1) * 2 != R)
      return false;
  }
  return a.attr_int("is_packed_batching", 0) == 0 && a.attr_float("scale", 1.0f) == 1.0f &&
         b.attr_float("scale", 1.0f) == 1.0f;
}

// The projection behind value v (which feeds only node `user`): v's producer when it is a projection, or — q/k/v
// biases (Qwen2) — an Add of a projection's output (feeding only the Add) and a constant [N] of the projection's N:
// then the projection, with the Add in *add and the bias value in *bias. (Rewriter::compatible decides whether the
// projections found can be packed: it refuses MatMulNBits with a bias of its own.)
int projection_behind(Rewriter& r, int v, int user, int* add, int* bias) {
  *add = *bias = -1;
  const Graph& g = r.graph();
  int p = r.sole_producer(v, user);
  if (p < 0 || is_linear(g.nodes[p])) return p;
  const Node& a = g.nodes[p];
  if (!is_op(a, "", "Add") || a.inputs.size() != 2) return -1;
  for (int o = 0; o < 2; o++) {
    const Tensor* b = r.constant(a.inputs[1 - o]);
    int l = r.sole_producer(a.inputs[o], p);
    if (!b || b->rank() != 1 || l < 0 || !is_linear(g.nodes[l])) continue;
    const Node& n = g.nodes[l];
    const Tensor* w = r.constant(in(n, 1));
    int64_t N = n.op_type == "MatMul" ? (w && w->rank() == 2 ? w->dim(1) : -1) : n.attr_int("N", -1);
    if (b->dim(0) != N) continue;
    *add = p;
    *bias = a.inputs[1 - o];
    return l;
  }
  return -1;
}

void fuse_qkv(Rewriter& r, FusionCounts& c, bool matmul_bias) {
  Graph& g = r.graph();
  for (size_t i = 0; i < g.nodes.size(); i++) {
    Node& n = g.nodes[i];
    if (!is_op(n, "com.microsoft", "GroupQueryAttention") || n.attr_int("do_rotary", 0) != 0) continue;
    if (in(n, 0) < 0 || in(n, 1) < 0 || in(n, 2) < 0 || in(n, 9) >= 0) continue;
    // (A bias Add behind q / k / v folds into the packed projection; MatMul biases only where the session's MatMul
    // reads them.)
    int add[3], bias[3];
    auto behind = [&](int v, int user, int k) {
      int l = projection_behind(r, v, user, &add[k], &bias[k]);
      if (l >= 0 && bias[k] >= 0 && g.nodes[l].op_type == "MatMul" && !matmul_bias) return -1;
      return l;
    };
    int rq = r.sole_producer(in(n, 0), (int)i), rk = r.sole_producer(in(n, 1), (int)i);
    if (rq < 0 || rk < 0) continue;
    bool rotary = is_op(g.nodes[rq], "com.microsoft", "RotaryEmbedding");
    if (rotary != is_op(g.nodes[rk], "com.microsoft", "RotaryEmbedding")) continue;
    if (rotary && !same_rotary(g, g.nodes[rq], g.nodes[rk])) continue;
    int lq = rotary ? behind(in(g.nodes[rq], 0), rq, 0) : behind(in(n, 0), (int)i, 0);
    int lk = rotary ? behind(in(g.nodes[rk], 0), rk, 1) : behind(in(n, 1), (int)i, 1);
    int lv = behind(in(n, 2), (int)i, 2);
    if (lq < 0 || lk < 0 || lv < 0) continue;
    bool biased = bias[0] >= 0 || bias[1] >= 0 || bias[2] >= 0;
    if (biased && (bias[0] < 0 || bias[1] < 0 || bias[2] < 0)) continue;  // all three or none
    if (biased && (r.constant(bias[0])->dtype() != r.constant(bias[1])->dtype() ||
                   r.constant(bias[0])->dtype() != r.constant(bias[2])->dtype()))
      continue;
    if (!r.compatible({lq, lk, lv})) continue;
    Node rot = rotary ? g.nodes[rq] : Node();
    int qkv = r.fuse_linear({lq, lk, lv}, n.name + "/qkv_proj",
                            biased ? std::vector<int>{bias[0], bias[1], bias[2]} : std::vector<int>{});
    if (biased)
      for (int k : add) r.kill(k);
    Node& a = g.nodes[i];
    a.inputs.resize(std::max<size_t>(a.inputs.size(), 10), -1);
    a.inputs[0] = qkv;
    a.inputs[1] = a.inputs[2] = -1;
    if (rotary) {
      a.inputs[7] = in(rot, 2);
      a.inputs[8] = in(rot, 3);
      a.inputs[9] = in(rot, 1);
      a.attrs["do_rotary"] = (int64_t)1;
      a.attrs["rotary_interleaved"] = rot.attr_int("interleaved", 0);
      r.kill(rq);
      r.kill(rk);
      c.rotary++;
    }
    c.qkv++;
  }
}

void fuse_gate_up(Rewriter& r, FusionCounts& c) {
  Graph& g = r.graph();
  for (size_t i = 0; i < g.nodes.size(); i++) {
    const Node& h = g.nodes[i];
    if (!is_op(h, "", "Mul") || h.inputs.size() != 2 || h.outputs.size() != 1) continue;
    for (int order = 0; order < 2; order++) {
      int m1 = r.sole_producer(h.inputs[order], (int)i), lu = r.sole_producer(h.inputs[1 - order], (int)i);
      if (m1 < 0 || lu < 0 || !is_op(g.nodes[m1], "", "Mul") || !is_linear(g.nodes[lu])) continue;
      const Node& m = g.nodes[m1];
      if (m.inputs.size() != 2) continue;
      int gate = -1, sig = -1;
      for (int o = 0; o < 2; o++) {
        int s = r.sole_producer(m.inputs[o], m1);
        if (s >= 0 && is_op(g.nodes[s], "", "Sigmoid") && in(g.nodes[s], 0) == m.inputs[1 - o]) {
          sig = s;
          gate = m.inputs[1 - o];
        }
      }
      if (sig < 0) continue;
      int lg = r.producer_used_only_by(gate, {sig, m1});  // gate feeds exactly the Sigmoid and the Mul
      if (lg < 0 || !is_linear(g.nodes[lg]) || !r.compatible({lg, lu})) continue;
      const Node& gn = g.nodes[lg];
      const Node& un = g.nodes[lu];
      bool same_n = gn.op_type == "MatMul" ? r.constant(in(gn, 1))->shape() == r.constant(in(un, 1))->shape()
                                           : gn.attr_int("N", 0) == un.attr_int("N", 0);
      if (!same_n) continue;
      Node silu = r.interleaved_linear(lg, lu, h.name + "/gate_up_silu");
      silu.outputs = h.outputs;
      r.kill(sig);
      r.kill(m1);
      r.replace((int)i, std::move(silu));
      c.gate_up++;
      break;
    }
  }
}

// (Skip)SimplifiedLayerNormalization -> the only projection of its output, as ogx.NormProjection.
// Inputs: 0 x, 1 skip, 2 gamma, 3 norm bias (-1 when absent), then the projection's inputs 1..; outputs: the
// projection's output, the norm's residual (input + skip + bias; -1 when absent). Attributes: the projection's,
// epsilon, projection (its op type).
void fuse_norm_projection(Rewriter& r, FusionCounts& c) {
  Graph& g = r.graph();
  for (size_t i = 0; i < g.nodes.size(); i++) {
    const Node& n = g.nodes[i];
    bool skip = is_op(n, "com.microsoft", "SkipSimplifiedLayerNormalization");
    bool plain = is_op(n, "", "SimplifiedLayerNormalization") || is_op(n, "com.microsoft", "SimplifiedLayerNormalization");
    if ((!skip && !plain) || n.attr_int("axis", -1) != -1 || n.outputs.empty() || n.outputs[0] < 0) continue;
    if (!r.unused(n.outputs.size() > 1 ? n.outputs[1] : -1) || !r.unused(n.outputs.size() > 2 ? n.outputs[2] : -1))
      continue;
    int y = n.outputs[0];
    if (r.is_output(y) || r.users(y).size() != 1) continue;
    int pi = r.users(y)[0];
    const Node& p = g.nodes[pi];
    bool gate_up = is_op(p, "ogx", "GateUpSiLU");
    if (!(is_linear(p) || gate_up) || in(p, 0) != y || p.outputs.size() != 1 || !r.is_constant(in(p, 1))) continue;
    bool used_elsewhere = false;  // y must not feed the projection twice (e.g. as its bias)
    for (size_t k = 1; k < p.inputs.size(); k++) used_elsewhere |= p.inputs[k] == y;
    if (used_elsewhere) continue;
    Node f;
    f.name = p.name + "/with_norm";
    f.domain = "ogx";
    f.op_type = "NormProjection";
    f.attrs = p.attrs;
    f.attrs["epsilon"] = n.attr_float("epsilon", 1e-5f);
    f.attrs["projection"] = p.op_type;
    f.inputs = {in(n, 0), skip ? in(n, 1) : -1, skip ? in(n, 2) : in(n, 1), skip ? in(n, 3) : -1};
    f.inputs.insert(f.inputs.end(), p.inputs.begin() + 1, p.inputs.end());
    f.outputs = {p.outputs[0], skip && n.outputs.size() > 3 ? n.outputs[3] : -1};
    r.kill(pi);
    r.replace((int)i, std::move(f));
    c.norm++;
  }
}

}  // namespace

FusionCounts fuse_decoder_patterns(Graph& g, LazyConstants* lazy, WeightLayouts* layouts, bool matmul_bias) {
  FusionCounts c;
  {
    Rewriter r(g, lazy, layouts);
    fuse_qkv(r, c, matmul_bias);
    r.commit();
  }
  {
    Rewriter r(g, lazy, layouts);
    fuse_gate_up(r, c);
    r.commit();
  }
  {
    Rewriter r(g, lazy, layouts);
    fuse_norm_projection(r, c);
    r.commit();
  }
  return c;
}

}  // namespace ogx::vk::graph
