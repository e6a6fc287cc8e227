/* ogx C API: load an ONNX Runtime GenAI model folder, tokenize, and generate.
 *
 * The names mirror ONNX Runtime GenAI's ort_genai_c.h with an `Ogx` prefix (OgaCreateConfig -> OgxCreateConfig),
 * so C code written against it ports by renaming.
 *
 * ERRORS
 *   Every call that can fail returns an OgxResult*: NULL on success, otherwise an error object holding a code and a
 *   message (OgxResultGetError, OgxResultGetCode) that the caller frees with OgxDestroyResult. No C++ exception
 *   crosses this boundary. Calls that return a value directly (OgxSequencesCount, OgxGenerator_IsDone, ...) return a
 *   documented neutral value (0, NULL, true) when given a bad handle.
 *
 * HANDLES AND OWNERSHIP
 *   Every object is an opaque handle created by an OgxCreate* call (or returned through an out parameter) and owned
 *   by the caller, who destroys it with the matching OgxDestroy* call. Destroy functions accept NULL.
 *   Objects created from another keep what they need alive internally: a model may be destroyed while tokenizers,
 *   generator params or generators created from it are still in use; a tokenizer may be destroyed while its streams
 *   are in use. Strings returned through `const char** out` are owned by the caller and freed with
 *   OgxDestroyString, unless the function's comment says the string is borrowed (valid until a stated event).
 *
 *   The library keeps a registry of live handles. Passing NULL, a destroyed handle, or a handle of another type
 *   returns an OgxErrorCode_InvalidArgument / OgxErrorCode_InvalidHandle error instead of touching memory; a second
 *   destroy of the same handle is ignored (and logged). Detection is by address: a destroyed handle whose address
 *   has been reused by a new object of the same type is taken to be that new object, so do not rely on it for
 *   control flow — it is a safety net.
 *
 * TEXT
 *   Strings are UTF-8 and NUL-terminated. Decoded text never contains U+0000: a NUL character a model's byte
 *   tokens would produce is dropped (decode, batch decode, streams and chat templates alike), so stream chunks still
 *   concatenate to the full decode.
 *
 * THREAD SAFETY
 *   The functions themselves may be called from any thread. Never destroy an object while another thread is still
 *   inside a call on it (that cannot be detected). Per object:
 *   - OgxConfig, OgxSequences, OgxGeneratorParams, OgxStringArray, OgxTensor: not synchronized; use one object from
 *     one thread at a time (concurrent read-only use is fine).
 *   - OgxModel: immutable after creation; share it freely. Forward passes of generators that share one model are
 *     serialized on that model. With the vulkan (dml) provider the model keeps one sequence's KV cache on the
 *     device: when generators take turns, the one that runs first re-runs its own tokens into it (one prompt pass
 *     per switch), so each still gets the tokens it gets alone.
 *   - OgxTokenizer: immutable; encode/decode/apply_chat_template may run concurrently from many threads.
 *   - OgxTokenizerStream: one thread at a time (it holds decoding state).
 *   - OgxGenerator: calls are serialized by the generator (concurrent calls do not corrupt it, they wait), but a
 *     borrowed pointer it returns (GetNextTokens, GetSequenceData) is invalidated by the next mutating call from any
 *     thread; drive one generator from one thread.
 *   - Logging: the callback is invoked under the library's log lock, from whichever thread logs; it must not call
 *     back into ogx.
 */
#ifndef OGX_OGX_H
#define OGX_OGX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define OGX_EXPORT __attribute__((visibility("default")))
#else
#define OGX_EXPORT
#endif

/* Version of this header's ABI; bumped on incompatible changes. */
#define OGX_API_VERSION 1

typedef enum OgxErrorCode {
  OgxErrorCode_Ok = 0,
  OgxErrorCode_InvalidArgument = 1, /* NULL pointer, wrong value, wrong size */
  OgxErrorCode_InvalidHandle = 2,   /* destroyed handle, or a handle of another type */
  OgxErrorCode_Runtime = 3,         /* the engine reported a problem: bad model folder, unknown provider, ... */
  OgxErrorCode_OutOfMemory = 4,
  OgxErrorCode_Internal = 5         /* an unexpected failure inside the library (a bug) */
} OgxErrorCode;

/* Element types; values equal ONNX Runtime GenAI's OgaElementType. */
typedef enum OgxElementType {
  OgxElementType_undefined = 0,
  OgxElementType_float32 = 1,
  OgxElementType_uint8 = 2,
  OgxElementType_int8 = 3,
  OgxElementType_uint16 = 4,
  OgxElementType_int16 = 5,
  OgxElementType_int32 = 6,
  OgxElementType_int64 = 7,
  OgxElementType_bool = 9,
  OgxElementType_float16 = 10,
  OgxElementType_float64 = 11,
  OgxElementType_uint32 = 12,
  OgxElementType_uint64 = 13
} OgxElementType;

