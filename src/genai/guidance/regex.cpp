#include "genai/guidance/regex.h"

#include <algorithm>

#include "common/error.h"

namespace ogx::genai::guidance {

int32_t Nfa::add(State s) {
  OGX_CHECK(states.size() < max_states, "regex automaton exceeds ", max_states,
            " states (a repetition count, enum or pattern too large)");
  states.push_back(s);
  return (int32_t)states.size() - 1;
}

namespace {

using Ranges = std::vector<std::pair<uint32_t, uint32_t>>;  // code point ranges, inclusive
constexpr uint32_t kMaxCp = 0x10FFFF;
constexpr int kInf = -1;
constexpr int kMaxRepeat = 100000;
constexpr size_t kMaxPatternBytes = 1u << 20;

struct Node {
  enum Kind { kEmpty, kClass, kConcat, kAlt, kRepeat } kind = kEmpty;
  Ranges ranges;            // kClass
  std::vector<Node> kids;   // kConcat, kAlt, kRepeat (one)
  int min = 0, max = 0;     // kRepeat; max kInf: unbounded
};

Ranges normalize(Ranges r) {
  std::sort(r.begin(), r.end());
  Ranges out;
  for (auto& [lo, hi] : r) {
    if (!out.empty() && lo <= out.back().second + 1) out.back().second = std::max(out.back().second, hi);
    else out.push_back({lo, hi});
  }
  return out;
}

Ranges negate(const Ranges& in) {
  Ranges r = normalize(in), out;
  uint32_t next = 0;
  for (auto& [lo, hi] : r) {
    if (lo > next) out.push_back({next, lo - 1});
    next = hi + 1;
  }
  if (next <= kMaxCp) out.push_back({next, kMaxCp});
  return out;
}

Ranges case_fold(const Ranges& in) {
  Ranges r = in;
  for (auto& [lo, hi] : in) {
    for (uint32_t c = std::max<uint32_t>(lo, 'A'); c <= std::min<uint32_t>(hi, 'Z'); c++) r.push_back({c + 32, c + 32});
    for (uint32_t c = std::max<uint32_t>(lo, 'a'); c <= std::min<uint32_t>(hi, 'z'); c++) r.push_back({c - 32, c - 32});
  }
  return normalize(r);
}

Node cls(Ranges r) {
  Node n;
  n.kind = Node::kClass;
  n.ranges = normalize(std::move(r));
  return n;
}

const Ranges kDigit = {{'0', '9'}};
const Ranges kWord = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
const Ranges kSpace = {{'\t', '\r'}, {' ', ' '}};

class Parser {
 public:
  Parser(const std::string& p) : src_(p) {}

  Node parse() {
    if (peek_is('^')) pos_++;
    Node n = alternation();
    OGX_CHECK(pos_ >= src_.size(), err("unbalanced ')'"));
    return n;
  }

 private:
  std::string err(const std::string& what) const {
    return "regex /" + src_ + "/: " + what + " at offset " + std::to_string(pos_);
  }
  bool peek_is(char c) const { return pos_ < src_.size() && src_[pos_] == c; }
  uint32_t next_cp() {  // one UTF-8 code point of the pattern
    OGX_CHECK(pos_ < src_.size(), err("unexpected end"));
    unsigned char c = (unsigned char)src_[pos_++];
    if (c < 0x80) return c;
    int n = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : -1;
    OGX_CHECK(n > 0, err("invalid UTF-8 in the pattern"));
    uint32_t cp = c & (0x3F >> n);
    for (int i = 0; i < n; i++) {
      OGX_CHECK(pos_ < src_.size() && ((unsigned char)src_[pos_] & 0xC0) == 0x80, err("invalid UTF-8 in the pattern"));
      cp = (cp << 6) | ((unsigned char)src_[pos_++] & 0x3F);
    }
    return cp;
  }

  Node alternation() {
    OGX_CHECK(++depth_ < 500, err("groups nested too deeply"));
    std::vector<Node> alts;
    alts.push_back(concat());
    while (peek_is('|')) {
      pos_++;
      alts.push_back(concat());
    }
    depth_--;
    if (alts.size() == 1) return std::move(alts[0]);
    Node n;
    n.kind = Node::kAlt;
    n.kids = std::move(alts);
    return n;
  }

