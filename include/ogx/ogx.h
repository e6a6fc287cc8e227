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
 *   - OgxTokenizer: encode/decode/apply_chat_template may run concurrently from many threads; its options
 *     (OgxUpdateTokenizerOptions) are not synchronized with them: set them before sharing the tokenizer.
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
typedef struct OgxNamedTensors OgxNamedTensors; /* tensors by name: extra model inputs */
typedef struct OgxSpeculativeStats OgxSpeculativeStats; /* counters of speculative decoding */
typedef struct OgxAdapters OgxAdapters;                 /* LoRA adapters loaded for a model */
typedef struct OgxRuntimeSettings OgxRuntimeSettings; /* handles a caller passes at model creation */
/* Multimodal objects: declared so that code naming them compiles; every call that would make one fails with
 * "multimodal models are not supported by ogx". */
typedef struct OgxImages OgxImages;
typedef struct OgxAudios OgxAudios;
typedef struct OgxMultiModalProcessor OgxMultiModalProcessor;

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

/* Installs a log callback as ort_genai_c.h: each message (not NUL-terminated at `length`; it is NUL-terminated
 * too) at or above the log level. NULL restores the default (stderr, or the file set with OgxSetLogString
 * ("filename")). See THREAD SAFETY above. */
OGX_EXPORT OgxResult* OgxSetLogCallback(void (*callback)(const char* string, size_t length));
/* ogx's richer form: the level and a user_data pointer passed back unchanged. Replaces any callback installed
 * with OgxSetLogCallback (and vice versa). */
typedef void (*OgxLogCallback)(void* user_data, OgxLogLevel level, const char* message);
OGX_EXPORT OgxResult* OgxSetLogCallbackWithLevel(OgxLogCallback callback, void* user_data);
/* Messages below this level are dropped. Default: OgxLogLevel_Info. */
OGX_EXPORT OgxResult* OgxSetLogLevel(OgxLogLevel level);
/* Log options by name, as ort_genai_c.h's OgaSetLogBool / OgaSetLogString:
 *   bool "enabled" (default true: ogx logs warnings and errors; false: only errors), "ansi_tags" (accepted),
 *   "warning" (accepted), "generate_next_token" (a line per generated token), "append_next_tokens",
 *   "model_input_values" / "model_output_values" / "model_logits" (a line per model run describing the tensors),
 *   "hit_eos", "ort_lib", "value_stats" (accepted);
 *   string "filename": write log messages to this file (appending) instead of stderr / the callback; "" restores.
 * Unknown names are errors listing the known ones. */
OGX_EXPORT OgxResult* OgxSetLogBool(const char* name, bool value);
OGX_EXPORT OgxResult* OgxSetLogString(const char* name, const char* value);
/* ogx sends no telemetry: both states are accepted and nothing is sent either way. */
OGX_EXPORT void OgxSetTelemetryEnabled(bool enabled);
/* Accepted for compatibility; ogx needs no global shutdown (objects are freed by their destroy calls). */
OGX_EXPORT void OgxShutdown(void);
/* The GPU index new models use when their config names no device_id (ort_genai_c.h's current GPU device):
 * it becomes the vulkan provider's default device_id. Negative ids are errors. Default 0. */
OGX_EXPORT OgxResult* OgxSetCurrentGpuDeviceId(int device_id);
OGX_EXPORT OgxResult* OgxGetCurrentGpuDeviceId(int* device_id);
/* ONNX Runtime plug-in execution provider libraries cannot be loaded by ogx (it does not run on ONNX Runtime):
 * these log an error naming the library and what ogx offers instead (void, as in ort_genai_c.h). */
OGX_EXPORT void OgxRegisterExecutionProviderLibrary(const char* registration_name, const char* library_path);
OGX_EXPORT void OgxUnregisterExecutionProviderLibrary(const char* registration_name);

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
/* ONNX Runtime GenAI's model packages (a folder with manifest.json and one variant folder per execution provider,
 * no genai_config.json at its root) are not supported: such a folder is refused, naming what to do instead (pass a
 * variant's folder to OgxCreateConfig). A flat model folder is refused as upstream refuses it. */
