#include "genai/guidance/lark.h"

#include <map>
#include <set>

#include "common/error.h"
#include "genai/guidance/json_schema.h"

namespace ogx::genai::guidance {

namespace {

constexpr int kMaxRepeat = 10000;
constexpr int kMaxNesting = 200;

struct Tok {
  enum Kind { kName, kTerm, kString, kRegex, kOp, kNumber, kDirective, kNewline, kJson, kEnd } kind;
  std::string text;   // name / string value / regex body / op / directive / JSON text
  std::string flags;  // string `i`, regex flags
  int line = 0;
};

bool is_term_name(const std::string& n) {
  for (char c : n)
    if (c != '_') return c >= 'A' && c <= 'Z';
  return false;
}

std::vector<Tok> tokenize(const std::string& s) {
  std::vector<Tok> out;
  int line = 1;
  size_t i = 0;
  auto fail = [&](const std::string& what) { throw_error("lark_grammar line ", line, ": ", what); };
  while (i < s.size()) {
    char c = s[i];
    if (c == '\n') {
      out.push_back({Tok::kNewline, "", "", line++});
      i++;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      i++;
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      while (i < s.size() && s[i] != '\n') i++;
    } else if (c == '#') {
      while (i < s.size() && s[i] != '\n') i++;
    } else if (c == '"') {
      std::string v;
      i++;
      while (true) {
        if (i >= s.size() || s[i] == '\n') fail("unterminated string");
        if (s[i] == '"') break;
        if (s[i] == '\\' && i + 1 < s.size()) {
          char e = s[i + 1];
          i += 2;
          if (e == 'n') v += '\n';
          else if (e == 't') v += '\t';
          else if (e == 'r') v += '\r';
          else if (e == '\\' || e == '"') v += e;
          else if (e == 'x' || e == 'u') {
            size_t n = e == 'x' ? 2 : 4;
            if (i + n > s.size()) fail("invalid escape in string");
            uint32_t cp = 0;
            for (size_t k = 0; k < n; k++) {
              const char h = s[i + k];
              if (!std::isxdigit((unsigned char)h)) fail("invalid \\" + std::string(1, e) + " escape in string");
              cp = cp * 16 + (uint32_t)(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
            }
            i += n;
            if (cp < 0x80) v += (char)cp;
            else if (cp < 0x800) v += (char)(0xC0 | (cp >> 6)), v += (char)(0x80 | (cp & 0x3F));
            else v += (char)(0xE0 | (cp >> 12)), v += (char)(0x80 | ((cp >> 6) & 0x3F)), v += (char)(0x80 | (cp & 0x3F));
          } else {
            v += '\\', v += e;
          }
          continue;
        }
        v += s[i++];
      }
      i++;
      std::string flags;
      if (i < s.size() && s[i] == 'i') flags = "i", i++;
      out.push_back({Tok::kString, v, flags, line});
    } else if (c == '/') {
      std::string v;
      i++;
      while (true) {
        if (i >= s.size() || s[i] == '\n') fail("unterminated regex");
        if (s[i] == '/') break;
        if (s[i] == '\\' && i + 1 < s.size()) {
          if (s[i + 1] == '/') v += '/';
          else v += s[i], v += s[i + 1];
          i += 2;
          continue;
        }
        v += s[i++];
      }
      i++;
      std::string flags;
      while (i < s.size() && std::isalpha((unsigned char)s[i])) flags += s[i++];
      for (char f : flags)
        if (f != 'i' && f != 's' && f != 'm' && f != 'x') fail(std::string("unknown regex flag '") + f + "'");
      out.push_back({Tok::kRegex, v, flags, line});
    } else if (std::isalpha((unsigned char)c) || c == '_' || ((c == '?' || c == '!') && i + 1 < s.size() &&
                                                              (std::isalpha((unsigned char)s[i + 1]) || s[i + 1] == '_') &&
                                                              (out.empty() || out.back().kind == Tok::kNewline))) {
      if (c == '?' || c == '!') i++;  // rule modifiers (inline / keep tokens): no effect on the language
      size_t j = i;
      while (j < s.size() && (std::isalnum((unsigned char)s[j]) || s[j] == '_')) j++;
      std::string n = s.substr(i, j - i);
      out.push_back({is_term_name(n) ? Tok::kTerm : Tok::kName, n, "", line});
      i = j;
    } else if (std::isdigit((unsigned char)c)) {
      size_t j = i;
      while (j < s.size() && std::isdigit((unsigned char)s[j])) j++;
      out.push_back({Tok::kNumber, s.substr(i, j - i), "", line});
      i = j;
    } else if (c == '%') {
      size_t j = i + 1;
      while (j < s.size() && std::isalpha((unsigned char)s[j])) j++;
      std::string d = s.substr(i, j - i);
      i = j;
      if (d == "%json" || d == "%llguidance") {  // a JSON object follows: balanced braces, strings skipped
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) i++;
        if (i >= s.size() || s[i] != '{') fail(d + " needs a JSON object");
        size_t start = i;
        int depth = 0;
        bool in_str = false;
        for (; i < s.size(); i++) {
          char x = s[i];
          if (x == '\n') line++;
          if (in_str) {
            if (x == '\\') i++;
            else if (x == '"') in_str = false;
          } else if (x == '"') in_str = true;
          else if (x == '{') depth++;
          else if (x == '}' && --depth == 0) break;
        }
        if (i >= s.size()) fail(d + ": unbalanced braces");
        i++;
        out.push_back({Tok::kJson, s.substr(start, i - start), d, line});
      } else {
        out.push_back({Tok::kDirective, d, "", line});
      }
    } else if (c == '-' && i + 1 < s.size() && s[i + 1] == '>') {
      out.push_back({Tok::kOp, "->", "", line});
      i += 2;
    } else if (c == '.' && i + 1 < s.size() && s[i + 1] == '.') {
      out.push_back({Tok::kOp, "..", "", line});
      i += 2;
    } else if (std::string_view(":|()[]?*+~.,").find(c) != std::string_view::npos) {
      out.push_back({Tok::kOp, std::string(1, c), "", line});
      i++;
    } else if (c == '<') {
      fail("special tokens (<|...|>) are not supported");
    } else {
      fail(std::string("unexpected character '") + c + "'");
    }
  }
  out.push_back({Tok::kEnd, "", "", line});
  return out;
}

struct Node {
  enum Kind { kSeq, kAlt, kRepeat, kString, kRegex, kRef, kJson, kRange } kind = kSeq;
  std::vector<Node> kids;
  std::string text, text2, flags;  // string / regex / name / JSON; range end
  int min = 0, max = 0;            // kRepeat; max -1 unbounded
  int line = 0;
};

const std::map<std::string, std::string>& common_terminals() {
  static const std::map<std::string, std::string> m = {
      {"DIGIT", "[0-9]"}, {"HEXDIGIT", "[a-fA-F0-9]"}, {"INT", "[0-9]+"}, {"SIGNED_INT", "[+-]?[0-9]+"},
      {"DECIMAL", "[0-9]+\\.[0-9]*|\\.[0-9]+"},
      {"FLOAT", "[0-9]+[eE][+-]?[0-9]+|(?:[0-9]+\\.[0-9]*|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?"},
      {"SIGNED_FLOAT", "[+-]?(?:[0-9]+[eE][+-]?[0-9]+|(?:[0-9]+\\.[0-9]*|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"},
      {"NUMBER", "[0-9]+[eE][+-]?[0-9]+|(?:[0-9]+\\.[0-9]*|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[0-9]+"},
      {"SIGNED_NUMBER", "[+-]?(?:[0-9]+[eE][+-]?[0-9]+|(?:[0-9]+\\.[0-9]*|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[0-9]+)"},
      {"ESCAPED_STRING", "\"(?:[^\"\\\\\\n]|\\\\.)*\""}, {"LCASE_LETTER", "[a-z]"}, {"UCASE_LETTER", "[A-Z]"},
      {"LETTER", "[a-zA-Z]"}, {"WORD", "[a-zA-Z]+"}, {"CNAME", "[_a-zA-Z][_a-zA-Z0-9]*"}, {"WS_INLINE", "[ \\t]+"},
      {"WS", "[ \\t\\f\\r\\n]+"}, {"CR", "\\r"}, {"LF", "\\n"}, {"NEWLINE", "(?:\\r?\\n)+"},
      {"SH_COMMENT", "#[^\\n]*"}, {"CPP_COMMENT", "//[^\\n]*"}};
  return m;
}

class Compiler {
 public:
  Compiler(GrammarBuilder& b, const std::string& text) : b_(b), toks_(tokenize(text)) {}