  Node concat() {
    Node n;
    n.kind = Node::kConcat;
    while (pos_ < src_.size() && src_[pos_] != '|' && src_[pos_] != ')') {
      if (src_[pos_] == '$' && (pos_ + 1 == src_.size() || src_[pos_ + 1] == ')' || src_[pos_ + 1] == '|')) {
        pos_++;  // end anchor: matching is whole
        continue;
      }
      Node a = atom();
      a = quantified(std::move(a));
      n.kids.push_back(std::move(a));
    }
    return n;
  }

  bool read_int(int& v) {
    size_t start = pos_;
    long long x = 0;
    while (pos_ < src_.size() && src_[pos_] >= '0' && src_[pos_] <= '9') {
      x = x * 10 + (src_[pos_++] - '0');
      OGX_CHECK(x <= kMaxRepeat, err("repetition count above " + std::to_string(kMaxRepeat)));
    }
    v = (int)x;
    return pos_ > start;
  }

  Node quantified(Node a) {
    while (pos_ < src_.size()) {
      char c = src_[pos_];
      int mn, mx;
      if (c == '*') mn = 0, mx = kInf, pos_++;
      else if (c == '+') mn = 1, mx = kInf, pos_++;
      else if (c == '?') mn = 0, mx = 1, pos_++;
      else if (c == '{') {
        size_t save = pos_++;
        if (!read_int(mn)) {  // a literal '{'
          pos_ = save;
          return a;
        }
        mx = mn;
        if (peek_is(',')) {
          pos_++;
          if (!read_int(mx)) mx = kInf;
        }
        OGX_CHECK(peek_is('}'), err("'{' repetition without '}'"));
        pos_++;
        OGX_CHECK(mx == kInf || mx >= mn, err("repetition {n,m} with m < n"));
      } else {
        return a;
      }
      if (peek_is('?') || peek_is('+')) pos_++;  // lazy / possessive: the same language
      Node r;
      r.kind = Node::kRepeat;
      r.min = mn;
      r.max = mx;
      r.kids.push_back(std::move(a));
      a = std::move(r);
    }
    return a;
  }

  Node literal(uint32_t cp) {
    Ranges r = {{cp, cp}};
    return cls(icase_ ? case_fold(r) : r);
  }

  Node atom() {
    char c = src_[pos_];
    if (c == '(') return group();
    if (c == '[') return cls(klass());
    if (c == '.') {
      pos_++;
      return cls(dotall_ ? Ranges{{0, kMaxCp}} : Ranges{{0, 9}, {11, kMaxCp}});
    }
    if (c == '\\') {
      Ranges r;
      escape(r, false);
      return cls(icase_ ? case_fold(r) : r);
    }
    OGX_CHECK(c != '*' && c != '+' && c != '?', err("quantifier without an operand"));
    OGX_CHECK(c != '^', err("'^' is supported only at the start"));
    OGX_CHECK(c != '$', err("'$' is supported only at the end"));
    return literal(next_cp());
  }

  Node group() {
    pos_++;  // (
    bool save_i = icase_, save_s = dotall_;
    if (peek_is('?')) {
      pos_++;
      if (peek_is(':')) {
        pos_++;
      } else if (peek_is('P') || peek_is('<')) {
        if (peek_is('P')) pos_++;
        OGX_CHECK(peek_is('<'), err("unsupported group syntax"));
        OGX_CHECK(pos_ + 1 < src_.size() && src_[pos_ + 1] != '=' && src_[pos_ + 1] != '!',
                  err("lookbehind is not supported"));
        while (pos_ < src_.size() && src_[pos_] != '>') pos_++;
        OGX_CHECK(peek_is('>'), err("unterminated group name"));
        pos_++;
      } else {
        OGX_CHECK(!peek_is('=') && !peek_is('!'), err("lookahead is not supported"));
        bool on = true, any = false;  // flags: (?i) (?s) (?-i) (?i: ...)
        while (pos_ < src_.size() && src_[pos_] != ')' && src_[pos_] != ':') {
          char f = src_[pos_++];
          if (f == '-') on = false;
          else if (f == 'i') icase_ = on;
          else if (f == 's') dotall_ = on;
          else if (f == 'm' || f == 'x' || f == 'u' || f == 'U') OGX_CHECK(f != 'x', err("flag 'x' is not supported"));
          else throw_error(err(std::string("unknown group flag '") + f + "'"));
          any = true;
        }
        OGX_CHECK(any && pos_ < src_.size(), err("unsupported group syntax"));
        if (src_[pos_++] == ')') {  // (?i): applies to the rest of the enclosing group
          Node e;
          return e;
        }
      }
    }
    Node n = alternation();
    OGX_CHECK(peek_is(')'), err("missing ')'"));
    pos_++;
    icase_ = save_i;
    dotall_ = save_s;
    return n;
  }

