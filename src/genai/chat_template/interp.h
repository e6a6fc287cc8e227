// Internal: the tree-walking evaluator and the builtin registries it uses (filters, tests, methods, globals).
#pragma once
#include <chrono>
#include <memory>
#include <string>
#include <unordered_map>

#include "genai/chat_template/ast.h"
#include "genai/chat_template/value.h"

namespace ogx::jinja {

struct Limits {
  int64_t max_steps = 20'000'000;         // nodes + loop iterations + calls per render
  int max_call_depth = 100;               // nested macro / caller calls
  size_t max_output = 256u << 20;         // bytes of any one string, output included
  int64_t max_range = 10'000'000;         // range() length
  size_t max_list_items = 1'000'000;      // items of any one list (a doubling list fails here, not at bad_alloc)
  int64_t max_time_ms = 3000;             // wall time per render
};

struct Scope {
  std::unordered_map<std::string, Value> vars;
  std::shared_ptr<Scope> parent;
  Value* lookup(const std::string& name);
};
using ScopePtr = std::shared_ptr<Scope>;

enum class Flow { Normal, Break, Continue };

class Interp {
 public:
  Interp(const Limits& limits, bool immutable) : limits_(limits), immutable_(immutable) {}

  std::string render(const Body& body, ScopePtr globals);

  // Expressions (evaluator.cpp)
  Value eval(const Expr& e, const ScopePtr& scope);
  Value call(const Value& fn, CallArgs& args);

  // Statements (exec.cpp)
  Flow exec(const Body& body, const ScopePtr& scope, std::string& out);

  void step();
  void check_size(size_t n) const;
  // A list about to hold n items: fails past max_list_items, and charges the copy to the step budget.
  void check_list(size_t n);
  [[noreturn]] void fail(const std::string& msg) const;
  int line() const { return line_; }
  const Limits& limits() const { return limits_; }
  bool immutable() const { return immutable_; }

 private:
  Limits limits_;
  bool immutable_;
  int64_t steps_ = 0;
  int64_t next_clock_check_ = 0;  // steps_ value at which the wall clock is read next
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  int call_depth_ = 0;
  int line_ = 0;

  Value eval_name(const Expr& e, const ScopePtr& scope);
  Value eval_binary(const Expr& e, const ScopePtr& scope);
  Value eval_compare(const Expr& e, const ScopePtr& scope);
  Value eval_call(const Expr& e, const ScopePtr& scope);
  Value eval_filter(const Expr& e, const ScopePtr& scope);
  Value eval_test(const Expr& e, const ScopePtr& scope);
  Value eval_slice(const Expr& e, const ScopePtr& scope);
  void eval_args(const Expr& e, size_t first, const ScopePtr& scope, CallArgs& args);

  Flow exec_node(const Node& n, const ScopePtr& scope, std::string& out);
  Flow exec_for(const Node& n, const ScopePtr& scope, std::string& out);
  void exec_set(const Node& n, const ScopePtr& scope);
  void exec_if(const Node& n, const ScopePtr& scope, std::string& out, Flow& flow);
  Value make_macro(const Node& n, const ScopePtr& scope, const std::string& name);
  void exec_call_block(const Node& n, const ScopePtr& scope, std::string& out);
  void bind(const std::vector<std::string>& targets, const Value& v, Scope& scope);

  friend struct CallDepthGuard;
};

// Operators (operators.cpp)
Value binary_op(Interp& in, const std::string& op, const Value& a, const Value& b);
bool contains(const Value& container, const Value& item);

// Attribute / item access with Jinja's rules (methods.cpp).
Value get_attr(Interp& in, const Value& obj, const std::string& name);
Value get_item(Interp& in, const Value& obj, const Value& key);
// `attribute=` arguments of filters: dotted path, integer parts index lists.
Value get_attribute_path(Interp& in, const Value& obj, const std::string& path);
std::string py_format(Interp& in, const std::string& fmt, CallArgs& args);

// Builtins (filters.cpp, filters_seq.cpp, tests_builtin.cpp, globals.cpp).
bool has_filter(const std::string& name);
Value apply_filter(Interp& in, const std::string& name, const Value& v, CallArgs& args);
bool has_test(const std::string& name);
bool apply_test(Interp& in, const std::string& name, const Value& v, CallArgs& args);
void add_globals(Interp& in, Scope& globals);

// String helpers (strings.cpp; the case changes: case_mapping.cpp).
std::string py_strip(const std::string& s, const Value* chars, bool left, bool right);
std::string py_upper(const std::string& s);
std::string py_lower(const std::string& s);
std::string py_title(const std::string& s);
std::string py_capitalize(const std::string& s);
std::string jinja_title(const std::string& s);  // Jinja's `title` filter (not str.title): case_mapping.cpp
std::string py_replace(const std::string& s, const std::string& from, const std::string& to, int64_t count);
ValueList py_split(const std::string& s, const Value* sep, int64_t maxsplit, bool from_right);
Value py_slice(const Value& seq, const Value& start, const Value& stop, const Value& step);
std::string py_percent(Interp& in, const std::string& fmt, const ValueList& args, const Value& whole);
std::string html_escape(const std::string& s);
std::string str_repeat(const Interp& in, const std::string& s, int64_t n);

}  // namespace ogx::jinja