OGX_EXPORT OgxResult* OgxCreateConfigFromPackageEp(const char* config_path, const char* ep, OgxConfig** out);
OGX_EXPORT void OgxDestroyConfig(OgxConfig* config);
/* Empties the provider list: the model then runs on the CPU. */
OGX_EXPORT OgxResult* OgxConfigClearProviders(OgxConfig* config);
/* Appends a provider unless already listed. The first listed provider is used. Any name is accepted here, as in
 * ONNX Runtime GenAI; creating a model whose first provider ogx lacks ("cuda", ...) is an error listing the ones
 * it has (cpu, vulkan, dml). */
OGX_EXPORT OgxResult* OgxConfigAppendProvider(OgxConfig* config, const char* provider);
/* Sets a provider option (appending the provider if absent), e.g. ("dml", "device_id", "0") or
 * ("dml", "performance_preference", "high_performance"). The device filtering keys hardware_device_type
 * ("gpu" | "cpu"), hardware_device_id and hardware_vendor_id (decimal PCI ids) go to the entry's
 * device_filtering_options, as in genai_config.json. Values are checked when the model is created. */
OGX_EXPORT OgxResult* OgxConfigSetProviderOption(OgxConfig* config, const char* provider, const char* key,
                                                 const char* value);
/* Applies a partial genai_config.json (same schema) on top of the config, e.g. {"search": {"max_length": 64}}. */
OGX_EXPORT OgxResult* OgxConfigOverlay(OgxConfig* config, const char* json);
/* Holds a model file in memory: a model created from this config reads `model_filename` (the decoder's filename
 * in genai_config.json, e.g. "model.onnx", or an external-data file it names, e.g. "model.onnx.data") from these
 * bytes instead of the folder. The bytes are copied. Adding a name twice replaces it. */
OGX_EXPORT OgxResult* OgxConfigAddModelData(OgxConfig* config, const char* model_filename, const void* model_data,
                                            size_t model_data_length);
/* Forgets model data added under that name; an error when there is none. */
OGX_EXPORT OgxResult* OgxConfigRemoveModelData(OgxConfig* config, const char* model_filename);
/* Device filtering of the provider's entry (appended if absent), as genai_config.json's
 * device_filtering_options: hardware_device_type ("gpu", "cpu"; "GPU"/"CPU" accepted), hardware_device_id,
 * hardware_vendor_id (PCI ids). The Clear forms remove the key. */
OGX_EXPORT OgxResult* OgxConfigSetDecoderProviderOptionsHardwareDeviceType(OgxConfig* config, const char* provider,
                                                                         const char* hardware_device_type);
OGX_EXPORT OgxResult* OgxConfigSetDecoderProviderOptionsHardwareDeviceId(OgxConfig* config, const char* provider,
                                                                       uint32_t hardware_device_id);
OGX_EXPORT OgxResult* OgxConfigSetDecoderProviderOptionsHardwareVendorId(OgxConfig* config, const char* provider,
                                                                       uint32_t hardware_vendor_id);
OGX_EXPORT OgxResult* OgxConfigClearDecoderProviderOptionsHardwareDeviceType(OgxConfig* config, const char* provider);
OGX_EXPORT OgxResult* OgxConfigClearDecoderProviderOptionsHardwareDeviceId(OgxConfig* config, const char* provider);
OGX_EXPORT OgxResult* OgxConfigClearDecoderProviderOptionsHardwareVendorId(OgxConfig* config, const char* provider);

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
/* Runtime settings: named handles for the providers (ONNX Runtime GenAI's only one is "dawnProcTable", WebGPU's
 * Dawn procedure table). OgxRuntimeSettingsSetHandle stores the pointer (not owned; NULL removes it). Creating a
 * model with settings that hold "dawnProcTable" fails (ogx has no WebGPU provider); other names are ignored, as
 * upstream ignores them. */