  int32_t run() {
    while (peek().kind != Tok::kEnd) statement();
    OGX_CHECK(rules_.count("start"), "lark_grammar: no 'start' rule");
    for (auto& [name, def] : rules_) rule_nt_[name] = b_.nonterminal(name);
    for (auto& [name, def] : rules_) {  // bodies after every rule has its symbol: no recursion through references
      const int32_t nt = rule_nt_[name];
      if (def.kind == Node::kAlt)
        for (auto& k : def.kids) b_.rule(nt, sequence(k, 0));
      else
        b_.rule(nt, sequence(def, 0));
    }
    for (auto& n : ignores_) b_.set_ignore(terminal_regex(n, 0));
    return rule_nt_.at("start");
  }

 private:
  const Tok& peek() const { return toks_[pos_]; }
  const Tok& take() { return toks_[pos_ < toks_.size() - 1 ? pos_++ : pos_]; }
  bool is_op(const char* op) const { return peek().kind == Tok::kOp && peek().text == op; }
  [[noreturn]] void fail(const std::string& what) const {
    throw_error("lark_grammar line ", peek().line, ": ", what);
  }
  void skip_newlines() {
    while (peek().kind == Tok::kNewline) pos_++;
  }
  void expect_end_of_statement() {
    OGX_CHECK(peek().kind == Tok::kNewline || peek().kind == Tok::kEnd, "lark_grammar line ", peek().line,
              ": unexpected '", peek().text, "'");
  }

