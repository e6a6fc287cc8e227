// Lexer: template source → tokens, with Jinja2's whitespace control (`-`/`+` markers) and the
// trim_blocks / lstrip_blocks behaviour of Hugging Face's chat template environment.
#pragma once
#include <string>
#include <vector>

namespace ogx::jinja {

enum class Tok {
  Text,        // raw template text
  VarBegin,    // {{
  VarEnd,      // }}
  BlockBegin,  // {%
  BlockEnd,    // %}
  Name,
  String,
  Integer,
  Float,
  Op,  // operator or punctuation; text holds it
  End,
};

struct Token {
  Tok type;
  std::string text;
  int line;
};

struct LexOptions {
  bool trim_blocks = true;
  bool lstrip_blocks = true;
};

// Throws ogx::Error naming the line on malformed input (unclosed tags, bad strings).
std::vector<Token> tokenize(const std::string& source, const LexOptions& opts = {});

}  // namespace ogx::jinja