OGX_EXPORT OgxResult* OgxCreateRuntimeSettings(OgxRuntimeSettings** out);
OGX_EXPORT void OgxDestroyRuntimeSettings(OgxRuntimeSettings* settings);
OGX_EXPORT OgxResult* OgxRuntimeSettingsSetHandle(OgxRuntimeSettings* settings, const char* handle_name, void* handle);
OGX_EXPORT OgxResult* OgxCreateModelWithRuntimeSettings(const char* config_path, const OgxRuntimeSettings* settings,
                                                        OgxModel** out);
/* *out = genai_config.json model.type ("llama", "phi3", ...). Free with OgxDestroyString. */
OGX_EXPORT OgxResult* OgxModelGetType(const OgxModel* model, const char** out);
/* *out = the device the model runs on, spelled as ONNX Runtime GenAI does: "CPU", or "DirectML" for the vulkan
 * provider (it plays DirectML's role). Free with OgxDestroyString. */
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
/* As OgxTokenizerApplyChatTemplate, with template_kwargs: a JSON object of extra template variables (e.g.
 * {"enable_thinking": false}) or NULL. */
OGX_EXPORT OgxResult* OgxTokenizerApplyChatTemplateWithOptions(const OgxTokenizer* tokenizer, const char* template_str,
                                                               const char* messages, const char* tools,
                                                               const char* template_kwargs,
                                                               bool add_generation_prompt, const char** out);
/* Special token ids as ONNX Runtime GenAI's Tokenizer reports them: genai_config.json's model.bos_token_id /
 * pad_token_id / eos_token_id where set, else the tokenizer's files; -1 when neither has one. */
OGX_EXPORT OgxResult* OgxTokenizerGetBosTokenId(const OgxTokenizer* tokenizer, int32_t* token_id);
OGX_EXPORT OgxResult* OgxTokenizerGetPadTokenId(const OgxTokenizer* tokenizer, int32_t* token_id);
/* The end-of-sequence ids (borrowed: valid while the tokenizer lives). */
OGX_EXPORT OgxResult* OgxTokenizerGetEosTokenIds(const OgxTokenizer* tokenizer, const int32_t** ids, size_t* count);
/* Tool-call and reasoning markers, as ort_genai_c.h: BOT/EOT begin and end a tool call, BOR/EOR begin and end
 * reasoning. Taken from genai_config.json model.{bot,eot,bor,eor}_token_id, else from the vocabulary
 * (<tool_call> / </tool_call>, <think> / </think>); an error naming the marker when the model has none. */
OGX_EXPORT OgxResult* OgxTokenizerGetBotTokenId(const OgxTokenizer* tokenizer, int32_t* token_id);
OGX_EXPORT OgxResult* OgxTokenizerGetEotTokenId(const OgxTokenizer* tokenizer, int32_t* token_id);
OGX_EXPORT OgxResult* OgxTokenizerGetBorTokenId(const OgxTokenizer* tokenizer, int32_t* token_id);
OGX_EXPORT OgxResult* OgxTokenizerGetEorTokenId(const OgxTokenizer* tokenizer, int32_t* token_id);
/* Tokenizer options, as ort_genai_c.h: "add_special_tokens" (encode adds BOS etc.; default true) and
 * "skip_special_tokens" (decode and streams drop special tokens; default true); values "true"/"false"/"1"/"0".
 * Unknown keys and values are errors; options apply to this tokenizer object (streams created afterwards). */
OGX_EXPORT OgxResult* OgxUpdateTokenizerOptions(OgxTokenizer* tokenizer, const char* const* keys,
                                                const char* const* values, size_t num_options);

