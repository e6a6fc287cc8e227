// Decoders: ByteLevel, ByteFallback, Fuse, Strip, Replace, Metaspace, WordPiece, BPEDecoder, Sequence.
// ByteLevel leaves raw bytes (possibly incomplete UTF-8); the tokenizer applies lossy UTF-8 repair at the very end.
#include "common/error.h"
#include "genai/tokenizer/components.h"
#include "genai/tokenizer/json_util.h"
#include "genai/tokenizer/replace.h"
#include "genai/tokenizer/unicode.h"

namespace ogx::tok {

namespace {

struct ByteLevelDec : Decoder {
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string out;
    for (const auto& t : tokens) {
      std::string bytes;
      bool ok = true;
      for (size_t i = 0; i < t.size();) {
        int b = char_to_byte(next_cp(t, i));
        if (b < 0) { ok = false; break; }
        bytes += static_cast<char>(b);
      }
      out += ok ? bytes : t;
    }
    tokens.assign(1, std::move(out));
  }
};

int parse_byte_token(const std::string& t) {
  if (t.size() != 6 || t[0] != '<' || t[1] != '0' || t[2] != 'x' || t[5] != '>') return -1;
  auto hex = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1; };
  int h = hex(t[3]), l = hex(t[4]);
  return h < 0 || l < 0 ? -1 : h * 16 + l;
}

struct ByteFallbackDec : Decoder {
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    std::string pending;
    size_t npending = 0;
    auto flush = [&] {
      if (!npending) return;
      if (is_valid_utf8(pending)) out.push_back(pending);
      else for (size_t k = 0; k < npending; ++k) out.push_back("\xEF\xBF\xBD");
      pending.clear();
      npending = 0;
    };
    for (auto& t : tokens) {
      int b = parse_byte_token(t);
      if (b >= 0) { pending += static_cast<char>(b); ++npending; continue; }
      flush();
      out.push_back(std::move(t));
    }
    flush();
    tokens.swap(out);
  }
};

struct FuseDec : Decoder {
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string all;
    for (const auto& t : tokens) all += t;
    tokens.assign(1, std::move(all));
  }
};

struct StripDec : Decoder {
  std::string content;
  size_t start = 0, stop = 0;
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (auto& t : tokens) {
      size_t b = 0, e = t.size();
      for (size_t k = 0; k < start && t.compare(b, content.size(), content) == 0 && b < e; ++k) b += content.size();
      for (size_t k = 0; k < stop && e >= b + content.size() && t.compare(e - content.size(), content.size(), content) == 0; ++k)
        e -= content.size();
      t = t.substr(b, e - b);
    }
  }
};

struct ReplaceDec : Decoder {
  std::unique_ptr<Replacer> r;
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (auto& t : tokens) t = r->apply(t);
  }
};

struct MetaspaceDec : Decoder {
  std::string rep = "\xE2\x96\x81";
  bool strip_first = true;
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::string out;
      const std::string& t = tokens[i];
      for (size_t p = 0; p < t.size();) {
        if (t.compare(p, rep.size(), rep) == 0) {
          if (!(i == 0 && strip_first)) out += ' ';
          p += rep.size();
        } else {
          out += t[p++];
        }
      }
      tokens[i] = std::move(out);
    }
  }
};

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
}

struct WordPieceDec : Decoder {
  std::string prefix = "##";
  bool cleanup = true;
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      auto& t = tokens[i];
      if (i != 0) {
        if (t.compare(0, prefix.size(), prefix) == 0) t.erase(0, prefix.size());
        else t.insert(0, " ");
      }
      if (cleanup) {
        replace_all(t, " .", ".");
        replace_all(t, " ?", "?");
        replace_all(t, " !", "!");
        replace_all(t, " ,", ",");
        replace_all(t, " ' ", "'");
        replace_all(t, " n't", "n't");
        replace_all(t, " 'm", "'m");
        replace_all(t, " do not", " don't");
        replace_all(t, " 's", "'s");
        replace_all(t, " 've", "'ve");
        replace_all(t, " 're", "'re");
      }
    }
  }
};

struct BpeDec : Decoder {
  std::string suffix = "</w>";
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) replace_all(tokens[i], suffix, i + 1 == tokens.size() ? "" : " ");
  }
};

struct SequenceDec : Decoder {
  std::vector<std::unique_ptr<Decoder>> items;
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (const auto& d : items) d->decode_chain(tokens);
  }
};

}  // namespace

std::unique_ptr<Decoder> make_decoder(const json& j, const std::string& path) {
  if (j.is_null()) return nullptr;
  std::string type = jstr(j, "type", path);
  if (type == "Sequence") {
    auto seq = std::make_unique<SequenceDec>();
    const auto& arr = jarr(j, "decoders", path);
    for (size_t i = 0; i < arr.size(); ++i) {
      auto d = make_decoder(arr[i], jpath(jpath(path, "decoders"), i));
      if (d) seq->items.push_back(std::move(d));
    }
    return seq;
  }
  if (type == "ByteLevel") return std::make_unique<ByteLevelDec>();
  if (type == "ByteFallback") return std::make_unique<ByteFallbackDec>();
  if (type == "Fuse") return std::make_unique<FuseDec>();
  if (type == "Strip") {
    auto s = std::make_unique<StripDec>();
    s->content = jstr(j, "content", path);
    s->start = static_cast<size_t>(jint_or(j, "start", path, 0));
    s->stop = static_cast<size_t>(jint_or(j, "stop", path, 0));
    if (s->content.empty()) throw_error("tokenizer.json: ", jpath(path, "content"), ": must not be empty");
    return s;
  }
  if (type == "Replace") {
    auto r = std::make_unique<ReplaceDec>();
    r->r = make_replacer(j, path);
    return r;
  }
  if (type == "Metaspace") {
    auto m = std::make_unique<MetaspaceDec>();
    m->rep = jstr_or(j, "replacement", path, m->rep);
    std::string scheme = j.contains("prepend_scheme") ? jstr_or(j, "prepend_scheme", path, "always")
                                                      : (jbool_or(j, "add_prefix_space", path, true) ? "always" : "never");
    m->strip_first = scheme != "never";
    return m;
  }
  if (type == "WordPiece") {
    auto w = std::make_unique<WordPieceDec>();
    w->prefix = jstr_or(j, "prefix", path, "##");
    w->cleanup = jbool_or(j, "cleanup", path, true);
    return w;
  }
  if (type == "BPEDecoder") {
    auto b = std::make_unique<BpeDec>();
    b->suffix = jstr_or(j, "suffix", path, "</w>");
    return b;
  }
  throw_error("tokenizer.json: ", jpath(path, "type"), ": unknown decoder type '", type, "'");
}

}  // namespace ogx::tok
