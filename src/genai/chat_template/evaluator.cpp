// Expression evaluation with Jinja2's semantics (default Undefined: renders empty, falsy, errors on use).
#include "common/error.h"
#include "genai/chat_template/interp.h"

namespace ogx::jinja {

Value* Scope::lookup(const std::string& name) {
  for (Scope* s = this; s; s = s->parent.get()) {
    auto it = s->vars.find(name);
    if (it != s->vars.end()) return &it->second;
  }
  return nullptr;
}

void Interp::fail(const std::string& msg) const { throw Error("chat template line " + std::to_string(line_) + ": " + msg); }

void Interp::step() {
  if (++steps_ > limits_.max_steps)
    fail("template exceeded the step limit of " + std::to_string(limits_.max_steps) + " (infinite or huge loop?)");
  if (steps_ >= next_clock_check_) {  // the clock is read every 4096 steps (a few milliseconds at most)
    next_clock_check_ = steps_ + 4096;
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start_).count();
    if (ms > limits_.max_time_ms)
      fail("template exceeded the time limit of " + std::to_string(limits_.max_time_ms) + " ms (" +
           std::to_string(steps_) + " steps; infinite or huge loop?)");
  }
}

void Interp::check_size(size_t n) const {
  if (n > limits_.max_output)
    fail("string of " + std::to_string(n) + " bytes exceeds the size limit of " + std::to_string(limits_.max_output));
}

void Interp::check_list(size_t n) {
  if (n > limits_.max_list_items)
    fail("list of " + std::to_string(n) + " items exceeds the limit of " + std::to_string(limits_.max_list_items));
  steps_ += (int64_t)(n / 64);  // copying items is work too: a loop of big list copies meets the step limit
  step();
}

struct CallDepthGuard {
  Interp& in;
  explicit CallDepthGuard(Interp& i) : in(i) {
    if (++in.call_depth_ > in.limits_.max_call_depth) in.fail("maximum recursion depth exceeded in macro calls");
  }
  ~CallDepthGuard() { --in.call_depth_; }
};

Value Interp::call(const Value& fn, CallArgs& args) {
  if (fn.is_undefined()) fail((fn.s ? "'" + *fn.s + "'" : std::string("value")) + " is undefined and cannot be called");
  if (fn.kind != Kind::Func) fail(std::string("'") + type_name(fn) + "' object is not callable");
  CallDepthGuard g(*this);
  step();
  return fn.func->fn(args);
}

Value Interp::eval(const Expr& e, const ScopePtr& scope) {
  line_ = e.line;
  switch (e.type) {
    case ExprType::Const: return e.value;
    case ExprType::Name: return eval_name(e, scope);
    case ExprType::List: case ExprType::Tuple: {
      ValueList items;
      for (auto& x : e.items) items.push_back(eval(*x, scope));
      return e.type == ExprType::List ? Value::make_list(std::move(items)) : Value::make_tuple(std::move(items));
    }
    case ExprType::Dict: {
      Value d = Value::make_dict();
      for (size_t k = 0; k + 1 < e.items.size(); k += 2) {
        Value key = eval(*e.items[k], scope);
        d.dict->set(dict_key(key), eval(*e.items[k + 1], scope));
      }
      return d;
    }
    case ExprType::Attr: {
      Value obj = eval(*e.items[0], scope);
      line_ = e.line;
      return get_attr(*this, obj, e.name);
    }
    case ExprType::Item: {
      Value obj = eval(*e.items[0], scope);
      Value key = eval(*e.items[1], scope);
      line_ = e.line;
      return get_item(*this, obj, key);
    }
    case ExprType::Slice: return eval_slice(e, scope);
    case ExprType::Call: return eval_call(e, scope);
    case ExprType::Filter: return eval_filter(e, scope);
    case ExprType::Test: return eval_test(e, scope);
    case ExprType::Neg: case ExprType::Pos: {
      Value v = eval(*e.items[0], scope);
      line_ = e.line;
      if (!v.is_number()) fail(std::string("bad operand type for unary ") + (e.type == ExprType::Neg ? "-" : "+") + ": '" + type_name(v) + "'");
      if (e.type == ExprType::Pos) return v.kind == Kind::Bool ? Value::integer(v.b) : v;
      return v.kind == Kind::Float ? Value::number(-v.f) : Value::integer(-v.as_int());
    }
    case ExprType::Not: return Value::boolean(!truthy(eval(*e.items[0], scope)));
    case ExprType::And: {
      Value a = eval(*e.items[0], scope);
      return truthy(a) ? eval(*e.items[1], scope) : a;
    }
    case ExprType::Or: {
      Value a = eval(*e.items[0], scope);
      return truthy(a) ? a : eval(*e.items[1], scope);
    }
    case ExprType::Binary: return eval_binary(e, scope);
    case ExprType::Compare: return eval_compare(e, scope);
    case ExprType::Cond: {
      if (truthy(eval(*e.items[0], scope))) return eval(*e.items[1], scope);
      if (e.items[2]) return eval(*e.items[2], scope);
      return Value::undefined();
    }
  }
  return Value::undefined();
}