/* A stream decodes one token at a time as onnxruntime_genai's TokenizerStream does (ONNX Runtime Extensions' streaming
 * detokenizer): each token on its own, so the chunks are the full decode except that a SentencePiece word's leading
 * space is dropped only right after a special token (a fresh stream keeps the first word's space; a stream reused for
 * several BOS-prefixed prompts gives each prompt's text) and, with tokenizer_config.json's
 * clean_up_tokenization_spaces, special tokens add spaces around them. Special tokens are skipped (for SentencePiece
 * and Unigram tokenizers always; else unless the tokenizer option skip_special_tokens is false when the stream is
 * created). Invalid UTF-8 is dropped. */
OGX_EXPORT OgxResult* OgxCreateTokenizerStream(const OgxTokenizer* tokenizer, OgxTokenizerStream** out);
OGX_EXPORT void OgxDestroyTokenizerStream(OgxTokenizerStream* stream);
/* *out = the text this token adds, possibly "" while a multi-byte character is incomplete (borrowed: valid until
 * the next call on this stream or its destruction). */
OGX_EXPORT OgxResult* OgxTokenizerStreamDecode(OgxTokenizerStream* stream, int32_t token, const char** out);
/* Resets the stream (ogx's addition: a fresh stream's state); *out = "" (the bytes of a character no later token
 * completed are invalid UTF-8, dropped). Borrowed as for OgxTokenizerStreamDecode. */
OGX_EXPORT OgxResult* OgxTokenizerStreamFlush(OgxTokenizerStream* stream, const char** out);

/* ---------------------------------------------------------------------------------------------------------------
 * Generator params and generator
 * ------------------------------------------------------------------------------------------------------------ */

/* Search options start from the model's genai_config.json "search" section. */
OGX_EXPORT OgxResult* OgxCreateGeneratorParams(const OgxModel* model, OgxGeneratorParams** out);
OGX_EXPORT void OgxDestroyGeneratorParams(OgxGeneratorParams* params);
/* Numeric search options: max_length, min_length, top_k, top_p, temperature, repetition_penalty, random_seed,
 * no_repeat_ngram_size, num_beams, num_return_sequences, length_penalty, diversity_penalty, batch_size,
 * presence_penalty, frequency_penalty (OpenAI's, in [-2, 2]: logit[t] -= presence * (count[t] > 0) +
 * frequency * count[t] over the tokens generated after the prompt; non-zero values pick tokens on the host).
 * Unknown names and out-of-range values are errors. */
OGX_EXPORT OgxResult* OgxGeneratorParamsSetSearchNumber(OgxGeneratorParams* params, const char* name, double value);
/* Boolean search options: do_sample, past_present_share_buffer, early_stopping. */
OGX_EXPORT OgxResult* OgxGeneratorParamsSetSearchBool(OgxGeneratorParams* params, const char* name, bool value);
/* Structured output (constrained decoding), as onnxruntime_genai's OgaGeneratorParamsSetGuidance: type
 * "json_schema" (data: a JSON schema), "regex" (the whole output matches it), "lark_grammar" (a Lark grammar,
 * llguidance's subset) or "json_object" (any JSON object; data ignored). Compiled here against the model's
 * vocabulary: an invalid schema, regex or grammar is an error naming the problem. Each generator created from these
 * params then allows only tokens that keep its output inside the constraint, and EOS only where the output is
 * complete (every row of a batch, every beam). enable_ff_tokens is accepted (forced tokens are picked one per
 * step). An empty type removes the constraint. */
OGX_EXPORT OgxResult* OgxGeneratorParamsSetGuidance(OgxGeneratorParams* params, const char* type, const char* data,
                                                    bool enable_ff_tokens);
/* The current value of a search option (the names above, plus chunk_size: always 0, ogx runs a prompt in one
 * pass); unknown names are errors. */
OGX_EXPORT OgxResult* OgxGeneratorParamsGetSearchNumber(const OgxGeneratorParams* params, const char* name,
                                                        double* out);
