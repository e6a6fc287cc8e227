// Pre-tokenizers: ByteLevel, Split, Metaspace, Digits, Whitespace, WhitespaceSplit, Punctuation,
// BertPreTokenizer, CharDelimiterSplit, Sequence. Split semantics follow Hugging Face's
// SplitDelimiterBehavior (Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous).
#include <algorithm>
#include <functional>

#include "common/error.h"
#include "genai/tokenizer/components.h"
#include "genai/tokenizer/json_util.h"
#include "genai/tokenizer/regex.h"
#include "genai/tokenizer/unicode.h"

#include <unicode/uchar.h>

namespace ogx::tok {

namespace {

enum class Behavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };
using Ranges = std::vector<std::pair<size_t, size_t>>;

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

// Splits `p` given the delimiter matches (sorted, non-overlapping), appending the pieces to `out`.
void split_piece(Piece&& p, const Ranges& matches, Behavior behavior, bool invert, std::vector<Piece>& out) {
  struct Iv { size_t b, e; bool m; };
  std::vector<Iv> ivs;
  size_t pos = 0;
  for (auto [b, e] : matches) {
    if (b > pos) ivs.push_back({pos, b, invert});
    ivs.push_back({b, e, !invert});
    pos = e;
  }
  if (pos < p.text.size()) ivs.push_back({pos, p.text.size(), invert});

  std::vector<std::pair<size_t, size_t>> res;
  switch (behavior) {
    case Behavior::Removed:
      for (auto& iv : ivs) if (!iv.m) res.emplace_back(iv.b, iv.e);
      break;
    case Behavior::Isolated:
      for (auto& iv : ivs) res.emplace_back(iv.b, iv.e);
      break;
    case Behavior::MergedWithPrevious: {
      bool prev = false;
      for (auto& iv : ivs) {
        if (iv.m && !prev && !res.empty()) res.back().second = iv.e;
        else res.emplace_back(iv.b, iv.e);
        prev = iv.m;
      }
      break;
    }
    case Behavior::MergedWithNext: {
      bool prev = false;
      for (size_t k = ivs.size(); k-- > 0;) {
        auto& iv = ivs[k];
        if (iv.m && !prev && !res.empty()) res.back().first = iv.b;
        else res.emplace_back(iv.b, iv.e);
        prev = iv.m;
      }
      std::reverse(res.begin(), res.end());
      break;
    }
    case Behavior::Contiguous: {
      bool prev = false;
      bool first = true;
      for (auto& iv : ivs) {
        if (!first && iv.m == prev) res.back().second = iv.e;
        else res.emplace_back(iv.b, iv.e);
        prev = iv.m;
        first = false;
      }
      break;
    }
  }
  if (res.size() == 1 && res[0].first == 0 && res[0].second == p.text.size()) {
    out.push_back(std::move(p));
    return;
  }
  bool first = true;
  for (auto [b, e] : res) {
    if (b == e) continue;
    out.push_back({p.text.substr(b, e - b), first && p.at_start && b == 0});
    first = false;
  }
}

// Each character satisfying `pred` is one match.
Ranges char_matches(const std::string& s, const std::function<bool(char32_t)>& pred) {
  Ranges r;
  for (size_t i = 0; i < s.size();) {
    size_t st = i;
    if (pred(next_cp(s, i))) r.emplace_back(st, i);
  }
  return r;
}

Ranges literal_matches(const std::string& s, const std::string& lit) {
  Ranges r;
  if (lit.empty()) return r;
  for (size_t pos = s.find(lit); pos != std::string::npos; pos = s.find(lit, pos + lit.size()))
    r.emplace_back(pos, pos + lit.size());
  return r;
}

template <typename F>
void for_each_split(std::vector<Piece>& pieces, F&& f) {
  std::vector<Piece> out;
  out.reserve(pieces.size() * 2);
  for (auto& p : pieces) f(std::move(p), out);
  pieces.swap(out);
}

const char* kGpt2Pattern = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

struct ByteLevelPre : PreTokenizer {
  bool add_prefix_space = true;
  std::unique_ptr<Regex> re;
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    const auto& table = byte_to_chars();
    for_each_split(pieces, [&](Piece&& p, std::vector<Piece>& out) {
      if (add_prefix_space && (p.text.empty() || p.text[0] != ' ')) p.text.insert(0, " ");
      size_t first = out.size();
      if (re) {
        Ranges m;
        re->find_all(p.text, m);
        split_piece(std::move(p), m, Behavior::Isolated, false, out);
      } else {
        out.push_back(std::move(p));
      }
      for (size_t k = first; k < out.size(); ++k) {
        std::string mapped;
        mapped.reserve(out[k].text.size() * 2);
        for (unsigned char c : out[k].text) mapped += table[c];
        out[k].text.swap(mapped);
      }
    });
  }
};

