#include "builder/graph_writer.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <sstream>

#include "common/error.h"
#include "common/half.h"
#include "common/progress.h"

namespace ogx::builder {

size_t dtype_size(int t) {
  switch (t) {
    case onnx::TensorProto::FLOAT: return 4;
    case onnx::TensorProto::FLOAT16: return 2;
    case onnx::TensorProto::UINT8: return 1;
    case onnx::TensorProto::INT64: return 8;
    case onnx::TensorProto::INT32: return 4;
  }
  throw_error("graph writer: unsupported initializer dtype ", t);
}

GraphWriter::GraphWriter() {
  model_.set_ir_version(10);
  model_.set_producer_name("onnxruntime-genai");
  auto* o = model_.add_opset_import();
  o->set_domain("");
  o->set_version(21);
  o = model_.add_opset_import();
  o->set_domain("com.microsoft");
  o->set_version(1);
  model_.mutable_graph()->set_name("main_graph");
}

namespace {

void set_type(onnx::ValueInfoProto* v, const std::string& name, int dtype, const std::vector<Dim>& dims) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(dtype);
  auto* shape = tt->mutable_shape();
  for (const auto& d : dims) {
    auto* dim = shape->add_dim();
    if (std::holds_alternative<int64_t>(d)) dim->set_dim_value(std::get<int64_t>(d));
    else dim->set_dim_param(std::get<std::string>(d));
  }
}

void set_attr(onnx::AttributeProto* a, const Attr& at) {
  a->set_name(at.name);
  if (auto* i = std::get_if<int64_t>(&at.value)) {
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(*i);
  } else if (auto* f = std::get_if<float>(&at.value)) {
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(*f);
  } else if (auto* v = std::get_if<std::vector<int64_t>>(&at.value)) {
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : *v) a->add_ints(x);
  } else {
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(std::get<std::string>(at.value));
  }
}

std::string list_tag(const std::vector<int64_t>& v) {  // Python's str(list): "[2048, 32]"
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < v.size(); i++) os << (i ? ", " : "") << v[i];
  os << "]";
  return os.str();
}

}  // namespace

void GraphWriter::input(const std::string& name, int dtype, const std::vector<Dim>& dims) {
  set_type(model_.mutable_graph()->add_input(), name, dtype, dims);
}

void GraphWriter::output(const std::string& name, int dtype, const std::vector<Dim>& dims) {
  set_type(model_.mutable_graph()->add_output(), name, dtype, dims);
}

void GraphWriter::node(const std::string& op, const std::string& domain, const std::string& name,
                       const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
                       const std::vector<Attr>& attrs) {
  auto* n = model_.mutable_graph()->add_node();
  n->set_op_type(op);
  n->set_domain(domain);
  n->set_name(name);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  for (const auto& a : attrs) set_attr(n->add_attribute(), a);
}

void GraphWriter::if_select(const std::string& name, const std::string& cond, const std::vector<std::string>& outputs,
                            int dtype, const std::vector<std::string>& then_values, const std::vector<std::string>& else_values) {
  if (then_values.size() != outputs.size() || else_values.size() != outputs.size())
    throw_error("graph writer: If '", name, "' needs one value per output in each branch");
  node("If", "", name, {cond}, outputs);
  onnx::NodeProto* n = model_.mutable_graph()->mutable_node(model_.graph().node_size() - 1);
  auto branch = [&](const char* attr, const char* tag, const std::vector<std::string>& values) {
    auto* a = n->add_attribute();
    a->set_name(attr);
    a->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* g = a->mutable_g();
    g->set_name(name + "/" + tag);
    for (size_t i = 0; i < values.size(); i++) {
      const std::string out = name + "/" + tag + "/" + outputs[i] + "/Identity/output_0";
      auto* id = g->add_node();
      id->set_op_type("Identity");
      id->set_name(name + "/" + tag + "/" + outputs[i] + "/Identity");
      id->add_input(values[i]);
      id->add_output(out);
      auto* o = g->add_output();
      o->set_name(out);
      o->mutable_type()->mutable_tensor_type()->set_elem_type(dtype);
    }
  };
  branch("then_branch", "then", then_values);
  branch("else_branch", "else", else_values);
}

void GraphWriter::rename_last_node_output(const std::string& name) {
  auto* g = model_.mutable_graph();
  if (g->node_size() == 0) throw_error("graph writer: no node to rename the output of");
  g->mutable_node(g->node_size() - 1)->set_output(0, name);
}

