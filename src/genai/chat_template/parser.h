// Parser: tokens → AST, following jinja2.parser's grammar and operator precedence.
#pragma once
#include <vector>

#include "genai/chat_template/ast.h"
#include "genai/chat_template/lexer.h"

namespace ogx::jinja {

constexpr int kMaxParseDepth = 128;  // nesting of blocks and parenthesised expressions

// Throws ogx::Error "chat template line N: ..." on syntax errors.
Body parse(const std::vector<Token>& tokens);

}  // namespace ogx::jinja
