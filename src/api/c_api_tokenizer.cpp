// C API: tokenizer (encode, decode, batches, chat template, special ids) and tokenizer stream.
#include <algorithm>
#include <limits>

#include "api/handles.h"
#include "api/tensor_util.h"

using namespace ogx::api;

namespace {

// Decoding skips special tokens (BOS, EOS, chat markers), as ONNX Runtime GenAI's detokenizer does.
constexpr bool kSkipSpecial = true;

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

}  // namespace

extern "C" {

OgxResult* OgxCreateTokenizer(const OgxModel* model, OgxTokenizer** out) {
  return guard([&] {
    need(out, "OgxCreateTokenizer", "out");
    *out = nullptr;
    auto& m = live(model, "OgxCreateTokenizer", "model");
    *out = make_handle(OgxTokenizer{ogx::tok::Tokenizer::load(m.shared->model->config().model_dir)});
  });
}

void OgxDestroyTokenizer(OgxTokenizer* tokenizer) { destroy_handle(tokenizer, "OgxDestroyTokenizer"); }

OgxResult* OgxTokenizerEncode(const OgxTokenizer* tokenizer, const char* str, OgxSequences* sequences) {
  return guard([&] {
    auto& t = live(tokenizer, "OgxTokenizerEncode", "tokenizer");
    need(str, "OgxTokenizerEncode", "str");
    auto& s = live(sequences, "OgxTokenizerEncode", "sequences");
    s.seqs.push_back(t.tokenizer->encode(str, true));
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
    auto rows = t.tokenizer->encode_batch(texts, true);
    size_t cols = 0;
    for (auto& r : rows) cols = std::max(cols, r.size());
    OgxTensor tensor = make_tensor(OgxElementType_int32, {(int64_t)rows.size(), (int64_t)cols}, "OgxTokenizerEncodeBatch");
    int32_t pad = t.tokenizer->pad_token_id() >= 0 ? t.tokenizer->pad_token_id() : 0;
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
    *out = owned_string(c_text(t.tokenizer->decode(std::span<const int32_t>(tokens, token_count), kSkipSpecial)));
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
    int32_t pad = t.tokenizer->pad_token_id();
    OgxStringArray result;
    for (size_t r = 0; r < rows; r++) {
      std::vector<int32_t> row = to_ids(read_integers(ids, r * cols, cols, "OgxTokenizerDecodeBatch"),
                                        "OgxTokenizerDecodeBatch");
      while (pad >= 0 && !row.empty() && row.back() == pad) row.pop_back();
      result.items.push_back(c_text(t.tokenizer->decode(row, kSkipSpecial)));
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

OgxResult* OgxTokenizerGetBosTokenId(const OgxTokenizer* tokenizer, int32_t* token_id) {
  return guard([&] {
    auto& t = live(tokenizer, "OgxTokenizerGetBosTokenId", "tokenizer");
    need(token_id, "OgxTokenizerGetBosTokenId", "token_id");
    *token_id = t.tokenizer->bos_token_id();
  });
}

OgxResult* OgxTokenizerGetPadTokenId(const OgxTokenizer* tokenizer, int32_t* token_id) {
  return guard([&] {
    auto& t = live(tokenizer, "OgxTokenizerGetPadTokenId", "tokenizer");
    need(token_id, "OgxTokenizerGetPadTokenId", "token_id");
    *token_id = t.tokenizer->pad_token_id();
  });
}

OgxResult* OgxTokenizerGetEosTokenIds(const OgxTokenizer* tokenizer, const int32_t** ids, size_t* count) {
  return guard([&] {
    auto& t = live(tokenizer, "OgxTokenizerGetEosTokenIds", "tokenizer");
    need(ids, "OgxTokenizerGetEosTokenIds", "ids");
    need(count, "OgxTokenizerGetEosTokenIds", "count");
    *ids = t.tokenizer->eos_token_ids().data();
    *count = t.tokenizer->eos_token_ids().size();
  });
}

OgxResult* OgxCreateTokenizerStream(const OgxTokenizer* tokenizer, OgxTokenizerStream** out) {
  return guard([&] {
    need(out, "OgxCreateTokenizerStream", "out");
    *out = nullptr;
    auto& t = live(tokenizer, "OgxCreateTokenizerStream", "tokenizer");
    OgxTokenizerStream s;
    s.stream = std::make_unique<ogx::tok::TokenizerStream>(t.tokenizer, kSkipSpecial);
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
