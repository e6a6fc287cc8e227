#include "onnx/loader.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <filesystem>
#include <map>

#include "common/checked.h"
#include "common/mapped_file.h"
#include "onnx/topo_sort.h"

namespace ogx {
namespace {

namespace fs = std::filesystem;

// Finds the external-data file of a tensor, mapping each file once.
class FileDataSource : public ExternalDataSource {
 public:
  FileDataSource(std::string base_dir, Model& model) : base_(std::move(base_dir)), model_(model) {}
  std::shared_ptr<Storage> get(const std::string& location) override {
    auto it = cache_.find(location);
    if (it != cache_.end()) return it->second;
    fs::path rel(location);
    if (rel.is_absolute()) throw_error("external data location '", location, "' must be relative to the model");
    for (auto& part : rel)
      if (part == "..") throw_error("external data location '", location, "' leaves the model folder");
    auto file = MappedFile::open((fs::path(base_) / rel).string());
    model_.mapped.push_back(file);
    auto st = Storage::borrow(const_cast<void*>(file->data()), file->size(), file);
    cache_[location] = st;
    return st;
  }

 private:
  std::string base_;
  Model& model_;
  std::map<std::string, std::shared_ptr<Storage>> cache_;
};

Tensor external_tensor(const onnx::TensorProto& t, DType dtype, const Shape& shape, ExternalDataSource& src) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (auto& kv : t.external_data()) {
    try {
      if (kv.key() == "location") location = kv.value();
      else if (kv.key() == "offset") offset = std::stoll(kv.value());
      else if (kv.key() == "length") length = std::stoll(kv.value());
    } catch (const std::exception&) {
      throw_error("tensor '", t.name(), "': bad external data field ", kv.key(), "='", kv.value(), "'");
    }
  }
  OGX_CHECK(!location.empty(), "tensor '", t.name(), "': external data without a location");
  const std::string what = "tensor '" + t.name() + "'";
  const size_t need = bytes_checked(shape, dtype, what);
  auto st = src.get(location);
  OGX_CHECK(st != nullptr, what, ": external data '", location, "' not found");
  if (length < 0) length = (int64_t)need;
  OGX_CHECK(offset >= 0, what, ": negative external data offset ", offset);
  OGX_CHECK((uint64_t)length == need, what, ": external data length ", length, " does not match ", dtype_name(dtype),
            " ", shape_str(shape), " (", need, " bytes)");
  const bool inside = (uint64_t)offset <= st->bytes && need <= st->bytes - (uint64_t)offset;
  OGX_CHECK(inside, what, ": external data [", offset, ", ", offset, " + ", need, ") lies past the end of '",
            location, "' (", st->bytes, " bytes; truncated file?)");
  return Tensor(dtype, shape, st, (size_t)offset);
}

template <typename Src, typename Dst>
void copy_field(const google::protobuf::RepeatedField<Src>& f, Tensor& out) {
  Dst* d = out.data<Dst>();
  for (int i = 0; i < f.size(); i++) d[i] = (Dst)f.Get(i);
}

}  // namespace

