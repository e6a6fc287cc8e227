// Statement grammar: text, {{ output }}, and the {% %} tags chat templates use (if/for/set/macro/call/filter,
// break/continue from the loopcontrols extension, generation from transformers' AssistantTracker).
#include "genai/chat_template/parser_impl.h"

namespace ogx::jinja {

namespace {
NodePtr make_node(NodeType type, int line) {
  auto n = std::make_shared<Node>();
  n->type = type;
  n->line = line;
  return n;
}
}  // namespace

Body parse(const std::vector<Token>& tokens) { return Parser(tokens).parse_template(); }

Body Parser::parse_template() {
  std::string found;
  Body body = parse_body({}, &found);
  if (cur().type != Tok::End) fail("unexpected tag");
  return body;
}

void Parser::expect_block_end() {
  if (cur().type != Tok::BlockEnd) fail("expected end of statement block" + (cur().text.empty() ? "" : ", got '" + cur().text + "'"));
  ++p_;
}

// Parses nodes until a `{% end... %}` in `ends`; leaves the stream after that keyword and sets *found.
Body Parser::parse_body(std::initializer_list<const char*> ends, std::string* found) {
  DepthGuard g(*this);
  Body body;
  while (true) {
    const Token& tok = cur();
    if (tok.type == Tok::End) {
      if (ends.size() == 0) return body;
      std::string want;
      for (const char* e : ends) want += std::string(want.empty() ? "" : " or ") + "'" + e + "'";
      fail("unexpected end of template, expected " + want);
    }
    if (tok.type == Tok::Text) {
      auto n = make_node(NodeType::Text, tok.line);
      n->text = tok.text;
      body.push_back(n);
      ++p_;
    } else if (tok.type == Tok::VarBegin) {
      auto n = make_node(NodeType::Output, tok.line);
      ++p_;
      n->expr = parse_tuple();
      if (cur().type != Tok::VarEnd) fail("expected '}}'" + (cur().text.empty() ? "" : ", got '" + cur().text + "'"));
      ++p_;
      body.push_back(n);
    } else if (tok.type == Tok::BlockBegin) {
      const Token& kw = peek();
      for (const char* e : ends) {
        if (kw.type == Tok::Name && kw.text == e) {
          p_ += 2;
          *found = e;
          return body;
        }
      }
      ++p_;
      body.push_back(parse_statement());
    } else {
      fail("unexpected token");
    }
  }
}

NodePtr Parser::parse_statement() {
  if (cur().type != Tok::Name) fail("expected a statement name");
  std::string kw = cur().text;
  int line = cur().line;
  if (kw == "if") return parse_if();
  if (kw == "for") return parse_for();
  if (kw == "set") return parse_set();
  if (kw == "macro") return parse_macro();
  if (kw == "call") return parse_call_block();
  if (kw == "filter") return parse_filter_block();
  if (kw == "generation") return parse_simple_block(NodeType::Body, "endgeneration");
  if (kw == "break" || kw == "continue") {
    ++p_;
    expect_block_end();
    return make_node(kw == "break" ? NodeType::Break : NodeType::Continue, line);
  }
  fail("unknown tag '" + kw + "'");
}

NodePtr Parser::parse_simple_block(NodeType type, const char* end) {
  auto n = make_node(type, cur().line);
  ++p_;
  expect_block_end();
  std::string found;
  n->body = parse_body({end}, &found);
  expect_block_end();
  return n;
}

NodePtr Parser::parse_if() {
  auto n = make_node(NodeType::If, cur().line);
  ++p_;
  while (true) {
    ExprPtr cond = parse_tuple(false);
    expect_block_end();
    std::string found;
    Body body = parse_body({"elif", "else", "endif"}, &found);
    n->branches.emplace_back(cond, std::move(body));
    if (found == "elif") continue;
    if (found == "else") {
      expect_block_end();
      n->else_body = parse_body({"endif"}, &found);
    }
    expect_block_end();
    return n;
  }
}

std::vector<std::string> Parser::parse_targets() {
  std::vector<std::string> names;
  bool paren = accept_op("(");
  do {
    names.push_back(expect_name());
  } while (accept_op(",") && cur().type == Tok::Name);
  if (paren) expect_op(")");
  return names;
}

NodePtr Parser::parse_for() {
  auto n = make_node(NodeType::For, cur().line);
  ++p_;
  n->targets = parse_targets();
  if (!accept_name("in")) fail("expected 'in' in for loop");
  n->expr = parse_tuple(false);
  if (accept_name("if")) n->cond = parse_expression();
  if (accept_name("recursive")) n->recursive = true;
  expect_block_end();
  std::string found;
  n->body = parse_body({"endfor", "else"}, &found);
  if (found == "else") {
    expect_block_end();
    n->else_body = parse_body({"endfor"}, &found);
  }
  expect_block_end();
  return n;
}

NodePtr Parser::parse_set() {
  auto n = make_node(NodeType::Set, cur().line);
  ++p_;
  std::string first = expect_name();
  if (accept_op(".")) {
    n->targets = {first};
    n->text = expect_name();
  } else {
    n->targets = {first};
    while (accept_op(",")) n->targets.push_back(expect_name());
  }
  if (accept_op("=")) {
    n->expr = parse_tuple();
    expect_block_end();
    return n;
  }
  if (is_op("|")) {
    auto var = make(ExprType::Name, n->line);
    var->name = kFilterBodyVar;
    n->expr = parse_filter(var, false);
  }
  expect_block_end();
  n->recursive = true;  // marks a block set
  std::string found;
  n->body = parse_body({"endset"}, &found);
  expect_block_end();
  return n;
}

std::vector<Param> Parser::parse_params() {
  std::vector<Param> params;
  expect_op("(");
  while (!is_op(")")) {
    if (!params.empty()) expect_op(",");
    Param prm;
    prm.name = expect_name();
    if (accept_op("=")) prm.default_value = parse_expression();
    params.push_back(prm);
  }
  expect_op(")");
  return params;
}

NodePtr Parser::parse_macro() {
  auto n = make_node(NodeType::Macro, cur().line);
  ++p_;
  n->text = expect_name();
  n->params = parse_params();
  expect_block_end();
  std::string found;
  n->body = parse_body({"endmacro"}, &found);
  if (cur().type == Tok::Name) ++p_;  // optional macro name after endmacro
  expect_block_end();
  return n;
}

NodePtr Parser::parse_call_block() {
  auto n = make_node(NodeType::CallBlock, cur().line);
  ++p_;
  if (is_op("(")) n->params = parse_params();
  n->expr = parse_expression();
  if (n->expr->type != ExprType::Call) fail("expected a call after 'call'");
  expect_block_end();
  std::string found;
  n->body = parse_body({"endcall"}, &found);
  expect_block_end();
  return n;
}

NodePtr Parser::parse_filter_block() {
  auto n = make_node(NodeType::FilterBlock, cur().line);
  ++p_;
  auto var = make(ExprType::Name, n->line);
  var->name = kFilterBodyVar;
  n->expr = parse_filter(var, true);
  expect_block_end();
  std::string found;
  n->body = parse_body({"endfilter"}, &found);
  expect_block_end();
  return n;
}

}  // namespace ogx::jinja
