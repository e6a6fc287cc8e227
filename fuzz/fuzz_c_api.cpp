// The C API's search-option and append paths over one small model (OGX_FUZZ_MODEL, default the golden llama
// fp32-cpu folder under ../shared): the input is a program of byte-coded calls — set numeric / boolean options,
// create a generator, append tokens (directly or through OgxSequences), generate, rewind, create tensors. Every
// call must return NULL or an error object; none may crash, hang or leak.
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "ogx/ogx.h"

namespace {

OgxModel* g_model = nullptr;

const char* const kNumberOptions[] = {"max_length",   "min_length",       "top_k",          "top_p",
                                      "temperature",  "repetition_penalty", "random_seed",  "no_repeat_ngram_size",
                                      "num_beams",    "num_return_sequences", "length_penalty", "diversity_penalty",
                                      "batch_size",   "no_such_option"};
const char* const kBoolOptions[] = {"do_sample", "past_present_share_buffer", "early_stopping", "bogus"};

// Reads bytes from the input, zeros past its end.
struct Reader {
  const uint8_t* p;
  size_t n;
  bool done() const { return n == 0; }
  void take(void* out, size_t k) {
    std::memset(out, 0, k);
    const size_t m = std::min(k, n);
    std::memcpy(out, p, m);
    p += m;
    n -= m;
  }
  uint8_t byte() {
    uint8_t b = 0;
    take(&b, 1);
    return b;
  }
};

void check(OgxResult* r) {
  if (!r) return;
  if (!OgxResultGetError(r)) std::abort();  // an error object always has a message
  OgxDestroyResult(r);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* env = std::getenv("OGX_FUZZ_MODEL");
  std::string dir = env && *env ? env : std::string(OGX_SHARED_DIR) + "/golden/models/llama/fp32-cpu";
  if (!std::filesystem::exists(dir + "/genai_config.json")) return 0;  // options without a model: error paths only
  OgxConfig* cfg = nullptr;
  check(OgxCreateConfig(dir.c_str(), &cfg));
  if (cfg) {
    check(OgxConfigSetProviderOption(cfg, "cpu", "intra_op_num_threads", "1"));
    check(OgxCreateModelFromConfig(cfg, &g_model));
    OgxDestroyConfig(cfg);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader in{data, size};
  OgxGeneratorParams* params = nullptr;
  OgxGenerator* gen = nullptr;
  OgxSequences* seqs = nullptr;
  check(OgxCreateSequences(&seqs));
  if (g_model) check(OgxCreateGeneratorParams(g_model, &params));
  int model_runs = 0;  // each run costs milliseconds: a few per input keep the fuzzer fast
  for (int step = 0; step < 64 && !in.done(); step++) {
    const uint8_t op = in.byte();
    switch (op % 9) {
      case 0: {
        double v;
        in.take(&v, 8);
        check(OgxGeneratorParamsSetSearchNumber(params, kNumberOptions[in.byte() % std::size(kNumberOptions)], v));
        break;
      }
      case 1: {
        uint8_t k = in.byte();
        check(OgxGeneratorParamsSetSearchBool(params, kBoolOptions[k % std::size(kBoolOptions)], (k >> 7) != 0));
        break;
      }
      case 2:
        OgxDestroyGenerator(gen);
        gen = nullptr;
        if (params) check(OgxGeneratorParamsSetSearchNumber(params, "max_length", 24));  // bounds the work
        check(OgxCreateGenerator(g_model, params, &gen));
        break;
      case 3: {
        int32_t ids[8];
        const size_t count = in.byte() % 9;
        in.take(ids, sizeof ids);
        if (model_runs++ < 3) check(OgxGenerator_AppendTokens(gen, count ? ids : nullptr, count));
        break;
      }
      case 4:
        if (model_runs++ < 3) check(OgxGenerator_GenerateNextToken(gen));
        break;
      case 5: {
        uint64_t len;
        in.take(&len, 8);
        check(OgxGenerator_RewindTo(gen, (size_t)(len % 40)));
        break;
      }
      case 6: {
        int32_t ids[4];
        in.take(ids, sizeof ids);
        const uint8_t k = in.byte();
        if (k & 1) check(OgxAppendTokenSequence(ids, k % 5, seqs));
        else check(OgxAppendTokenToSequence(ids[0], seqs, k >> 1));
        break;
      }
      case 7:
        if (model_runs++ < 3) check(OgxGenerator_AppendTokenSequences(gen, seqs));
        break;
      case 8: {
        int64_t dims[3];
        in.take(dims, sizeof dims);
        const uint8_t k = in.byte();
        // A valid shape of more than 2^24 elements borrows a dummy buffer (never read): the library would rightly
        // allocate it, which libFuzzer's -malloc_limit_mb would report. Overflowing and negative shapes, which
        // must fail before any allocation, are passed on as they are.
        static uint8_t dummy[1];
        __int128 n = 1;
        bool valid = true;
        for (int d = 0; d < k % 4; d++) {
          valid = valid && dims[d] >= 0;
          if (valid && n <= ((__int128)1 << 64)) n *= dims[d];
        }
        void* buffer = valid && n > (1 << 24) ? dummy : nullptr;
        OgxTensor* t = nullptr;
        check(OgxCreateTensorFromBuffer(buffer, dims, k % 4, (OgxElementType)(k >> 2), &t));
        OgxDestroyTensor(t);
        break;
      }
    }
  }
  OgxDestroyGenerator(gen);
  OgxDestroyGeneratorParams(params);
  OgxDestroySequences(seqs);
  return 0;
}