OGX_EXPORT OgxResult* OgxGeneratorParamsGetSearchBool(const OgxGeneratorParams* params, const char* name, bool* out);
/* Speculative decoding with n-gram (prompt-lookup) drafting: numbers ngram_size (0: off, up to 16),
 * max_draft_tokens (1-16, default 4), min_adaptive_k (0 only); booleans ngram_chained_lookup and cooldown (false
 * only). Greedy output equals plain decoding; batch_size 1 greedy search on the cpu provider only (other settings
 * are an error at generator creation). Unknown names and values out of range are errors. */
OGX_EXPORT OgxResult* OgxGeneratorParamsSetSpeculativeNumber(OgxGeneratorParams* params, const char* name,
                                                            double value);
OGX_EXPORT OgxResult* OgxGeneratorParamsSetSpeculativeBool(OgxGeneratorParams* params, const char* name, bool value);
OGX_EXPORT OgxResult* OgxGeneratorParamsGetSpeculativeNumber(const OgxGeneratorParams* params, const char* name,
                                                            double* value);
OGX_EXPORT OgxResult* OgxGeneratorParamsGetSpeculativeBool(const OgxGeneratorParams* params, const char* name,
                                                          bool* value);

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
/* Total tokens in the sequence (prompt + generated), as ort_genai_c.h; 0 for a bad handle. */
OGX_EXPORT size_t OgxGenerator_TokenCount(const OgxGenerator* generator);
/* *out = a float32 tensor [batch_size x num_beams, 1, vocab] with a copy of the logits the next tokens are picked
 * from (after GenerateNextToken the model first runs the tokens it chose). Free with OgxDestroyTensor. */
OGX_EXPORT OgxResult* OgxGenerator_GetLogits(OgxGenerator* generator, OgxTensor** out);
/* Replaces the logits the next GenerateNextToken picks from (float32, batch_size x num_beams x vocab values, any
 * shape). */
OGX_EXPORT OgxResult* OgxGenerator_SetLogits(OgxGenerator* generator, const OgxTensor* logits);
/* Shortens the sequence to new_length tokens (KV cache included); generation continues from there. batch_size > 1:
 * only to 0; beam search: not supported. */
OGX_EXPORT OgxResult* OgxGenerator_RewindTo(OgxGenerator* generator, size_t new_length);
/* Appends the tokens of an int32 tensor ([n] or [batch_size, n]) as OgxGenerator_AppendTokens. */
OGX_EXPORT OgxResult* OgxGenerator_AppendTokensFromTensor(OgxGenerator* generator, const OgxTensor* tokens);
/* Feeds an extra model input (one the model has that is not input_ids, attention_mask, position_ids or the KV
 * cache) with this tensor on every following run; the tensor is copied. Names the model lacks, and the inputs the
 * generator sets itself, are errors. */
OGX_EXPORT OgxResult* OgxGenerator_SetModelInput(OgxGenerator* generator, const char* name, const OgxTensor* tensor);
/* Snapshots recurrent (conv / linear-attention) state for a later OgxGenerator_RewindTo, as ONNX Runtime GenAI's.
 * ogx runs no model with such state, so this changes nothing (it fails only after terminate_session). */
OGX_EXPORT OgxResult* OgxGenerator_SnapshotState(OgxGenerator* generator);
/* The tensor the model's hidden_states input (genai_config model.decoder.inputs.hidden_states) takes on the following
 * runs: [batch, tokens of the run, hidden_size] of that input's type, copied; each run checks its size. A model
 * without that input: nothing happens. */
OGX_EXPORT OgxResult* OgxGenerator_SetHiddenStates(OgxGenerator* generator, const OgxTensor* hidden_states);
/* OgxGenerator_SetModelInput for every tensor of the set. */
OGX_EXPORT OgxResult* OgxGenerator_SetInputs(OgxGenerator* generator, const OgxNamedTensors* named_tensors);
/* *out = a copy of an input of the latest model run (input_ids, attention_mask, position_ids, or one set with
 * SetModelInput; for an input set but not yet run, that tensor). Free with OgxDestroyTensor. */