Tensor tensor_from_proto(const onnx::TensorProto& t, ExternalDataSource& src) {
  OGX_CHECK(dtype_known(t.data_type()) && t.data_type() != (int)DType::string, "tensor '", t.name(),
            "': unsupported data type ", t.data_type());
  DType dtype = (DType)t.data_type();
  Shape shape(t.dims().begin(), t.dims().end());
  for (auto d : shape) OGX_CHECK(d >= 0, "tensor '", t.name(), "': negative dimension in ", shape_str(shape));
  // Sizes are checked before anything is allocated or mapped: a shape whose byte size overflows is an error.
  const size_t need = bytes_checked(shape, dtype, "tensor '" + t.name() + "'");
  const int64_t n = shape_numel(shape);
  if (t.data_location() == onnx::TensorProto::EXTERNAL) return external_tensor(t, dtype, shape, src);
  auto check = [&](int64_t count) {
    OGX_CHECK(count == n, "tensor '", t.name(), "': has ", count, " values, expected ", n, " for ", shape_str(shape));
  };
  if (t.has_raw_data()) {
    OGX_CHECK(t.raw_data().size() == need, "tensor '", t.name(), "': raw_data has ", t.raw_data().size(),
              " bytes, expected ", need, " for ", dtype_name(dtype), " ", shape_str(shape));
  } else {
    const int64_t count = std::max({t.float_data_size(), t.double_data_size(), t.int64_data_size(),
                                    t.uint64_data_size(), t.int32_data_size()});
    check(count);  // before allocating: the typed field is checked again below
  }
  Tensor out(dtype, shape);
  if (t.has_raw_data()) {
    if (need) std::memcpy(out.raw(), t.raw_data().data(), need);
    return out;
  }
  switch (dtype) {
    case DType::f32: check(t.float_data_size()); copy_field<float, float>(t.float_data(), out); break;
    case DType::f64: check(t.double_data_size()); copy_field<double, double>(t.double_data(), out); break;
    case DType::i64: check(t.int64_data_size()); copy_field<int64_t, int64_t>(t.int64_data(), out); break;
    case DType::u32: check(t.uint64_data_size()); copy_field<uint64_t, uint32_t>(t.uint64_data(), out); break;
    case DType::u64: check(t.uint64_data_size()); copy_field<uint64_t, uint64_t>(t.uint64_data(), out); break;
    case DType::i32: check(t.int32_data_size()); copy_field<int32_t, int32_t>(t.int32_data(), out); break;
    case DType::i16: check(t.int32_data_size()); copy_field<int32_t, int16_t>(t.int32_data(), out); break;
    case DType::u16: case DType::f16: case DType::bf16:
      check(t.int32_data_size()); copy_field<int32_t, uint16_t>(t.int32_data(), out); break;
    case DType::i8: check(t.int32_data_size()); copy_field<int32_t, int8_t>(t.int32_data(), out); break;
    case DType::u8: case DType::boolean:
      check(t.int32_data_size()); copy_field<int32_t, uint8_t>(t.int32_data(), out); break;
    default: throw_error("tensor '", t.name(), "': unsupported data type ", dtype_name(dtype));
  }
  return out;
}

