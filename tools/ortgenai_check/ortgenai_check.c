/* Runs a model folder in ONNX Runtime GenAI (its C API, ort_genai_c.h) on the CPU and prints, as one JSON line:
 *   "forced": greedy argmax (EOS masked) before each token of --forced, teacher-forced along --forced after
 *             --prompt, with "gap" = logit[argmax] - logit[forced token] at each step;
 *   "greedy": free-running greedy tokens with EOS suppressed (min_length = max_length), as ort_reference.json's
 *             were made.
 * --dump-logits FILE writes float32 logits [len(forced) + 1, vocab]: after the prompt and after each forced token.
 *
 * usage: ortgenai_check MODEL_DIR --prompt 1,2,3 --forced 4,5,6 [--eos 2[,3]] [--dump-logits FILE]
 *
 * Timing mode, measured as `ogx bench` does (warm-up run, then per repeat: prefill = AppendTokens of P seeded random
 * ids, decode = G-1 GenerateNextToken calls after the first, EOS suppressed; medians), one JSON line:
 *        ortgenai_check MODEL_DIR --bench P,G,R [--threads N]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ort_genai_c.h"

#define CHECK(call)                                                   \
  do {                                                                \
    OgaResult* r_ = (call);                                           \
    if (r_) {                                                         \
      fprintf(stderr, "%s: %s\n", #call, OgaResultGetError(r_));      \
      OgaDestroyResult(r_);                                           \
      exit(1);                                                        \
    }                                                                 \
  } while (0)

static int parse_ids(const char* s, int32_t* out, int cap) {
  int n = 0;
  while (s && *s && n < cap) {
    out[n++] = (int32_t)strtol(s, (char**)&s, 10);
    if (*s == ',') s++;
  }
  return n;
}

static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
  if (exp == 0) {
    float f = ldexpf((float)man, -24);
    return sign ? -f : f;
  }
  if (exp == 31) bits = sign | 0x7f800000u | (man << 13);
  else bits = sign | ((exp + 112) << 23) | (man << 13);
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

/* Last position's logits as float32; returns the vocabulary size. */
static size_t get_logits(OgaGenerator* g, float** out) {
  OgaTensor* t;
  CHECK(OgaGenerator_GetLogits(g, &t));
  OgaElementType type;
  size_t rank;
  int64_t shape[8];
  void* data;
  CHECK(OgaTensorGetType(t, &type));
  CHECK(OgaTensorGetShapeRank(t, &rank));
  CHECK(OgaTensorGetShape(t, shape, rank));
  CHECK(OgaTensorGetData(t, &data));
  size_t vocab = (size_t)shape[rank - 1], total = 1;
  for (size_t i = 0; i < rank; i++) total *= (size_t)shape[i];
  *out = realloc(*out, vocab * sizeof(float));
  for (size_t i = 0; i < vocab; i++) {
    size_t j = total - vocab + i;
    if (type == OgaElementType_float32) (*out)[i] = ((const float*)data)[j];
    else if (type == OgaElementType_float16) (*out)[i] = half_to_float(((const uint16_t*)data)[j]);
    else {
      fprintf(stderr, "unexpected logits type %d\n", (int)type);
      exit(1);
    }
  }
  OgaDestroyTensor(t);
  return vocab;
}

static OgaGenerator* make_generator(OgaModel* model, int max_length, int suppress_eos) {
  OgaGeneratorParams* p;
  OgaGenerator* g;
  CHECK(OgaCreateGeneratorParams(model, &p));
  CHECK(OgaGeneratorParamsSetSearchNumber(p, "max_length", max_length));
  if (suppress_eos) CHECK(OgaGeneratorParamsSetSearchNumber(p, "min_length", max_length));
  CHECK(OgaGeneratorParamsSetSearchBool(p, "do_sample", false));
  CHECK(OgaCreateGenerator(model, p, &g));
  OgaDestroyGeneratorParams(p);
  return g;
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}
static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int bench(OgaModel* model, int P, int G, int R) {
  static int32_t ids[4096];
  uint32_t x = 1234;
  for (int i = 0; i < P; i++) ids[i] = (int32_t)((x = x * 1664525u + 1013904223u) >> 8) % 1000;
  double pre[64], dec[64];
  for (int r = -1; r < R && r < 64; r++) { /* r = -1: untimed warm-up */
    OgaGenerator* g = make_generator(model, P + (r < 0 ? 3 : G), 1);
    double t0 = now_s();
    CHECK(OgaGenerator_AppendTokens(g, ids, (size_t)P));
    double t1 = now_s();
    CHECK(OgaGenerator_GenerateNextToken(g)); /* from the prefill logits */
    double t2 = now_s();
    int n = 0;
    for (; n < (r < 0 ? 2 : G - 1) && !OgaGenerator_IsDone(g); n++) CHECK(OgaGenerator_GenerateNextToken(g));
    double t3 = now_s();
    OgaDestroyGenerator(g);
    if (r >= 0) pre[r] = P / (t1 - t0), dec[r] = n / (t3 - t2);
  }
  printf("{\"prompt_len\": %d, \"gen_len\": %d, \"repeats\": %d, \"prefill_tok_s\": %.3f, \"decode_tok_s\": %.3f}\n", P,
         G, R, median(pre, R), median(dec, R));
  return 0;
}

