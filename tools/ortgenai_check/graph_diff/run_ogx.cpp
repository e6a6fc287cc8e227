// Runs a decoder graph on ogx's CPU provider (2 threads) on one prompt with empty past and writes each named output
// (and logits) as raw float32 OUT/i.bin, i in the order of NAMES.
// usage: run_ogx MODEL.onnx NAMES.txt IDS(comma-separated) KV_HEADS HEAD_SIZE LAYERS OUT
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "onnx/loader.h"
#include "providers/cpu/cpu_provider.h"

int main(int argc, char** argv) {
  if (argc != 8) {
    std::fprintf(stderr, "usage: run_ogx MODEL.onnx NAMES.txt IDS KV_HEADS HEAD_SIZE LAYERS OUT\n");
    return 2;
  }
  std::vector<std::string> names;
  std::ifstream nf(argv[2]);
  for (std::string l; std::getline(nf, l);) names.push_back(l.substr(0, l.find('\t')));
  names.push_back("logits");
  std::vector<int64_t> ids;
  std::stringstream is(argv[3]);
  for (std::string t; std::getline(is, t, ',');) ids.push_back(std::atoll(t.c_str()));
  const int64_t P = (int64_t)ids.size(), kvh = std::atoll(argv[4]), hd = std::atoll(argv[5]);
  ogx::SessionOptions so;
  so.intra_op_num_threads = 2;
  auto session = ogx::cpu::make_cpu_provider()->create_session(ogx::load_model(argv[1]), so);
  ogx::Tensor input_ids(ogx::DType::i64, {1, P}), mask(ogx::DType::i64, {1, P});
  for (int64_t i = 0; i < P; i++) input_ids.data<int64_t>()[i] = ids[(size_t)i], mask.data<int64_t>()[i] = 1;
  std::vector<ogx::NamedTensor> in{{"input_ids", input_ids}, {"attention_mask", mask}};
  for (int l = 0; l < std::atoi(argv[6]); l++)
    for (const char* kv : {"key", "value"})
      in.push_back({"past_key_values." + std::to_string(l) + "." + kv, ogx::Tensor(ogx::DType::f32, {1, kvh, 0, hd})});
  std::vector<ogx::NamedTensor> out;
  for (const auto& n : names) out.push_back({n, ogx::Tensor()});
  session->run(in, out);
  for (size_t i = 0; i < out.size(); i++) {
    std::ofstream o(std::string(argv[7]) + "/" + std::to_string(i) + ".bin", std::ios::binary);
    o.write((const char*)out[i].second.raw(), (std::streamsize)out[i].second.bytes());
  }
  return 0;
}