namespace {

constexpr int kMaxSubgraphDepth = 16;  // If inside If inside ...: deeper nesting is refused

void load_graph(const onnx::GraphProto& gp, ExternalDataSource& src, Graph& g, int depth, int64_t ir_version);

AttrValue convert_attr(const onnx::AttributeProto& a, const std::string& node, ExternalDataSource& src, int depth) {
  using A = onnx::AttributeProto;
  switch (a.type()) {
    case A::INT: return (int64_t)a.i();
    case A::FLOAT: return a.f();
    case A::STRING: return a.s();
    case A::INTS: return std::vector<int64_t>(a.ints().begin(), a.ints().end());
    case A::FLOATS: return std::vector<float>(a.floats().begin(), a.floats().end());
    case A::STRINGS: return std::vector<std::string>(a.strings().begin(), a.strings().end());
    case A::TENSOR: return tensor_from_proto(a.t(), src);
    case A::GRAPH: {
      OGX_CHECK(depth < kMaxSubgraphDepth, "node '", node, "': subgraphs nest deeper than ", kMaxSubgraphDepth,
                " levels");
      auto sub = std::make_shared<Graph>();
      try {
        load_graph(a.g(), src, *sub, depth + 1, 0);  // a subgraph's initializers listed as inputs stay constants
      } catch (const Error& e) {
        throw_error("node '", node, "', subgraph '", a.name(), "': ", e.what());
      }
      return SubgraphPtr(std::move(sub));
    }
    default:
      throw_error("node '", node, "': attribute '", a.name(), "' has unsupported type ", (int)a.type(),
                  " (sparse tensors and lists of graphs are not supported)");
  }
}

ValueInfo convert_value_info(const onnx::ValueInfoProto& v) {
  ValueInfo info;
  info.name = v.name();
  if (v.type().has_tensor_type()) {
    auto& tt = v.type().tensor_type();
    info.dtype = dtype_known(tt.elem_type()) ? (DType)tt.elem_type() : DType::undefined;
    if (tt.has_shape()) {
      info.has_shape = true;
      for (auto& d : tt.shape().dim()) {
        Dim dim;
        if (d.has_dim_value()) dim.value = d.dim_value();
        else dim.param = d.dim_param();
        info.shape.push_back(dim);
      }
    }
  }
  return info;
}

// A Constant node becomes a constant value.
Tensor constant_node_value(const Node& n) {
  if (auto t = n.attr_tensor("value")) return *t;
  if (n.has_attr("value_float")) {
    Tensor t(DType::f32, {});
    *t.data<float>() = n.attr_float("value_float", 0);
    return t;
  }
  if (n.has_attr("value_int")) {
    Tensor t(DType::i64, {});
    *t.data<int64_t>() = n.attr_int("value_int", 0);
    return t;
  }
  if (n.has_attr("value_floats")) {
    auto v = n.attr_floats("value_floats");
    Tensor t(DType::f32, {(int64_t)v.size()});
    std::memcpy(t.raw(), v.data(), v.size() * 4);
    return t;
  }
  if (n.has_attr("value_ints")) {
    auto v = n.attr_ints("value_ints");
    Tensor t(DType::i64, {(int64_t)v.size()});
    std::memcpy(t.raw(), v.data(), v.size() * 8);
    return t;
  }
  throw_error(n.describe(), ": Constant without a supported value attribute");
}


// A graph's values, nodes (topologically sorted), inputs and outputs. depth > 0: a subgraph, whose names that no
// initializer, input or node defines are values of the enclosing graph (Graph::outer_inputs).
void load_graph(const onnx::GraphProto& gp, ExternalDataSource& src, Graph& g, int depth, int64_t ir_version) {
  for (auto& init : gp.initializer()) {
    int id = g.add_value(init.name());
    g.values[id].is_constant = true;
    g.values[id].constant = tensor_from_proto(init, src);
  }
  for (auto& in : gp.input()) {
    int id = g.add_value(in.name());
    if (g.values[id].is_constant) {
      // An initializer listed as input: before IR 4 every initializer is listed (a constant); from IR 4 on a
      // floating-point one is an input with a default, as ONNX Runtime treats it (LoRA adapter inputs default to
      // zero-rank tensors this way): the value is not constant and keeps the initializer in Value::constant, which
      // a run that does not feed the input uses. Integer ones stay constants: shape operands providers need at load.
      if (ir_version < 4 || !is_float(g.values[id].constant.dtype())) continue;
      g.values[id].is_constant = false;
    }
    g.inputs.push_back(convert_value_info(in));
    g.input_ids.push_back(id);
  }
  std::vector<Node> nodes;
  for (int i = 0; i < gp.node_size(); i++) {
    auto& np = gp.node(i);
    Node n;
    n.name = np.name().empty() ? np.op_type() + "#" + std::to_string(i) : np.name();
    n.op_type = np.op_type();
    n.domain = np.domain() == "ai.onnx" ? "" : np.domain();
    for (auto& a : np.attribute()) n.attrs[a.name()] = convert_attr(a, n.name, src, depth);
    for (auto& s : np.input()) n.inputs.push_back(s.empty() ? -1 : g.add_value(s));
    for (auto& s : np.output()) n.outputs.push_back(s.empty() ? -1 : g.add_value(s));
    // The values its subgraphs read from this graph become inputs of the node (once each).
    for (auto& [k, a] : n.attrs)
      if (auto* sub = std::get_if<SubgraphPtr>(&a))
        for (const std::string& name : (*sub)->outer_inputs) {
          int id = g.add_value(name);
          if (std::find(n.inputs.begin() + np.input_size(), n.inputs.end(), id) == n.inputs.end()) n.inputs.push_back(id);
        }
    if (n.op_type == "Constant" && n.domain.empty()) {
      OGX_CHECK(n.outputs.size() == 1 && n.outputs[0] >= 0, n.describe(), ": needs one output");
      auto& v = g.values[n.outputs[0]];
      v.is_constant = true;
      v.constant = constant_node_value(n);
      continue;
    }
    nodes.push_back(std::move(n));
  }
  if (depth > 0) {  // names defined nowhere in the subgraph: the enclosing graph's values
    std::vector<char> defined(g.values.size(), 0);
    for (size_t v = 0; v < g.values.size(); v++) defined[v] = g.values[v].is_constant;
    for (int id : g.input_ids) defined[id] = 1;
    for (auto& n : nodes)
      for (int v : n.outputs)
        if (v >= 0) defined[v] = 1;
    auto outer = [&](int v) {
      if (v < 0 || defined[v]) return;
      defined[v] = 1;
      g.outer_inputs.push_back(g.values[v].name);
      ValueInfo info;
      info.name = g.values[v].name;
      g.inputs.push_back(info);
      g.input_ids.push_back(v);
    };
    for (auto& n : nodes)
      for (int v : n.inputs) outer(v);
    for (auto& out : gp.output()) outer(g.find(out.name()));
  }
  for (auto& out : gp.output()) {
    OGX_CHECK(g.find(out.name()) >= 0, "graph output '", out.name(), "' is produced by no node");
    g.outputs.push_back(convert_value_info(out));
    g.output_ids.push_back(g.find(out.name()));
  }
  g.nodes = topo_sort(g, std::move(nodes));
}

}  // namespace

