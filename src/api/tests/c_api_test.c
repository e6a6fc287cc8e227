/* The C API from C: ogx.h compiles as C11, errors come back as results, handles are checked, and a whole
 * question-answer flow runs on a golden model. Usage: ogx_api_c_test MODEL_DIR (exit 77 = skipped: no model). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ogx/ogx.h"

static int failures = 0;

#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
      failures++;                                                                \
    }                                                                            \
  } while (0)

/* Expects success; prints the error otherwise. */
#define OK(call)                                                                                     \
  do {                                                                                               \
    OgxResult* r_ = (call);                                                                          \
    if (r_) {                                                                                        \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, OgxResultGetError(r_));  \
      OgxDestroyResult(r_);                                                                          \
      failures++;                                                                                    \
    }                                                                                                \
  } while (0)

/* Expects an error of `code` whose message contains `text`. */
#define FAILS(call, code, text) expect_error((call), (code), (text), #call, __LINE__)

static void expect_error(OgxResult* r, OgxErrorCode code, const char* text, const char* what, int line) {
  if (!r) {
    fprintf(stderr, "%s:%d: %s succeeded, expected an error\n", __FILE__, line, what);
    failures++;
    return;
  }
  if (OgxResultGetCode(r) != code || !strstr(OgxResultGetError(r), text)) {
    fprintf(stderr, "%s:%d: %s: got code %d '%s', expected code %d containing '%s'\n", __FILE__, line, what,
            (int)OgxResultGetCode(r), OgxResultGetError(r), (int)code, text);
    failures++;
  }
  OgxDestroyResult(r);
}

static int log_errors = 0;
static void count_errors(void* user_data, OgxLogLevel level, const char* message) {
  (void)message;
  if (level == OgxLogLevel_Error) (*(int*)user_data)++;
}

static void test_without_model(void) {
  CHECK(strlen(OgxGetVersion()) >= 5);
  CHECK(OgxResultGetCode(NULL) == OgxErrorCode_Ok);
  CHECK(strcmp(OgxResultGetError(NULL), "") == 0);

  /* NULL arguments */
  FAILS(OgxCreateConfig(NULL, NULL), OgxErrorCode_InvalidArgument, "out is NULL");
  OgxConfig* config = (OgxConfig*)1;
  FAILS(OgxCreateConfig(NULL, &config), OgxErrorCode_InvalidArgument, "config_path is NULL");
  CHECK(config == NULL); /* out parameters are cleared on failure */
  FAILS(OgxConfigAppendProvider(NULL, "cpu"), OgxErrorCode_InvalidArgument, "config is NULL");
  FAILS(OgxCreateConfig("/nonexistent/folder", &config), OgxErrorCode_Runtime, "genai_config.json");
  FAILS(OgxCreateModel("/nonexistent/folder", &(OgxModel*){NULL}), OgxErrorCode_Runtime, "/nonexistent/folder");
  CHECK(OgxGenerator_IsDone(NULL)); /* true: a generation loop on a bad handle ends */
  CHECK(OgxSequencesCount(NULL) == 0);

  /* providers and devices */
  bool available = false;
  OK(OgxIsProviderAvailable("cpu", &available));
  CHECK(available);
  FAILS(OgxIsProviderAvailable("cuda", &available), OgxErrorCode_InvalidArgument, "known: cpu, vulkan, dml");
  const char* devices = NULL;
  OK(OgxGetAvailableDevices(&devices));
  CHECK(devices && strstr(devices, "\"devices\""));
  OgxDestroyString(devices);

  /* sequences */
  OgxSequences* seqs = NULL;
  OK(OgxCreateSequences(&seqs));
  const int32_t ids[3] = {1, 2, 3};
  OK(OgxAppendTokenSequence(ids, 3, seqs));
  OK(OgxAppendTokenToSequence(7, seqs, 0));
  OK(OgxAppendTokenToSequence(9, seqs, 1));
  FAILS(OgxAppendTokenToSequence(9, seqs, 5), OgxErrorCode_InvalidArgument, "past the 2 sequences");
  CHECK(OgxSequencesCount(seqs) == 2);
  CHECK(OgxSequencesGetSequenceCount(seqs, 0) == 4);
  CHECK(OgxSequencesGetSequenceData(seqs, 0)[3] == 7);
  CHECK(OgxSequencesGetSequenceData(seqs, 1)[0] == 9);
  CHECK(OgxSequencesGetSequenceData(seqs, 2) == NULL);

  /* wrong handle type: a sequences object passed as a config */
  FAILS(OgxConfigClearProviders((OgxConfig*)seqs), OgxErrorCode_InvalidHandle, "is an OgxSequences, expected an OgxConfig");

  /* use after destroy, double destroy (ignored and logged) */
  OK(OgxSetLogCallbackWithLevel(count_errors, &log_errors));
  OgxDestroySequences(seqs);
  FAILS(OgxAppendTokenSequence(ids, 3, seqs), OgxErrorCode_InvalidHandle, "not a live OgxSequences");
  CHECK(OgxSequencesCount(seqs) == 0);
  OgxDestroySequences(seqs);
  CHECK(log_errors >= 2);
  OK(OgxSetLogCallbackWithLevel(NULL, NULL));
  FAILS(OgxSetLogLevel((OgxLogLevel)7), OgxErrorCode_InvalidArgument, "level 7");

  /* tensors */
  int64_t shape[2] = {2, 3};
  OgxTensor* t = NULL;
  OK(OgxCreateTensorFromBuffer(NULL, shape, 2, OgxElementType_float32, &t));
  size_t rank = 0;
  OK(OgxTensorGetShapeRank(t, &rank));
  CHECK(rank == 2);
  int64_t got[2] = {0, 0};
  OK(OgxTensorGetShape(t, got, 2));
  CHECK(got[0] == 2 && got[1] == 3);
  FAILS(OgxTensorGetShape(t, got, 1), OgxErrorCode_InvalidArgument, "rank is 2");
  void* data = NULL;
  OK(OgxTensorGetData(t, &data));
  CHECK(data && ((float*)data)[5] == 0.0f);
  OgxDestroyTensor(t);
  int64_t negative = -1;
  FAILS(OgxCreateTensorFromBuffer(NULL, &negative, 1, OgxElementType_int32, &t), OgxErrorCode_InvalidArgument,
        "negative dimension");
  FAILS(OgxCreateTensorFromBuffer(NULL, shape, 2, (OgxElementType)99, &t), OgxErrorCode_InvalidArgument,
        "element type 99");
}