OGX_EXPORT OgxResult* OgxGenerator_GetInput(const OgxGenerator* generator, const char* name, OgxTensor** out);
/* *out = a copy of an output of the latest model run: "logits" ([rows, tokens of that run, vocab]; after
 * GenerateNextToken the model first runs the tokens it chose), or any other graph output such as "hidden_states"
 * (asking for one the first time re-runs the latest step to produce it, then every run keeps it). Free with
 * OgxDestroyTensor. */
OGX_EXPORT OgxResult* OgxGenerator_GetOutput(const OgxGenerator* generator, const char* name, OgxTensor** out);
/* Runtime options: "terminate_session" = "1" makes the generator stop (IsDone true, and GenerateNextToken,
 * AppendTokens fail with "session terminated") until set to "0". Unknown keys are errors. */
OGX_EXPORT OgxResult* OgxGenerator_SetRuntimeOption(OgxGenerator* generator, const char* key, const char* value);
/* Whether terminate_session is set; false for a bad handle. */
OGX_EXPORT bool OgxGenerator_IsSessionTerminated(const OgxGenerator* generator);
/* *out = a snapshot of the generator's speculative-decoding counters (all 0 when speculative decoding is off).
 * Counts: rounds, draft_tokens_proposed, draft_tokens_evaluated, draft_tokens_accepted, bonus_tokens,
 * correction_tokens, tokens_emitted, tokens_discarded, target_forward_passes, ngram_lookup_hits,
 * ngram_lookup_misses; numbers: those and acceptance_rate, observed_speedup (tokens per forward pass); bool:
 * enabled. Unknown names are errors. Free with OgxDestroySpeculativeStats. */
OGX_EXPORT OgxResult* OgxGenerator_GetSpeculativeStats(const OgxGenerator* generator, OgxSpeculativeStats** out);
OGX_EXPORT void OgxDestroySpeculativeStats(OgxSpeculativeStats* stats);
OGX_EXPORT OgxResult* OgxSpeculativeStatsGetCount(const OgxSpeculativeStats* stats, const char* name, uint64_t* value);
OGX_EXPORT OgxResult* OgxSpeculativeStatsGetNumber(const OgxSpeculativeStats* stats, const char* name, double* value);
OGX_EXPORT OgxResult* OgxSpeculativeStatsGetBool(const OgxSpeculativeStats* stats, const char* name, bool* value);

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

OGX_EXPORT OgxResult* OgxCreateStringArray(OgxStringArray** out);
OGX_EXPORT OgxResult* OgxCreateStringArrayFromStrings(const char* const* strs, size_t count, OgxStringArray** out);
OGX_EXPORT OgxResult* OgxStringArrayAddString(OgxStringArray* array, const char* str);
OGX_EXPORT void OgxDestroyStringArray(OgxStringArray* array);
OGX_EXPORT OgxResult* OgxStringArrayGetCount(const OgxStringArray* array, size_t* out);
/* *out = string `index` (borrowed: valid while the array lives). */
OGX_EXPORT OgxResult* OgxStringArrayGetString(const OgxStringArray* array, size_t index, const char** out);

/* ---------------------------------------------------------------------------------------------------------------
 * Named tensors: extra model inputs by name (OgxGenerator_SetInputs)
 * ------------------------------------------------------------------------------------------------------------ */

OGX_EXPORT OgxResult* OgxCreateNamedTensors(OgxNamedTensors** out);
OGX_EXPORT void OgxDestroyNamedTensors(OgxNamedTensors* named_tensors);
/* *out = a new handle to the tensor of that name (the data is shared with the set); an error when absent. */
OGX_EXPORT OgxResult* OgxNamedTensorsGet(const OgxNamedTensors* named_tensors, const char* name, OgxTensor** out);
/* Stores the tensor under the name (replacing any). The set keeps the tensor's data alive: an owning tensor's
 * data is shared, a borrowing tensor's buffer must outlive its use as for OgxCreateTensorFromBuffer. */