  uint32_t hex(int digits, bool braced) {
    uint32_t v = 0;
    int n = 0;
    while (pos_ < src_.size() && (braced ? src_[pos_] != '}' : n < digits)) {
      char h = src_[pos_];
      int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
      OGX_CHECK(d >= 0, err("invalid hex escape"));
      v = v * 16 + d;
      pos_++;
      OGX_CHECK(++n <= 8 && v <= kMaxCp, err("hex escape out of range"));
    }
    OGX_CHECK(n > 0 && (braced || n == digits), err("invalid hex escape"));
    if (braced) pos_++;
    return v;
  }

  // After '\': appends the escape's code points to r.
  void escape(Ranges& r, bool in_class) {
    pos_++;
    OGX_CHECK(pos_ < src_.size(), err("trailing '\\'"));
    char c = src_[pos_++];
    switch (c) {
      case 'd': r.insert(r.end(), kDigit.begin(), kDigit.end()); return;
      case 'w': r.insert(r.end(), kWord.begin(), kWord.end()); return;
      case 's': r.insert(r.end(), kSpace.begin(), kSpace.end()); return;
      case 'D': { auto n = negate(kDigit); r.insert(r.end(), n.begin(), n.end()); return; }
      case 'W': { auto n = negate(kWord); r.insert(r.end(), n.begin(), n.end()); return; }
      case 'S': { auto n = negate(kSpace); r.insert(r.end(), n.begin(), n.end()); return; }
      case 'n': r.push_back({'\n', '\n'}); return;
      case 'r': r.push_back({'\r', '\r'}); return;
      case 't': r.push_back({'\t', '\t'}); return;
      case 'f': r.push_back({'\f', '\f'}); return;
      case 'v': r.push_back({'\v', '\v'}); return;
      case '0': r.push_back({0, 0}); return;
      case 'x': {
        uint32_t v = peek_is('{') ? (pos_++, hex(8, true)) : hex(2, false);
        r.push_back({v, v});
        return;
      }
      case 'u': {
        uint32_t v = peek_is('{') ? (pos_++, hex(8, true)) : hex(4, false);
        r.push_back({v, v});
        return;
      }
      case 'b': case 'B': case 'A': case 'z': case 'Z':
        throw_error(err(std::string("assertion \\") + c + " is not supported"));
      case 'p': case 'P':
        throw_error(err("Unicode classes \\p{..} are not supported"));
      default:
        OGX_CHECK(!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '1' && c <= '9')),
                  err(std::string("unknown escape \\") + c + (in_class ? " in a class" : "")));
        pos_--;
        uint32_t cp = next_cp();
        r.push_back({cp, cp});
    }
  }

  uint32_t class_char(Ranges& multi) {  // one class member; a multi-char escape (\d) goes to multi, returns ~0
    if (peek_is('\\')) {
      Ranges r;
      escape(r, true);
      if (r.size() == 1 && r[0].first == r[0].second) return r[0].first;
      multi.insert(multi.end(), r.begin(), r.end());
      return ~0u;
    }
    return next_cp();
  }

  Ranges klass() {
    pos_++;  // [
    bool neg = false;
    if (peek_is('^')) neg = true, pos_++;
    Ranges r;
    bool first = true;
    while (true) {
      OGX_CHECK(pos_ < src_.size(), err("unterminated character class"));
      if (src_[pos_] == ']' && !first) break;
      first = false;
      if (src_[pos_] == '[') {
        OGX_CHECK(src_.compare(pos_, 2, "[:") != 0, err("POSIX classes [:name:] are not supported"));
        Ranges inner = klass();  // a nested class: union
        r.insert(r.end(), inner.begin(), inner.end());
        continue;
      }
      OGX_CHECK(src_.compare(pos_, 2, "&&") != 0 && src_.compare(pos_, 2, "--") != 0 &&
                    src_.compare(pos_, 2, "~~") != 0,
                err("class set operations are not supported"));
      uint32_t lo = class_char(r);
      if (lo != ~0u && peek_is('-') && pos_ + 1 < src_.size() && src_[pos_ + 1] != ']') {
        pos_++;
        uint32_t hi = class_char(r);
        OGX_CHECK(hi != ~0u && hi >= lo, err("invalid class range"));
        r.push_back({lo, hi});
      } else if (lo != ~0u) {
        r.push_back({lo, lo});
      }
    }
    pos_++;  // ]
    if (icase_) r = case_fold(r);
    return neg ? negate(r) : normalize(r);
  }