std::shared_ptr<Model> load_model_proto(const onnx::ModelProto& proto, const std::string& base_dir,
                                        ExternalDataSource* source) {
  auto model = std::make_shared<Model>();
  FileDataSource files(base_dir, *model);
  ExternalDataSource& src = source ? *source : files;
  model->ir_version = proto.ir_version();
  model->producer = proto.producer_name();
  Graph& g = model->graph;
  for (auto& op : proto.opset_import()) {
    std::string d = op.domain() == "ai.onnx" ? "" : op.domain();
    g.opsets[d] = op.version();
  }
  load_graph(proto.graph(), src, g, 0, model->ir_version);
  return model;
}

namespace {

void parse_proto(const void* data, size_t size, const std::string& name, onnx::ModelProto& proto) {
  OGX_CHECK(size > 0, "'", name, "' is empty: not an ONNX model");
  OGX_CHECK(size < (size_t)INT_MAX, "'", name, "' is larger than 2 GiB: weights must be external data");
  google::protobuf::io::ArrayInputStream ais(data, (int)size);
  google::protobuf::io::CodedInputStream cis(&ais);
  cis.SetTotalBytesLimit(INT_MAX);
  cis.SetRecursionLimit(256);
  if (!proto.ParseFromCodedStream(&cis) || !cis.ConsumedEntireMessage())
    throw_error("'", name, "' is not a valid ONNX model (protobuf parse failed)");
  OGX_CHECK(proto.has_graph() && proto.graph().node_size() > 0, "'", name,
            "' is not an ONNX model (it parses as protobuf but holds no graph nodes)");
}

// External data from blobs held in memory first, then from files beside the model.
class BlobDataSource : public ExternalDataSource {
 public:
  BlobDataSource(const MemoryBlobs& blobs, std::string base_dir, Model& model)
      : blobs_(blobs), files_(std::move(base_dir), model) {}
  std::shared_ptr<Storage> get(const std::string& location) override {
    auto it = blobs_.find(location);
    if (it == blobs_.end()) return files_.get(location);
    auto bytes = it->second;
    return Storage::borrow(const_cast<uint8_t*>(bytes->data()), bytes->size(), bytes);
  }

 private:
  const MemoryBlobs& blobs_;
  FileDataSource files_;
};

}  // namespace

std::shared_ptr<Model> load_model(const std::string& path) {
  OGX_CHECK(!fs::is_directory(path), "'", path, "' is a directory, not an ONNX model file");
  auto file = MappedFile::open(path);
  onnx::ModelProto proto;
  parse_proto(file->data(), file->size(), path, proto);
  auto model = load_model_proto(proto, fs::path(path).parent_path().string(), nullptr);
  model->path = path;
  return model;
}

std::shared_ptr<Model> load_model(const std::string& path, const MemoryBlobs& blobs) {
  std::string name = fs::path(path).filename().string();
  auto it = blobs.find(name);
  if (it == blobs.end()) return load_model(path);
  onnx::ModelProto proto;
  parse_proto(it->second->data(), it->second->size(), name + " (model data added to the config)", proto);
  Model scratch;  // keeps nothing: borrowed storages hold their files and blobs themselves
  BlobDataSource source(blobs, fs::path(path).parent_path().string(), scratch);
  auto model = load_model_proto(proto, fs::path(path).parent_path().string(), &source);
  model->mapped = std::move(scratch.mapped);
  return model;
}

}  // namespace ogx
