// Internal: the recursive-descent parser shared by parser.cpp (statements) and parser_expr.cpp (expressions).
#pragma once
#include <initializer_list>
#include <string>
#include <vector>

#include "common/error.h"
#include "genai/chat_template/parser.h"

namespace ogx::jinja {

class Parser {
 public:
  explicit Parser(const std::vector<Token>& t) : t_(t) {}
  Body parse_template();

  // Expressions (parser_expr.cpp)
  ExprPtr parse_expression(bool with_cond = true);
  ExprPtr parse_tuple(bool with_cond = true, bool simplified = false);

 private:
  const std::vector<Token>& t_;
  size_t p_ = 0;
  int depth_ = 0;

  struct DepthGuard {
    Parser& p;
    explicit DepthGuard(Parser& q) : p(q) {
      if (++p.depth_ > kMaxParseDepth) p.fail("template nested too deeply");
    }
    ~DepthGuard() { --p.depth_; }
  };

  const Token& cur() const { return t_[p_]; }
  const Token& peek(size_t n = 1) const { return t_[std::min(p_ + n, t_.size() - 1)]; }
  bool is_op(const char* op) const { return cur().type == Tok::Op && cur().text == op; }
  bool is_name(const char* n) const { return cur().type == Tok::Name && cur().text == n; }
  bool accept_op(const char* op);
  bool accept_name(const char* n);
  void expect_op(const char* op);
  std::string expect_name();
  void expect_block_end();
  [[noreturn]] void fail(const std::string& msg) const;
  ExprPtr make(ExprType type, int line) const;

  // Statements (parser.cpp)
  Body parse_body(std::initializer_list<const char*> ends, std::string* found);
  NodePtr parse_statement();
  NodePtr parse_if();
  NodePtr parse_for();
  NodePtr parse_set();
  NodePtr parse_macro();
  NodePtr parse_call_block();
  NodePtr parse_filter_block();
  NodePtr parse_simple_block(NodeType type, const char* end);
  std::vector<Param> parse_params();
  std::vector<std::string> parse_targets();

  // Expression levels (parser_expr.cpp)
  ExprPtr parse_or();
  ExprPtr parse_and();
  ExprPtr parse_not();
  ExprPtr parse_compare();
  ExprPtr parse_math1();
  ExprPtr parse_concat();
  ExprPtr parse_math2();
  ExprPtr parse_pow();
  ExprPtr parse_unary(bool with_filter = true);
  ExprPtr parse_primary();
  ExprPtr parse_postfix(ExprPtr node);
  ExprPtr parse_filter_expr(ExprPtr node);
  ExprPtr parse_subscript(ExprPtr node);
  ExprPtr parse_subscribed();
  ExprPtr parse_list();
  ExprPtr parse_dict();
  void parse_call_args(Expr& call);

 public:
  ExprPtr parse_filter(ExprPtr node, bool start_inline);
  ExprPtr parse_test(ExprPtr node);
};

}  // namespace ogx::jinja