  const std::string& src_;
  size_t pos_ = 0;
  int depth_ = 0;
  bool icase_ = false, dotall_ = false;
};

// UTF-8 byte-range sequences of code points lo..hi (one encoded length; the utf8-ranges split).
void utf8_sequences(uint32_t lo, uint32_t hi, std::vector<std::vector<std::pair<uint8_t, uint8_t>>>& out) {
  if (lo > hi) return;
  if (lo <= 0xDFFF && hi >= 0xD800) {  // surrogates are not code points of UTF-8
    if (lo < 0xD800) utf8_sequences(lo, 0xD7FF, out);
    if (hi > 0xDFFF) utf8_sequences(0xE000, hi, out);
    return;
  }
  static const uint32_t kMaxOfLen[] = {0x7F, 0x7FF, 0xFFFF, 0x10FFFF};
  for (int n = 0; n < 3; n++)
    if (lo <= kMaxOfLen[n] && hi > kMaxOfLen[n]) {
      utf8_sequences(lo, kMaxOfLen[n], out);
      utf8_sequences(kMaxOfLen[n] + 1, hi, out);
      return;
    }
  if (hi <= 0x7F) {
    out.push_back({{(uint8_t)lo, (uint8_t)hi}});
    return;
  }
  int len = hi <= 0x7FF ? 2 : hi <= 0xFFFF ? 3 : 4;
  for (int i = 1; i < len; i++) {
    uint32_t m = (1u << (6 * i)) - 1;
    if ((lo & ~m) != (hi & ~m)) {
      if ((lo & m) != 0) {
        utf8_sequences(lo, lo | m, out);
        utf8_sequences((lo | m) + 1, hi, out);
        return;
      }
      if ((hi & m) != m) {
        utf8_sequences(lo, (hi & ~m) - 1, out);
        utf8_sequences(hi & ~m, hi, out);
        return;
      }
    }
  }
  auto enc = [&](uint32_t c, uint8_t* b) {
    if (len == 2) b[0] = 0xC0 | (c >> 6), b[1] = 0x80 | (c & 0x3F);
    else if (len == 3) b[0] = 0xE0 | (c >> 12), b[1] = 0x80 | ((c >> 6) & 0x3F), b[2] = 0x80 | (c & 0x3F);
    else b[0] = 0xF0 | (c >> 18), b[1] = 0x80 | ((c >> 12) & 0x3F), b[2] = 0x80 | ((c >> 6) & 0x3F), b[3] = 0x80 | (c & 0x3F);
  };
  uint8_t a[4], b[4];
  enc(lo, a);
  enc(hi, b);
  std::vector<std::pair<uint8_t, uint8_t>> seq;
  for (int i = 0; i < len; i++) seq.push_back({a[i], b[i]});
  out.push_back(seq);
}

class Compiler {
 public:
  Compiler(Nfa& nfa, const RegexOptions& o) : nfa_(nfa), opts_(o) {}

  int32_t split(int32_t a, int32_t b) { return nfa_.add({Nfa::kSplit, 0, 0, a, b, -1}); }

  int32_t bytes(const std::string& s, int32_t next) {
    for (size_t i = s.size(); i-- > 0;) next = nfa_.add({Nfa::kRange, (uint8_t)s[i], (uint8_t)s[i], next, -1, -1});
    return next;
  }