int main(int argc, char** argv) {
  static int32_t prompt[4096], forced[4096], eos[16];
  int np = 0, nf = 0, ne = 0;
  const char *dir = NULL, *dump = NULL;
  int bp = 0, bg = 0, br = 0, threads = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--prompt") && i + 1 < argc) np = parse_ids(argv[++i], prompt, 4096);
    else if (!strcmp(argv[i], "--forced") && i + 1 < argc) nf = parse_ids(argv[++i], forced, 4096);
    else if (!strcmp(argv[i], "--eos") && i + 1 < argc) ne = parse_ids(argv[++i], eos, 16);
    else if (!strcmp(argv[i], "--dump-logits") && i + 1 < argc) dump = argv[++i];
    else if (!strcmp(argv[i], "--bench") && i + 1 < argc) sscanf(argv[++i], "%d,%d,%d", &bp, &bg, &br);
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!dir) dir = argv[i];
    else {
      fprintf(stderr, "unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  if (dir && bp > 0) {
    if (bp > 4096 || bg < 2 || br < 1 || br > 64) {
      fprintf(stderr, "--bench P,G,R: 1 <= P <= 4096, G >= 2, 1 <= R <= 64\n");
      return 2;
    }
    OgaConfig* config;
    OgaModel* model;
    CHECK(OgaCreateConfig(dir, &config));
    CHECK(OgaConfigClearProviders(config));
    if (threads > 0) {
      char js[160];
      snprintf(js, sizeof(js), "{\"model\": {\"decoder\": {\"session_options\": {\"intra_op_num_threads\": %d}}}}", threads);
      CHECK(OgaConfigOverlay(config, js));
    }
    CHECK(OgaCreateModelFromConfig(config, &model));
    int rc = bench(model, bp, bg, br);
    OgaDestroyModel(model);
    OgaDestroyConfig(config);
    OgaShutdown();
    return rc;
  }
  if (!dir || np == 0 || nf == 0) {
    fprintf(stderr, "usage: ortgenai_check MODEL_DIR --prompt IDS --forced IDS [--eos IDS] [--dump-logits FILE]\n");
    return 2;
  }
  OgaConfig* config;
  OgaModel* model;
  CHECK(OgaCreateConfig(dir, &config));
  CHECK(OgaConfigClearProviders(config)); /* CPU, as the golden references were made */
  CHECK(OgaCreateModelFromConfig(config, &model));

  FILE* df = dump ? fopen(dump, "wb") : NULL;
  if (dump && !df) {
    fprintf(stderr, "cannot write %s\n", dump);
    return 1;
  }
  float* l = NULL;
  OgaGenerator* g = make_generator(model, np + nf + 1, 0);
  CHECK(OgaGenerator_AppendTokens(g, prompt, (size_t)np));
  printf("{\"forced\": [");
  char gaps[65536];
  size_t gl = 0;
  for (int k = 0; k <= nf; k++) {
    size_t vocab = get_logits(g, &l);
    if (df) fwrite(l, sizeof(float), vocab, df);
    if (k == nf) break;
    for (int e = 0; e < ne; e++)
      if ((size_t)eos[e] < vocab) l[eos[e]] = -INFINITY;
    size_t best = 0;
    for (size_t i = 1; i < vocab; i++)
      if (l[i] > l[best]) best = i;
    printf("%s%zu", k ? ", " : "", best);
    gl += (size_t)snprintf(gaps + gl, sizeof(gaps) - gl, "%s%.9g", k ? ", " : "", (double)(l[best] - l[forced[k]]));
    CHECK(OgaGenerator_AppendTokens(g, &forced[k], 1));
  }
  printf("], \"gap\": [%s], \"greedy\": [", gaps);
  OgaDestroyGenerator(g);
  if (df) fclose(df);

  g = make_generator(model, np + nf, 1);
  CHECK(OgaGenerator_AppendTokens(g, prompt, (size_t)np));
  for (int k = 0; k < nf && !OgaGenerator_IsDone(g); k++) {
    CHECK(OgaGenerator_GenerateNextToken(g));
    const int32_t* next;
    size_t count;
    CHECK(OgaGenerator_GetNextTokens(g, &next, &count));
    printf("%s%d", k ? ", " : "", next[0]);
  }
  printf("]}\n");
  OgaDestroyGenerator(g);
  free(l);
  OgaDestroyModel(model);
  OgaDestroyConfig(config);
  OgaShutdown();
  return 0;
}
