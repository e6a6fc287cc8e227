// Expression grammar of jinja2.parser: condexpr > or > and > not > compare > + - > ~ > * / // % > ** >
// unary (- +) > primary with postfix (. [] ()) and filter/test chains (| name, is name).
#include <cstdlib>

#include "genai/chat_template/parser_impl.h"

namespace ogx::jinja {

bool Parser::accept_op(const char* op) {
  if (!is_op(op)) return false;
  ++p_;
  return true;
}
bool Parser::accept_name(const char* n) {
  if (!is_name(n)) return false;
  ++p_;
  return true;
}
void Parser::expect_op(const char* op) {
  if (!accept_op(op)) fail(std::string("expected '") + op + "'" + (cur().text.empty() ? "" : ", got '" + cur().text + "'"));
}
std::string Parser::expect_name() {
  if (cur().type != Tok::Name) fail("expected a name" + (cur().text.empty() ? "" : ", got '" + cur().text + "'"));
  return t_[p_++].text;
}
void Parser::fail(const std::string& msg) const {
  throw_error("chat template line ", cur().line, ": ", msg);
}
ExprPtr Parser::make(ExprType type, int line) const {
  auto e = std::make_shared<Expr>();
  e->type = type;
  e->line = line;
  return e;
}

ExprPtr Parser::parse_expression(bool with_cond) {
  DepthGuard g(*this);
  ExprPtr expr = parse_or();
  if (!with_cond) return expr;
  while (is_name("if")) {
    int line = cur().line;
    ++p_;
    ExprPtr cond = parse_or();
    ExprPtr other;
    if (accept_name("else")) other = parse_expression();
    auto e = make(ExprType::Cond, line);
    e->items = {cond, expr, other};
    expr = e;
  }
  return expr;
}

ExprPtr Parser::parse_tuple(bool with_cond, bool simplified) {
  int line = cur().line;
  std::vector<ExprPtr> items;
  bool is_tuple = false;
  while (true) {
    if (!items.empty()) expect_op(",");
    if (cur().type == Tok::VarEnd || cur().type == Tok::BlockEnd || is_op(")") || is_name("in") ||
        (is_name("if") && !items.empty()))
      break;
    if (simplified) items.push_back(parse_primary());
    else items.push_back(parse_expression(with_cond));
    if (is_op(",")) is_tuple = true;
    else break;
  }
  if (!is_tuple) {
    if (items.empty()) fail("expected an expression");
    return items[0];
  }
  auto e = make(ExprType::Tuple, line);
  e->items = std::move(items);
  return e;
}

ExprPtr Parser::parse_or() {
  ExprPtr left = parse_and();
  while (is_name("or")) {
    auto e = make(ExprType::Or, cur().line);
    ++p_;
    e->items = {left, parse_and()};
    left = e;
  }
  return left;
}

ExprPtr Parser::parse_and() {
  ExprPtr left = parse_not();
  while (is_name("and")) {
    auto e = make(ExprType::And, cur().line);
    ++p_;
    e->items = {left, parse_not()};
    left = e;
  }
  return left;
}

ExprPtr Parser::parse_not() {
  if (is_name("not")) {
    DepthGuard g(*this);
    auto e = make(ExprType::Not, cur().line);
    ++p_;
    e->items = {parse_not()};
    return e;
  }
  return parse_compare();
}

ExprPtr Parser::parse_compare() {
  int line = cur().line;
  ExprPtr first = parse_math1();
  auto e = make(ExprType::Compare, line);
  e->items.push_back(first);
  while (true) {
    if (cur().type == Tok::Op && (cur().text == "==" || cur().text == "!=" || cur().text == "<" ||
                                  cur().text == "<=" || cur().text == ">" || cur().text == ">=")) {
      e->ops.push_back(t_[p_++].text);
    } else if (is_name("in")) {
      ++p_;
      e->ops.push_back("in");
    } else if (is_name("not") && peek().type == Tok::Name && peek().text == "in") {
      p_ += 2;
      e->ops.push_back("notin");
    } else {
      break;
    }
    e->items.push_back(parse_math1());
  }
  return e->ops.empty() ? first : e;
}

static ExprPtr binary(ExprPtr e, std::string op, ExprPtr a, ExprPtr b) {
  e->name = std::move(op);
  e->items = {std::move(a), std::move(b)};
  return e;
}

ExprPtr Parser::parse_math1() {
  ExprPtr left = parse_concat();
  while (is_op("+") || is_op("-")) {
    auto e = make(ExprType::Binary, cur().line);
    std::string op = t_[p_++].text;
    left = binary(e, op, left, parse_concat());
  }
  return left;
}

ExprPtr Parser::parse_concat() {
  ExprPtr left = parse_math2();
  while (is_op("~")) {
    auto e = make(ExprType::Binary, cur().line);
    ++p_;
    left = binary(e, "~", left, parse_math2());
  }
  return left;
}

ExprPtr Parser::parse_math2() {
  ExprPtr left = parse_pow();
  while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
    auto e = make(ExprType::Binary, cur().line);
    std::string op = t_[p_++].text;
    left = binary(e, op, left, parse_pow());
  }
  return left;
}

