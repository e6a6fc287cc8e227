/* Greedy tokens of a model folder with LoRA adapter files loaded and one activated, through the C API: built
 * against ONNX Runtime GenAI's ort_genai_c.h (Oga*) or, with -DUSE_OGX, against ogx's ogx.h (Ogx*), so the same
 * program checks that the two runtimes read the same .onnx_adapter files and agree on the tokens (issue 22).
 * EOS is suppressed (min_length = max_length). Prints one JSON line: {"tokens": [...new ids...]}.
 *
 * usage: adapter_check MODEL_DIR --prompt 1,2,3 -n N [--adapter FILE NAME]... [--active NAME]
 *        (no --active: no adapter active, the base model)
 * See adapter_check.sh for the comparison run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef USE_OGX
#include "ogx/ogx.h"
#define API(x) Ogx##x
typedef OgxResult Result;
typedef OgxModel Model;
typedef OgxAdapters Adapters;
typedef OgxGeneratorParams Params;
typedef OgxGenerator Generator;
#else
#include "ort_genai_c.h"
#define API(x) Oga##x
typedef OgaResult Result;
typedef OgaModel Model;
typedef OgaAdapters Adapters;
typedef OgaGeneratorParams Params;
typedef OgaGenerator Generator;
#endif

#define CHECK(call)                                                 \
  do {                                                              \
    Result* r_ = (call);                                            \
    if (r_) {                                                       \
      fprintf(stderr, "%s: %s\n", #call, API(ResultGetError)(r_)); \
      API(DestroyResult)(r_);                                       \
      exit(1);                                                      \
    }                                                               \
  } while (0)

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: adapter_check MODEL_DIR --prompt 1,2,3 -n N [--adapter FILE NAME]... [--active NAME]\n");
    return 2;
  }
  int32_t prompt[256];
  int np = 0, n = 8;
  const char* active = NULL;
  const char* files[16];
  const char* names[16];
  int na = 0;
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "--prompt") && i + 1 < argc) {
      const char* s = argv[++i];
      while (*s && np < 256) {
        prompt[np++] = (int32_t)strtol(s, (char**)&s, 10);
        if (*s == ',') s++;
      }
    } else if (!strcmp(argv[i], "-n") && i + 1 < argc) {
      n = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--adapter") && i + 2 < argc && na < 16) {
      files[na] = argv[++i];
      names[na++] = argv[++i];
    } else if (!strcmp(argv[i], "--active") && i + 1 < argc) {
      active = argv[++i];
    } else {
      fprintf(stderr, "adapter_check: bad argument '%s'\n", argv[i]);
      return 2;
    }
  }
  Model* model = NULL;
  CHECK(API(CreateModel)(argv[1], &model));
  Adapters* adapters = NULL;
  CHECK(API(CreateAdapters)(model, &adapters));
  for (int i = 0; i < na; i++) CHECK(API(LoadAdapter)(adapters, files[i], names[i]));
  Params* params = NULL;
  CHECK(API(CreateGeneratorParams)(model, &params));
  CHECK(API(GeneratorParamsSetSearchNumber)(params, "max_length", np + n));
  CHECK(API(GeneratorParamsSetSearchNumber)(params, "min_length", np + n));
  Generator* gen = NULL;
  CHECK(API(CreateGenerator)(model, params, &gen));
  if (active) CHECK(API(SetActiveAdapter)(gen, adapters, active));
  CHECK(API(Generator_AppendTokens)(gen, prompt, (size_t)np));
  while (!API(Generator_IsDone)(gen)) CHECK(API(Generator_GenerateNextToken)(gen));
  size_t len = API(Generator_GetSequenceCount)(gen, 0);
  const int32_t* seq = API(Generator_GetSequenceData)(gen, 0);
  printf("{\"tokens\": [");
  for (size_t i = (size_t)np; i < len; i++) printf("%s%d", i > (size_t)np ? ", " : "", seq[i]);
  printf("]}\n");
  API(DestroyGenerator)(gen);
  API(DestroyGeneratorParams)(params);
  API(DestroyAdapters)(adapters);
  API(DestroyModel)(model);
  return 0;
}
