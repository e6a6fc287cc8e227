/* Question answering from C: each question is answered from a fresh generator (no history).
 * Mirrors onnxruntime-genai's C question-answer example over ogx.h (Oga* -> Ogx*).
 *
 *   ogx_example_qa -m MODEL_DIR [-e follow_config|cpu|dml|vulkan] [-l MAX_LENGTH] [-p QUESTION]...
 *
 * Without -p, questions are read from stdin, one per line, until an empty line or end of input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ogx/ogx.h"

/* Prints the error of a failed call and exits. */
static void check(OgxResult* result) {
  if (!result) return;
  fprintf(stderr, "error: %s\n", OgxResultGetError(result));
  OgxDestroyResult(result);
  exit(1);
}

/* Appends `text` to `out` as a JSON string literal. */
static void json_string(const char* text, char* out, size_t size) {
  size_t n = strlen(out);
  if (n + 2 >= size) return;
  out[n++] = '"';
  for (const char* p = text; *p && n + 8 < size; p++) {
    unsigned char c = (unsigned char)*p;
    if (c == '"' || c == '\\') {
      out[n++] = '\\';
      out[n++] = (char)c;
    } else if (c < 0x20) {
      n += (size_t)snprintf(out + n, size - n, "\\u%04x", c);
    } else {
      out[n++] = (char)c;
    }
  }
  out[n++] = '"';
  out[n] = '\0';
}

static void answer(OgxModel* model, OgxTokenizer* tokenizer, const char* question, int max_length) {
  char messages[8192] = "[{\"role\": \"user\", \"content\": ";
  json_string(question, messages, sizeof messages - 4);
  strcat(messages, "}]");
  const char* prompt = NULL;
  check(OgxTokenizerApplyChatTemplate(tokenizer, NULL, messages, NULL, true, &prompt));
  OgxSequences* input = NULL;
  check(OgxCreateSequences(&input));
  check(OgxTokenizerEncode(tokenizer, prompt, input));
  OgxDestroyString(prompt);

  OgxGeneratorParams* params = NULL;
  check(OgxCreateGeneratorParams(model, &params));
  if (max_length > 0) check(OgxGeneratorParamsSetSearchNumber(params, "max_length", max_length));
  OgxGenerator* generator = NULL;
  check(OgxCreateGenerator(model, params, &generator));
  check(OgxGenerator_AppendTokenSequences(generator, input));

  OgxTokenizerStream* stream = NULL;
  check(OgxCreateTokenizerStream(tokenizer, &stream));
  printf("Output: ");
  while (!OgxGenerator_IsDone(generator)) {
    check(OgxGenerator_GenerateNextToken(generator));
    const int32_t* next = NULL;
    size_t count = 0;
    check(OgxGenerator_GetNextTokens(generator, &next, &count));
    const char* chunk = NULL;
    check(OgxTokenizerStreamDecode(stream, next[0], &chunk));
    printf("%s", chunk);
    fflush(stdout);
  }
  const char* rest = NULL;
  check(OgxTokenizerStreamFlush(stream, &rest));
  printf("%s\n", rest);

  OgxDestroyTokenizerStream(stream);
  OgxDestroyGenerator(generator);
  OgxDestroyGeneratorParams(params);
  OgxDestroySequences(input);
}

static void usage(void) {
  fprintf(stderr, "usage: ogx_example_qa -m MODEL_DIR [-e follow_config|cpu|dml|vulkan] [-l MAX_LENGTH] "
                  "[-p QUESTION]...\n");
  exit(2);
}

int main(int argc, char** argv) {
  const char* model_dir = NULL;
  const char* provider = "follow_config";
  int max_length = 0;
  const char* questions[64];
  int n_questions = 0;
  for (int i = 1; i < argc; i++) {
    if (i + 1 >= argc) usage();
    if (!strcmp(argv[i], "-m")) model_dir = argv[++i];
    else if (!strcmp(argv[i], "-e")) provider = argv[++i];
    else if (!strcmp(argv[i], "-l")) max_length = atoi(argv[++i]);
    else if (!strcmp(argv[i], "-p") && n_questions < 64) questions[n_questions++] = argv[++i];
    else usage();
  }
  if (!model_dir) usage();

  OgxConfig* config = NULL;
  check(OgxCreateConfig(model_dir, &config));
  if (strcmp(provider, "follow_config") != 0) {
    check(OgxConfigClearProviders(config));
    if (strcmp(provider, "cpu") != 0) check(OgxConfigAppendProvider(config, provider));
  }
  OgxModel* model = NULL;
  check(OgxCreateModelFromConfig(config, &model));
  OgxDestroyConfig(config);
  OgxTokenizer* tokenizer = NULL;
  check(OgxCreateTokenizer(model, &tokenizer));

  if (n_questions > 0) {
    for (int i = 0; i < n_questions; i++) answer(model, tokenizer, questions[i], max_length);
  } else {
    char line[4096];
    while (printf("Input: "), fflush(stdout), fgets(line, sizeof line, stdin)) {
      line[strcspn(line, "\r\n")] = '\0';
      if (!line[0]) break;
      answer(model, tokenizer, line, max_length);
    }
  }
  OgxDestroyTokenizer(tokenizer);
  OgxDestroyModel(model);
  return 0;
}