typedef enum OgxLogLevel { OgxLogLevel_Info = 0, OgxLogLevel_Warning = 1, OgxLogLevel_Error = 2 } OgxLogLevel;

typedef struct OgxResult OgxResult;
typedef struct OgxConfig OgxConfig;
typedef struct OgxModel OgxModel;
typedef struct OgxTokenizer OgxTokenizer;
typedef struct OgxTokenizerStream OgxTokenizerStream;
typedef struct OgxSequences OgxSequences; /* a list of token-id sequences */
typedef struct OgxGeneratorParams OgxGeneratorParams;
typedef struct OgxGenerator OgxGenerator;
typedef struct OgxTensor OgxTensor;
typedef struct OgxStringArray OgxStringArray;

/* ---------------------------------------------------------------------------------------------------------------
 * Results, strings, version, logging
 * ------------------------------------------------------------------------------------------------------------ */

/* The message of an error result (borrowed: valid until OgxDestroyResult). "" for NULL. */
OGX_EXPORT const char* OgxResultGetError(const OgxResult* result);
/* The code of an error result; OgxErrorCode_Ok for NULL. */
OGX_EXPORT OgxErrorCode OgxResultGetCode(const OgxResult* result);
OGX_EXPORT void OgxDestroyResult(OgxResult* result);
/* Frees a string returned through a `const char** out` parameter that the caller owns. */
OGX_EXPORT void OgxDestroyString(const char* str);

/* The library version, "MAJOR.MINOR.PATCH" (static storage, never freed). */
OGX_EXPORT const char* OgxGetVersion(void);

/* Receives every log message at or above the log level. user_data is passed back unchanged. */
typedef void (*OgxLogCallback)(void* user_data, OgxLogLevel level, const char* message);
/* Installs a log callback (NULL restores the default: messages go to stderr). See THREAD SAFETY above. */
OGX_EXPORT OgxResult* OgxSetLogCallback(OgxLogCallback callback, void* user_data);
/* Messages below this level are dropped. Default: OgxLogLevel_Info. */
OGX_EXPORT OgxResult* OgxSetLogLevel(OgxLogLevel level);

/* ---------------------------------------------------------------------------------------------------------------
 * Providers and devices
 * ------------------------------------------------------------------------------------------------------------ */

/* *out = whether this build can run models on the provider ("cpu", "vulkan", or its alias "dml").
 * An unknown name is an error listing the known ones. */
OGX_EXPORT OgxResult* OgxIsProviderAvailable(const char* provider, bool* out);

/* *out = a JSON document {"devices": [{"index", "name", "vendor_id", "device_id", "type", "usable", "selected",
 * "memory_heaps", "features", ...}, ...]} describing the Vulkan devices (the ones `device_id` and the
 * device_filtering options choose among). When no Vulkan loader or device is present, or the build has no Vulkan
 * provider, the call still succeeds: "devices" is empty and "error" says why. Free with OgxDestroyString. */
OGX_EXPORT OgxResult* OgxGetAvailableDevices(const char** out);

/* ---------------------------------------------------------------------------------------------------------------
 * Config: a model folder's genai_config.json, editable before the model is created
 * ------------------------------------------------------------------------------------------------------------ */

/* Reads CONFIG_PATH/genai_config.json (UTF-8 path of the model folder). */
OGX_EXPORT OgxResult* OgxCreateConfig(const char* config_path, OgxConfig** out);
OGX_EXPORT void OgxDestroyConfig(OgxConfig* config);
/* Empties the provider list: the model then runs on the CPU. */
OGX_EXPORT OgxResult* OgxConfigClearProviders(OgxConfig* config);
/* Appends a provider ("cpu", "vulkan", "dml") unless already listed. The first listed provider is used.
 * Unknown names are an error listing the known ones. */
OGX_EXPORT OgxResult* OgxConfigAppendProvider(OgxConfig* config, const char* provider);
/* Sets a provider option (appending the provider if absent), e.g. ("dml", "device_id", "0") or
 * ("dml", "performance_preference", "high_performance"). The device filtering keys hardware_device_type
 * ("gpu" | "cpu"), hardware_device_id and hardware_vendor_id (decimal PCI ids) go to the entry's
 * device_filtering_options, as in genai_config.json. Values are checked when the model is created. */
OGX_EXPORT OgxResult* OgxConfigSetProviderOption(OgxConfig* config, const char* provider, const char* key,
                                                 const char* value);
