// Normalizers: Sequence, NFC/NFD/NFKC/NFKD, Lowercase, Strip, StripAccents, Replace, Prepend, BertNormalizer,
// Precompiled (approximated by NFKC).
#include "common/error.h"
#include "common/log.h"
#include "genai/tokenizer/components.h"
#include "genai/tokenizer/json_util.h"
#include "genai/tokenizer/replace.h"
#include "genai/tokenizer/unicode.h"

namespace ogx::tok {

namespace {

struct SequenceNorm : Normalizer {
  std::vector<std::unique_ptr<Normalizer>> items;
  void normalize(std::string& s) const override {
    for (const auto& n : items) n->normalize(s);
  }
};

struct FormNorm : Normalizer {
  NormForm form;
  explicit FormNorm(NormForm f) : form(f) {}
  void normalize(std::string& s) const override { s = unicode_normalize(s, form); }
};

struct LowercaseNorm : Normalizer {
  void normalize(std::string& s) const override { s = unicode_lowercase(s); }
};

struct StripNorm : Normalizer {
  bool left, right;
  StripNorm(bool l, bool r) : left(l), right(r) {}
  void normalize(std::string& s) const override {
    size_t b = 0, e = s.size();
    if (left) {
      while (b < e) {
        size_t i = b;
        if (!is_whitespace(next_cp(s, i))) break;
        b = i;
      }
    }
    if (right) {
      while (e > b) {
        size_t st = e - 1;
        while (st > b && (static_cast<unsigned char>(s[st]) & 0xC0) == 0x80) --st;
        size_t i = st;
        if (!is_whitespace(next_cp(s, i))) break;
        e = st;
      }
    }
    s = s.substr(b, e - b);
  }
};

struct StripAccentsNorm : Normalizer {
  void normalize(std::string& s) const override {
    std::string out;
    for (size_t i = 0; i < s.size();) {
      size_t st = i;
      char32_t c = next_cp(s, i);
      if (!is_nonspacing_mark(c)) out.append(s, st, i - st);
    }
    s = std::move(out);
  }
};

}  // namespace

namespace {

struct ReplaceNorm : Normalizer {
  std::unique_ptr<Replacer> r;
  void normalize(std::string& s) const override { s = r->apply(s); }
};

struct PrependNorm : Normalizer {
  std::string prefix;
  void normalize(std::string& s) const override {
    if (!s.empty()) s.insert(0, prefix);
  }
};

struct BertNorm : Normalizer {
  bool clean_text = true, chinese = true, strip_accents = true, lowercase = true;
  void normalize(std::string& s) const override {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
      size_t st = i;
      char32_t c = next_cp(s, i);
      if (clean_text) {
        if (c == 0 || c == 0xFFFD) continue;
        if (c == '\t' || c == '\n' || c == '\r' || is_whitespace(c)) { out += ' '; continue; }
        if (is_control(c)) continue;
      }
      if (chinese && is_cjk(c)) {
        out += ' ';
        out.append(s, st, i - st);
        out += ' ';
        continue;
      }
      out.append(s, st, i - st);
    }
    if (strip_accents) {
      out = unicode_normalize(out, NormForm::NFD);
      StripAccentsNorm().normalize(out);
    }
    if (lowercase) out = unicode_lowercase(out);
    s = std::move(out);
  }
};

}  // namespace

std::unique_ptr<Normalizer> make_normalizer(const json& j, const std::string& path) {
  if (j.is_null()) return nullptr;
  std::string type = jstr(j, "type", path);
  if (type == "Sequence") {
    auto seq = std::make_unique<SequenceNorm>();
    const auto& arr = jarr(j, "normalizers", path);
    for (size_t i = 0; i < arr.size(); ++i) {
      auto n = make_normalizer(arr[i], jpath(jpath(path, "normalizers"), i));
      if (n) seq->items.push_back(std::move(n));
    }
    return seq;
  }
  if (type == "NFC") return std::make_unique<FormNorm>(NormForm::NFC);
  if (type == "NFD") return std::make_unique<FormNorm>(NormForm::NFD);
  if (type == "NFKC") return std::make_unique<FormNorm>(NormForm::NFKC);
  if (type == "NFKD") return std::make_unique<FormNorm>(NormForm::NFKD);
  if (type == "Lowercase") return std::make_unique<LowercaseNorm>();
  if (type == "Strip") return std::make_unique<StripNorm>(jbool_or(j, "strip_left", path, true), jbool_or(j, "strip_right", path, true));
  if (type == "StripAccents") return std::make_unique<StripAccentsNorm>();
  if (type == "Replace") {
    auto r = std::make_unique<ReplaceNorm>();
    r->r = make_replacer(j, path);
    return r;
  }
  if (type == "Prepend") {
    auto p = std::make_unique<PrependNorm>();
    p->prefix = jstr(j, "prepend", path);
    return p;
  }
  if (type == "BertNormalizer") {
    auto b = std::make_unique<BertNorm>();
    b->clean_text = jbool_or(j, "clean_text", path, true);
    b->chinese = jbool_or(j, "handle_chinese_chars", path, true);
    b->lowercase = jbool_or(j, "lowercase", path, true);
    b->strip_accents = jbool_or(j, "strip_accents", path, b->lowercase);
    return b;
  }
  if (type == "Precompiled") {
    log_warning("tokenizer.json: " + path + ": Precompiled normalizer approximated by NFKC");
    return std::make_unique<FormNorm>(NormForm::NFKC);
  }
  throw_error("tokenizer.json: ", jpath(path, "type"), ": unknown normalizer type '", type, "'");
}

}  // namespace ogx::tok
