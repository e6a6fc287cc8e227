// Pre-tokenizers: ByteLevel, Split, Metaspace, Digits, Whitespace, WhitespaceSplit, Punctuation,
// BertPreTokenizer, CharDelimiterSplit, Sequence. Split semantics follow Hugging Face's
// SplitDelimiterBehavior (Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous), computed in one
// streaming pass over the match intervals.
#include <functional>

#include <unicode/uchar.h>

#include "common/error.h"
#include "genai/tokenizer/components.h"
#include "genai/tokenizer/json_util.h"
#include "genai/tokenizer/regex.h"
#include "genai/tokenizer/unicode.h"

namespace ogx::tok {

namespace {

enum class Behavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

Behavior parse_behavior(const json& j, const std::string& path, Behavior def) {
  std::string b = jstr_or(j, "behavior", path, "");
  if (b.empty()) return def;
  if (b == "Removed") return Behavior::Removed;
  if (b == "Isolated") return Behavior::Isolated;
  if (b == "MergedWithPrevious") return Behavior::MergedWithPrevious;
  if (b == "MergedWithNext") return Behavior::MergedWithNext;
  if (b == "Contiguous") return Behavior::Contiguous;
  throw_error("tokenizer.json: ", jpath(path, "behavior"), ": unknown split behavior '", b, "'");
}

// Turns a stream of delimiter matches into pieces according to the behaviour.
class Splitter {
 public:
  Splitter(std::string_view text, bool at_start, Behavior b, bool invert, PieceSink emit)
      : text_(text), at_start_(at_start), behavior_(b), invert_(invert), emit_(emit) {}
  void match(size_t b, size_t e) {
    if (b > pos_) interval(pos_, b, invert_);
    interval(b, e, !invert_);
    pos_ = e;
  }
  void finish() {
    if (pos_ < text_.size()) interval(pos_, text_.size(), invert_);
    if (has_pending_) out(pb_, pe_);
  }

 private:
  void out(size_t b, size_t e) {
    if (b == e) return;
    emit_(text_.substr(b, e - b), at_start_ && b == 0);
  }
  void set_pending(size_t b, size_t e, bool m) { pb_ = b; pe_ = e; pm_ = m; has_pending_ = true; }
  void interval(size_t b, size_t e, bool m) {
    switch (behavior_) {
      case Behavior::Removed:
        if (!m) out(b, e);
        break;
      case Behavior::Isolated:
        out(b, e);
        break;
      case Behavior::MergedWithPrevious:  // a match joins the piece before it (unless that was a match)
        if (m && !prev_m_ && has_pending_) pe_ = e;
        else {
          if (has_pending_) out(pb_, pe_);
          set_pending(b, e, m);
        }
        prev_m_ = m;
        break;
      case Behavior::MergedWithNext:  // a match joins the non-match after it
        if (has_pending_ && pm_ && !m) {
          out(pb_, e);
          has_pending_ = false;
        } else {
          if (has_pending_) out(pb_, pe_);
          if (m) set_pending(b, e, m);
          else { out(b, e); has_pending_ = false; }
        }
        break;
      case Behavior::Contiguous:
        if (has_pending_ && pm_ == m) pe_ = e;
        else {
          if (has_pending_) out(pb_, pe_);
          set_pending(b, e, m);
        }
        break;
    }
  }