Value Interp::eval_name(const Expr& e, const ScopePtr& scope) {
  if (Value* v = scope->lookup(e.name)) return *v;
  return Value::undefined(e.name);
}

Value Interp::eval_binary(const Expr& e, const ScopePtr& scope) {
  Value a = eval(*e.items[0], scope);
  Value b = eval(*e.items[1], scope);
  line_ = e.line;
  return binary_op(*this, e.name, a, b);
}

Value Interp::eval_compare(const Expr& e, const ScopePtr& scope) {
  Value left = eval(*e.items[0], scope);
  for (size_t k = 0; k < e.ops.size(); ++k) {
    Value right = eval(*e.items[k + 1], scope);
    line_ = e.line;
    const std::string& op = e.ops[k];
    bool ok;
    if (op == "==") ok = equals(left, right);
    else if (op == "!=") ok = !equals(left, right);
    else if (op == "in") ok = contains(right, left);
    else if (op == "notin") ok = !contains(right, left);
    else {
      if (left.is_undefined() || right.is_undefined()) fail("cannot compare an undefined value");
      int c;
      try {
        c = compare(left, right);
      } catch (const Error& err) {
        fail(err.what());
      }
      ok = op == "<" ? c < 0 : op == "<=" ? c <= 0 : op == ">" ? c > 0 : c >= 0;
    }
    if (!ok) return Value::boolean(false);
    left = right;
  }
  return Value::boolean(true);
}

void Interp::eval_args(const Expr& e, size_t first, const ScopePtr& scope, CallArgs& args) {
  for (size_t k = first; k < e.items.size(); ++k) args.args.push_back(eval(*e.items[k], scope));
  for (auto& kv : e.kwargs) args.kwargs.emplace_back(kv.first, eval(*kv.second, scope));
  line_ = e.line;
}

Value Interp::eval_call(const Expr& e, const ScopePtr& scope) {
  Value fn = eval(*e.items[0], scope);
  CallArgs args;
  eval_args(e, 1, scope, args);
  return call(fn, args);
}

Value Interp::eval_filter(const Expr& e, const ScopePtr& scope) {
  Value v = eval(*e.items[0], scope);
  CallArgs args;
  eval_args(e, 1, scope, args);
  if (!has_filter(e.name)) fail("no filter named '" + e.name + "'");
  step();
  return apply_filter(*this, e.name, v, args);
}

Value Interp::eval_test(const Expr& e, const ScopePtr& scope) {
  Value v = eval(*e.items[0], scope);
  CallArgs args;
  eval_args(e, 1, scope, args);
  if (!has_test(e.name)) fail("no test named '" + e.name + "'");
  bool r = apply_test(*this, e.name, v, args);
  return Value::boolean(e.negated ? !r : r);
}

Value Interp::eval_slice(const Expr& e, const ScopePtr& scope) {
  Value obj = eval(*e.items[0], scope);
  Value parts[3];
  for (int k = 0; k < 3; ++k) parts[k] = e.items[k + 1] ? eval(*e.items[k + 1], scope) : Value::none();
  line_ = e.line;
  if (obj.is_undefined()) fail((obj.s ? "'" + *obj.s + "'" : std::string("value")) + " is undefined");
  try {
    return py_slice(obj, parts[0], parts[1], parts[2]);
  } catch (const Error& err) {
    fail(err.what());
  }
}

std::string Interp::render(const Body& body, ScopePtr globals) {
  std::string out;
  try {
    exec(body, globals, out);
  } catch (const Error& err) {
    std::string msg = err.what();
    if (msg.rfind("chat template line ", 0) == 0) throw;
    fail(msg);
  }
  return out;
}

}  // namespace ogx::jinja
