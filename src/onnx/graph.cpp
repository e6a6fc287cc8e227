#include "onnx/graph.h"

namespace ogx {

namespace {
template <typename T>
const T* get_attr(const Node& n, const std::string& k) {
  auto it = n.attrs.find(k);
  if (it == n.attrs.end()) return nullptr;
  const T* v = std::get_if<T>(&it->second);
  if (!v) throw_error(n.describe(), ": attribute '", k, "' has the wrong type");
  return v;
}
}  // namespace

int64_t Node::attr_int(const std::string& k, int64_t dflt) const {
  auto v = get_attr<int64_t>(*this, k);
  return v ? *v : dflt;
}

float Node::attr_float(const std::string& k, float dflt) const {
  auto it = attrs.find(k);
  if (it == attrs.end()) return dflt;
  if (auto i = std::get_if<int64_t>(&it->second)) return (float)*i;
  auto v = get_attr<float>(*this, k);
  return *v;
}

std::string Node::attr_string(const std::string& k, const std::string& dflt) const {
  auto v = get_attr<std::string>(*this, k);
  return v ? *v : dflt;
}

std::vector<int64_t> Node::attr_ints(const std::string& k, const std::vector<int64_t>& dflt) const {
  auto v = get_attr<std::vector<int64_t>>(*this, k);
  return v ? *v : dflt;
}

std::vector<float> Node::attr_floats(const std::string& k) const {
  auto v = get_attr<std::vector<float>>(*this, k);
  return v ? *v : std::vector<float>{};
}

const Tensor* Node::attr_tensor(const std::string& k) const { return get_attr<Tensor>(*this, k); }

const Graph* Node::attr_graph(const std::string& k) const {
  auto v = get_attr<SubgraphPtr>(*this, k);
  return v ? v->get() : nullptr;
}

std::string Node::describe() const {
  return (domain.empty() ? "" : domain + ".") + op_type + " node '" + name + "'";
}

int Graph::find(const std::string& name) const {
  auto it = value_index.find(name);
  return it == value_index.end() ? -1 : it->second;
}

int Graph::add_value(const std::string& name) {
  auto it = value_index.find(name);
  if (it != value_index.end()) return it->second;
  int id = (int)values.size();
  values.push_back(Value{name, false, Tensor()});
  value_index.emplace(name, id);
  return id;
}

const ValueInfo* Graph::input_info(const std::string& name) const {
  for (auto& v : inputs)
    if (v.name == name) return &v;
  return nullptr;
}

const ValueInfo* Graph::output_info(const std::string& name) const {
  for (auto& v : outputs)
    if (v.name == name) return &v;
  return nullptr;
}

}  // namespace ogx
