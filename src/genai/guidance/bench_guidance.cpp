// bench_guidance TOKENIZER_DIR [--schema FILE | --regex R | --grammar FILE] [--eos ID] [--tokens N] [--runs R]
//                [--seed S]
// Per-token cost of guidance over a real vocabulary: compiles the constraint, then generates (random allowed tokens,
// seeded; EOS as soon as it is allowed after half the budget) and times each step's mask (Matcher::allowed) and
// token consumption (thread CPU time). The first run starts with empty caches (cold: every lexer state's trie walk is new); later
// runs repeat the same token sequence with the caches of the first (warm: the steady state of a server reusing
// a schema). Prints one JSON object.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <random>
#include <ctime>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "genai/guidance/guidance.h"
#include "genai/tokenizer/tokenizer.h"

using namespace ogx::genai::guidance;
using Clock = std::chrono::steady_clock;

// Per-step times are this thread's CPU time (the machine may be shared: wall time would count other processes).
struct CpuClock {
  using time_point = double;  // microseconds
  static double now() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
  }
};

namespace {
std::string read_text(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  OGX_CHECK(f, "cannot read '", p, "'");
  return std::string(std::istreambuf_iterator<char>(f), {});
}
double us(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::micro>(b - a).count(); }
double pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, (size_t)(p * (double)v.size()))];
}
}  // namespace

int main(int argc, char** argv) try {
  OGX_CHECK(argc >= 2, "usage: bench_guidance TOKENIZER_DIR [--schema FILE | --regex R | --grammar FILE] [--eos ID] "
                       "[--tokens N] [--runs R] [--seed S]");
  std::string dir = argv[1], type = "json_schema", data, label = "builtin";
  int eos = -1, max_tokens = 256, runs = 3;
  unsigned seed = 1;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--schema") type = "json_schema", data = read_text(v), label = v;
    else if (k == "--regex") type = "regex", data = v, label = v;
    else if (k == "--grammar") type = "lark_grammar", data = read_text(v), label = v;
    else if (k == "--eos") eos = std::stoi(v);
    else if (k == "--tokens") max_tokens = std::stoi(v);
    else if (k == "--runs") runs = std::stoi(v);
    else if (k == "--seed") seed = (unsigned)std::stoul(v);
    else ogx::throw_error("unknown option ", k);
  }
  if (data.empty())
    data = R"({"type":"object","properties":{"name":{"type":"string","maxLength":40},"age":{"type":"integer","minimum":0,)"
           R"("maximum":150},"email":{"type":"string","format":"email"},"tags":{"type":"array","items":{"type":"string",)"
           R"("maxLength":16},"maxItems":5},"address":{"type":"object","properties":{"city":{"type":"string","maxLength":30},)"
           R"("zip":{"type":"string","pattern":"^[0-9]{5}$"}},"required":["city","zip"]},"score":{"type":"number",)"
           R"("minimum":0,"maximum":1}},"required":["name","age","email","tags","address","score"]})";
  auto t0 = Clock::now();
  auto tk = ogx::tok::Tokenizer::load(dir);
  auto t_tok = Clock::now();
  if (eos < 0) eos = tk->eos_token_ids().empty() ? 0 : tk->eos_token_ids()[0];
  auto trie = std::make_shared<TokenTrie>(TokenTrie::tokenizer_bytes(*tk, 0), std::vector<int32_t>{eos});
  auto t1 = Clock::now();
  auto g = compile_guidance(type, data, trie);
  auto t2 = Clock::now();
  std::vector<int32_t> sequence;  // the tokens of the first run, replayed by the others
  nlohmann::json out;
  out["vocab_size"] = trie->vocab_size();
  out["trie_nodes"] = trie->nodes().size();
  out["tokenizer_load_ms"] = us(t0, t_tok) / 1000;
  out["vocab_bytes_and_trie_ms"] = us(t_tok, t1) / 1000;
  out["compile_ms"] = us(t1, t2) / 1000;
  out["constraint"] = label;
  std::vector<uint64_t> mask;
  for (int run = 0; run < runs; run++) {
    Matcher m(g);
    std::mt19937 rng(seed);
    std::vector<double> mask_us, consume_us;
    for (int step = 0; step < max_tokens; step++) {
      double a = CpuClock::now();
      m.allowed(mask);
      mask_us.push_back(CpuClock::now() - a);
      int32_t pick;
      if (run > 0) {
        if (step >= (int)sequence.size()) break;
        pick = sequence[step];
      } else {
        // A random allowed token, whitespace-only tokens only when nothing else fits (a model writes content; a
        // uniform pick would mostly take the many whitespace tokens of large vocabularies).
        std::vector<int32_t> ok, space;
        for (size_t w = 0; w < mask.size(); w++)
          for (uint64_t bits = mask[w]; bits; bits &= bits - 1) {
            int32_t t = (int32_t)(w * 64 + __builtin_ctzll(bits));
            const std::string& b = trie->bytes(t);
            (!b.empty() && b.find_first_not_of(" \t\r\n") == std::string::npos ? space : ok).push_back(t);
          }
        if (ok.empty()) ok = space;
        OGX_CHECK(!ok.empty(), "no token allowed at step ", step);
        bool eos_ok = mask[(size_t)eos >> 6] >> (eos & 63) & 1;
        pick = eos_ok && step > max_tokens / 2 ? eos : ok[rng() % ok.size()];
        sequence.push_back(pick);
      }
      if (pick == eos) break;
      double c = CpuClock::now();
      OGX_CHECK(m.consume(pick), "token ", pick, " refused");
      consume_us.push_back(CpuClock::now() - c);
    }
    double sum = 0;
    for (double x : mask_us) sum += x;
    nlohmann::json r;
    r["steps"] = mask_us.size();
    r["mask_us_mean"] = sum / (double)std::max<size_t>(1, mask_us.size());
    r["mask_us_p50"] = pct(mask_us, 0.5);
    r["mask_us_p99"] = pct(mask_us, 0.99);
    r["mask_us_max"] = pct(mask_us, 1.0);
    double csum = 0;
    for (double x : consume_us) csum += x;
    r["consume_us_mean"] = csum / (double)std::max<size_t>(1, consume_us.size());
    out[run == 0 ? "cold" : "warm"] = r;
  }
  std::string text;
  for (int32_t t : sequence)
    if (t != eos) text += trie->bytes(t);
  out["output"] = text;
  out["lexer_states"] = g->grammar().lexer.state_count();
  std::cout << out.dump(1) << std::endl;
  return 0;
} catch (const std::exception& e) {
  std::cerr << "bench_guidance: " << e.what() << std::endl;
  return 1;
}
