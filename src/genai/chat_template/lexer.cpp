// Jinja2 lexer. Mirrors jinja2.lexer: newlines normalised to \n, one trailing newline dropped,
// `{%-`/`-%}` strip all whitespace, lstrip_blocks strips indentation before `{%`/`{#` (not `{{`),
// trim_blocks drops the newline after `%}`/`#}`.
#include "genai/chat_template/lexer.h"

#include <cctype>
#include <cstring>

#include "common/error.h"

namespace ogx::jinja {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string normalize(const std::string& src) {
  std::string out;
  out.reserve(src.size());
  for (size_t k = 0; k < src.size(); ++k) {
    if (src[k] == '\r') {
      out += '\n';
      if (k + 1 < src.size() && src[k + 1] == '\n') ++k;
    } else {
      out += src[k];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) out += char(cp);
  else if (cp < 0x800) { out += char(0xC0 | (cp >> 6)); out += char(0x80 | (cp & 0x3F)); }
  else if (cp < 0x10000) {
    out += char(0xE0 | (cp >> 12)); out += char(0x80 | ((cp >> 6) & 0x3F)); out += char(0x80 | (cp & 0x3F));
  } else {
    out += char(0xF0 | (cp >> 18)); out += char(0x80 | ((cp >> 12) & 0x3F));
    out += char(0x80 | ((cp >> 6) & 0x3F)); out += char(0x80 | (cp & 0x3F));
  }
}

class Lexer {
 public:
  Lexer(const std::string& src, const LexOptions& o) : s_(normalize(src)), opts_(o) {}

  std::vector<Token> run() {
    while (pos_ < s_.size()) {
      if (!root()) break;
    }
    out_.push_back({Tok::End, "", line_});
    return std::move(out_);
  }

 private:
  std::string s_;
  LexOptions opts_;
  size_t pos_ = 0;
  int line_ = 1;
  bool line_starting_ = true;
  std::vector<Token> out_;

  [[noreturn]] void fail(const std::string& msg) { throw_error("chat template line ", line_, ": ", msg); }

  void emit_text(std::string text) {
    int start = line_;
    for (char c : text) line_ += c == '\n';
    if (!text.empty()) out_.push_back({Tok::Text, std::move(text), start});
  }

  // Applies `-` / lstrip_blocks to the text before a tag.
  std::string strip_before(std::string text, char marker, bool is_var) {
    if (marker == '-') {
      size_t e = text.size();
      while (e > 0 && is_space(text[e - 1])) --e;
      for (size_t k = e; k < text.size(); ++k) line_ += text[k] == '\n';
      return text.substr(0, e);
    }
    if (marker != '+' && opts_.lstrip_blocks && !is_var) {
      size_t nl = text.rfind('\n');
      size_t l = nl == std::string::npos ? 0 : nl + 1;
      if ((l > 0 || line_starting_) && l < text.size()) {
        bool ws = true;
        for (size_t k = l; k < text.size(); ++k) ws = ws && is_space(text[k]);
        if (ws) return text.substr(0, l);
      }
    }
    return text;
  }

  bool root() {
    size_t p = pos_;
    while (true) {
      p = s_.find('{', p);
      if (p == std::string::npos || p + 1 >= s_.size()) {
        emit_text(s_.substr(pos_));
        pos_ = s_.size();
        return false;
      }
      char c = s_[p + 1];
      if (c == '{' || c == '%' || c == '#') break;
      ++p;
    }
    char kind = s_[p + 1];
    char marker = p + 2 < s_.size() ? s_[p + 2] : 0;
    if (marker != '-' && marker != '+') marker = 0;
    emit_text(strip_before(s_.substr(pos_, p - pos_), marker, kind == '{'));
    pos_ = p + 2 + (marker ? 1 : 0);
    if (kind == '#') comment();
    else if (kind == '%' && raw_block()) {}
    else tag(kind == '{');
    return true;
  }

  void after_end(bool dash, bool block_like, bool plus) {
    size_t start = pos_;
    if (dash) {
      while (pos_ < s_.size() && is_space(s_[pos_])) ++pos_;
    } else if (block_like && !plus && opts_.trim_blocks && pos_ < s_.size() && s_[pos_] == '\n') {
      ++pos_;
    }
    for (size_t k = start; k < pos_; ++k) line_ += s_[k] == '\n';
    line_starting_ = pos_ > 0 && s_[pos_ - 1] == '\n';
  }

  void comment() {
    size_t e = s_.find("#}", pos_);
    if (e == std::string::npos) fail("unclosed comment");
    bool dash = e > pos_ && s_[e - 1] == '-';
    bool plus = e > pos_ && s_[e - 1] == '+';
    for (size_t k = pos_; k < e; ++k) line_ += s_[k] == '\n';
    pos_ = e + 2;
    after_end(dash, true, plus);
  }

  // Matches `[-+]?\s*word\s*[-+]?%}` at `at`; returns the end position or npos.
  size_t match_tag_word(size_t at, const char* word, bool* dash_end) {
    size_t q = at;
    while (q < s_.size() && is_space(s_[q])) ++q;
    size_t n = strlen(word);
    if (s_.compare(q, n, word) != 0) return std::string::npos;
    q += n;
    while (q < s_.size() && is_space(s_[q])) ++q;
    *dash_end = q < s_.size() && s_[q] == '-';
    if (q < s_.size() && (s_[q] == '-' || s_[q] == '+')) ++q;
    if (s_.compare(q, 2, "%}") != 0) return std::string::npos;
    return q + 2;
  }

