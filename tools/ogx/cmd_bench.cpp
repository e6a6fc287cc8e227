// ogx bench MODEL_DIR --prompt-len P --gen-len G [--repeats R] [--provider P] [--provider-option K=V]...
//   [--threads N] [--json]
// Prefill and decode speed (median over repeats) on seeded random prompt ids, and peak resident memory.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>

#include "commands.h"
#include "genai/generator.h"
#include "model_options.h"

namespace ogx::cli {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Peak resident set size of this process in MiB (VmHWM).
double peak_rss_mib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return 0;
}

}  // namespace

int cmd_bench(const std::vector<std::string>& argv) {
  std::set<std::string> vals = kModelValueFlags;
  vals.insert({"prompt-len", "gen-len", "repeats"});
  Args a(argv, vals, {"json"});
  OGX_CHECK(a.positional().size() == 1, "usage: ogx bench MODEL_DIR --prompt-len P --gen-len G [--json]");
  const std::string dir = a.positional()[0];
  int P = a.get_int("prompt-len", 128), G = a.get_int("gen-len", 128), R = a.get_int("repeats", 3);
  OGX_CHECK(P >= 1 && G >= 1 && R >= 1, "--prompt-len, --gen-len and --repeats must be >= 1");
  using Clock = std::chrono::steady_clock;
  auto load0 = Clock::now();
  auto model = genai::Model::load(model_config(dir, a));
  double load_ms = std::chrono::duration<double, std::milli>(Clock::now() - load0).count();
  int vocab = model->io().vocab_size > 0 ? model->io().vocab_size : 1000;
  std::mt19937 rng(1234);
  std::vector<int32_t> prompt(P);
  for (auto& t : prompt) t = (int32_t)(rng() % (uint32_t)vocab);
  std::vector<double> prefill, decode;
  for (int r = 0; r < R; r++) {
    genai::GeneratorParams params(*model);
    params.search.max_length = P + G;
    params.search.min_length = P + G;  // no early EOS: every run decodes G tokens
    params.search.do_sample = false;
    genai::Generator gen(model, params);
    auto t0 = Clock::now();
    gen.append_tokens(prompt);
    auto t1 = Clock::now();
    gen.generate_next_token();  // from the prefill logits
    auto t2 = Clock::now();
    int n = 0;
    while (!gen.is_done() && n < G - 1) {
      gen.generate_next_token();
      n++;
    }
    auto t3 = Clock::now();
    prefill.push_back(P / std::chrono::duration<double>(t1 - t0).count());
    if (n > 0) decode.push_back(n / std::chrono::duration<double>(t3 - t2).count());
  }
  nlohmann::json j;
  j["model"] = dir;
  j["provider"] = model->provider();
  j["prompt_len"] = P;
  j["gen_len"] = G;
  j["repeats"] = R;
  j["load_ms"] = load_ms;
  j["prefill_tok_s"] = median(prefill);
  j["decode_tok_s"] = median(decode);
  j["peak_rss_mib"] = peak_rss_mib();
  if (a.has("json")) {
    std::cout << j.dump() << std::endl;
  } else {
    std::printf("prefill %.1f tokens/s, decode %.1f tokens/s (median of %d), peak RSS %.1f MiB, load %.0f ms\n",
                (double)j["prefill_tok_s"], (double)j["decode_tok_s"], R, (double)j["peak_rss_mib"], load_ms);
  }
  return 0;
}

}  // namespace ogx::cli