/* Applies a partial genai_config.json (same schema) on top of the config, e.g. {"search": {"max_length": 64}}. */
OGX_EXPORT OgxResult* OgxConfigOverlay(OgxConfig* config, const char* json);

/* ---------------------------------------------------------------------------------------------------------------
 * Model
 * ------------------------------------------------------------------------------------------------------------ */

/* ENVIRONMENT: OGX_PROVIDER_OPTIONS='{"dml": {"hardware_device_type": "cpu"}}' (a JSON object {provider: {key: value}})
 * gives default options to the providers a config selects, for keys the config does not set, at model creation.
 * It lets code written for another machine run unchanged (e.g. pick a CPU Vulkan driver where no GPU exists). */

/* Loads the model folder with its own genai_config.json. */
OGX_EXPORT OgxResult* OgxCreateModel(const char* config_path, OgxModel** out);
/* Loads the model a config describes (the config is copied; it may be destroyed afterwards). */
OGX_EXPORT OgxResult* OgxCreateModelFromConfig(const OgxConfig* config, OgxModel** out);
OGX_EXPORT void OgxDestroyModel(OgxModel* model);
/* *out = genai_config.json model.type ("llama", "phi3", ...). Free with OgxDestroyString. */
OGX_EXPORT OgxResult* OgxModelGetType(const OgxModel* model, const char** out);
/* *out = "cpu" or "gpu": where the model runs. Free with OgxDestroyString. */
OGX_EXPORT OgxResult* OgxModelGetDeviceType(const OgxModel* model, const char** out);

/* ---------------------------------------------------------------------------------------------------------------
 * Sequences: a list of token-id sequences
 * ------------------------------------------------------------------------------------------------------------ */

OGX_EXPORT OgxResult* OgxCreateSequences(OgxSequences** out);
OGX_EXPORT void OgxDestroySequences(OgxSequences* sequences);
/* Number of sequences; 0 for a bad handle. */
OGX_EXPORT size_t OgxSequencesCount(const OgxSequences* sequences);
/* Appends a new sequence holding token_count tokens (token_ptr may be NULL when token_count is 0). */
OGX_EXPORT OgxResult* OgxAppendTokenSequence(const int32_t* token_ptr, size_t token_count, OgxSequences* sequences);
/* Appends one token to sequence `sequence_index`; index == count starts a new sequence. */
OGX_EXPORT OgxResult* OgxAppendTokenToSequence(int32_t token, OgxSequences* sequences, size_t sequence_index);
/* Number of tokens in one sequence; 0 for a bad handle or index. */
OGX_EXPORT size_t OgxSequencesGetSequenceCount(const OgxSequences* sequences, size_t sequence_index);
/* The tokens of one sequence (borrowed: valid until the sequences object is changed or destroyed); never NULL for a
 * valid index; NULL for a bad handle or index. */
OGX_EXPORT const int32_t* OgxSequencesGetSequenceData(const OgxSequences* sequences, size_t sequence_index);

/* ---------------------------------------------------------------------------------------------------------------
 * Tokenizer and TokenizerStream
 * ------------------------------------------------------------------------------------------------------------ */

/* Loads the tokenizer of the model's folder (tokenizer.json + tokenizer_config.json, or tokenizer.model). */
OGX_EXPORT OgxResult* OgxCreateTokenizer(const OgxModel* model, OgxTokenizer** out);
OGX_EXPORT void OgxDestroyTokenizer(OgxTokenizer* tokenizer);
/* Encodes UTF-8 text (special tokens such as BOS added as the tokenizer is configured to) and appends the result
 * to `sequences` as a new sequence. Invalid UTF-8 is replaced by U+FFFD. */
OGX_EXPORT OgxResult* OgxTokenizerEncode(const OgxTokenizer* tokenizer, const char* str, OgxSequences* sequences);
/* Encodes `count` strings into an int32 tensor [count, longest], shorter rows right-padded with the pad token id
 * (0 when the tokenizer has none). Free *out with OgxDestroyTensor. */
OGX_EXPORT OgxResult* OgxTokenizerEncodeBatch(const OgxTokenizer* tokenizer, const char** strings, size_t count,
                                              OgxTensor** out);
/* Decodes tokens to UTF-8 text, skipping special tokens (BOS, EOS, ...). Ids outside the vocabulary are an error. Free *out with OgxDestroyString. */
OGX_EXPORT OgxResult* OgxTokenizerDecode(const OgxTokenizer* tokenizer, const int32_t* tokens, size_t token_count,
                                         const char** out);
