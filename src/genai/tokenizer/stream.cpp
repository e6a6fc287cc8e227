// TokenizerStream: incremental decoding that keeps a one-token window of context so that decoders with
// position-dependent rules (SentencePiece's leading-space strip) give exactly the text of a full decode.
#include "genai/tokenizer/tokenizer.h"

#include "common/error.h"

namespace ogx::tok {

namespace {
bool ends_with_replacement(const std::string& s) {
  return s.size() >= 3 && s.compare(s.size() - 3, 3, "\xEF\xBF\xBD") == 0;
}
}  // namespace

TokenizerStream::TokenizerStream(std::shared_ptr<const Tokenizer> tokenizer, bool skip_special_tokens, Style style)
    : tok_(std::move(tokenizer)), skip_special_(skip_special_tokens), style_(style) {
  if (!tok_) throw_error("TokenizerStream: null tokenizer");
  if (style_ == Style::per_token) {
    rules_ = tok_->piece_rules();
    channel_model_ = tok_->token_to_id("<|channel|>") == 200005;
    eos_id_ = tok_->eos_token().empty() ? -1 : tok_->token_to_id(tok_->eos_token());
  }
}

std::string TokenizerStream::decode(int32_t id) {
  if (style_ == Style::per_token) return decode_per_token(id);
  ids_.push_back(id);
  std::string s;
  try {
    s = tok_->decode(ids_, skip_special_);
  } catch (...) {
    ids_.pop_back();
    throw;
  }
  // A text ending in U+FFFD may be a UTF-8 character still arriving byte token by byte token; hold it back, but only
  // while few tokens are pending: a character spans at most 4 bytes, so past 16 the U+FFFD is final (holding it
  // longer made every later token re-decode an ever longer window: quadratic time on invalid byte sequences).
  constexpr size_t kMaxHeld = 16;
  const bool incomplete = ends_with_replacement(s) && ids_.size() - prefix_index_ <= kMaxHeld;
  if (s.size() <= prefix_.size() || incomplete) return {};
  std::string out = s.compare(0, prefix_.size(), prefix_) == 0 ? s.substr(prefix_.size()) : s.substr(std::min(prefix_.size(), s.size()));
  size_t new_prefix_index = ids_.size() - prefix_index_;
  ids_.erase(ids_.begin(), ids_.begin() + static_cast<std::ptrdiff_t>(prefix_index_));
  prefix_ = tok_->decode(ids_, skip_special_);
  prefix_index_ = new_prefix_index;
  return out;
}

std::string TokenizerStream::flush() {
  if (style_ == Style::per_token) {
    reset();  // the bytes of an unfinished character are invalid on their own: dropped, as Extensions drops them
    return {};
  }
  std::string out;
  if (!ids_.empty()) {
    std::string s = tok_->decode(ids_, skip_special_);
    if (s.size() > prefix_.size()) out = s.substr(prefix_.size());
  }
  reset();
  return out;
}

void TokenizerStream::reset() {
  ids_.clear();
  prefix_.clear();
  prefix_index_ = 0;
  first_ = true;
  special_last_ = false;
  pending_utf8_.clear();
}

}  // namespace ogx::tok
