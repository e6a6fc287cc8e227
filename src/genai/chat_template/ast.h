// AST of a parsed template: expressions (Expr) and statements (Node). Every node records its source line.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "genai/chat_template/value.h"

namespace ogx::jinja {

enum class ExprType {
  Const, Name, List, Tuple, Dict, Attr, Item, Slice, Call, Filter, Test,
  Neg, Pos, Not, And, Or, Binary, Compare, Cond,
};

struct Expr;
using ExprPtr = std::shared_ptr<Expr>;

struct Expr {
  ExprType type;
  int line = 0;
  std::string name;            // Name / Attr / Filter / Test name, Binary operator
  Value value;                 // Const
  std::vector<ExprPtr> items;  // operands: [object, args...]; Slice: [obj, start, stop, step] (null = absent)
  std::vector<std::pair<std::string, ExprPtr>> kwargs;  // Call / Filter / Test keyword arguments
  std::vector<std::string> ops;  // Compare: one operator per extra operand
  bool negated = false;          // Test: `is not`
};

enum class NodeType { Text, Output, If, For, Set, Macro, CallBlock, FilterBlock, Break, Continue, Body };

struct Node;
using NodePtr = std::shared_ptr<Node>;
using Body = std::vector<NodePtr>;

struct Param {
  std::string name;
  ExprPtr default_value;  // may be null
};

struct Node {
  NodeType type;
  int line = 0;
  std::string text;  // Text; Set: attribute name for `set ns.attr`; Macro: name
  ExprPtr expr;      // Output / Set value / For iterable / CallBlock call / FilterBlock filter chain
  ExprPtr cond;      // For: `if` filter
  std::vector<std::pair<ExprPtr, Body>> branches;  // If: condition + body
  Body body;                                       // For / Set block / Macro / CallBlock / FilterBlock
  Body else_body;                                  // If / For
  std::vector<std::string> targets;                // For / Set names (several: tuple unpacking)
  bool recursive = false;                          // For ... recursive
  std::vector<Param> params;                       // Macro / CallBlock parameters
};

// Name of the variable a {% filter %} block's rendered body is bound to.
inline const char* kFilterBodyVar = "\x01filter_body";

}  // namespace ogx::jinja