ExprPtr Parser::parse_pow() {
  ExprPtr left = parse_unary();
  while (is_op("**")) {
    auto e = make(ExprType::Binary, cur().line);
    ++p_;
    left = binary(e, "**", left, parse_unary());
  }
  return left;
}

ExprPtr Parser::parse_unary(bool with_filter) {
  DepthGuard g(*this);
  ExprPtr node;
  if (is_op("-") || is_op("+")) {
    node = make(is_op("-") ? ExprType::Neg : ExprType::Pos, cur().line);
    ++p_;
    node->items = {parse_unary(false)};
  } else {
    node = parse_primary();
  }
  node = parse_postfix(node);
  if (with_filter) node = parse_filter_expr(node);
  return node;
}

ExprPtr Parser::parse_primary() {
  const Token& tok = cur();
  auto c = make(ExprType::Const, tok.line);
  switch (tok.type) {
    case Tok::Name: {
      ++p_;
      const std::string& n = tok.text;
      if (n == "true" || n == "True") c->value = Value::boolean(true);
      else if (n == "false" || n == "False") c->value = Value::boolean(false);
      else if (n == "none" || n == "None") c->value = Value::none();
      else {
        c->type = ExprType::Name;
        c->name = n;
      }
      return c;
    }
    case Tok::String: {
      std::string s;
      while (cur().type == Tok::String) s += t_[p_++].text;
      c->value = Value::string(std::move(s));
      return c;
    }
    case Tok::Integer:
      ++p_;
      c->value = Value::integer(strtoll(tok.text.c_str(), nullptr, 10));
      return c;
    case Tok::Float:
      ++p_;
      c->value = Value::number(strtod(tok.text.c_str(), nullptr));
      return c;
    default: break;
  }
  if (accept_op("(")) {
    DepthGuard g(*this);
    if (accept_op(")")) {
      auto t = make(ExprType::Tuple, tok.line);
      return t;
    }
    ExprPtr e = parse_tuple();
    expect_op(")");
    return e;
  }
  if (is_op("[")) return parse_list();
  if (is_op("{")) return parse_dict();
  fail("unexpected '" + (tok.text.empty() ? std::string("end of tag") : tok.text) + "'");
}

ExprPtr Parser::parse_list() {
  DepthGuard g(*this);
  auto e = make(ExprType::List, cur().line);
  expect_op("[");
  while (!is_op("]")) {
    if (!e->items.empty()) expect_op(",");
    if (is_op("]")) break;
    e->items.push_back(parse_expression());
  }
  expect_op("]");
  return e;
}

ExprPtr Parser::parse_dict() {
  DepthGuard g(*this);
  auto e = make(ExprType::Dict, cur().line);
  expect_op("{");
  while (!is_op("}")) {
    if (!e->items.empty()) expect_op(",");
    if (is_op("}")) break;
    e->items.push_back(parse_expression());
    expect_op(":");
    e->items.push_back(parse_expression());
  }
  expect_op("}");
  return e;
}

ExprPtr Parser::parse_postfix(ExprPtr node) {
  while (true) {
    if (is_op(".") || is_op("[")) node = parse_subscript(node);
    else if (is_op("(")) {
      auto call = make(ExprType::Call, cur().line);
      call->items.push_back(node);
      parse_call_args(*call);
      node = call;
    } else {
      return node;
    }
  }
}

