// TokenizerStream's per_token style: onnxruntime_genai's TokenizerStream, which is ONNX Runtime Extensions' streaming
// detokenizer (operators/tokenizer/bpe_streaming.hpp BpeStreamingDecoder::Id2Token / SpmId2Token, and
// ugm_kernels.hpp for Unigram, at Extensions fe4e13f, the commit ONNX Runtime GenAI 0.15 builds with). Each id is
// rendered on its own; the only state carried between ids is whether the stream is fresh, whether the last id was a
// special token, and the bytes of a UTF-8 character still arriving.
#include "common/error.h"
#include "genai/tokenizer/backend.h"
#include "genai/tokenizer/tokenizer.h"

namespace ogx::tok {

namespace {

const std::string kMetaspace = "\xE2\x96\x81";  // U+2581, SentencePiece's space

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

// "<0xAB>": a SentencePiece byte piece.
bool byte_piece(const std::string& p, char& byte) {
  auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F') || (c >= 'a' && c <= 'f'); };
  if (p.size() != 6 || p.compare(0, 3, "<0x") != 0 || p[5] != '>' || !hex(p[3]) || !hex(p[4])) return false;
  byte = static_cast<char>(std::stoi(p.substr(3, 2), nullptr, 16));
  return true;
}

// Bytes of the UTF-8 character that starts with `lead`; 0 for a byte no character starts with.
size_t utf8_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead < 0xC2) return 0;  // a continuation byte, or an overlong 2-byte lead
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  if (lead < 0xF5) return 4;
  return 0;
}

// Whole characters of `bytes` (valid UTF-8) go to `out` and leave `bytes`; invalid bytes are dropped; the start of a
// character still arriving stays. Extensions drops a character whose bytes are invalid together with the bytes its
// lead byte promised, valid text included; ogx drops only the invalid part (the same text for every valid stream).
void take_whole_characters(std::string& bytes, std::string& out) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(bytes[i]); };
  size_t at = 0;
  while (at < bytes.size()) {
    const size_t n = utf8_length(b(at));
    if (n == 0) { ++at; continue; }
    size_t have = 1;
    while (have < n && at + have < bytes.size() && (b(at + have) & 0xC0) == 0x80) ++have;
    if (have < n && at + have == bytes.size()) break;  // may still complete
    if (have < n) { at += have; continue; }             // cut short by a byte that is no continuation
    uint32_t cp = n == 1 ? b(at) : n == 2 ? (b(at) & 0x1F) : n == 3 ? (b(at) & 0x0F) : (b(at) & 0x07);
    for (size_t i = 1; i < n; ++i) cp = (cp << 6) | (b(at + i) & 0x3F);
    static constexpr uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp >= kMin[n] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF)) out.append(bytes, at, n);
    at += n;
  }
  bytes.erase(0, at);
}

}  // namespace

// The text of one id as Extensions renders it before the stream's spacing and UTF-8 rules; `special`: the id is a
// special token.
std::string TokenizerStream::piece_text(int32_t id, bool& special) const {
  const PieceRules rules = tok_->piece_rules();
  const std::string piece = tok_->id_to_token(id);  // throws for an id outside the vocabulary
  special = tok_->is_special(id);
  switch (rules.kind) {
    case PieceRules::Kind::unigram: {  // SpmUgmDecoder::Id2Token: specials empty, one leading or trailing U+2581
      if (special) return {};
      const size_t at = piece.find(kMetaspace);
      if (at == 0) return " " + piece.substr(kMetaspace.size());
      if (at != std::string::npos && at + kMetaspace.size() == piece.size()) return piece.substr(0, at) + " ";
      return piece;
    }
    case PieceRules::Kind::sentencepiece: {  // SpmId2Token: specials always empty, byte pieces, U+2581 as spaces
      if (special) return {};
      char byte;
      std::string text = byte_piece(piece, byte) ? std::string(1, byte) : replace_all(piece, kMetaspace, " ");
      if (!text.empty() && text[0] == ' ' && special_last_ && rules.add_dummy_prefix) text.erase(0, 1);
      return text;
    }
    case PieceRules::Kind::byte_level: {  // Id2Token: specials skipped unless asked for (and for channel models)
      const bool channel_model = tok_->token_to_id("<|channel|>") == 200005;  // gpt-oss: specials are output
      if (special && skip_special_ && !channel_model) return {};
      const int32_t one[1] = {id};
      return tok_->decode_bytes(one, false);
    }
  }
  return {};
}

std::string TokenizerStream::decode_per_token(int32_t id) {
  bool special = false;
  std::string text = piece_text(id, special);
  if (tok_->piece_rules().kind == PieceRules::Kind::unigram) {  // Extensions' Unigram stream keeps no state
    first_ = false;
    return text;
  }
  if (tok_->clean_up_tokenization_spaces() && special) {
    if (first_ && !special_last_) text = " " + text;
    const int32_t eos = tok_->eos_token().empty() ? -1 : tok_->token_to_id(tok_->eos_token());
    if (id != eos) text.push_back(' ');
  }
  first_ = false;
  special_last_ = special;
  pending_utf8_ += text;
  std::string out;
  take_whole_characters(pending_utf8_, out);
  return out;
}

}  // namespace ogx::tok
