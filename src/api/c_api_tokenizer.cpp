// C API: tokenizer (encode, decode, batches, chat template, special ids) and tokenizer stream.
#include <algorithm>
#include <limits>

#include "api/handles.h"
#include "api/tensor_util.h"

using namespace ogx::api;

namespace {

// Text crosses the C boundary as NUL-terminated strings: a U+0000 inside decoded text (a byte token 0x00) would
// silently cut it short, so NUL characters are dropped from all text the API returns.
std::string c_text(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), '\0'), s.end());
  return s;
}

std::vector<int32_t> to_ids(const std::vector<int64_t>& v, const char* fn) {
  std::vector<int32_t> out(v.size());
  for (size_t i = 0; i < v.size(); i++) {
    if (v[i] < std::numeric_limits<int32_t>::min() || v[i] > std::numeric_limits<int32_t>::max())
      fail(OgxErrorCode_InvalidArgument, std::string(fn) + ": token id " + std::to_string(v[i]) + " does not fit int32");
    out[i] = static_cast<int32_t>(v[i]);
  }
  return out;
}

// The model's special ids as ONNX Runtime GenAI's Tokenizer takes them: genai_config.json first, the tokenizer's
// files otherwise.
OgxTokenizer make_tokenizer(const ogx::genai::Model& model) {
  OgxTokenizer t;
  t.tokenizer = ogx::tok::Tokenizer::load(model.config().model_dir);
  const auto& mc = model.config().model;
  t.bos_id = mc.bos_token_id >= 0 ? mc.bos_token_id : t.tokenizer->bos_token_id();
  t.pad_id = mc.pad_token_id >= 0 ? mc.pad_token_id : t.tokenizer->pad_token_id();
  if (!mc.eos_token_ids.empty()) t.eos_ids.assign(mc.eos_token_ids.begin(), mc.eos_token_ids.end());
  else t.eos_ids = t.tokenizer->eos_token_ids();
  auto marker = [&](int configured, const char* token) {
    return configured >= 0 ? configured : t.tokenizer->token_to_id(token);
  };
  t.bot_id = marker(mc.bot_token_id, "<tool_call>");
  t.eot_id = marker(mc.eot_token_id, "</tool_call>");
  t.bor_id = marker(mc.bor_token_id, "<think>");
  t.eor_id = marker(mc.eor_token_id, "</think>");
  return t;
}

void get_marker(const OgxTokenizer* tokenizer, int32_t* token_id, int32_t OgxTokenizer::*field, const char* fn,
                const char* what) {
  auto& t = live(tokenizer, fn, "tokenizer");
  need(token_id, fn, "token_id");
  if (t.*field < 0) fail(OgxErrorCode_InvalidArgument, std::string(what) + " is not defined for this model");
  *token_id = t.*field;
}

bool option_bool(const std::string& key, const std::string& value) {
  if (value == "true" || value == "1" || value == "True") return true;
  if (value == "false" || value == "0" || value == "False") return false;
  fail(OgxErrorCode_InvalidArgument, "OgxUpdateTokenizerOptions: " + key + " must be \"true\"/\"false\" or "
                                     "\"1\"/\"0\", got \"" + value + "\"");
}

}  // namespace

