// ONNX graph construction helpers: nodes with ordered attributes, graph inputs/outputs, Constant nodes
// named like the reference builder's, and initializers whose bytes are produced later straight into the
// external-data store (so protobuf never holds weights).
#pragma once
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include <onnx/onnx_pb.h>

#include "builder/weight_store.h"
#include "common/thread_pool.h"

namespace ogx::builder {

struct Attr {
  std::string name;
  std::variant<int64_t, float, std::vector<int64_t>, std::string> value;
  static Attr i(std::string n, int64_t v) { return {std::move(n), v}; }
  static Attr f(std::string n, float v) { return {std::move(n), v}; }
  static Attr ints(std::string n, std::vector<int64_t> v) { return {std::move(n), std::move(v)}; }
  static Attr s(std::string n, std::string v) { return {std::move(n), std::move(v)}; }
};

using Dim = std::variant<int64_t, std::string>;
using FillFn = std::function<void(uint8_t* dst, ThreadPool& pool)>;
using JointFillFn = std::function<void(const std::vector<uint8_t*>& dsts, ThreadPool& pool)>;

size_t dtype_size(int onnx_dtype);

class GraphWriter {
 public:
  GraphWriter();
  void input(const std::string& name, int dtype, const std::vector<Dim>& dims);
  void output(const std::string& name, int dtype, const std::vector<Dim>& dims);
  void node(const std::string& op, const std::string& domain, const std::string& name,
            const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
            const std::vector<Attr>& attrs = {});
  // ONNX If whose branches return values of this graph unchanged (Identity nodes reading them by name): outputs[i]
  // is then_values[i] when cond holds, else else_values[i] (the reference builder's switch between rotary caches).
  // dtype: the outputs' element type (declared on the branch outputs).
  void if_select(const std::string& name, const std::string& cond, const std::vector<std::string>& outputs, int dtype,
                 const std::vector<std::string>& then_values, const std::vector<std::string>& else_values);
  void rename_last_node_output(const std::string& name);  // e.g. lm_head MatMul -> "logits"
  // Constant node "/model/constant_nodes/INT64/<tag>" -> "/model/constants/INT64/<tag>", created once.
  std::string const_i64(const std::vector<int64_t>& v, bool scalar);
  std::string const_float(float v, int dtype);  // scalar of dtype FLOAT/FLOAT16
  // Initializer of `dtype`/`dims` whose bytes `fill` writes later. group 1 is placed after group 0
  // (the reference appends quantized weights after the float ones).
  void initializer(const std::string& name, int dtype, const std::vector<int64_t>& dims, FillFn fill,
                   int group = 0);
  // Initializers whose bytes one function writes together (int4 weight, scales, zero points).
  void joint_initializers(const std::vector<std::string>& names, const std::vector<int>& dtypes,
                          const std::vector<std::vector<int64_t>>& dims, JointFillFn fill, int group = 0);
  // Lays out the external data (stable by size, as the reference's files are), fills the store.
  void finish(onnx::ModelProto& model, WeightStore& store, ThreadPool& pool);

 private:
  struct Init {
    std::string name;
    int dtype;
    std::vector<int64_t> dims;
    size_t nbytes;
    FillFn fill;
    int group;
    int joint = -1;  // index into joints_
  };
  std::vector<JointFillFn> joints_;
  onnx::ModelProto model_;
  std::vector<Init> inits_;
  std::set<std::string> constants_;
};

}  // namespace ogx::builder