  void statement() {
    skip_newlines();
    const Tok& t = peek();
    if (t.kind == Tok::kEnd) return;
    if (t.kind == Tok::kDirective) return directive();
    if (t.kind == Tok::kJson && t.flags == "%llguidance") {
      take();
      return;
    }
    OGX_CHECK(t.kind == Tok::kName || t.kind == Tok::kTerm, "lark_grammar line ", t.line,
              ": expected a rule or terminal definition, got '", t.text, "'");
    Tok name = take();
    if (is_op(".")) {  // priority
      take();
      if (is_op("-")) take();
      OGX_CHECK(peek().kind == Tok::kNumber, "lark_grammar line ", name.line, ": priority must be a number");
      take();
    }
    OGX_CHECK(is_op(":"), "lark_grammar line ", name.line, ": expected ':' after '", name.text, "'");
    take();
    Node def = expansions(0);
    expect_end_of_statement();
    auto& table = name.kind == Tok::kTerm ? terms_ : rules_;
    OGX_CHECK(!table.count(name.text), "lark_grammar line ", name.line, ": '", name.text, "' is defined twice");
    def.line = name.line;
    table[name.text] = def;
  }

  void directive() {
    Tok d = take();
    if (d.text == "%ignore") {
      Node n = expansions(0);
      std::string name = "__ignore" + std::to_string(ignores_.size());
      terms_[name] = n;
      ignores_.push_back(name);
    } else if (d.text == "%import") {
      OGX_CHECK(peek().kind == Tok::kName && peek().text == "common", "lark_grammar line ", d.line,
                ": only %import common.NAME is supported");
      take();
      auto import_one = [&](const std::string& n, const std::string& alias) {
        auto it = common_terminals().find(n);
        OGX_CHECK(it != common_terminals().end(), "lark_grammar line ", d.line, ": common.", n, " is not supported");
        Node r;
    r.kind = Node::kRegex;
        r.text = it->second;
        terms_[alias] = r;
      };
      if (is_op(".")) {
        take();
        std::string n = take().text, alias = n;
        if (is_op("->")) take(), alias = take().text;
        import_one(n, alias);
      } else {
        OGX_CHECK(is_op("("), "lark_grammar line ", d.line, ": expected '.' or '(' after %import common");
        take();
        while (!is_op(")")) {
          OGX_CHECK(peek().kind == Tok::kTerm, "lark_grammar line ", d.line, ": expected a terminal name");
          std::string n = take().text;
          import_one(n, n);
          if (is_op(",")) take();
        }
        take();
      }
    } else {
      throw_error("lark_grammar line ", d.line, ": directive ", d.text, " is not supported");
    }
    expect_end_of_statement();
  }

  Node expansions(int depth) {
    OGX_CHECK(depth < kMaxNesting, "lark_grammar line ", peek().line, ": nested too deeply");
    Node alt;
    alt.kind = Node::kAlt;
    alt.kids.push_back(alias(depth));
    while (true) {
      size_t save = pos_;
      skip_newlines();
      if (is_op("|")) {
        take();
        alt.kids.push_back(alias(depth));
      } else {
        pos_ = save;
        break;
      }
    }
    return alt.kids.size() == 1 ? alt.kids[0] : alt;
  }