static void test_with_model(const char* dir) {
  OgxConfig* config = NULL;
  OK(OgxCreateConfig(dir, &config));
  /* any provider name is accepted by the config, as in ONNX Runtime GenAI; creating the model reports it */
  OK(OgxConfigAppendProvider(config, "cuda"));
  {
    OgxModel* none = NULL;
    FAILS(OgxCreateModelFromConfig(config, &none), OgxErrorCode_Runtime, "known: cpu, vulkan, dml");
    CHECK(none == NULL);
  }
  OK(OgxConfigClearProviders(config));
  FAILS(OgxConfigOverlay(config, "{\"search\": {\"max_length\": -1}}"), OgxErrorCode_Runtime, "max_length");
  FAILS(OgxConfigOverlay(config, "{not json"), OgxErrorCode_Runtime, "not valid JSON");
  OK(OgxConfigOverlay(config, "{\"search\": {\"max_length\": 64}}"));

  OgxModel* model = NULL;
  OK(OgxCreateModelFromConfig(config, &model));
  OgxDestroyConfig(config); /* the model keeps its own copy */
  if (!model) return;
  const char* s = NULL;
  OK(OgxModelGetType(model, &s));
  CHECK(s && strcmp(s, "llama") == 0);
  OgxDestroyString(s);
  OK(OgxModelGetDeviceType(model, &s));
  CHECK(s && strcmp(s, "CPU") == 0);
  OgxDestroyString(s);

  OgxTokenizer* tokenizer = NULL;
  OK(OgxCreateTokenizer(model, &tokenizer));
  const char* prompt = NULL;
  OK(OgxTokenizerApplyChatTemplate(tokenizer, NULL, "[{\"role\": \"user\", \"content\": \"What is the capital of France?\"}]",
                                   NULL, true, &prompt));
  CHECK(prompt && strstr(prompt, "<|assistant|>"));
  OgxSequences* input = NULL;
  OK(OgxCreateSequences(&input));
  OK(OgxTokenizerEncode(tokenizer, prompt, input));
  OgxDestroyString(prompt);
  size_t prompt_len = OgxSequencesGetSequenceCount(input, 0);
  CHECK(prompt_len > 5);
  int32_t bos = -1;
  OK(OgxTokenizerGetBosTokenId(tokenizer, &bos));
  CHECK(bos == 1 && OgxSequencesGetSequenceData(input, 0)[0] == 1);

  OgxGeneratorParams* params = NULL;
  OK(OgxCreateGeneratorParams(model, &params));
  OK(OgxGeneratorParamsSetSearchNumber(params, "max_length", (double)(prompt_len + 8)));
  OK(OgxGeneratorParamsSetSearchBool(params, "do_sample", false));
  FAILS(OgxGeneratorParamsSetSearchNumber(params, "no_such_option", 1), OgxErrorCode_Runtime, "no_such_option");
  FAILS(OgxGeneratorParamsSetSearchBool(params, "max_length", true), OgxErrorCode_InvalidArgument, "not a boolean");

  OgxGenerator* generator = NULL;
  OK(OgxCreateGenerator(model, params, &generator));
  OgxDestroyModel(model); /* the generator and tokenizer keep what they need */
  OK(OgxGenerator_AppendTokenSequences(generator, input));
  OgxTokenizerStream* stream = NULL;
  OK(OgxCreateTokenizerStream(tokenizer, &stream));
  int steps = 0;
  while (!OgxGenerator_IsDone(generator) && steps < 100) {
    OK(OgxGenerator_GenerateNextToken(generator));
    const int32_t* next = NULL;
    size_t count = 0;
    OK(OgxGenerator_GetNextTokens(generator, &next, &count));
    CHECK(count == 1);
    const char* chunk = NULL;
    OK(OgxTokenizerStreamDecode(stream, next[0], &chunk));
    CHECK(chunk != NULL);
    steps++;
  }
  size_t total = OgxGenerator_TokenCount(generator);
  CHECK(total == prompt_len + 8);
  CHECK(OgxGenerator_GetSequenceCount(generator, 0) == total);
  CHECK(OgxGenerator_GetSequenceData(generator, 1) == NULL);
  FAILS(OgxGenerator_GenerateNextToken(generator), OgxErrorCode_Runtime, "done");
  const char* text = NULL;
  OK(OgxTokenizerDecode(tokenizer, OgxGenerator_GetSequenceData(generator, 0) + prompt_len, 8, &text));
  CHECK(text != NULL);
  OgxDestroyString(text);

  /* rewind to the prompt, force token 42 through the logits */
  int32_t first = OgxGenerator_GetSequenceData(generator, 0)[prompt_len];
  OK(OgxGenerator_RewindTo(generator, prompt_len));
  OgxTensor* logits = NULL;
  OK(OgxGenerator_GetLogits(generator, &logits));
  int64_t shape[3] = {0, 0, 0};
  OK(OgxTensorGetShape(logits, shape, 3));
  CHECK(shape[0] == 1 && shape[1] == 1 && shape[2] == 2048);
  float* values = NULL;
  OK(OgxTensorGetData(logits, (void**)&values));
  int32_t argmax = 0;
  for (int i = 1; i < 2048; i++)
    if (values[i] > values[argmax]) argmax = i;
  CHECK(argmax == first); /* greedy picked the argmax of these logits */
  for (int i = 0; i < 2048; i++) values[i] = i == 42 ? 0.0f : -1e9f;
  OK(OgxGenerator_SetLogits(generator, logits));
  OgxDestroyTensor(logits);
  OK(OgxGenerator_GenerateNextToken(generator));
  CHECK(OgxGenerator_GetSequenceData(generator, 0)[prompt_len] == 42);

  OgxDestroyTokenizerStream(stream);
  OgxDestroyGenerator(generator);
  OgxDestroyGeneratorParams(params);
  OgxDestroySequences(input);
  OgxDestroyTokenizer(tokenizer);
}

int main(int argc, char** argv) {
  test_without_model();
  struct stat st;
  int skipped = argc < 2 || stat(argv[1], &st) != 0;
  if (skipped)
    printf("model folder %s is absent (../shared missing): model tests skipped\n", argc < 2 ? "(none)" : argv[1]);
  else
    test_with_model(argv[1]);
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("all C API checks passed\n");
  return skipped ? 77 : 0;
}
