// Copies MODEL.onnx to OUT.onnx (beside it, so that external data resolves) with the float outputs of the nodes
// that compute activations added as graph outputs; prints "name<TAB>op_type" of each, in graph order.
// usage: expose_outputs MODEL.onnx OUT.onnx
#include <fstream>
#include <iostream>
#include <set>
#include <string>

#include <onnx/onnx_pb.h>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: expose_outputs MODEL.onnx OUT.onnx\n";
    return 2;
  }
  onnx::ModelProto model;
  std::ifstream in(argv[1], std::ios::binary);
  if (!model.ParseFromIstream(&in)) {
    std::cerr << "cannot parse " << argv[1] << "\n";
    return 1;
  }
  // Ops whose first output is a float activation (the others are shapes, masks, indices).
  const std::set<std::string> ops = {"MatMulNBits", "MatMul", "SimplifiedLayerNormalization",
                                     "SkipSimplifiedLayerNormalization", "GroupQueryAttention", "Mul", "Sigmoid",
                                     "Add", "GatherBlockQuantized", "RotaryEmbedding", "Softmax"};
  onnx::GraphProto* g = model.mutable_graph();
  std::set<std::string> outputs;
  for (const auto& o : g->output()) outputs.insert(o.name());
  for (const auto& n : g->node()) {
    if (!ops.count(n.op_type()) || n.output_size() == 0 || n.output(0).empty() || outputs.count(n.output(0))) continue;
    onnx::ValueInfoProto* vi = g->add_output();
    vi->set_name(n.output(0));
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    outputs.insert(n.output(0));
    std::cout << n.output(0) << "\t" << n.op_type() << "\n";
  }
  std::ofstream out(argv[2], std::ios::binary);
  return model.SerializeToOstream(&out) ? 0 : 1;
}