  Node alias(int depth) {
    Node seq;
    seq.kind = Node::kSeq;
    while (true) {
      const Tok& t = peek();
      if (t.kind == Tok::kNewline || t.kind == Tok::kEnd || (t.kind == Tok::kOp && (t.text == "|" || t.text == ")" ||
                                                                                  t.text == "]" || t.text == "->")))
        break;
      seq.kids.push_back(item(depth));
    }
    if (is_op("->")) {
      take();
      take();  // the alias name
    }
    return seq.kids.size() == 1 ? seq.kids[0] : seq;
  }

  Node item(int depth) {
    Node a = atom(depth);
    while (true) {
      if (is_op("?") || is_op("*") || is_op("+")) {
        std::string op = take().text;
        Node r;
    r.kind = Node::kRepeat;
        r.min = op == "+" ? 1 : 0;
        r.max = op == "?" ? 1 : -1;
        r.kids.push_back(a);
        a = r;
      } else if (is_op("~")) {
        take();
        OGX_CHECK(peek().kind == Tok::kNumber, "lark_grammar line ", peek().line, ": expected a count after '~'");
        Node r;
    r.kind = Node::kRepeat;
        r.min = r.max = count(take().text);
        if (is_op("..")) {
          take();
          OGX_CHECK(peek().kind == Tok::kNumber, "lark_grammar line ", peek().line, ": expected a count after '..'");
          r.max = count(take().text);
          OGX_CHECK(r.max >= r.min, "lark_grammar line ", peek().line, ": ~ n..m with m < n");
        }
        r.kids.push_back(a);
        a = r;
      } else {
        return a;
      }
    }
  }

  int count(const std::string& s) {
    OGX_CHECK(s.size() <= 6 && std::stoi(s) <= kMaxRepeat, "lark_grammar line ", peek().line, ": repetition count ", s,
              " above ", kMaxRepeat);
    return std::stoi(s);
  }

  Node atom(int depth) {
    Tok t = take();
    Node n;
    n.kind = Node::kSeq;
    n.line = t.line;
    if (t.kind == Tok::kOp && (t.text == "(" || t.text == "[")) {
      n = expansions(depth + 1);
      OGX_CHECK(is_op(t.text == "(" ? ")" : "]"), "lark_grammar line ", t.line, ": missing '",
                t.text == "(" ? ")" : "]", "'");
      take();
      if (t.text == "[") {
        Node r;
    r.kind = Node::kRepeat;
        r.min = 0;
        r.max = 1;
        r.kids.push_back(n);
        return r;
      }
      return n;
    }
    if (t.kind == Tok::kString) {
      if (is_op("..")) {
        take();
        OGX_CHECK(peek().kind == Tok::kString, "lark_grammar line ", t.line, ": expected a string after '..'");
        n.kind = Node::kRange;
        n.text = t.text;
        n.text2 = take().text;
        return n;
      }
      n.kind = Node::kString;
      n.text = t.text;
      n.flags = t.flags;
      return n;
    }
    if (t.kind == Tok::kRegex) {
      n.kind = Node::kRegex;
      n.text = t.text;
      n.flags = t.flags;
      return n;
    }
    if (t.kind == Tok::kName || t.kind == Tok::kTerm) {
      n.kind = Node::kRef;
      n.text = t.text;
      return n;
    }
    if (t.kind == Tok::kJson && t.flags == "%json") {
      n.kind = Node::kJson;
      n.text = t.text;
      return n;
    }
    throw_error("lark_grammar line ", t.line, ": unexpected '", t.text.empty() ? "end of line" : t.text, "'");
  }