OGX_EXPORT OgxResult* OgxNamedTensorsSet(OgxNamedTensors* named_tensors, const char* name, const OgxTensor* tensor);
/* Removes the tensor of that name; an error when absent. */
OGX_EXPORT OgxResult* OgxNamedTensorsDelete(OgxNamedTensors* named_tensors, const char* name);
OGX_EXPORT OgxResult* OgxNamedTensorsCount(const OgxNamedTensors* named_tensors, size_t* out);
/* The names, in insertion order. Free with OgxDestroyStringArray. */
OGX_EXPORT OgxResult* OgxNamedTensorsGetNames(const OgxNamedTensors* named_tensors, OgxStringArray** out);

/* ---------------------------------------------------------------------------------------------------------------
 * LoRA adapters (.onnx_adapter files, as ort_genai_c.h's OgaAdapters). An OgxAdapters holds any number of
 * adapters for one model, by name; a generator activates some of them and their tensors feed the model's
 * adapter inputs on each of its runs (inputs no active adapter feeds keep the model's defaults: no adapter). An
 * adapter that a live generator has activated cannot be unloaded (an error); destroying the generator releases
 * it. The OgxAdapters may be destroyed before the generators using it (they keep what they use alive).
 * Thread-safe.
 * ------------------------------------------------------------------------------------------------------------ */

OGX_EXPORT OgxResult* OgxCreateAdapters(const OgxModel* model, OgxAdapters** out);
OGX_EXPORT void OgxDestroyAdapters(OgxAdapters* adapters);
/* Reads the file and checks each parameter against the model's inputs (name, type, shape); errors name the file
 * and the parameter. The name must not be loaded already. */
OGX_EXPORT OgxResult* OgxLoadAdapter(OgxAdapters* adapters, const char* adapter_file_path, const char* adapter_name);
/* An error when the name is not loaded or a generator still uses the adapter. */
OGX_EXPORT OgxResult* OgxUnloadAdapter(OgxAdapters* adapters, const char* adapter_name);
/* Activates the adapter for the generator's later runs (several may be active; setting one twice is a no-op). */
OGX_EXPORT OgxResult* OgxSetActiveAdapter(OgxGenerator* generator, OgxAdapters* adapters, const char* adapter_name);

/* ---------------------------------------------------------------------------------------------------------------
 * Multimodal: not supported (text models only). These exist so that code naming them builds; each fails with
 * "multimodal models are not supported by ogx" and sets *out to NULL. Destroy functions accept NULL.
 * ------------------------------------------------------------------------------------------------------------ */

OGX_EXPORT OgxResult* OgxLoadImage(const char* image_path, OgxImages** out);
OGX_EXPORT OgxResult* OgxLoadImages(const OgxStringArray* image_paths, OgxImages** out);
OGX_EXPORT OgxResult* OgxLoadAudio(const char* audio_path, OgxAudios** out);
OGX_EXPORT OgxResult* OgxLoadAudios(const OgxStringArray* audio_paths, OgxAudios** out);
OGX_EXPORT OgxResult* OgxCreateMultiModalProcessor(const OgxModel* model, OgxMultiModalProcessor** out);
OGX_EXPORT void OgxDestroyImages(OgxImages* images);
OGX_EXPORT void OgxDestroyAudios(OgxAudios* audios);
OGX_EXPORT void OgxDestroyMultiModalProcessor(OgxMultiModalProcessor* processor);

/* ---------------------------------------------------------------------------------------------------------------
 * Engine and Request: continuous batching (ONNX Runtime GenAI's OgaEngine / OgaRequest)
 *
 * A request holds one sequence (batch_size 1, num_beams 1) with its own generator params (search options, seed,
 * max_length). Add its prompt (OgxRequestAddTokens), submit it (OgxEngineAddRequest), and call OgxEngineStep in a
 * loop: each call returns one request with new tokens or a completed turn (or NULL when nothing is pending).
 * Requests join and leave the running batch at every step; long prompts run in chunks so they do not stall the
 * others; a turn ends at EOS or max_length, after which OgxRequestContinue queues another turn of the same sequence.
 * Threads: one thread steps the engine; others may add, remove and read requests at the same time. A step's error
 * in one request ends that request's turn (OgxRequestIsTurnComplete true); the others continue.
 * Handles: a request handle is reference-counted: OgxCreateRequest and every non-NULL request from OgxEngineStep
 * (the same address as the created handle) each take one reference, released with OgxDestroyRequest. When the last
 * reference goes, a request still in an engine is removed from it. Destroying an engine closes its requests.
 * ------------------------------------------------------------------------------------------------------------ */