/* Decodes each row of an int32 or int64 tensor [rows, cols] (a 1-D tensor is one row); trailing pad tokens of a row
 * are dropped. Free *out with OgxDestroyStringArray. */
OGX_EXPORT OgxResult* OgxTokenizerDecodeBatch(const OgxTokenizer* tokenizer, const OgxTensor* tokens,
                                              OgxStringArray** out);
/* *token_id = the id of a single vocabulary entry, or -1 when `str` is not one. */
OGX_EXPORT OgxResult* OgxTokenizerToTokenId(const OgxTokenizer* tokenizer, const char* str, int32_t* token_id);
/* Renders a chat. messages: JSON array of {"role", "content", ...}. template_str: a Jinja template to use instead
 * of the tokenizer's (NULL: the tokenizer's own). tools: JSON array of tool schemas or NULL. Free *out with
 * OgxDestroyString. */
OGX_EXPORT OgxResult* OgxTokenizerApplyChatTemplate(const OgxTokenizer* tokenizer, const char* template_str,
                                                    const char* messages, const char* tools,
                                                    bool add_generation_prompt, const char** out);
/* Special token ids; -1 when the tokenizer has none. */
OGX_EXPORT OgxResult* OgxTokenizerGetBosTokenId(const OgxTokenizer* tokenizer, int32_t* token_id);
OGX_EXPORT OgxResult* OgxTokenizerGetPadTokenId(const OgxTokenizer* tokenizer, int32_t* token_id);
/* The end-of-sequence ids (borrowed: valid while the tokenizer lives). */
OGX_EXPORT OgxResult* OgxTokenizerGetEosTokenIds(const OgxTokenizer* tokenizer, const int32_t** ids, size_t* count);

/* A stream decodes one token at a time; the chunks concatenate to the full decode. Special tokens are skipped. */
OGX_EXPORT OgxResult* OgxCreateTokenizerStream(const OgxTokenizer* tokenizer, OgxTokenizerStream** out);
OGX_EXPORT void OgxDestroyTokenizerStream(OgxTokenizerStream* stream);
/* *out = the text this token adds, possibly "" while a multi-byte character is incomplete (borrowed: valid until
 * the next call on this stream or its destruction). */
OGX_EXPORT OgxResult* OgxTokenizerStreamDecode(OgxTokenizerStream* stream, int32_t token, const char** out);
/* *out = any text held back (an incomplete character no later token completed); resets the stream. Borrowed as
 * for OgxTokenizerStreamDecode. */
OGX_EXPORT OgxResult* OgxTokenizerStreamFlush(OgxTokenizerStream* stream, const char** out);

/* ---------------------------------------------------------------------------------------------------------------
 * Generator params and generator
 * ------------------------------------------------------------------------------------------------------------ */

/* Search options start from the model's genai_config.json "search" section. */
OGX_EXPORT OgxResult* OgxCreateGeneratorParams(const OgxModel* model, OgxGeneratorParams** out);
OGX_EXPORT void OgxDestroyGeneratorParams(OgxGeneratorParams* params);
/* Numeric search options: max_length, min_length, top_k, top_p, temperature, repetition_penalty, random_seed,
 * no_repeat_ngram_size, num_beams, num_return_sequences, length_penalty, diversity_penalty, batch_size.
 * Unknown names and out-of-range values are errors. */
OGX_EXPORT OgxResult* OgxGeneratorParamsSetSearchNumber(OgxGeneratorParams* params, const char* name, double value);
/* Boolean search options: do_sample, past_present_share_buffer, early_stopping. */
OGX_EXPORT OgxResult* OgxGeneratorParamsSetSearchBool(OgxGeneratorParams* params, const char* name, bool value);

/* Creates a generator. The params are copied. Search options as ONNX Runtime GenAI: batch_size 1-32 prompts,
 * num_beams 1-32 (beam search when > 1, with num_return_sequences <= num_beams hypotheses per prompt, best first),
 * greedy or sampling (do_sample, not with beams); out-of-range values are errors naming the option. */
OGX_EXPORT OgxResult* OgxCreateGenerator(const OgxModel* model, const OgxGeneratorParams* params, OgxGenerator** out);
OGX_EXPORT void OgxDestroyGenerator(OgxGenerator* generator);
/* True once every batch entry's last token is an end-of-sequence token (beam search: every prompt has its
 * hypotheses) or the sequences reached max_length; also true for a bad handle (so a generation loop ends). */
OGX_EXPORT bool OgxGenerator_IsDone(const OgxGenerator* generator);
/* Runs the model on new tokens (a prompt, or a later user turn) appended to the sequence. batch_size B > 1:
 * count = B x n ids, row by row, appended once (trailing pad_token_id ids of a row are padding). */