  // Terminal expressions as regex text.
  std::string regex_of(const Node& n, int depth) {
    OGX_CHECK(depth < kMaxNesting, "lark_grammar: terminals nested too deeply (a cycle?)");
    switch (n.kind) {
      case Node::kString: return n.flags == "i" ? "(?i:" + regex_escape(n.text) + ")" : "(?:" + regex_escape(n.text) + ")";
      case Node::kRegex: {
        std::string f;
        for (char c : n.flags)
          if (c == 'i' || c == 's') f += c;
        return "(?" + f + ":" + n.text + ")";
      }
      case Node::kRange: {
        OGX_CHECK(!n.text.empty() && !n.text2.empty(), "lark_grammar line ", n.line, ": empty range bound");
        return "[" + regex_escape(n.text) + "-" + regex_escape(n.text2) + "]";
      }
      case Node::kRef: return "(?:" + terminal_regex(n.text, depth + 1) + ")";
      case Node::kSeq: {
        std::string s = "(?:";
        for (auto& k : n.kids) s += regex_of(k, depth + 1);
        return s + ")";
      }
      case Node::kAlt: {
        std::string s = "(?:";
        for (size_t i = 0; i < n.kids.size(); i++) s += (i ? "|" : "") + regex_of(n.kids[i], depth + 1);
        return s + ")";
      }
      case Node::kRepeat: {
        std::string k = "(?:" + regex_of(n.kids[0], depth + 1) + ")";
        if (n.min == 0 && n.max == 1) return k + "?";
        if (n.max < 0) return k + (n.min == 0 ? "*" : n.min == 1 ? "+" : "{" + std::to_string(n.min) + ",}");
        return k + "{" + std::to_string(n.min) + "," + std::to_string(n.max) + "}";
      }
      case Node::kJson: throw_error("lark_grammar line ", n.line, ": %json inside a terminal");
    }
    return "";
  }

  std::string terminal_regex(const std::string& name, int depth) {
    auto it = terms_.find(name);
    if (it == terms_.end()) {
      OGX_CHECK(!rules_.count(name), "lark_grammar: terminal expression refers to rule '", name, "'");
      throw_error("lark_grammar: terminal '", name, "' is not defined");
    }
    OGX_CHECK(!expanding_.count(name), "lark_grammar: terminal '", name, "' refers to itself");
    expanding_.insert(name);
    std::string r = regex_of(it->second, depth);
    expanding_.erase(name);
    return r;
  }

  int32_t rule_symbol(const std::string& name, int line) {
    auto it = rule_nt_.find(name);
    OGX_CHECK(it != rule_nt_.end(), "lark_grammar line ", line, ": rule '", name, "' is not defined");
    return it->second;
  }

  std::vector<int32_t> sequence(const Node& n, int depth) {
    if (n.kind == Node::kSeq) {
      std::vector<int32_t> out;
      for (auto& k : n.kids) out.push_back(symbol(k, depth + 1));
      return out;
    }
    return {symbol(n, depth + 1)};
  }

  int32_t symbol(const Node& n, int depth) {
    OGX_CHECK(depth < kMaxNesting, "lark_grammar: rules nested too deeply");
    switch (n.kind) {
      case Node::kString: case Node::kRegex: case Node::kRange: return lexeme(regex_of(n, 0), n.line);
      case Node::kRef:
        if (is_term_name(n.text)) return lexeme(terminal_regex(n.text, 0), n.line);
        return rule_symbol(n.text, n.line);
      case Node::kJson: return compile_json_schema(b_, n.text);
      case Node::kSeq: return b_.seq("seq", sequence(n, depth));
      case Node::kAlt: {
        int32_t nt = b_.nonterminal("alt");
        for (auto& k : n.kids) b_.rule(nt, sequence(k, depth));
        return nt;
      }
      case Node::kRepeat: {
        int32_t k = symbol(n.kids[0], depth + 1);
        if (n.min == 0 && n.max == 1) return b_.optional(k);
        if (n.max < 0 && n.min == 0) return b_.star(k);
        if (n.max < 0 && n.min == 1) return b_.plus(k);
        std::vector<int32_t> body(n.min, k);
        if (n.max < 0) body.push_back(b_.star(k));
        else {
          int32_t tail = b_.seq("rep", {});
          for (int i = 0; i < n.max - n.min; i++) tail = b_.alt("rep", {{}, {k, tail}});
          body.push_back(tail);
        }
        return b_.seq("rep", body);
      }
    }
    return -1;
  }

  int32_t lexeme(const std::string& rx, int line) {
    try {
      return b_.lexeme(rx);
    } catch (const Error& e) {
      throw_error("lark_grammar line ", line, ": ", e.what());
    }
  }

  GrammarBuilder& b_;
  std::vector<Tok> toks_;
  size_t pos_ = 0;
  std::map<std::string, Node> rules_, terms_;
  std::vector<std::string> ignores_;
  std::map<std::string, int32_t> rule_nt_;
  std::set<std::string> expanding_;
};

}  // namespace

int32_t compile_lark(GrammarBuilder& b, const std::string& text) {
  Compiler c(b, text);
  return c.run();
}

}  // namespace ogx::genai::guidance
