// Lark grammars (the subset llguidance accepts) to grammar rules.
// Rules `name: expansions` (lowercase; a `?` or `!` prefix and `.priority` are accepted and ignored), terminals
// `NAME: expansions` (uppercase: one lexeme each, their expansions inlined as a regex), alternatives `|` (also on
// continuation lines), `-> alias` (ignored), grouping ( ), optional [ ] and ?, repetition * + and `~ n` /
// `~ n..m`, strings "..." (with the `i` flag), ranges "a".."z", regexes /.../ (flags i s), `%json { schema }`
// (a JSON schema inline, json_schema.h), `%ignore` terminals, `%import common.NAME [-> ALIAS]` and
// `%import common (A, B)` of Lark's common terminals, `%llguidance {}` (ignored), `//` comments. The start rule
// is `start`. Lexing is greedy (lexer.h). Errors name the line and the problem.
#pragma once
#include <string>

#include "genai/guidance/grammar.h"

namespace ogx::genai::guidance {

// Adds the grammar's rules to `b`; returns its start symbol.
int32_t compile_lark(GrammarBuilder& b, const std::string& text);

}  // namespace ogx::genai::guidance