OGX_EXPORT OgxResult* OgxGenerator_AppendTokens(OgxGenerator* generator, const int32_t* input_ids, size_t count);
/* Same with an OgxSequences holding exactly one sequence per batch entry, of any lengths: padded on the right with
 * the model's pad_token_id to the longest (each row then generates what its prompt alone would). With
 * batch_size > 1 or beam search, prompts are appended once (RewindTo(0) starts over). */
OGX_EXPORT OgxResult* OgxGenerator_AppendTokenSequences(OgxGenerator* generator, const OgxSequences* sequences);
/* Picks the next token from the current logits (search options applied) and appends it. */
OGX_EXPORT OgxResult* OgxGenerator_GenerateNextToken(OgxGenerator* generator);
/* *out = the last token of each row's sequence (batch_size x num_beams rows): after GenerateNextToken, the tokens it
 * chose (borrowed: valid until the next call that changes the generator). *count is 0 while the sequence is empty. */
OGX_EXPORT OgxResult* OgxGenerator_GetNextTokens(const OgxGenerator* generator, const int32_t** out, size_t* count);
/* Number of tokens of sequence `index` (prompt padded to the batch's longest + generated); 0 for a bad handle or
 * index. Greedy: index = batch entry. Beam search: index = entry x num_return_sequences + r, the entry's r-th best
 * hypothesis (without the EOS that ended it; running beams count until the search ends). */
OGX_EXPORT size_t OgxGenerator_GetSequenceCount(const OgxGenerator* generator, size_t index);
/* The tokens of batch entry `index` (borrowed: valid until the next call that changes the generator); never NULL
 * for a valid index, even with no tokens; NULL for a bad handle or index. */
OGX_EXPORT const int32_t* OgxGenerator_GetSequenceData(const OgxGenerator* generator, size_t index);
/* *out = total tokens in the sequence (prompt + generated). */
OGX_EXPORT OgxResult* OgxGenerator_TokenCount(const OgxGenerator* generator, size_t* out);
/* *out = a float32 tensor [batch_size x num_beams, 1, vocab] with a copy of the logits the next tokens are picked
 * from (after GenerateNextToken the model first runs the tokens it chose). Free with OgxDestroyTensor. */
OGX_EXPORT OgxResult* OgxGenerator_GetLogits(OgxGenerator* generator, OgxTensor** out);
/* Replaces the logits the next GenerateNextToken picks from (float32, batch_size x num_beams x vocab values, any
 * shape). */
OGX_EXPORT OgxResult* OgxGenerator_SetLogits(OgxGenerator* generator, const OgxTensor* logits);
/* Shortens the sequence to new_length tokens (KV cache included); generation continues from there. batch_size > 1:
 * only to 0; beam search: not supported. */
OGX_EXPORT OgxResult* OgxGenerator_RewindTo(OgxGenerator* generator, size_t new_length);

/* ---------------------------------------------------------------------------------------------------------------
 * Tensors and string arrays
 * ------------------------------------------------------------------------------------------------------------ */

/* Creates a tensor. data != NULL: the tensor borrows `data`, which must outlive it. data == NULL: the tensor owns
 * zero-initialized memory. Every dimension must be >= 0. */
OGX_EXPORT OgxResult* OgxCreateTensorFromBuffer(void* data, const int64_t* shape_dims, size_t shape_dims_count,
                                                OgxElementType element_type, OgxTensor** out);
OGX_EXPORT void OgxDestroyTensor(OgxTensor* tensor);
OGX_EXPORT OgxResult* OgxTensorGetType(const OgxTensor* tensor, OgxElementType* out);
OGX_EXPORT OgxResult* OgxTensorGetShapeRank(const OgxTensor* tensor, size_t* out);
/* Copies the shape; shape_dims_count must equal the rank. */
OGX_EXPORT OgxResult* OgxTensorGetShape(const OgxTensor* tensor, int64_t* shape_dims, size_t shape_dims_count);
/* *out = the tensor's data (borrowed: valid while the tensor lives). */
OGX_EXPORT OgxResult* OgxTensorGetData(const OgxTensor* tensor, void** out);

OGX_EXPORT void OgxDestroyStringArray(OgxStringArray* array);
OGX_EXPORT OgxResult* OgxStringArrayGetCount(const OgxStringArray* array, size_t* out);
/* *out = string `index` (borrowed: valid while the array lives). */
OGX_EXPORT OgxResult* OgxStringArrayGetString(const OgxStringArray* array, size_t index, const char** out);

#ifdef __cplusplus
}
#endif

#endif /* OGX_OGX_H */