  int32_t klass(const Ranges& in, int32_t next) {
    Ranges r = in;
    std::vector<std::string> escapes;  // json_string: the JSON text of `"`, `\` and control characters
    if (opts_.json_string) {
      Ranges special = {{0, 0x1F}, {'"', '"'}, {'\\', '\\'}};
      Ranges kept;
      for (auto& [lo, hi] : r)
        for (auto& [slo, shi] : special)
          for (uint32_t c = std::max(lo, slo); c <= std::min(hi, shi); c++) {
            static const char* kShort[] = {"\\b", "\\t", "\\n", nullptr, "\\f", "\\r"};
            if (c == '"') escapes.push_back("\\\"");
            else if (c == '\\') escapes.push_back("\\\\");
            else if (c >= 8 && c <= 13 && kShort[c - 8]) escapes.push_back(kShort[c - 8]);
            else {
              char buf[8];
              snprintf(buf, sizeof buf, "\\u%04x", c);
              escapes.push_back(buf);
            }
          }
      r = normalize(r);
      Ranges minus = negate(special);  // r ∩ not special
      for (auto& [lo, hi] : r)
        for (auto& [mlo, mhi] : minus)
          if (std::max(lo, mlo) <= std::min(hi, mhi)) kept.push_back({std::max(lo, mlo), std::min(hi, mhi)});
      r = kept;
    }
    std::vector<std::vector<std::pair<uint8_t, uint8_t>>> seqs;
    for (auto& [lo, hi] : r) utf8_sequences(lo, hi, seqs);
    std::vector<int32_t> starts;
    for (auto& seq : seqs) {
      int32_t s = next;
      for (size_t i = seq.size(); i-- > 0;) s = nfa_.add({Nfa::kRange, seq[i].first, seq[i].second, s, -1, -1});
      starts.push_back(s);
    }
    for (auto& e : escapes) starts.push_back(bytes(e, next));
    if (starts.empty()) return nfa_.add({Nfa::kRange, 1, 0, -1, -1, -1});  // empty class: matches nothing
    int32_t s = starts.back();
    for (size_t i = starts.size() - 1; i-- > 0;) s = split(starts[i], s);
    return s;
  }

  int32_t compile(const Node& n, int32_t next) {
    // Empty sub-patterns add no states, so nested bounded repeats of them ((){0,9}){0,9}... would run forever
    // under the state budget alone: count the visits too.
    OGX_CHECK(++visits_ <= 4 * nfa_.max_states, "regex automaton: pattern too deeply repeated (more than ",
              4 * nfa_.max_states, " compile steps)");
    switch (n.kind) {
      case Node::kEmpty: return next;
      case Node::kClass: return klass(n.ranges, next);
      case Node::kConcat:
        for (size_t i = n.kids.size(); i-- > 0;) next = compile(n.kids[i], next);
        return next;
      case Node::kAlt: {
        int32_t s = compile(n.kids.back(), next);
        for (size_t i = n.kids.size() - 1; i-- > 0;) s = split(compile(n.kids[i], next), s);
        return s;
      }
      case Node::kRepeat: {
        const Node& k = n.kids[0];
        int32_t tail = next;
        int min = n.min;
        if (n.max == kInf) {
          int32_t loop = split(-1, next);
          int32_t body = compile(k, loop);
          nfa_.states[loop].out = body;
          tail = loop;
          if (min > 0) tail = body, min--;  // x+ is one copy of x looping back (nested (x+)+ stays linear)
        } else {
          for (int i = 0; i < n.max - n.min; i++) {  // nested optionals, each may skip to `next`
            int32_t body = compile(k, tail);
            tail = split(body, next);
          }
        }
        for (int i = 0; i < min; i++) tail = compile(k, tail);
        return tail;
      }
    }
    return next;
  }

 private:
  Nfa& nfa_;
  const RegexOptions& opts_;
  size_t visits_ = 0;
};

}  // namespace

int32_t compile_regex(Nfa& nfa, const std::string& pattern, int32_t lexeme, const RegexOptions& opts) {
  OGX_CHECK(pattern.size() <= kMaxPatternBytes, "regex of ", pattern.size(), " bytes exceeds the limit of ",
            kMaxPatternBytes, " (a huge enum or pattern)");
  Parser p(pattern);
  Node ast = p.parse();
  Compiler c(nfa, opts);
  int32_t match = nfa.add({Nfa::kMatch, 0, 0, -1, -1, lexeme});
  try {
    if (opts.json_string) return c.bytes("\"", c.compile(ast, c.bytes("\"", match)));
    return c.compile(ast, match);
  } catch (const Error& e) {
    throw_error("regex /", pattern.size() > 200 ? pattern.substr(0, 200) + "..." : pattern, "/: ", e.what());
  }
}

std::string regex_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (std::string_view("\\.+*?()|[]{}^$#&-~").find(c) != std::string_view::npos) out += '\\';
    if ((unsigned char)c < 0x20) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\x%02x", (unsigned char)c);
      out += buf;
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace ogx::genai::guidance