typedef struct OgxEngine OgxEngine;
typedef struct OgxRequest OgxRequest;

OGX_EXPORT OgxResult* OgxCreateEngine(const OgxModel* model, OgxEngine** out);
OGX_EXPORT void OgxDestroyEngine(OgxEngine* engine);
/* *request = a request with new tokens or a completed turn (a new reference: OgxDestroyRequest), NULL: none pending. */
OGX_EXPORT OgxResult* OgxEngineStep(OgxEngine* engine, OgxRequest** request);
OGX_EXPORT OgxResult* OgxEngineHasPendingRequests(OgxEngine* engine, bool* out);
/* Errors: a request with no tokens, ids outside the vocabulary, a prompt that leaves no room below max_length, a
 * request already submitted. */
OGX_EXPORT OgxResult* OgxEngineAddRequest(OgxEngine* engine, OgxRequest* request);
/* Closes the request and frees its sequence's state; a no-op for a closed request. */
OGX_EXPORT OgxResult* OgxEngineRemoveRequest(OgxEngine* engine, OgxRequest* request);
/* The params are copied. Errors: batch_size or num_beams other than 1. */
OGX_EXPORT OgxResult* OgxCreateRequest(const OgxGeneratorParams* params, OgxRequest** out);
/* The prompt (one sequence), before OgxEngineAddRequest. */
OGX_EXPORT OgxResult* OgxRequestAddTokens(OgxRequest* request, const OgxSequences* tokens);
/* Another turn (one sequence) after OgxRequestIsTurnComplete returned true. */
OGX_EXPORT OgxResult* OgxRequestContinue(OgxRequest* request, const OgxSequences* tokens);
OGX_EXPORT void OgxDestroyRequest(OgxRequest* request);
OGX_EXPORT OgxResult* OgxRequestSetOpaqueData(OgxRequest* request, void* opaque_data);
OGX_EXPORT OgxResult* OgxRequestGetOpaqueData(OgxRequest* request, void** opaque_data);
OGX_EXPORT OgxResult* OgxRequestHasUnseenTokens(const OgxRequest* request, bool* out);
/* The oldest generated token not yet read; an error when there is none. */
OGX_EXPORT OgxResult* OgxRequestGetUnseenToken(OgxRequest* request, int32_t* out);
/* True once the current turn ended (EOS, max_length, an error) or the request was removed. */
OGX_EXPORT OgxResult* OgxRequestIsTurnComplete(const OgxRequest* request, bool* out);
/* ogx: why the turn ended: "none" (running), "eos", "length", "error", "removed"; borrowed static string. */
OGX_EXPORT OgxResult* OgxRequestGetFinishReason(const OgxRequest* request, const char** out);
/* ogx: activates loaded adapter `adapter_name` (OgxLoadAdapter) for the request, before OgxEngineAddRequest, once:
 * its sequence runs with that adapter (as OgxSetActiveAdapter on a generator), which stays loaded while the request
 * lives. Requests with different adapters (or none) share an engine; those with the same adapter share model runs.
 * Errors: an adapter not loaded, a request already added or already given an adapter; at OgxEngineAddRequest,
 * adapters of another model than the engine's. */
OGX_EXPORT OgxResult* OgxRequestSetActiveAdapter(OgxRequest* request, OgxAdapters* adapters, const char* adapter_name);

#ifdef __cplusplus
}
#endif

#endif /* OGX_OGX_H */
