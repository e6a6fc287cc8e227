// Runs the one-node MatMulNBits model written by matmul_nbits_ort.js on ogx's CPU provider for the given M and
// compares Y with ONNX Runtime's bit for bit; prints one line per M and exits 1 when any element differs.
// usage: matmul_nbits_ogx DIR K N THREADS M1,M2,...
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "onnx/loader.h"
#include "providers/cpu/cpu_provider.h"

namespace {

std::vector<float> read_floats(const std::string& path, size_t n) {
  std::ifstream f(path, std::ios::binary);
  std::vector<float> v(n);
  if (!f.read((char*)v.data(), (std::streamsize)(n * sizeof(float)))) {
    std::fprintf(stderr, "cannot read %zu floats from %s\n", n, path.c_str());
    std::exit(2);
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: matmul_nbits_ogx DIR K N THREADS M1,M2,...\n");
    return 2;
  }
  const std::string dir = argv[1];
  const int64_t K = std::atoll(argv[2]), N = std::atoll(argv[3]);
  ogx::SessionOptions so;
  so.intra_op_num_threads = std::atoi(argv[4]);
  auto session = ogx::cpu::make_cpu_provider()->create_session(ogx::load_model(dir + "/model.onnx"), so);
  std::stringstream ms(argv[5]);
  std::string tok;
  bool all_same = true;
  while (std::getline(ms, tok, ',')) {
    const int64_t M = std::atoll(tok.c_str());
    ogx::Tensor A(ogx::DType::f32, {M, K});
    const std::vector<float> a = read_floats(dir + "/a_" + tok + ".bin", (size_t)(M * K));
    std::memcpy(A.data<float>(), a.data(), a.size() * sizeof(float));
    std::vector<ogx::NamedTensor> in{{"A", A}}, out{{"Y", ogx::Tensor()}};
    session->run(in, out);
    const std::vector<float> want = read_floats(dir + "/y_" + tok + ".bin", (size_t)(M * N));
    const float* got = out[0].second.data<float>();
    int64_t differ = 0;
    double max_diff = 0;
    for (int64_t i = 0; i < M * N; i++)
      if (std::memcmp(&got[i], &want[(size_t)i], sizeof(float)) != 0) {
        differ++;
        max_diff = std::fmax(max_diff, std::fabs((double)got[i] - want[(size_t)i]));
      }
    std::printf("K=%lld N=%lld M=%lld: %lld of %lld differ (max %g)\n", (long long)K, (long long)N, (long long)M,
                (long long)differ, (long long)(M * N), max_diff);
    all_same = all_same && differ == 0;
  }
  return all_same ? 0 : 1;
}