ExprPtr Parser::parse_filter_expr(ExprPtr node) {
  while (true) {
    if (is_op("|")) node = parse_filter(node, false);
    else if (is_name("is")) node = parse_test(node);
    else if (is_op("(")) {
      auto call = make(ExprType::Call, cur().line);
      call->items.push_back(node);
      parse_call_args(*call);
      node = call;
    } else {
      return node;
    }
  }
}

ExprPtr Parser::parse_subscript(ExprPtr node) {
  int line = cur().line;
  if (accept_op(".")) {
    auto e = make(ExprType::Attr, line);
    e->items = {node};
    if (cur().type == Tok::Name) e->name = t_[p_++].text;
    else if (cur().type == Tok::Integer) {
      e->type = ExprType::Item;
      auto idx = make(ExprType::Const, line);
      idx->value = Value::integer(strtoll(t_[p_++].text.c_str(), nullptr, 10));
      e->items.push_back(idx);
    } else {
      fail("expected name or number after '.'");
    }
    return e;
  }
  expect_op("[");
  DepthGuard g(*this);
  std::vector<ExprPtr> args;
  while (!is_op("]")) {
    if (!args.empty()) expect_op(",");
    args.push_back(parse_subscribed());
  }
  expect_op("]");
  if (args.size() != 1) fail("tuple subscripts are not supported");
  ExprPtr arg = args[0];
  if (arg->type == ExprType::Slice) {
    arg->items[0] = node;
    return arg;
  }
  auto e = make(ExprType::Item, line);
  e->items = {node, arg};
  return e;
}

ExprPtr Parser::parse_subscribed() {
  int line = cur().line;
  ExprPtr start, stop, step;
  if (!is_op(":")) {
    start = parse_expression();
    if (!is_op(":")) return start;
  }
  expect_op(":");
  if (!is_op("]") && !is_op(",") && !is_op(":")) stop = parse_expression();
  if (accept_op(":") && !is_op("]") && !is_op(",")) step = parse_expression();
  auto e = make(ExprType::Slice, line);
  e->items = {nullptr, start, stop, step};
  return e;
}

void Parser::parse_call_args(Expr& call) {
  DepthGuard g(*this);
  expect_op("(");
  bool first = true;
  while (!is_op(")")) {
    if (!first) expect_op(",");
    first = false;
    if (is_op(")")) break;
    if (cur().type == Tok::Name && peek().type == Tok::Op && peek().text == "=") {
      std::string key = t_[p_].text;
      p_ += 2;
      call.kwargs.emplace_back(key, parse_expression());
    } else {
      if (!call.kwargs.empty()) fail("positional argument after keyword argument");
      call.items.push_back(parse_expression());
    }
  }
  expect_op(")");
}

ExprPtr Parser::parse_filter(ExprPtr node, bool start_inline) {
  while (is_op("|") || start_inline) {
    if (!start_inline) ++p_;
    start_inline = false;
    auto f = make(ExprType::Filter, cur().line);
    f->name = expect_name();
    while (accept_op(".")) f->name += "." + expect_name();
    f->items.push_back(node);
    if (is_op("(")) parse_call_args(*f);
    node = f;
  }
  return node;
}

ExprPtr Parser::parse_test(ExprPtr node) {
  auto t = make(ExprType::Test, cur().line);
  ++p_;  // is
  if (accept_name("not")) t->negated = true;
  t->name = expect_name();
  while (accept_op(".")) t->name += "." + expect_name();
  t->items.push_back(node);
  const Token& c = cur();
  bool arg_start = c.type == Tok::Name || c.type == Tok::String || c.type == Tok::Integer ||
                   c.type == Tok::Float || is_op("[") || is_op("{");
  if (is_op("(")) {
    parse_call_args(*t);
  } else if (arg_start && !is_name("else") && !is_name("or") && !is_name("and")) {
    if (is_name("is")) fail("you cannot chain multiple tests with is");
    t->items.push_back(parse_postfix(parse_primary()));
  }
  return t;
}

}  // namespace ogx::jinja