struct SplitPre : PreTokenizer {
  std::string literal;
  std::unique_ptr<Regex> re;
  Behavior behavior = Behavior::Isolated;
  bool invert = false;
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    for_each_split(pieces, [&](Piece&& p, std::vector<Piece>& out) {
      Ranges m;
      if (re) re->find_all(p.text, m);
      else m = literal_matches(p.text, literal);
      split_piece(std::move(p), m, behavior, invert, out);
    });
  }
};

struct CharPredPre : PreTokenizer {
  std::vector<std::pair<std::function<bool(char32_t)>, Behavior>> steps;
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    for (const auto& [pred, beh] : steps) {
      for_each_split(pieces, [&](Piece&& p, std::vector<Piece>& out) {
        split_piece(std::move(p), char_matches(p.text, pred), beh, false, out);
      });
    }
  }
};

struct MetaspacePre : PreTokenizer {
  std::string rep = "\xE2\x96\x81";
  std::string scheme = "always";
  bool split = true;
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    for_each_split(pieces, [&](Piece&& p, std::vector<Piece>& out) {
      std::string t;
      t.reserve(p.text.size() + 8);
      for (char c : p.text) {
        if (c == ' ') t += rep;
        else t += c;
      }
      bool starts = t.compare(0, rep.size(), rep) == 0;
      if (!starts && (scheme == "always" || (scheme == "first" && p.at_start))) t.insert(0, rep);
      p.text.swap(t);
      if (split) split_piece(std::move(p), literal_matches(p.text, rep), Behavior::MergedWithNext, false, out);
      else out.push_back(std::move(p));
    });
  }
};

struct WhitespacePre : PreTokenizer {
  Regex re{"\\w+|[^\\w\\s]+", "Whitespace"};
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    for_each_split(pieces, [&](Piece&& p, std::vector<Piece>& out) {
      Ranges m;
      re.find_all(p.text, m);
      split_piece(std::move(p), m, Behavior::Removed, true, out);
    });
  }
};

struct SequencePre : PreTokenizer {
  std::vector<std::unique_ptr<PreTokenizer>> items;
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    for (const auto& p : items) p->pre_tokenize(pieces);
  }
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
    m->split = jbool_or(j, "split", path, true);
    if (j.contains("prepend_scheme")) m->scheme = jstr_or(j, "prepend_scheme", path, "always");
    else m->scheme = jbool_or(j, "add_prefix_space", path, true) ? "always" : "never";
    if (m->scheme != "always" && m->scheme != "first" && m->scheme != "never")
      throw_error("tokenizer.json: ", jpath(path, "prepend_scheme"), ": unknown value '", m->scheme, "'");
    return m;
  }
  if (type == "Digits") {
    auto d = std::make_unique<CharPredPre>();
    d->steps.emplace_back(is_numeric, jbool_or(j, "individual_digits", path, false) ? Behavior::Isolated : Behavior::Contiguous);
    return d;
  }
  if (type == "Whitespace") return std::make_unique<WhitespacePre>();
  if (type == "WhitespaceSplit") {
    auto d = std::make_unique<CharPredPre>();
    d->steps.emplace_back(is_whitespace, Behavior::Removed);
    return d;
  }
  if (type == "Punctuation") {
    auto d = std::make_unique<CharPredPre>();
    d->steps.emplace_back(is_punctuation, parse_behavior(j, path, Behavior::Isolated));
    return d;
  }
  if (type == "BertPreTokenizer") {
    auto d = std::make_unique<CharPredPre>();
    d->steps.emplace_back(is_whitespace, Behavior::Removed);
    d->steps.emplace_back(is_punctuation, Behavior::Isolated);
    return d;
  }
  if (type == "CharDelimiterSplit") {
    std::string delim = jstr(j, "delimiter", path);
    size_t i = 0;
    char32_t dc = delim.empty() ? 0 : next_cp(delim, i);
    auto d = std::make_unique<CharPredPre>();
    d->steps.emplace_back([dc](char32_t c) { return c == dc; }, Behavior::Removed);
    return d;
  }
  throw_error("tokenizer.json: ", jpath(path, "type"), ": unknown pre-tokenizer type '", type, "'");
}

}  // namespace ogx::tok
