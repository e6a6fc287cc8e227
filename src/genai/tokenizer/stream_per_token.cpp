// TokenizerStream's per_token style: onnxruntime_genai's TokenizerStream, which is ONNX Runtime Extensions' streaming
// detokenizer (operators/tokenizer/bpe_streaming.hpp BpeStreamingDecoder::Id2Token / SpmId2Token, and
// ugm_kernels.hpp for Unigram, at Extensions fe4e13f, the commit ONNX Runtime GenAI 0.15 builds with). Each id is
// rendered on its own; the only state carried between ids is whether the stream is fresh, whether the last id was a
// special token, and the bytes of a UTF-8 character still arriving.
#include "common/error.h"
#include "genai/tokenizer/tokenizer.h"
#include "genai/tokenizer/unicode.h"

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

}  // namespace

// The text of one id as Extensions renders it before the stream's spacing and UTF-8 rules; `special`: the id is a
// special token.
std::string TokenizerStream::piece_text(int32_t id, bool& special) const {
  const std::string piece = tok_->id_to_token(id);  // throws for an id outside the vocabulary
  special = tok_->is_special(id);
  switch (rules_.kind) {
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
      if (!text.empty() && text[0] == ' ' && special_last_ && rules_.add_dummy_prefix) text.erase(0, 1);
      return text;
    }
    case PieceRules::Kind::byte_level: {  // Id2Token: specials skipped unless asked for (and for channel models)
      if (special && skip_special_ && !channel_model_) return {};
      const int32_t one[1] = {id};
      return tok_->decode_bytes(one, false);
    }
  }
  return {};
}

std::string TokenizerStream::decode_per_token(int32_t id) {
  bool special = false;
  std::string text = piece_text(id, special);
  if (rules_.kind == PieceRules::Kind::unigram) {  // Extensions' Unigram stream keeps no state
    first_ = false;
    return text;
  }
  if (tok_->clean_up_tokenization_spaces() && special) {
    if (first_ && !special_last_) text = " " + text;
    if (id != eos_id_) text.push_back(' ');
  }
  first_ = false;
  special_last_ = special;
  // Whole characters leave; invalid bytes are dropped (each maximal invalid subpart: Extensions also drops the valid
  // bytes an invalid lead byte promised); the start of a character still arriving waits for the next id.
  pending_utf8_ += text;
  const size_t whole = pending_utf8_.size() - incomplete_utf8_tail(pending_utf8_);
  std::string out = sanitize_utf8(std::string_view(pending_utf8_).substr(0, whole), "");
  pending_utf8_.erase(0, whole);
  return out;
}

}  // namespace ogx::tok