  std::string_view text_;
  bool at_start_;
  Behavior behavior_;
  bool invert_;
  PieceSink emit_;
  size_t pos_ = 0;
  bool has_pending_ = false, pm_ = false, prev_m_ = false;
  size_t pb_ = 0, pe_ = 0;
};

void split_regex(const Regex& re, std::string_view text, bool at_start, Behavior b, bool invert, PieceSink emit) {
  Splitter s(text, at_start, b, invert, emit);
  re.for_each_match(text, [&](size_t mb, size_t me) { s.match(mb, me); });
  s.finish();
}

void split_chars(const std::function<bool(char32_t)>& pred, std::string_view text, bool at_start, Behavior b,
                 PieceSink emit) {
  Splitter s(text, at_start, b, false, emit);
  for (size_t i = 0; i < text.size();) {
    size_t st = i;
    if (pred(next_cp(text, i))) s.match(st, i);
  }
  s.finish();
}

void split_literal(const std::string& lit, std::string_view text, bool at_start, Behavior b, bool invert, PieceSink emit) {
  Splitter s(text, at_start, b, invert, emit);
  if (!lit.empty())
    for (size_t p = text.find(lit); p != std::string_view::npos; p = text.find(lit, p + lit.size())) s.match(p, p + lit.size());
  s.finish();
}

const char* kGpt2Pattern = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

struct ByteLevelPre : PreTokenizer {
  bool add_prefix_space = true;
  std::unique_ptr<Regex> re;
  void split(std::string_view text, bool at_start, PieceSink emit) const override {
    std::string with_space;
    if (add_prefix_space && (text.empty() || text[0] != ' ')) {
      with_space.reserve(text.size() + 1);
      with_space += ' ';
      with_space += text;
      text = with_space;
    }
    const auto& table = byte_to_chars();
    std::string mapped;
    auto map_emit = [&](std::string_view piece, bool start) {
      mapped.clear();
      for (unsigned char c : piece) mapped += table[c];
      emit(mapped, start);
    };
    if (re) split_regex(*re, text, at_start, Behavior::Isolated, false, map_emit);
    else if (!text.empty()) map_emit(text, at_start);
  }
};

struct SplitPre : PreTokenizer {
  std::string literal;
  std::unique_ptr<Regex> re;
  Behavior behavior = Behavior::Isolated;
  bool invert = false;
  void split(std::string_view text, bool at_start, PieceSink emit) const override {
    if (re) split_regex(*re, text, at_start, behavior, invert, emit);
    else split_literal(literal, text, at_start, behavior, invert, emit);
  }
};

struct CharPredPre : PreTokenizer {
  std::function<bool(char32_t)> pred;
  Behavior behavior;
  CharPredPre(std::function<bool(char32_t)> p, Behavior b) : pred(std::move(p)), behavior(b) {}
  void split(std::string_view text, bool at_start, PieceSink emit) const override {
    split_chars(pred, text, at_start, behavior, emit);
  }
};

struct MetaspacePre : PreTokenizer {
  std::string rep = "\xE2\x96\x81";
  std::string scheme = "always";
  bool split_ = true;
  void split(std::string_view text, bool at_start, PieceSink emit) const override {
    std::string t;
    t.reserve(text.size() + 8);
    for (char c : text) {
      if (c == ' ') t += rep;
      else t += c;
    }
    bool starts = t.compare(0, rep.size(), rep) == 0;
    if (!starts && (scheme == "always" || (scheme == "first" && at_start))) t.insert(0, rep);
    if (split_) split_literal(rep, t, at_start, Behavior::MergedWithNext, false, emit);
    else if (!t.empty()) emit(t, at_start);
  }
};

struct WhitespacePre : PreTokenizer {
  Regex re{"\\w+|[^\\w\\s]+", "Whitespace"};
  void split(std::string_view text, bool at_start, PieceSink emit) const override {
    split_regex(re, text, at_start, Behavior::Removed, true, emit);
  }
};

struct SequencePre : PreTokenizer {
  std::vector<std::unique_ptr<PreTokenizer>> items;
  void run(size_t i, std::string_view text, bool at_start, PieceSink emit) const {
    if (i == items.size()) {
      emit(text, at_start);
      return;
    }
    items[i]->split(text, at_start, [&](std::string_view t, bool s) { run(i + 1, t, s, emit); });
  }
  void split(std::string_view text, bool at_start, PieceSink emit) const override { run(0, text, at_start, emit); }
};

bool is_numeric(char32_t c) { return U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_N_MASK; }

}  // namespace

std::unique_ptr<PreTokenizer> make_pre_tokenizer(const json& j, const std::string& path) {
  if (j.is_null()) return nullptr;
  std::string type = jstr(j, "type", path);
  if (type == "Sequence") {
    auto seq = std::make_unique<SequencePre>();
    const auto& arr = jarr(j, "pretokenizers", path);
    for (size_t i = 0; i < arr.size(); ++i) {
      auto p = make_pre_tokenizer(arr[i], jpath(jpath(path, "pretokenizers"), i));
      if (p) seq->items.push_back(std::move(p));
    }
    return seq;
  }
  if (type == "ByteLevel") {
    auto b = std::make_unique<ByteLevelPre>();
    b->add_prefix_space = jbool_or(j, "add_prefix_space", path, true);
    if (jbool_or(j, "use_regex", path, true)) b->re = std::make_unique<Regex>(kGpt2Pattern, path);
    return b;
  }
  if (type == "Split") {
    auto s = std::make_unique<SplitPre>();
    Pattern pat = jpattern(j, "pattern", path);
    if (pat.is_regex) s->re = std::make_unique<Regex>(pat.text, jpath(path, "pattern.Regex"));
    else s->literal = pat.text;
    s->behavior = parse_behavior(j, path, Behavior::Isolated);
    s->invert = jbool_or(j, "invert", path, false);
    return s;
  }
  if (type == "Metaspace") {
    auto m = std::make_unique<MetaspacePre>();
    m->rep = jstr_or(j, "replacement", path, m->rep);
    m->split_ = jbool_or(j, "split", path, true);
    if (j.contains("prepend_scheme")) m->scheme = jstr_or(j, "prepend_scheme", path, "always");
    else m->scheme = jbool_or(j, "add_prefix_space", path, true) ? "always" : "never";
    if (m->scheme != "always" && m->scheme != "first" && m->scheme != "never")
      throw_error("tokenizer.json: ", jpath(path, "prepend_scheme"), ": unknown value '", m->scheme, "'");
    return m;
  }
  if (type == "Digits")
    return std::make_unique<CharPredPre>(is_numeric, jbool_or(j, "individual_digits", path, false) ? Behavior::Isolated
                                                                                                 : Behavior::Contiguous);
  if (type == "Whitespace") return std::make_unique<WhitespacePre>();
  if (type == "WhitespaceSplit") return std::make_unique<CharPredPre>(is_whitespace, Behavior::Removed);
  if (type == "Punctuation") return std::make_unique<CharPredPre>(is_punctuation, parse_behavior(j, path, Behavior::Isolated));
  if (type == "BertPreTokenizer") {
    auto seq = std::make_unique<SequencePre>();
    seq->items.push_back(std::make_unique<CharPredPre>(is_whitespace, Behavior::Removed));
    seq->items.push_back(std::make_unique<CharPredPre>(is_punctuation, Behavior::Isolated));
    return seq;
  }
  if (type == "CharDelimiterSplit") {
    std::string delim = jstr(j, "delimiter", path);
    size_t i = 0;
    char32_t dc = delim.empty() ? 0 : next_cp(delim, i);
    return std::make_unique<CharPredPre>([dc](char32_t c) { return c == dc; }, Behavior::Removed);
  }
  throw_error("tokenizer.json: ", jpath(path, "type"), ": unknown pre-tokenizer type '", type, "'");
}

}  // namespace ogx::tok