std::string GraphWriter::const_i64(const std::vector<int64_t>& v, bool scalar) {
  std::string tag = scalar ? std::to_string(v.at(0)) : list_tag(v);
  std::string out = "/model/constants/INT64/" + tag;
  if (!constants_.insert(out).second) return out;
  onnx::TensorProto t;
  t.set_name(out);
  t.set_data_type(onnx::TensorProto::INT64);
  if (!scalar) t.add_dims((int64_t)v.size());
  t.set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * 8));
  node("Constant", "", "/model/constant_nodes/INT64/" + tag, {}, {out});
  auto* a = model_.mutable_graph()->mutable_node()->rbegin()->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = t;
  return out;
}

std::string GraphWriter::const_float(float v, int dtype) {
  std::ostringstream os;
  os << v;
  bool f16 = dtype == onnx::TensorProto::FLOAT16;
  std::string tag = std::string(f16 ? "FLOAT16/" : "FLOAT/") + os.str();
  std::string out = "/model/constants/" + tag;
  if (!constants_.insert(out).second) return out;
  onnx::TensorProto t;
  t.set_name(out);
  t.set_data_type(dtype);
  if (f16) {
    uint16_t h = f32_to_f16(v);
    t.set_raw_data(std::string(reinterpret_cast<const char*>(&h), 2));
  } else {
    t.set_raw_data(std::string(reinterpret_cast<const char*>(&v), 4));
  }
  node("Constant", "", "/model/constant_nodes/" + tag, {}, {out});
  auto* a = model_.mutable_graph()->mutable_node()->rbegin()->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = t;
  return out;
}

void GraphWriter::initializer(const std::string& name, int dtype, const std::vector<int64_t>& dims, FillFn fill,
                              int group) {
  size_t n = dtype_size(dtype);
  for (int64_t d : dims) n *= (size_t)d;
  inits_.push_back({name, dtype, dims, n, std::move(fill), group});
}

void GraphWriter::joint_initializers(const std::vector<std::string>& names, const std::vector<int>& dtypes,
                                     const std::vector<std::vector<int64_t>>& dims, JointFillFn fill, int group) {
  joints_.push_back(std::move(fill));
  for (size_t i = 0; i < names.size(); i++) {
    initializer(names[i], dtypes[i], dims[i], nullptr, group);
    inits_.back().joint = (int)joints_.size() - 1;
  }
}

void GraphWriter::finish(onnx::ModelProto& model, WeightStore& store, ThreadPool& pool) {
  std::stable_sort(inits_.begin(), inits_.end(), [](const Init& a, const Init& b) { return a.group < b.group; });
  std::vector<size_t> order(inits_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return inits_[a].nbytes < inits_[b].nbytes; });
  std::vector<size_t> offset(inits_.size());
  size_t total = 0;
  for (size_t i : order) {
    offset[i] = total;
    total += inits_[i].nbytes;
  }
  store = WeightStore(total);
  auto* g = model_.mutable_graph();
  for (size_t i = 0; i < inits_.size(); i++) {
    const Init& in = inits_[i];
    auto* t = g->add_initializer();
    t->set_name(in.name);
    t->set_data_type(in.dtype);
    for (int64_t d : in.dims) t->add_dims(d);
    if (in.nbytes == 0) {  // an empty tensor (a zero-rank LoRA input's default): inline, no external bytes
      t->set_raw_data("");
      continue;
    }
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const char* k, const std::string& v) {
      auto* e = t->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    add("location", "model.onnx.data");
    add("offset", std::to_string(offset[i]));
    add("length", std::to_string(in.nbytes));
  }
  std::vector<std::vector<uint8_t*>> joint_dsts(joints_.size());
  for (size_t i = 0; i < inits_.size(); i++)
    if (inits_[i].joint >= 0) joint_dsts[inits_[i].joint].push_back(store.data() + offset[i]);
  size_t filled = 0;
  for (size_t i : order) {  // fill in file order: pages are touched mostly sequentially
    progress::report("converting weights", filled, total);
    filled += inits_[i].nbytes;
    Init& in = inits_[i];
    if (in.joint >= 0 && joints_[in.joint]) {
      joints_[in.joint](joint_dsts[in.joint], pool);
      joints_[in.joint] = nullptr;
    } else if (in.fill) {
      in.fill(store.data() + offset[i], pool);
      in.fill = nullptr;
    }
  }
  progress::report("converting weights", total, total);
  model = std::move(model_);
}

}  // namespace ogx::builder
