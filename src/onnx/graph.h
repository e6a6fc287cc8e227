// Graph IR: what the executor and providers see of an ONNX model. Values are numbered; nodes refer to them by
// index. Initializers and Constant nodes become constant values (tensors borrowed from the weight file).
#pragma once
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "common/tensor.h"

namespace ogx {

struct Graph;
// A GRAPH attribute (If's then_branch / else_branch): the subgraph, shared by copies of the node.
using SubgraphPtr = std::shared_ptr<const Graph>;
using AttrValue = std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>,
                               std::vector<std::string>, Tensor, SubgraphPtr>;

struct Node {
  std::string name;     // node name (or "<op_type>#index" when the file has none)
  std::string op_type;  // e.g. "MatMul"
  std::string domain;   // "" for ai.onnx, "com.microsoft" for contrib ops
  // value ids; -1 for an omitted optional input. A node with subgraph attributes (If) lists after its own inputs
  // the values of this graph its subgraphs read by name (ONNX "outer scope" values), so ordering and liveness see
  // them; each subgraph's Graph::outer_inputs names them.
  std::vector<int> inputs;
  std::vector<int> outputs;  // value ids; -1 for an omitted optional output
  std::map<std::string, AttrValue> attrs;

  bool has_attr(const std::string& k) const { return attrs.count(k) != 0; }
  int64_t attr_int(const std::string& k, int64_t dflt) const;
  float attr_float(const std::string& k, float dflt) const;
  std::string attr_string(const std::string& k, const std::string& dflt) const;
  std::vector<int64_t> attr_ints(const std::string& k, const std::vector<int64_t>& dflt = {}) const;
  std::vector<float> attr_floats(const std::string& k) const;
  const Tensor* attr_tensor(const std::string& k) const;
  const Graph* attr_graph(const std::string& k) const;  // nullptr when absent
  std::string describe() const;  // "MatMul node '/model/...'" for error messages
};

// A dimension in a declared shape: a fixed size or a symbolic name ("batch_size").
struct Dim {
  int64_t value = -1;  // -1 when symbolic or unknown
  std::string param;
};

struct ValueInfo {
  std::string name;
  DType dtype = DType::undefined;
  std::vector<Dim> shape;
  bool has_shape = false;
};

struct Value {
  std::string name;
  bool is_constant = false;
  Tensor constant;  // set when is_constant
};

struct Graph {
  std::vector<Value> values;
  std::vector<Node> nodes;           // in a valid topological order (the loader sorts them)
  std::vector<ValueInfo> inputs;     // graph inputs (without initializers)
  std::vector<ValueInfo> outputs;
  std::vector<int> input_ids, output_ids;
  std::unordered_map<std::string, int> value_index;
  std::map<std::string, int64_t> opsets;  // domain -> version
  // A subgraph's values of the enclosing graph it reads by name: they are also the last entries of `inputs` /
  // `input_ids` (dtype undefined unless declared), so a GraphSession over the subgraph takes them as inputs.
  std::vector<std::string> outer_inputs;

  int find(const std::string& name) const;  // -1 when absent
  int add_value(const std::string& name);   // existing id or a new one
  const ValueInfo* input_info(const std::string& name) const;
  const ValueInfo* output_info(const std::string& name) const;
};

}  // namespace ogx
