// If with subgraphs: loaded from a protobuf built here (branches with Constant nodes, outer-scope reads, a nested
// If) and run on the CPU provider against values computed in the test.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <random>

#include "exec/graph_session.h"
#include "onnx/loader.h"
#include "providers/cpu/cpu_provider.h"

namespace ogx {
namespace {

void add_value_info(onnx::ValueInfoProto* v, const std::string& name, int dtype, std::vector<int64_t> dims) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(dtype);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, std::vector<std::string> in,
                          std::vector<std::string> out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(op + "_" + out[0]);
  for (auto& s : in) n->add_input(s);
  for (auto& s : out) n->add_output(s);
  return n;
}

void add_float_constant(onnx::GraphProto* g, const std::string& out, const std::vector<float>& v) {
  auto* n = add_node(g, "Constant", {}, {out});
  auto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  a->mutable_t()->add_dims((int64_t)v.size());
  for (float x : v) a->mutable_t()->add_float_data(x);
}

void set_branch(onnx::NodeProto* n, const char* name, onnx::GraphProto g) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = std::move(g);
}

// y = If(n > 3) then (x + c_then) else If(n > 1) then x * w else c_else; w an initializer of the main graph read by
// the nested branch, x a main-graph input read by both.
onnx::ModelProto make_model(const std::vector<float>& c_then, const std::vector<float>& w,
                            const std::vector<float>& c_else) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("main");
  add_value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {4});
  add_value_info(g->add_input(), "n", onnx::TensorProto::INT64, {});
  add_value_info(g->add_output(), "y", onnx::TensorProto::FLOAT, {4});
  auto* init = g->add_initializer();
  init->set_name("w");
  init->set_data_type(onnx::TensorProto::FLOAT);
  init->add_dims(4);
  for (float x : w) init->add_float_data(x);
  auto* three = g->add_initializer();
  three->set_name("three");
  three->set_data_type(onnx::TensorProto::INT64);
  three->add_int64_data(3);
  auto* one = g->add_initializer();
  one->set_name("one");
  one->set_data_type(onnx::TensorProto::INT64);
  one->add_int64_data(1);
  add_node(g, "Greater", {"n", "three"}, {"gt3"});

  onnx::GraphProto then_g;
  then_g.set_name("then");
  add_float_constant(&then_g, "c_then", c_then);
  add_node(&then_g, "Add", {"x", "c_then"}, {"then_y"});
  add_value_info(then_g.add_output(), "then_y", onnx::TensorProto::FLOAT, {4});

  onnx::GraphProto inner_then;
  inner_then.set_name("inner_then");
  add_node(&inner_then, "Mul", {"x", "w"}, {"inner_y"});
  add_value_info(inner_then.add_output(), "inner_y", onnx::TensorProto::FLOAT, {4});
  onnx::GraphProto inner_else;
  inner_else.set_name("inner_else");
  add_float_constant(&inner_else, "c_else", c_else);
  add_value_info(inner_else.add_output(), "c_else", onnx::TensorProto::FLOAT, {4});

  onnx::GraphProto else_g;
  else_g.set_name("else");
  add_node(&else_g, "Greater", {"n", "one"}, {"gt1"});
  auto* inner = add_node(&else_g, "If", {"gt1"}, {"else_y"});
  set_branch(inner, "then_branch", inner_then);
  set_branch(inner, "else_branch", inner_else);
  add_value_info(else_g.add_output(), "else_y", onnx::TensorProto::FLOAT, {4});

  auto* n = add_node(g, "If", {"gt3"}, {"y"});
  set_branch(n, "then_branch", then_g);
  set_branch(n, "else_branch", else_g);
  return m;
}

Tensor floats(const std::vector<float>& v) {
  Tensor t(DType::f32, {(int64_t)v.size()});
  for (size_t i = 0; i < v.size(); i++) t.data<float>()[i] = v[i];
  return t;
}

TEST(ControlFlow, IfRunsTheBranchTheConditionPicksWithOuterValues) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  auto rnd = [&] {
    std::vector<float> v(4);
    for (float& x : v) x = u(rng);
    return v;
  };
  std::vector<float> c_then = rnd(), w = rnd(), c_else = rnd(), x = rnd();
  auto model = load_model_proto(make_model(c_then, w, c_else), ".", nullptr);
  // The branches read x (both), n, one and w (the nested If's, through the else branch) from the main graph: each
  // once an input of the outer If, after its condition.
  ASSERT_EQ(model->graph.nodes.back().op_type, "If");
  EXPECT_EQ(model->graph.nodes.back().inputs.size(), 5u);
  auto session = cpu::make_cpu_provider()->create_session(model, SessionOptions{});
  for (int64_t n : {5, 2, 0, 4, 1}) {
    Tensor nt(DType::i64, {});
    *nt.data<int64_t>() = n;
    std::vector<NamedTensor> outs{{"y", Tensor()}};
    session->run({{"x", floats(x)}, {"n", nt}}, outs);
    const float* y = outs[0].second.data<float>();
    for (int i = 0; i < 4; i++) {
      float want = n > 3 ? x[i] + c_then[i] : n > 1 ? x[i] * w[i] : c_else[i];
      EXPECT_EQ(y[i], want) << "n=" << n << " i=" << i;
    }
  }
}

TEST(ControlFlow, IfWithoutBranchesIsAnErrorNamingTheNode) {
  auto m = make_model({1, 2, 3, 4}, {1, 2, 3, 4}, {1, 2, 3, 4});
  auto* n = m.mutable_graph()->mutable_node(m.graph().node_size() - 1);
  n->mutable_attribute()->RemoveLast();  // drop else_branch
  auto model = load_model_proto(m, ".", nullptr);
  try {
    cpu::make_cpu_provider()->create_session(model, SessionOptions{});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("If_y"), std::string::npos) << e.what();
  }
}

TEST(ControlFlow, SubgraphReadingAnUndefinedNameIsAnError) {
  auto m = make_model({1, 2, 3, 4}, {1, 2, 3, 4}, {1, 2, 3, 4});
  auto* then_g = m.mutable_graph()->mutable_node(m.graph().node_size() - 1)->mutable_attribute(0)->mutable_g();
  then_g->mutable_node(1)->set_input(0, "nowhere");
  EXPECT_THROW(load_model_proto(m, ".", nullptr), Error);
}

}  // namespace
}  // namespace ogx