extern "C" {

OgxResult* OgxCreateTokenizer(const OgxModel* model, OgxTokenizer** out) {
  return guard([&] {
    need(out, "OgxCreateTokenizer", "out");
    *out = nullptr;
    auto& m = live(model, "OgxCreateTokenizer", "model");
    *out = make_handle(make_tokenizer(*m.shared->model));
  });
}

void OgxDestroyTokenizer(OgxTokenizer* tokenizer) { destroy_handle(tokenizer, "OgxDestroyTokenizer"); }

OgxResult* OgxTokenizerEncode(const OgxTokenizer* tokenizer, const char* str, OgxSequences* sequences) {
  return guard([&] {
    auto& t = live(tokenizer, "OgxTokenizerEncode", "tokenizer");
    need(str, "OgxTokenizerEncode", "str");
    auto& s = live(sequences, "OgxTokenizerEncode", "sequences");
    s.seqs.push_back(t.tokenizer->encode(str, t.add_special_tokens));
  });
}

OgxResult* OgxTokenizerEncodeBatch(const OgxTokenizer* tokenizer, const char** strings, size_t count,
                                   OgxTensor** out) {
  return guard([&] {
    need(out, "OgxTokenizerEncodeBatch", "out");
    *out = nullptr;
    auto& t = live(tokenizer, "OgxTokenizerEncodeBatch", "tokenizer");
    if (count > 0) need(strings, "OgxTokenizerEncodeBatch", "strings");
    std::vector<std::string> texts;
    for (size_t i = 0; i < count; i++) {
      if (!strings[i])
        fail(OgxErrorCode_InvalidArgument, "OgxTokenizerEncodeBatch: strings[" + std::to_string(i) + "] is NULL");
      texts.emplace_back(strings[i]);
    }
    auto rows = t.tokenizer->encode_batch(texts, t.add_special_tokens);
    size_t cols = 0;
    for (auto& r : rows) cols = std::max(cols, r.size());
    OgxTensor tensor = make_tensor(OgxElementType_int32, {(int64_t)rows.size(), (int64_t)cols}, "OgxTokenizerEncodeBatch");
    int32_t pad = t.pad_id >= 0 ? t.pad_id : 0;
    tensor.owned.resize(tensor.byte_size());
    tensor.data = tensor.owned.data();
    auto* dst = static_cast<int32_t*>(tensor.data);
    for (size_t r = 0; r < rows.size(); r++)
      for (size_t c = 0; c < cols; c++) dst[r * cols + c] = c < rows[r].size() ? rows[r][c] : pad;
    *out = make_handle(std::move(tensor));
  });
}

OgxResult* OgxTokenizerDecode(const OgxTokenizer* tokenizer, const int32_t* tokens, size_t token_count,
                              const char** out) {
  return guard([&] {
    need(out, "OgxTokenizerDecode", "out");
    *out = nullptr;
    auto& t = live(tokenizer, "OgxTokenizerDecode", "tokenizer");
    if (token_count > 0) need(tokens, "OgxTokenizerDecode", "tokens");
    *out = owned_string(
        c_text(t.tokenizer->decode(std::span<const int32_t>(tokens, token_count), t.skip_special_tokens)));
  });
}

OgxResult* OgxTokenizerDecodeBatch(const OgxTokenizer* tokenizer, const OgxTensor* tokens, OgxStringArray** out) {
  return guard([&] {
    need(out, "OgxTokenizerDecodeBatch", "out");
    *out = nullptr;
    auto& t = live(tokenizer, "OgxTokenizerDecodeBatch", "tokenizer");
    auto& ids = live(tokens, "OgxTokenizerDecodeBatch", "tokens");
    if (ids.shape.empty() || ids.shape.size() > 2)
      fail(OgxErrorCode_InvalidArgument, "OgxTokenizerDecodeBatch: expected a tensor [rows, cols] or [cols], got rank " +
                                             std::to_string(ids.shape.size()));
    size_t rows = ids.shape.size() == 2 ? (size_t)ids.shape[0] : 1;
    size_t cols = (size_t)ids.shape.back();
    int32_t pad = t.pad_id;
    OgxStringArray result;
    for (size_t r = 0; r < rows; r++) {
      std::vector<int32_t> row = to_ids(read_integers(ids, r * cols, cols, "OgxTokenizerDecodeBatch"),
                                        "OgxTokenizerDecodeBatch");
      while (pad >= 0 && !row.empty() && row.back() == pad) row.pop_back();
      result.items.push_back(c_text(t.tokenizer->decode(row, t.skip_special_tokens)));
    }
    *out = make_handle(std::move(result));
  });
}

OgxResult* OgxTokenizerToTokenId(const OgxTokenizer* tokenizer, const char* str, int32_t* token_id) {
  return guard([&] {
    auto& t = live(tokenizer, "OgxTokenizerToTokenId", "tokenizer");
    need(str, "OgxTokenizerToTokenId", "str");
    need(token_id, "OgxTokenizerToTokenId", "token_id");
    *token_id = t.tokenizer->token_to_id(str);
  });
}

OgxResult* OgxTokenizerApplyChatTemplate(const OgxTokenizer* tokenizer, const char* template_str, const char* messages,
                                         const char* tools, bool add_generation_prompt, const char** out) {
  return guard([&] {
    need(out, "OgxTokenizerApplyChatTemplate", "out");
    *out = nullptr;
    auto& t = live(tokenizer, "OgxTokenizerApplyChatTemplate", "tokenizer");
    need(messages, "OgxTokenizerApplyChatTemplate", "messages");
    *out = owned_string(c_text(t.tokenizer->apply_chat_template(messages, add_generation_prompt, tools ? tools : "",
                                                                template_str ? template_str : "")));
  });
}

OgxResult* OgxTokenizerApplyChatTemplateWithOptions(const OgxTokenizer* tokenizer, const char* template_str,
                                                    const char* messages, const char* tools,
                                                    const char* template_kwargs, bool add_generation_prompt,
                                                    const char** out) {
  return guard([&] {
    need(out, "OgxTokenizerApplyChatTemplateWithOptions", "out");
    *out = nullptr;
    auto& t = live(tokenizer, "OgxTokenizerApplyChatTemplateWithOptions", "tokenizer");
    need(messages, "OgxTokenizerApplyChatTemplateWithOptions", "messages");
    *out = owned_string(c_text(t.tokenizer->apply_chat_template(messages, add_generation_prompt, tools ? tools : "",
                                                                template_str ? template_str : "",
                                                                template_kwargs ? template_kwargs : "")));
  });
}

OgxResult* OgxTokenizerGetBosTokenId(const OgxTokenizer* tokenizer, int32_t* token_id) {
  return guard([&] {
    auto& t = live(tokenizer, "OgxTokenizerGetBosTokenId", "tokenizer");
    need(token_id, "OgxTokenizerGetBosTokenId", "token_id");
    *token_id = t.bos_id;
  });
}

OgxResult* OgxTokenizerGetPadTokenId(const OgxTokenizer* tokenizer, int32_t* token_id) {
  return guard([&] {
    auto& t = live(tokenizer, "OgxTokenizerGetPadTokenId", "tokenizer");
    need(token_id, "OgxTokenizerGetPadTokenId", "token_id");
    *token_id = t.pad_id;
  });
}

OgxResult* OgxTokenizerGetEosTokenIds(const OgxTokenizer* tokenizer, const int32_t** ids, size_t* count) {
  return guard([&] {
    auto& t = live(tokenizer, "OgxTokenizerGetEosTokenIds", "tokenizer");
    need(ids, "OgxTokenizerGetEosTokenIds", "ids");
    need(count, "OgxTokenizerGetEosTokenIds", "count");
    *ids = t.eos_ids.data();
    *count = t.eos_ids.size();
  });
}

OgxResult* OgxTokenizerGetBotTokenId(const OgxTokenizer* tokenizer, int32_t* token_id) {
  return guard([&] {
    get_marker(tokenizer, token_id, &OgxTokenizer::bot_id, "OgxTokenizerGetBotTokenId", "bot_token_id");
  });
}

OgxResult* OgxTokenizerGetEotTokenId(const OgxTokenizer* tokenizer, int32_t* token_id) {
  return guard([&] {
    get_marker(tokenizer, token_id, &OgxTokenizer::eot_id, "OgxTokenizerGetEotTokenId", "eot_token_id");
  });
}

OgxResult* OgxTokenizerGetBorTokenId(const OgxTokenizer* tokenizer, int32_t* token_id) {
  return guard([&] {
    get_marker(tokenizer, token_id, &OgxTokenizer::bor_id, "OgxTokenizerGetBorTokenId", "bor_token_id");
  });
}

OgxResult* OgxTokenizerGetEorTokenId(const OgxTokenizer* tokenizer, int32_t* token_id) {
  return guard([&] {
    get_marker(tokenizer, token_id, &OgxTokenizer::eor_id, "OgxTokenizerGetEorTokenId", "eor_token_id");
  });
}

OgxResult* OgxUpdateTokenizerOptions(OgxTokenizer* tokenizer, const char* const* keys, const char* const* values,
                                     size_t num_options) {
  return guard([&] {
    auto& t = live(tokenizer, "OgxUpdateTokenizerOptions", "tokenizer");
    if (num_options > 0) {
      need(keys, "OgxUpdateTokenizerOptions", "keys");
      need(values, "OgxUpdateTokenizerOptions", "values");
    }
    bool add = t.add_special_tokens, skip = t.skip_special_tokens;  // all or nothing
    for (size_t i = 0; i < num_options; i++) {
      if (!keys[i] || !values[i])
        fail(OgxErrorCode_InvalidArgument, "OgxUpdateTokenizerOptions: keys[" + std::to_string(i) + "] or values[" +
                                               std::to_string(i) + "] is NULL");
      std::string k = keys[i];
      if (k == "add_special_tokens") add = option_bool(k, values[i]);
      else if (k == "skip_special_tokens") skip = option_bool(k, values[i]);
      else
        fail(OgxErrorCode_InvalidArgument, "OgxUpdateTokenizerOptions: unknown option '" + k +
                                               "' (known: add_special_tokens, skip_special_tokens)");
    }
    t.add_special_tokens = add;
    t.skip_special_tokens = skip;
  });
}

OgxResult* OgxCreateTokenizerStream(const OgxTokenizer* tokenizer, OgxTokenizerStream** out) {
  return guard([&] {
    need(out, "OgxCreateTokenizerStream", "out");
    *out = nullptr;
    auto& t = live(tokenizer, "OgxCreateTokenizerStream", "tokenizer");
    OgxTokenizerStream s;
    s.stream = std::make_unique<ogx::tok::TokenizerStream>(t.tokenizer, t.skip_special_tokens,
                                                           ogx::tok::TokenizerStream::Style::per_token);
    *out = make_handle(std::move(s));
  });
}

void OgxDestroyTokenizerStream(OgxTokenizerStream* stream) { destroy_handle(stream, "OgxDestroyTokenizerStream"); }

OgxResult* OgxTokenizerStreamDecode(OgxTokenizerStream* stream, int32_t token, const char** out) {
  return guard([&] {
    need(out, "OgxTokenizerStreamDecode", "out");
    *out = nullptr;
    auto& s = live(stream, "OgxTokenizerStreamDecode", "stream");
    s.last = c_text(s.stream->decode(token));
    *out = s.last.c_str();
  });
}

OgxResult* OgxTokenizerStreamFlush(OgxTokenizerStream* stream, const char** out) {
  return guard([&] {
    need(out, "OgxTokenizerStreamFlush", "out");
    *out = nullptr;
    auto& s = live(stream, "OgxTokenizerStreamFlush", "stream");
    s.last = c_text(s.stream->flush());
    *out = s.last.c_str();
  });
}

}  // extern "C"
