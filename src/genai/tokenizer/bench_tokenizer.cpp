// Encode throughput (one thread) for the golden Llama-3 and Qwen3 tokenizers on the English golden strings
// (ASCII-only texts of reference.json) repeated to >= 10 MB.
// Usage: bench_tokenizer [shared_dir] [min_mb] [only_name]
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "genai/tokenizer/tokenizer.h"

using namespace ogx::tok;

int main(int argc, char** argv) {
  std::string shared = argc > 1 ? argv[1] : OGX_SHARED_DIR;
  double min_mb = argc > 2 ? std::stod(argv[2]) : 10.0;
  std::string only = argc > 3 ? argv[3] : "";
  for (const char* name : {"llama3", "qwen3", "llama2"}) {
    if (!only.empty() && only != name) continue;
    std::string dir = shared + "/golden/tokenizers/" + name;
    std::ifstream f(dir + "/reference.json");
    if (!f) {
      std::fprintf(stderr, "skip %s: %s/reference.json not found\n", name, dir.c_str());
      continue;
    }
    std::stringstream ss;
    ss << f.rdbuf();
    auto ref = nlohmann::json::parse(ss.str());
    std::string english;
    for (const auto& e : ref["encode"]) {
      std::string t = e["text"].get<std::string>();
      bool ascii = !t.empty();
      for (unsigned char c : t) ascii = ascii && c < 0x80;
      if (ascii && t.find("<|") == std::string::npos && t.find("s>") == std::string::npos) english += t + "\n";
    }
    std::string text;
    while (text.size() < min_mb * 1e6) text += english;
    auto t0 = std::chrono::steady_clock::now();
    auto tok = Tokenizer::load(dir);
    double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    tok->encode(english);  // warm-up
    double best = 1e30;
    size_t n = 0;
    for (int rep = 0; rep < 3; ++rep) {
      t0 = std::chrono::steady_clock::now();
      n = tok->encode(text, false).size();
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    auto ids = tok->encode(text, false);
    t0 = std::chrono::steady_clock::now();
    std::string back = tok->decode(ids);
    double dec_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%-7s load %.2f s | encode %.1f MB in %.3f s = %.1f MB/s (%zu tokens, %.2f M tok/s) | decode %.1f MB/s%s\n",
                name, load_s, text.size() / 1e6, best, text.size() / 1e6 / best, n, n / 1e6 / best,
                back.size() / 1e6 / dec_s, back == text ? "" : " (round trip differs!)");
  }
  return 0;
}