  bool raw_block() {
    bool dash = false;
    size_t e = match_tag_word(pos_, "raw", &dash);
    if (e == std::string::npos) return false;
    pos_ = e;
    after_end(dash, true, false);
    for (size_t p = s_.find("{%", pos_); p != std::string::npos; p = s_.find("{%", p + 2)) {
      bool m = p + 2 < s_.size() && (s_[p + 2] == '-' || s_[p + 2] == '+');
      bool dash_end = false;
      size_t end = match_tag_word(p + 2 + m, "endraw", &dash_end);
      if (end == std::string::npos) continue;
      std::string body = s_.substr(pos_, p - pos_);
      emit_text(strip_before(body, m ? s_[p + 2] : 0, false));
      pos_ = end;
      after_end(dash_end, true, false);
      return true;
    }
    fail("missing endraw");
  }

  // Lexes an expression region up to `}}` or `%}`.
  void tag(bool is_var) {
    out_.push_back({is_var ? Tok::VarBegin : Tok::BlockBegin, "", line_});
    const char* close = is_var ? "}}" : "%}";
    while (true) {
      while (pos_ < s_.size() && is_space(s_[pos_])) line_ += s_[pos_++] == '\n';
      if (pos_ >= s_.size()) fail(is_var ? "unclosed '{{'" : "unclosed '{%'");
      char c = s_[pos_];
      if ((c == '-' || c == '+') && s_.compare(pos_ + 1, 2, close) == 0) {
        pos_ += 3;
        out_.push_back({is_var ? Tok::VarEnd : Tok::BlockEnd, "", line_});
        after_end(c == '-', !is_var, c == '+');
        return;
      }
      if (s_.compare(pos_, 2, close) == 0) {
        pos_ += 2;
        out_.push_back({is_var ? Tok::VarEnd : Tok::BlockEnd, "", line_});
        after_end(false, !is_var, false);
        return;
      }
      token();
    }
  }

  void token() {
    char c = s_[pos_];
    if (std::isalpha((unsigned char)c) || c == '_') {
      size_t b = pos_;
      while (pos_ < s_.size() && (std::isalnum((unsigned char)s_[pos_]) || s_[pos_] == '_')) ++pos_;
      out_.push_back({Tok::Name, s_.substr(b, pos_ - b), line_});
    } else if (std::isdigit((unsigned char)c)) {
      number();
    } else if (c == '\'' || c == '"') {
      string_lit(c);
    } else {
      static const char* ops[] = {"//", "**", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "~", "[", "]",
                                  "(", ")", "{", "}", "<", ">", "=", ".", ":", "|", ",", ";"};
      for (const char* op : ops) {
        size_t n = strlen(op);
        if (s_.compare(pos_, n, op) == 0) {
          out_.push_back({Tok::Op, op, line_});
          pos_ += n;
          return;
        }
      }
      fail(std::string("unexpected character '") + c + "'");
    }
  }

  void digits(std::string& out) {
    while (pos_ < s_.size() && (std::isdigit((unsigned char)s_[pos_]) || s_[pos_] == '_')) {
      if (s_[pos_] != '_') out += s_[pos_];
      ++pos_;
    }
  }

  void number() {
    std::string t;
    digits(t);
    bool is_float = false;
    if (pos_ + 1 < s_.size() && s_[pos_] == '.' && std::isdigit((unsigned char)s_[pos_ + 1])) {
      is_float = true;
      t += s_[pos_++];
      digits(t);
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      size_t q = pos_ + 1;
      if (q < s_.size() && (s_[q] == '+' || s_[q] == '-')) ++q;
      if (q < s_.size() && std::isdigit((unsigned char)s_[q])) {
        is_float = true;
        t += s_.substr(pos_, q - pos_);
        pos_ = q;
        digits(t);
      }
    }
    out_.push_back({is_float ? Tok::Float : Tok::Integer, t, line_});
  }

  uint32_t hex(size_t n) {
    if (pos_ + n > s_.size()) fail("truncated escape in string");
    uint32_t v = 0;
    for (size_t k = 0; k < n; ++k) {
      char h = s_[pos_ + k];
      if (!std::isxdigit((unsigned char)h)) fail("bad escape in string");
      v = v * 16 + (std::isdigit((unsigned char)h) ? h - '0' : (std::tolower(h) - 'a' + 10));
    }
    pos_ += n;
    return v;
  }

  void escape(std::string& out) {
    char e = s_[pos_++];
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'v': out += '\v'; break;
      case '0': out += '\0'; break;
      case '\\': case '\'': case '"': out += e; break;
      case '\n': ++line_; break;
      case 'x': append_utf8(out, hex(2)); break;
      case 'u': append_utf8(out, hex(4)); break;
      case 'U': append_utf8(out, hex(8)); break;
      default: out += '\\'; out += e;
    }
  }

  void string_lit(char q) {
    int start = line_;
    ++pos_;
    std::string out;
    while (true) {
      if (pos_ >= s_.size()) {
        line_ = start;
        fail("unterminated string");
      }
      char c = s_[pos_++];
      if (c == q) break;
      if (c == '\\' && pos_ < s_.size()) {
        escape(out);
        continue;
      }
      line_ += c == '\n';
      out += c;
    }
    out_.push_back({Tok::String, std::move(out), start});
  }
};

}  // namespace

std::vector<Token> tokenize(const std::string& source, const LexOptions& opts) {
  return Lexer(source, opts).run();
}

}  // namespace ogx::jinja
